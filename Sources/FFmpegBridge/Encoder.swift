internal import CFFmpeg
import MediaCore

/// Shared encoding machinery: one `AVCodecContext` and one reusable output packet.
final class EncoderCore {
    var ctx: UnsafeMutablePointer<AVCodecContext>?
    var packet: UnsafeMutablePointer<AVPacket>?
    let context: String
    /// Ticks of the time base per frame/packet, used when the encoder leaves `duration` at 0.
    var defaultDuration: Int64 = 0
    private var drained = false

    init(codecName: String, context: String, configure: (UnsafeMutablePointer<AVCodecContext>) throws -> Void) throws {
        self.context = context
        guard let codec = avcodec_find_encoder_by_name(codecName) else {
            throw FFmpegError(code: cff_averror_encoder_not_found(), call: "avcodec_find_encoder_by_name",
                              context: context, explanation: "FFmpeg has no '\(codecName)' encoder")
        }
        ctx = avcodec_alloc_context3(codec)
        packet = av_packet_alloc()
        guard let ctx, packet != nil else { throw FFmpegError(code: AV.enomem, call: "avcodec_alloc_context3", context: context) }
        try configure(ctx)
        try check(avcodec_open2(ctx, codec, nil), "avcodec_open2", context)
    }

    deinit {
        avcodec_free_context(&ctx)
        av_packet_free(&packet)
    }

    var extradata: [UInt8] {
        guard let ctx else { return [] }
        return copyBytes(ctx.pointee.extradata, count: Int(ctx.pointee.extradata_size))
    }

    /// Sends one frame (nil = drain) and collects every packet it yields.
    func encode(_ frame: UnsafeMutablePointer<AVFrame>?) throws -> [EncodedPacket] {
        guard let ctx, let packet else { return [] }
        if drained {
            if frame == nil { return [] }
            throw FFmpegError.invalid(context, "the encoder was flushed; make a new one", call: "avcodec_send_frame")
        }
        var out: [EncodedPacket] = []
        var r = avcodec_send_frame(ctx, frame)
        if r == AV.eagain {  // not expected (we always drain), but correct: collect, then resend
            try receiveAll(ctx, packet, into: &out)
            r = avcodec_send_frame(ctx, frame)
        }
        if r != AV.eof { try check(r, "avcodec_send_frame", context) }
        try receiveAll(ctx, packet, into: &out)
        if frame == nil { drained = true }
        return out
    }

    private func receiveAll(_ ctx: UnsafeMutablePointer<AVCodecContext>, _ packet: UnsafeMutablePointer<AVPacket>,
                            into out: inout [EncodedPacket]) throws {
        while true {
            let r = avcodec_receive_packet(ctx, packet)
            if r == AV.eagain || r == AV.eof { return }
            try check(r, "avcodec_receive_packet", context)
            let p = packet.pointee
            out.append(EncodedPacket(data: copyBytes(p.data, count: Int(p.size)),
                                     pts: p.pts == AV.noPTS ? p.dts : p.pts,
                                     dts: p.dts == AV.noPTS ? p.pts : p.dts,
                                     duration: p.duration > 0 ? p.duration : defaultDuration,
                                     isKeyframe: p.flags & AV_PKT_FLAG_KEY != 0))
            av_packet_unref(packet)
        }
    }
}

/// H.264 with libx264 or H.265 with libx265 through libavcodec: global header, automatic threads, no scene-cut
/// keyframes; `forceKeyframe` makes an IDR exactly at that frame (both wrappers' `forced-idr`). Not `Sendable`: one
/// task owns it.
public final class VideoEncoder {
    private let core: EncoderCore
    private var frame: UnsafeMutablePointer<AVFrame>?
    /// A second reference to a caller's `VideoFrame`, carrying our pts and picture type, so the caller's own
    /// `AVFrame` is never changed (one decoded frame can go to several scalers and encoders in turn).
    private var borrowed: UnsafeMutablePointer<AVFrame>?
    public let options: VideoEncoderOptions

    public init(_ options: VideoEncoderOptions) throws {
        let context = "cannot encode \(options.codec) \(options.width)x\(options.height)"
        guard options.width > 0, options.height > 0, options.timeBase.isValid, options.frameRate.isValid,
              (1...VideoEncoderOptions.maxGOPFrames).contains(options.gopFrames) else {
            throw FFmpegError.invalid(context, "invalid encoder settings (size, time base and frame rate must be positive, the GOP 1-\(VideoEncoderOptions.maxGOPFrames) frames; got \(options.gopFrames) at \(options.frameRate) fps)")
        }
        self.options = options
        let aom = options.codec == .av1 && options.exactKeyframes
        core = try EncoderCore(codecName: aom ? "libaom-av1" : options.codec.encoderName, context: context) { ctx in
            ctx.pointee.width = Int32(options.width)
            ctx.pointee.height = Int32(options.height)
            ctx.pointee.pix_fmt = AV_PIX_FMT_YUV420P
            ctx.pointee.time_base = options.timeBase.av
            ctx.pointee.framerate = options.frameRate.av
            ctx.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
            ctx.pointee.gop_size = Int32(options.gopFrames)
            ctx.pointee.keyint_min = Int32(options.gopFrames)
            ctx.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
            ctx.pointee.thread_count = Int32(clamping: max(0, options.threads))  // 0: auto
            let priv = ctx.pointee.priv_data
            func set(_ key: String, _ value: String) throws {
                try check(av_opt_set(priv, key, value, 0), "av_opt_set", "\(context): \(options.codec.encoderName) option \(key)=\(value)")
            }
            if aom { return try VideoEncoder.configureAOM(ctx, options, set) }
            if options.codec == .av1 { return try VideoEncoder.configureSVTAV1(ctx, options, set) }
            try set("preset", options.preset)
            if let tune = options.tune { try set("tune", tune) }
            if let bitRate = options.bitRate {
                ctx.pointee.bit_rate = Int64(bitRate)
            } else {
                try set("crf", String(options.crf ?? 23))
            }
            if let maxBitRate = options.maxBitRate {
                ctx.pointee.rc_max_rate = Int64(maxBitRate)
                ctx.pointee.rc_buffer_size = Int32(clamping: options.bufferSize ?? maxBitRate)
            }
            try set("forced-idr", "1")
            let gop = "keyint=\(options.gopFrames):min-keyint=\(options.gopFrames):scenecut=0"
            switch options.codec {
            case .h264: try set("x264-params", gop)
            // x265 logs at info level to stderr by itself: errors only. No open GOP: every forced I is an IDR the
            // segment can start with.
            case .hevc: try set("x265-params", gop + ":open-gop=0:log-level=error")
            case .av1: break
            }
        }
        // One frame in ticks of the time base: (fps.den / fps.num) / (tb.num / tb.den).
        core.defaultDuration = MediaTime.scale(Int64(options.frameRate.denominator) * Int64(options.timeBase.denominator),
                                               by: 1, over: Int64(options.frameRate.numerator) * Int64(options.timeBase.numerator))
        frame = av_frame_alloc()
        borrowed = av_frame_alloc()
        guard let frame, borrowed != nil else { throw FFmpegError(code: AV.enomem, call: "av_frame_alloc", context: context) }
        frame.pointee.width = Int32(options.width)
        frame.pointee.height = Int32(options.height)
        frame.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        try check(av_frame_get_buffer(frame, 0), "av_frame_get_buffer", context)
    }

    deinit {
        av_frame_free(&frame)
        av_frame_free(&borrowed)
    }

    /// SVT-AV1's settings: its numbered preset for x264's name (veryfast: 10), CRF on its 0-63 scale (x264's 0-51
    /// scaled), a closed fixed GOP of `gopFrames` (keyframes on the segment grid from the first frame; SVT-AV1 1.4
    /// through FFmpeg 5.1 does not honour a forced keyframe), no scene-change keyframes, and the low-delay prediction
    /// structure for `tune zerolatency` (no lookahead: frames come out as they go in).
    static func configureSVTAV1(_ ctx: UnsafeMutablePointer<AVCodecContext>, _ options: VideoEncoderOptions,
                                _ set: (String, String) throws -> Void) throws {
        // SVT-AV1 logs its banner and settings at info level straight to stderr; its SVT_LOG variable (1: errors)
        // quiets that unless the user set it.
        setenv("SVT_LOG", "1", 0)
        let presets = ["placebo": 2, "veryslow": 4, "slower": 5, "slow": 6, "medium": 7, "fast": 8, "faster": 9,
                       "veryfast": 10, "superfast": 11, "ultrafast": 12]
        try set("preset", String(presets[options.preset] ?? Int(options.preset) ?? 10))
        if let bitRate = options.bitRate {
            ctx.pointee.bit_rate = Int64(bitRate)
        } else {
            try set("crf", String((options.crf ?? 23) * 63 / 51))
        }
        var params = "scd=0:irefresh-type=2"
        if options.tune == "zerolatency" { params += ":pred-struct=1" }
        try set("svtav1-params", params)
    }

    /// libaom-av1's settings, for AV1 whose keyframes must fall where they are forced (FFmpeg's wrapper turns a frame's
    /// `pict_type` I into `AOM_EFLAG_FORCE_KF`; SVT-AV1 cannot): the realtime usage at the fastest speed FFmpeg 5.1
    /// allows for x264's fast presets (`cpu-used` 8; slower presets lower), CRF on the same 0-63 scale as SVT-AV1's, no
    /// lookahead under `tune zerolatency`, row multithreading. The GOP is the segment's; forced keyframes come before it.
    static func configureAOM(_ ctx: UnsafeMutablePointer<AVCodecContext>, _ options: VideoEncoderOptions,
                             _ set: (String, String) throws -> Void) throws {
        let speeds = ["placebo": 2, "veryslow": 3, "slower": 4, "slow": 5, "medium": 6, "fast": 7, "faster": 8,
                      "veryfast": 8, "superfast": 8, "ultrafast": 8]
        try set("usage", "realtime")
        try set("cpu-used", String(min(8, speeds[options.preset] ?? Int(options.preset) ?? 8)))
        try set("row-mt", "1")
        if options.tune == "zerolatency" { try set("lag-in-frames", "0") }
        if let bitRate = options.bitRate {
            ctx.pointee.bit_rate = Int64(bitRate)
        } else {
            try set("crf", String((options.crf ?? 23) * 63 / 51))
        }
    }

    /// Annex-B parameter sets as the encoder gives them (x264: SPS/PPS `00 00 00 01 67 ...`; x265: VPS/SPS/PPS);
    /// convert to `avcC` / `hvcC` for MP4.
    public var extradata: [UInt8] { core.extradata }

    /// Test hook: the VBV settings the codec context was opened with (bits per second, bits).
    var vbv: (maxRate: Int, bufferSize: Int) {
        (Int(core.ctx?.pointee.rc_max_rate ?? 0), Int(core.ctx?.pointee.rc_buffer_size ?? 0))
    }

    /// Encodes one frame (`pts` in ticks of `options.timeBase`). Packets come out in decode order.
    public func encode(_ raw: RawVideoFrame, forceKeyframe: Bool = false) throws -> [EncodedPacket] {
        guard let frame else { return [] }
        let w = options.width, h = options.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        guard raw.width == w, raw.height == h, raw.y.count >= w * h, raw.cb.count >= cw * ch, raw.cr.count >= cw * ch else {
            throw FFmpegError.invalid(core.context, "frame is \(raw.width)x\(raw.height) with planes of "
                                      + "\(raw.y.count)/\(raw.cb.count)/\(raw.cr.count) bytes, expected \(w)x\(h) yuv420p")
        }
        // Our frame buffer is reused: copy-on-write only if the encoder still holds a reference to it.
        try check(av_frame_make_writable(frame), "av_frame_make_writable", core.context)
        copyIntoPlane(raw.y, frame.pointee.data.0, frame.pointee.linesize.0, w, h)
        copyIntoPlane(raw.cb, frame.pointee.data.1, frame.pointee.linesize.1, cw, ch)
        copyIntoPlane(raw.cr, frame.pointee.data.2, frame.pointee.linesize.2, cw, ch)
        frame.pointee.pts = raw.pts
        frame.pointee.pict_type = forceKeyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
        frame.pointee.key_frame = forceKeyframe ? 1 : 0
        return try core.encode(frame)
    }

    /// Encodes a decoded frame as it is, without copying its pixels (`pts` in ticks of `options.timeBase`).
    /// Packets come out in decode order. `frame` is left as it was: the encoder sends its own reference to the
    /// picture (with this `pts` and picture type), so the same frame can be encoded again by another encoder.
    public func encode(_ frame: VideoFrame, pts: Int64, forceKeyframe: Bool = false) throws -> [EncodedPacket] {
        guard let borrowed else { return [] }
        let f = frame.frame
        guard frame.width == options.width, frame.height == options.height,
              f.pointee.format == AV_PIX_FMT_YUV420P.rawValue else {
            let name = av_get_pix_fmt_name(AVPixelFormat(rawValue: f.pointee.format)).map { String(cString: $0) } ?? "?"
            throw FFmpegError.invalid(core.context, "frame is \(name) \(frame.width)x\(frame.height), "
                                      + "expected yuv420p \(options.width)x\(options.height)")
        }
        try check(av_frame_ref(borrowed, f), "av_frame_ref", core.context)
        defer { av_frame_unref(borrowed) }
        borrowed.pointee.pts = pts
        borrowed.pointee.pict_type = forceKeyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
        borrowed.pointee.key_frame = forceKeyframe ? 1 : 0
        // Unset, like the frames `encode(_ raw:)` sends: the context says square pixels.
        borrowed.pointee.sample_aspect_ratio = AVRational(num: 0, den: 1)
        return try core.encode(borrowed)
    }

    /// Drains the frames x264 still holds (end of input). The encoder cannot be used afterwards.
    public func flush() throws -> [EncodedPacket] { try core.encode(nil) }
}

/// Copies a packed plane (`width` bytes per row) into a padded FFmpeg plane.
func copyIntoPlane(_ source: [UInt8], _ destination: UnsafeMutablePointer<UInt8>?, _ linesize: Int32, _ width: Int, _ height: Int) {
    guard let destination else { return }
    let stride = Int(linesize)
    source.withUnsafeBytes { src in
        guard let base = src.baseAddress else { return }
        if stride == width {
            UnsafeMutableRawPointer(destination).copyMemory(from: base, byteCount: width * height)
        } else {
            for row in 0..<height {
                UnsafeMutableRawPointer(destination + row * stride).copyMemory(from: base + row * width, byteCount: width)
            }
        }
    }
}

/// AAC-LC with FFmpeg's native encoder (or Opus with libopus, AC-3 with FFmpeg's, per `options.codec`). Takes s16
/// interleaved frames of any length and cuts them into `frameSize` chunks; timestamps count samples from the first
/// frame's `pts` (`sampleRate` ticks). Packets carry the encoder's own timestamps: the first starts `primingSamples`
/// before the first input sample.
public final class AudioEncoder {
    private let core: EncoderCore
    private var frame: UnsafeMutablePointer<AVFrame>?
    public let options: AudioEncoderOptions
    /// Samples per frame (AAC 1024, Opus 960 at 20 ms, AC-3 1536).
    public let frameSize: Int
    /// Encoder delay (`initial_padding`: 1024 for FFmpeg's AAC encoder, Opus's pre-skip 312, AC-3 256).
    public let primingSamples: Int
    private var pending: [Int16] = []
    private var pendingStart = 0
    private var nextPTS: Int64?
    /// libopus takes interleaved float; AAC and AC-3 planar float.
    private let planar: Bool

    public init(_ options: AudioEncoderOptions) throws {
        let context = "cannot encode \(options.codec) \(options.sampleRate) Hz \(options.channelCount) ch"
        guard options.sampleRate > 0, (1...8).contains(options.channelCount), options.bitRate > 0 else {
            throw FFmpegError.invalid(context, "invalid encoder settings")
        }
        self.options = options
        planar = options.codec != .opus
        core = try EncoderCore(codecName: options.codec.encoderName, context: context) { [planar] ctx in
            ctx.pointee.sample_fmt = planar ? AV_SAMPLE_FMT_FLTP : AV_SAMPLE_FMT_FLT
            ctx.pointee.sample_rate = Int32(options.sampleRate)
            av_channel_layout_uninit(&ctx.pointee.ch_layout)
            av_channel_layout_default(&ctx.pointee.ch_layout, Int32(options.channelCount))
            ctx.pointee.bit_rate = Int64(options.bitRate)
            ctx.pointee.time_base = AVRational(num: 1, den: Int32(options.sampleRate))
            if options.codec == .aac { ctx.pointee.profile = FF_PROFILE_AAC_LOW }
            ctx.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        }
        let ctx = core.ctx!
        frameSize = Int(ctx.pointee.frame_size)
        primingSamples = Int(ctx.pointee.initial_padding)
        core.defaultDuration = Int64(frameSize)
        frame = av_frame_alloc()
        guard let frame, frameSize > 0 else { throw FFmpegError(code: AV.enomem, call: "av_frame_alloc", context: context) }
        frame.pointee.nb_samples = Int32(frameSize)
        frame.pointee.format = (planar ? AV_SAMPLE_FMT_FLTP : AV_SAMPLE_FMT_FLT).rawValue
        frame.pointee.sample_rate = Int32(options.sampleRate)
        try check(av_channel_layout_copy(&frame.pointee.ch_layout, &ctx.pointee.ch_layout), "av_channel_layout_copy", context)
        try check(av_frame_get_buffer(frame, 0), "av_frame_get_buffer", context)
    }

    deinit { av_frame_free(&frame) }

    /// AudioSpecificConfig: 2 bytes for AAC-LC (`11 90` = 48 kHz stereo).
    ///
    /// FFmpeg's encoder appends `56 E5 00`: a sync extension (0x2B7) saying explicitly "SBR: no"
    /// (ISO/IEC 14496-3 §1.6.5.2). It changes nothing for AAC-LC, so it is dropped: the short form is
    /// what every packager writes and every player expects.
    public var extradata: [UInt8] {
        let e = core.extradata
        if options.codec != .aac { return e }   // libopus: the OpusHead; AC-3: none
        if e.count == 5, e[2] == 0x56, e[3] == 0xE5, e[4] & 0x80 == 0, e[0] >> 3 == 2 { return Array(e.prefix(2)) }
        return e
    }

    public func encode(_ raw: RawAudioFrame) throws -> [EncodedPacket] {
        guard raw.sampleRate == options.sampleRate, raw.channelCount == options.channelCount else {
            throw FFmpegError.invalid(core.context, "got \(raw.sampleRate) Hz \(raw.channelCount) ch audio")
        }
        if nextPTS == nil { nextPTS = raw.pts }
        pending.append(contentsOf: raw.samples.prefix(raw.frameCount * raw.channelCount))
        var out: [EncodedPacket] = []
        let chunk = frameSize * options.channelCount
        while pending.count - pendingStart >= chunk {
            out += try encodeChunk(frames: frameSize)
        }
        if pendingStart > 0 && pendingStart >= pending.count / 2 {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        return out
    }

    /// Encodes what is buffered (a short last frame) and drains the encoder. It cannot be used afterwards.
    public func flush() throws -> [EncodedPacket] {
        var out: [EncodedPacket] = []
        let left = (pending.count - pendingStart) / options.channelCount
        if left > 0 && options.codec == .ac3 {
            // The AC-3 encoder takes whole frames only: the last one is completed with silence.
            pending += [Int16](repeating: 0, count: (frameSize - left) * options.channelCount)
            out += try encodeChunk(frames: frameSize)
        } else if left > 0 {
            out += try encodeChunk(frames: left)
        }
        pending = []
        pendingStart = 0
        out += try core.encode(nil)
        return out
    }

    private func encodeChunk(frames: Int) throws -> [EncodedPacket] {
        guard let frame else { return [] }
        try check(av_frame_make_writable(frame), "av_frame_make_writable", core.context)
        let channels = options.channelCount
        frame.pointee.nb_samples = Int32(frames)
        let scale: Float = 1.0 / 32768.0
        pending.withUnsafeBufferPointer { src in
            let base = src.baseAddress! + pendingStart
            if !planar, let plane = frame.pointee.data.0 {
                plane.withMemoryRebound(to: Float.self, capacity: frames * channels) { dst in
                    for i in 0..<(frames * channels) { dst[i] = Float(base[i]) * scale }
                }
                return
            }
            for c in 0..<channels {
                guard let plane = frame.pointee.extended_data[c] else { continue }
                plane.withMemoryRebound(to: Float.self, capacity: frames) { dst in
                    for i in 0..<frames { dst[i] = Float(base[i * channels + c]) * scale }
                }
            }
        }
        pendingStart += frames * channels
        frame.pointee.pts = nextPTS ?? 0
        nextPTS = frame.pointee.pts + Int64(frames)
        return try core.encode(frame)
    }
}
