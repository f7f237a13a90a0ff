internal import CFFmpeg
import MediaCore

/// The `AVIOInterruptCB` callback: `opaque` is an unretained `InterruptFlag` owned by the demuxer.
private func demuxerInterruptCallback(_ opaque: UnsafeMutableRawPointer?) -> Int32 {
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
        let count = avformat_index_get_entries_count(st)
        guard count > 1 else { return nil }
        var times: [Int64] = []
        for i in 0..<count {
            guard let e = avformat_index_get_entry(st, i), e.pointee.flags & AVINDEX_KEYFRAME != 0,
                  e.pointee.timestamp != AV.noPTS else { continue }
            times.append(e.pointee.timestamp)
        }
        return times.isEmpty ? nil : times
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

    private func codecParameters(stream: Int, kind: StreamKind) throws -> UnsafeMutablePointer<AVCodecParameters> {
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

    private struct Opened {
        var ctx: UnsafeMutablePointer<AVFormatContext>
        var io: InputIO?
        var seekable: Bool
    }

    /// avformat_open_input + avformat_find_stream_info, with pipe-friendly probing and clear errors.
    private static func open(url: String, displayName: String, options: InputOptions, flag: InterruptFlag) throws -> Opened {
        let context = "cannot open '\(displayName)'"
        var forced: UnsafePointer<AVInputFormat>?
        if let name = options.format {
            forced = av_find_input_format(name)
            if forced == nil { throw FFmpegError.invalid(context, "unknown input format '\(name)'", call: "av_find_input_format") }
        }
        guard var ctx = avformat_alloc_context() else {
            throw FFmpegError(code: AV.enomem, call: "avformat_alloc_context", context: context)
        }
        ctx.pointee.interrupt_callback = AVIOInterruptCB(callback: demuxerInterruptCallback,
                                                         opaque: Unmanaged.passUnretained(flag).toOpaque())
        var dict: OpaquePointer?
        defer { av_dict_free(&dict) }
        for (key, value) in options.options.sorted(by: { $0.key < $1.key }) { av_dict_set(&dict, key, value, 0) }

        // Pipes and local files: open the byte stream ourselves, so we know whether it can seek
        // (probe small and fast when it cannot) and which format it is even if opening fails.
        var io: InputIO?
        var seekable = !options.isLive
        var detected: String?
        let usesFile = forced.map { $0.pointee.flags & AVFMT_NOFILE == 0 } ?? true
        if usesFile && isLocalOrPipe(url) {
            do {
                io = try InputIO(url: url, interrupt: ctx.pointee.interrupt_callback, options: &dict, context: context)
            } catch {
                avformat_free_context(ctx)
                throw error
            }
            seekable = io!.isSeekable
            if forced == nil {
                var probed: UnsafePointer<AVInputFormat>?
                let p = av_probe_input_buffer2(io!.pb, &probed, url, ctx, 0, 0)
                if p < 0 {
                    let explanation = p == AV.eof || io!.isEmpty ? "the input is empty (end of file before any data)"
                        : p == AV.invalidData ? emptyOrUnknown(p, seekable: seekable) : nil
                    avformat_free_context(ctx)
                    io!.close()
                    throw FFmpegError(code: p, call: "av_probe_input_buffer2", context: context, explanation: explanation)
                }
                forced = probed
            }
            detected = forced.map { String(cString: $0.pointee.name) }
            ctx.pointee.pb = io!.pb
        }
        ctx.pointee.probesize = Int64(options.probeSize ?? (seekable ? 5_000_000 : 1 << 20))
        ctx.pointee.max_analyze_duration = Int64(options.analyzeDuration ?? (seekable ? 0 : 1_000_000))

        var maybeCtx: UnsafeMutablePointer<AVFormatContext>? = ctx
        let r = avformat_open_input(&maybeCtx, url, forced, &dict)
        if r < 0 {  // avformat_open_input freed the context; the AVIO context is ours
            io?.close()
            var explanation: String?
            if r == AV.invalidData, let detected, isMOV(detected) {
                explanation = seekable
                    ? "\(FFmpegError.string(for: r)) (no usable MP4 index 'moov' found: the file is truncated or incomplete)"
                    : moovAtEndExplanation
            }
            throw FFmpegError(code: r, call: "avformat_open_input", context: context, explanation: explanation)
        }
        ctx = maybeCtx!
        var failure: FFmpegError?
        if let key = firstKey(dict) {
            failure = FFmpegError(code: AV.einval, call: "avformat_open_input", context: context,
                                  explanation: "unknown input option '\(key)'")
        } else if !seekable, isMOV(String(cString: ctx.pointee.iformat.pointee.name)), moovIsAtEnd(ctx) {
            failure = FFmpegError(code: AV.invalidData, call: "avformat_open_input", context: context,
                                  explanation: moovAtEndExplanation)
        } else {
            let s = avformat_find_stream_info(ctx, nil)
            if s < 0 {
                failure = FFmpegError(code: s, call: "avformat_find_stream_info",
                                      context: "cannot find the streams of '\(displayName)'")
            } else if ctx.pointee.nb_streams == 0 {
                failure = FFmpegError(code: AV.invalidData, call: "avformat_find_stream_info", context: context,
                                      explanation: "the input has no streams")
            }
        }
        if let failure {
            var c: UnsafeMutablePointer<AVFormatContext>? = ctx
            avformat_close_input(&c)
            io?.close()
            throw failure
        }
        return Opened(ctx: ctx, io: io, seekable: seekable)
    }

    private static let moovAtEndExplanation =
        "this MP4 has its index (moov) at the end and cannot be read from a pipe; "
        + "remux it with `ffmpeg -i in.mp4 -c copy -movflags +faststart out.mp4`, pass the file path instead, "
        + "or pipe a fragmented MP4 (-movflags +frag_keyframe+empty_moov) or an MPEG-TS stream (-f mpegts)"

    private static func emptyOrUnknown(_ code: Int32, seekable: Bool) -> String {
        "\(FFmpegError.string(for: code)) (not a recognised media format\(seekable ? "" : ", or the pipe was empty"))"
    }

    private static func hasExactIndex(_ formatName: String) -> Bool {
        isMOV(formatName) || formatName.hasPrefix("matroska")
    }

    private static func isMOV(_ formatName: String) -> Bool {
        formatName.split(separator: ",").contains { $0 == "mov" || $0 == "mp4" }
    }

    /// After the header was read from a non-seekable input: does the first sample lie behind us?
    /// (true when `moov` came after `mdat`, so the samples were already streamed past).
    private static func moovIsAtEnd(_ ctx: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        guard let pb = ctx.pointee.pb else { return false }
        let position = avio_tell(pb)
        for i in 0..<Int(ctx.pointee.nb_streams) {
            guard let st = ctx.pointee.streams[i], avformat_index_get_entries_count(st) > 0,
                  let first = avformat_index_get_entry(st, 0) else { continue }
            if first.pointee.pos < position { return true }
        }
        return false
    }

    private static func isLocalOrPipe(_ url: String) -> Bool {
        url.hasPrefix("pipe:") || url.hasPrefix("file:") || !url.contains(":")
    }

    private static func firstKey(_ dict: OpaquePointer?) -> String? {
        guard let dict, let entry = av_dict_get(dict, "", nil, AV_DICT_IGNORE_SUFFIX) else { return nil }
        return String(cString: entry.pointee.key)
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
            return StreamInfo(
                index: i, kind: kind, codecName: String(cString: avcodec_get_name(p.codec_id)),
                timeBase: Rational(st.pointee.time_base),
                extradata: copyBytes(p.extradata, count: Int(p.extradata_size)),
                width: Int(p.width), height: Int(p.height),
                sampleAspectRatio: sar ?? Rational(1, 1), pixelFormat: pixelFormat,
                frameRate: kind == .video ? fps : nil,
                sampleRate: Int(p.sample_rate), channelCount: Int(p.ch_layout.nb_channels),
                bitRate: Int(p.bit_rate), profile: p.profile,
                startTime: st.pointee.start_time == AV.noPTS ? nil : st.pointee.start_time,
                duration: st.pointee.duration == AV.noPTS ? nil : st.pointee.duration)
        }
    }
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

/// The byte stream under a demuxer when we open it ourselves: `avio_open2` for files (and `file:`),
/// a poll()-based reader for pipes (`pipe:N`, `-`), so blocked reads stay interruptible.
/// A regular file given as a descriptor (`< movie.mp4`) is reopened through `/dev/fd/N`, so it can seek.
final class InputIO {
    private(set) var pb: UnsafeMutablePointer<AVIOContext>?
    private var reader: UnsafeMutablePointer<CFFPipeReader>?
    let isSeekable: Bool

    init(url: String, interrupt: AVIOInterruptCB, options: inout OpaquePointer?, context: String) throws {
        var url = url
        if url.hasPrefix("pipe:") {
            let fdText = url.dropFirst(5)
            guard let fd = Int32(fdText.isEmpty ? "0" : fdText), fd >= 0 else {
                throw FFmpegError.invalid(context, "'\(url)' is not a file descriptor", call: "avio_open2")
            }
            let kind = cff_fd_kind(fd)
            if kind < 0 { throw FFmpegError(code: kind, call: "fstat", context: context) }
            if kind == 1 {
                url = "file:/dev/fd/\(fd)"
            } else {
                // Stall timeout for pipes: FFmpeg's protocol option name, in microseconds.
                var stall: Int64 = 0
                if let entry = av_dict_get(options, "rw_timeout", nil, 0) {
                    stall = Int64(String(cString: entry.pointee.value)) ?? 0
                    av_dict_set(&options, "rw_timeout", nil, 0)
                }
                let reader = UnsafeMutablePointer<CFFPipeReader>.allocate(capacity: 1)
                reader.initialize(to: CFFPipeReader(fd: fd, interrupt: interrupt, stall_timeout_us: stall, bytes_read: 0))
                let size: Int32 = 1 << 18
                guard let buffer = av_malloc(Int(size)),
                      let pb = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), size, 0, reader,
                                                  cff_pipe_read, nil, nil) else {
                    reader.deallocate()
                    throw FFmpegError(code: AV.enomem, call: "avio_alloc_context", context: context)
                }
                self.pb = pb
                self.reader = reader
                isSeekable = false
                return
            }
        }
        var interrupt = interrupt
        var pb: UnsafeMutablePointer<AVIOContext>?
        try check(avio_open2(&pb, url, AVIO_FLAG_READ, &interrupt, &options), "avio_open2", context)
        self.pb = pb
        isSeekable = (pb!.pointee.seekable & AVIO_SEEKABLE_NORMAL) != 0
    }

    /// Nothing could be read at all (an empty file or a pipe closed before any data).
    var isEmpty: Bool {
        if let reader { return reader.pointee.bytes_read == 0 }
        guard let pb else { return false }
        return avio_size(pb) == 0
    }

    func close() {
        if let reader {
            if let pb { av_freep(&pb.pointee.buffer) }
            avio_context_free(&pb)
            reader.deallocate()
            self.reader = nil
        } else if pb != nil {
            avio_closep(&pb)
        }
    }

    deinit { close() }
}
