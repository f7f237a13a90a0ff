internal import CFFmpeg
import MediaCore

/// The `AVIOInterruptCB` callback: `opaque` is an unretained `InterruptFlag` owned by the demuxer.
func demuxerInterruptCallback(_ opaque: UnsafeMutableRawPointer?) -> Int32 {
    guard let opaque else { return 0 }
    return Unmanaged<InterruptFlag>.fromOpaque(opaque).takeUnretainedValue().isInterrupted ? 1 : 0
}

/// Reads packets from anything libavformat opens: files, `-` (standard input), `pipe:N`, FIFOs, URLs.
///
/// Not `Sendable`: one task owns it. Only `Sendable` values (`Packet`, `StreamInfo`) leave it.
/// Timestamps are passed through exactly as the stream's time base gives them.
public final class Demuxer {
    public let streams: [StreamInfo]
    public let interruptFlag: InterruptFlag
    /// The URL as given (`-` for standard input); used in error messages.
    public let displayName: String
    /// Whether the input can seek (a regular file); pipes, FIFOs and live URLs cannot.
    public private(set) var isSeekable: Bool

    private let url: String
    private let options: InputOptions
    private var ctx: UnsafeMutablePointer<AVFormatContext>?
    /// Our own AVIO context when we opened the input ourselves (pipes and local files); closed after `ctx`.
    private var io: InputIO?
    private var packet: UnsafeMutablePointer<AVPacket>?

    /// Opens `url` and finds its streams. `"-"` means standard input (`pipe:0`).
    public init(url: String, options: InputOptions = .init(), interruptFlag: InterruptFlag = InterruptFlag()) throws {
        self.displayName = url
        self.url = url == "-" ? "pipe:0" : url
        self.options = options
        self.interruptFlag = interruptFlag
        let opened = try Self.open(url: self.url, displayName: url, options: options, flag: interruptFlag)
        ctx = opened.ctx
        io = opened.io
        isSeekable = opened.seekable
        streams = Self.describeStreams(opened.ctx)
        packet = av_packet_alloc()
    }

    deinit {
        close()
        av_packet_free(&packet)
    }

    /// The demuxer's name, e.g. "mov,mp4,m4a,3gp,3g2,mj2", "mpegts".
    public var formatName: String {
        guard let name = ctx?.pointee.iformat?.pointee.name else { return "" }
        return String(cString: name)
    }

    /// Whether libavformat runs its parsers over the packets (`readsWithoutParsers` decides, when the input opens).
    var usesParsers: Bool { ctx.map { $0.pointee.flags & AVFMT_FLAG_NOPARSE == 0 } ?? true }

    /// Microseconds, if known.
    public var duration: Int64? {
        guard let d = ctx?.pointee.duration, d != AV.noPTS, d >= 0 else { return nil }
        return d
    }

    /// The decode times of a stream's keyframes from the container's own index, in the stream's time base, when it has
    /// a complete one read with its header (an MP4's sample table; Matroska's cues when they were loaded); `nil`
    /// otherwise (MPEG-TS and raw streams index what has been read).
    public func keyframeTimes(stream: Int) -> [Int64]? {
        guard let ctx, Self.hasExactIndex(formatName), stream >= 0, stream < Int(ctx.pointee.nb_streams),
              let st = ctx.pointee.streams[stream] else { return nil }
        guard avformat_index_get_entries_count(st) > 1 else { return nil }
        let times = Self.indexEntries(st).filter { $0.flags & AVINDEX_KEYFRAME != 0 && $0.timestamp != AV.noPTS }
            .map(\.timestamp)
        return times.isEmpty ? nil : times
    }

    /// A stream's entries in libavformat's index of the container (an MP4's sample table: one per sample), in order.
    static func indexEntries(_ st: UnsafeMutablePointer<AVStream>) -> some Sequence<AVIndexEntry> {
        (0..<avformat_index_get_entries_count(st)).lazy.compactMap { avformat_index_get_entry(st, $0)?.pointee }
    }

    /// The next packet, or nil at the end of the input. Errors mid-stream throw `FFmpegError`.
    public func read() throws -> Packet? {
        guard let ctx else { throw FFmpegError.invalid("cannot read '\(displayName)'", "the demuxer is closed") }
        guard let packet else { throw FFmpegError(code: AV.enomem, call: "av_packet_alloc", context: "cannot read '\(displayName)'") }
        var r: Int32
        repeat {
            r = av_read_frame(ctx, packet)
        } while r == AV.eagain && !interruptFlag.isInterrupted && Self.pause()
        if r == AV.eof { return nil }
        if r == AV.eagain { r = AV.exit }  // stopped waiting because of the interrupt flag
        try check(r, "av_read_frame", "cannot read '\(displayName)'")
        defer { av_packet_unref(packet) }
        let p = packet.pointee
        var newExtradata: [UInt8]?
        var sideSize = 0
        if let side = av_packet_get_side_data(packet, AV_PKT_DATA_NEW_EXTRADATA, &sideSize), sideSize > 0 {
            newExtradata = copyBytes(side, count: sideSize)
        }
        return Packet(streamIndex: Int(p.stream_index),
                      data: copyBytes(p.data, count: Int(p.size)),
                      pts: p.pts == AV.noPTS ? nil : p.pts,
                      dts: p.dts == AV.noPTS ? nil : p.dts,
                      duration: p.duration,
                      isKeyframe: p.flags & AV_PKT_FLAG_KEY != 0,
                      isCorrupt: p.flags & AV_PKT_FLAG_CORRUPT != 0,
                      newExtradata: newExtradata)
    }

    /// Starts reading again from the beginning (for `--loop`). Seeks when it can, else reopens the input.
    /// Decoders made from this demuxer should be flushed by the caller.
    public func seekToStart() throws {
        // Formats with a sample index (MP4/MOV, Matroska) seek exactly to their first packet. Others
        // (MPEG-TS, raw streams) may land after it, so they are reopened, which repeats every packet.
        if let ctx, isSeekable, Self.hasExactIndex(formatName) {
            let start = ctx.pointee.start_time == AV.noPTS ? 0 : ctx.pointee.start_time
            if av_seek_frame(ctx, -1, start, AVSEEK_FLAG_BACKWARD) >= 0 { return }
        }
        guard isSeekable || !url.hasPrefix("pipe:") else {
            throw FFmpegError.invalid("cannot restart '\(displayName)'", "a pipe cannot be read again", call: "av_seek_frame")
        }
        // Fall back: reopen the same input and check it still has the same streams.
        close()
        let opened = try Self.open(url: url, displayName: displayName, options: options, flag: interruptFlag)
        ctx = opened.ctx
        io = opened.io
        isSeekable = opened.seekable
        let again = Self.describeStreams(opened.ctx)
        guard again.count == streams.count, zip(again, streams).allSatisfy({ $0.codecName == $1.codecName }) else {
            throw FFmpegError.invalid("cannot restart '\(displayName)'", "the input changed its streams when reopened")
        }
    }

    public func makeVideoDecoder(stream: Int, output: VideoOutputFormat = .init()) throws -> VideoDecoder {
        let par = try codecParameters(stream: stream, kind: .video)
        return try VideoDecoder(parameters: par, streamIndex: stream, timeBase: streams[stream].timeBase,
                                frameRate: streams[stream].frameRate, output: output)
    }

    public func makeAudioDecoder(stream: Int, output: AudioOutputFormat) throws -> AudioDecoder {
        let par = try codecParameters(stream: stream, kind: .audio)
        return try AudioDecoder(parameters: par, streamIndex: stream, timeBase: streams[stream].timeBase, output: output)
    }

    // MARK: - Private

    func codecParameters(stream: Int, kind: StreamKind) throws -> UnsafeMutablePointer<AVCodecParameters> {
        let context = "cannot decode stream \(stream) of '\(displayName)'"
        guard let ctx, streams.indices.contains(stream), stream < Int(ctx.pointee.nb_streams),
              let st = ctx.pointee.streams[stream], let par = st.pointee.codecpar else {
            throw FFmpegError.invalid(context, "no such stream")
        }
        guard streams[stream].kind == kind else {
            throw FFmpegError.invalid(context, "it is \(streams[stream].kind), not \(kind)")
        }
        return par
    }

    /// Closes the input now (a listener's socket is released for the next one); `read()` throws afterwards.
    public func close() {
        avformat_close_input(&ctx)
        io?.close()
        io = nil
    }

    private static func pause() -> Bool {
        av_usleep(2_000)
        return true
    }

    private static func describeStreams(_ ctx: UnsafeMutablePointer<AVFormatContext>) -> [StreamInfo] {
        (0..<Int(ctx.pointee.nb_streams)).compactMap { i in
            guard let st = ctx.pointee.streams[i], let par = st.pointee.codecpar else { return nil }
            let p = par.pointee
            var kind: StreamKind
            switch p.codec_type {
            case AVMEDIA_TYPE_VIDEO: kind = .video
            case AVMEDIA_TYPE_AUDIO: kind = .audio
            case AVMEDIA_TYPE_SUBTITLE: kind = .subtitle
            case AVMEDIA_TYPE_DATA: kind = .data
            default: kind = .other
            }
            // A stream without a usable time base has no timeline to place its packets on: it is not media here.
            if !Rational(st.pointee.time_base).isValid { kind = .other }
            let sar = [st.pointee.sample_aspect_ratio, p.sample_aspect_ratio].map(Rational.init).first { $0.isValid }
            let fps = [st.pointee.avg_frame_rate, st.pointee.r_frame_rate].map(Rational.init).first { $0.isValid }
            var pixelFormat: String?
            if kind == .video, p.format >= 0, let name = av_get_pix_fmt_name(AVPixelFormat(rawValue: p.format)) {
                pixelFormat = String(cString: name)
            }
            var info = StreamInfo(
                index: i, kind: kind, codecName: String(cString: avcodec_get_name(p.codec_id)),
                timeBase: Rational(st.pointee.time_base),
                extradata: copyBytes(p.extradata, count: Int(p.extradata_size)),
                width: Int(p.width), height: Int(p.height),
                sampleAspectRatio: sar ?? Rational(1, 1), pixelFormat: pixelFormat,
                frameRate: kind == .video ? fps : nil,
                sampleRate: Int(p.sample_rate), channelCount: Int(p.ch_layout.nb_channels),
                bitRate: Int(p.bit_rate), profile: p.profile, colour: kind == .video ? colourInfo(st, p) : nil,
                startTime: st.pointee.start_time == AV.noPTS ? nil : st.pointee.start_time,
                duration: st.pointee.duration == AV.noPTS ? nil : st.pointee.duration)
            if let tag = av_dict_get(st.pointee.metadata, "language", nil, 0), let value = tag.pointee.value {
                let text = String(cString: value)
                info.language = text.isEmpty ? nil : text
            }
            info.disposition = StreamDisposition(rawValue: st.pointee.disposition)
            if kind == .subtitle, let d = avcodec_descriptor_get(p.codec_id) {
                info.isTextSubtitle = d.pointee.props & AV_CODEC_PROP_TEXT_SUB != 0
            }
            if kind == .video { info.dolbyVision = dolbyVisionConfig(st) }
            return info
        }
    }
}

/// The colour code points of a video stream (FFmpeg's `AVColor*` enums use H.273's numbering), with the mastering
/// display and content light level side data written as the bodies of `mdcv` and `clli` (display primaries in
/// G, B, R order as the SEI and the boxes have them; chromaticities in 0.00002, luminances in 0.0001 cd/m²).
private func colourInfo(_ st: UnsafeMutablePointer<AVStream>, _ p: AVCodecParameters) -> ColourInfo? {
    let primaries = UInt16(clamping: p.color_primaries.rawValue), transfer = UInt16(clamping: p.color_trc.rawValue)
    let matrix = UInt16(clamping: p.color_space.rawValue)
    let unspecified = ColourInfo.unspecified
    guard primaries != unspecified || transfer != unspecified || matrix != unspecified else { return nil }
    var info = ColourInfo(primaries: primaries, transfer: transfer, matrix: matrix,
                          fullRange: p.color_range == AVCOL_RANGE_JPEG)
    var size: Int = 0
    if let raw = av_stream_get_side_data(st, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, &size),
       size >= MemoryLayout<AVMasteringDisplayMetadata>.size {
        let m = UnsafeRawPointer(raw).loadUnaligned(as: AVMasteringDisplayMetadata.self)
        if m.has_primaries != 0 && m.has_luminance != 0 {
            var body: [UInt8] = []
            func u16(_ q: AVRational, _ scale: Int64) { append(&body, UInt64(clamping: scaled(q, scale)), bytes: 2) }
            let rgb = [m.display_primaries.0, m.display_primaries.1, m.display_primaries.2]
            for c in [1, 2, 0] { u16(rgb[c].0, 50_000); u16(rgb[c].1, 50_000) }
            u16(m.white_point.0, 50_000); u16(m.white_point.1, 50_000)
            append(&body, UInt64(clamping: scaled(m.max_luminance, 10_000)), bytes: 4)
            append(&body, UInt64(clamping: scaled(m.min_luminance, 10_000)), bytes: 4)
            info.masteringDisplay = body
        }
    }
    if let raw = av_stream_get_side_data(st, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, &size),
       size >= MemoryLayout<AVContentLightMetadata>.size {
        let l = UnsafeRawPointer(raw).loadUnaligned(as: AVContentLightMetadata.self)
        var body: [UInt8] = []
        append(&body, UInt64(clamping: l.MaxCLL), bytes: 2)
        append(&body, UInt64(clamping: l.MaxFALL), bytes: 2)
        info.contentLightLevel = body
    }
    return info
}

/// The stream's `AV_PKT_DATA_DOVI_CONF` side data (from a `dvcC`/`dvvC` box, or Matroska's block addition mapping).
private func dolbyVisionConfig(_ st: UnsafeMutablePointer<AVStream>) -> DolbyVisionConfig? {
    var size: Int = 0
    guard let raw = av_stream_get_side_data(st, AV_PKT_DATA_DOVI_CONF, &size),
          size >= MemoryLayout<AVDOVIDecoderConfigurationRecord>.size else { return nil }
    let r = UnsafeRawPointer(raw).loadUnaligned(as: AVDOVIDecoderConfigurationRecord.self)
    return DolbyVisionConfig(versionMajor: r.dv_version_major, versionMinor: r.dv_version_minor, profile: r.dv_profile,
                             level: r.dv_level, rpuPresent: r.rpu_present_flag != 0,
                             enhancementLayerPresent: r.el_present_flag != 0, baseLayerPresent: r.bl_present_flag != 0,
                             compatibilityID: r.dv_bl_signal_compatibility_id)
}

/// `q × scale`, rounded to nearest, 0 for an invalid rational.
private func scaled(_ q: AVRational, _ scale: Int64) -> Int64 {
    guard q.den > 0, q.num >= 0 else { return 0 }
    return (Int64(q.num) * scale + Int64(q.den) / 2) / Int64(q.den)
}

private func append(_ out: inout [UInt8], _ v: UInt64, bytes: Int) {
    for i in stride(from: bytes - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: v >> UInt64(8 * i))) }
}

extension Rational {
    init(_ q: AVRational) { self.init(q.num, q.den) }
    var av: AVRational { AVRational(num: numerator, den: denominator) }
}

/// One copy of C bytes into a Swift array.
@inline(__always)
func copyBytes(_ source: UnsafePointer<UInt8>?, count: Int) -> [UInt8] {
    guard let source, count > 0 else { return [] }
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: source, byteCount: count)
        initialized = count
    }
}

@inline(__always)
func copyBytes(_ source: UnsafeMutablePointer<UInt8>?, count: Int) -> [UInt8] {
    copyBytes(UnsafePointer(source), count: count)
}
