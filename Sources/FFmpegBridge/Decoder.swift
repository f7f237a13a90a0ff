internal import CFFmpeg
import MediaCore

/// Shared decoding machinery: one `AVCodecContext`, one reusable packet and frame.
/// Errors from corrupt input throw `FFmpegError`; the decoder stays usable for the next packet.
final class DecoderCore {
    var ctx: UnsafeMutablePointer<AVCodecContext>?
    var packet: UnsafeMutablePointer<AVPacket>?
    var frame: UnsafeMutablePointer<AVFrame>?
    let streamIndex: Int
    let context: String
    /// Errors the decoder reported after it had already produced frames in the same call (not thrown).
    var skippedErrors = 0

    init(parameters: UnsafePointer<AVCodecParameters>, streamIndex: Int, timeBase: Rational, kind: String) throws {
        self.streamIndex = streamIndex
        let codecName = String(cString: avcodec_get_name(parameters.pointee.codec_id))
        context = "cannot decode \(kind) stream \(streamIndex) (\(codecName))"
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw FFmpegError(code: cff_averror_decoder_not_found(), call: "avcodec_find_decoder", context: context)
        }
        ctx = avcodec_alloc_context3(codec)
        packet = av_packet_alloc()
        frame = av_frame_alloc()
        guard let ctx, packet != nil, frame != nil else {
            throw FFmpegError(code: AV.enomem, call: "avcodec_alloc_context3", context: context)
        }
        try check(avcodec_parameters_to_context(ctx, parameters), "avcodec_parameters_to_context", context)
        ctx.pointee.pkt_timebase = timeBase.av
        ctx.pointee.thread_count = 0  // auto
        try check(avcodec_open2(ctx, codec, nil), "avcodec_open2", context)
    }

    deinit {
        avcodec_free_context(&ctx)
        av_packet_free(&packet)
        av_frame_free(&frame)
    }

    /// Sends one packet (nil = drain) and hands every frame it yields to `body`.
    func decode(_ input: Packet?, _ body: (UnsafeMutablePointer<AVFrame>) throws -> Void) throws {
        guard let ctx, let packet, let frame else { return }
        var produced = 0
        if let input {
            try load(input, into: packet)
            defer { av_packet_unref(packet) }
            var r = avcodec_send_packet(ctx, packet)
            if r == AV.eagain {  // should not happen (we always drain), but be correct: drain, then resend
                produced += try receiveAll(ctx, frame, body)
                r = avcodec_send_packet(ctx, packet)
            }
            if r == AV.eof { return }
            try check(r, "avcodec_send_packet", context)
        } else {
            // Drain, then reset, so the decoder takes new input afterwards (e.g. after a loop) even if draining failed.
            defer { avcodec_flush_buffers(ctx) }
            let r = avcodec_send_packet(ctx, nil)
            if r < 0 && r != AV.eof { try check(r, "avcodec_send_packet", context) }
            _ = try receiveAll(ctx, frame, body, draining: true)
            return
        }
        _ = try receiveAll(ctx, frame, body, producedBefore: produced)
    }

    /// `input` copied into `packet` (unreferenced first): its bytes, times, flags and new extradata.
    func load(_ input: Packet, into packet: UnsafeMutablePointer<AVPacket>) throws {
        av_packet_unref(packet)
        if !input.data.isEmpty {
            try check(av_new_packet(packet, Int32(input.data.count)), "av_new_packet", context)
            input.data.withUnsafeBytes { packet.pointee.data.update(from: $0.bindMemory(to: UInt8.self).baseAddress!,
                                                                    count: input.data.count) }
        }
        packet.pointee.pts = input.pts ?? AV.noPTS
        packet.pointee.dts = input.dts ?? AV.noPTS
        packet.pointee.duration = input.duration
        packet.pointee.flags = (input.isKeyframe ? AV_PKT_FLAG_KEY : 0) | (input.isCorrupt ? AV_PKT_FLAG_CORRUPT : 0)
        if let extra = input.newExtradata, !extra.isEmpty,
           let side = av_packet_new_side_data(packet, AV_PKT_DATA_NEW_EXTRADATA, extra.count) {
            extra.withUnsafeBufferPointer { side.update(from: $0.baseAddress!, count: extra.count) }
        }
    }

    private func receiveAll(_ ctx: UnsafeMutablePointer<AVCodecContext>, _ frame: UnsafeMutablePointer<AVFrame>,
                            _ body: (UnsafeMutablePointer<AVFrame>) throws -> Void,
                            producedBefore: Int = 0, draining: Bool = false) throws -> Int {
        var produced = producedBefore
        var errors = 0
        while true {
            let r = avcodec_receive_frame(ctx, frame)
            if r == AV.eagain || r == AV.eof { return produced }
            if r < 0 {
                // While draining, a bad frame must not strand the good ones behind it.
                if draining && errors < 64 { errors += 1; skippedErrors += 1; continue }
                if produced > 0 { skippedErrors += 1; return produced }
                try check(r, "avcodec_receive_frame", context)
            }
            defer { av_frame_unref(frame) }
            try body(frame)
            produced += 1
        }
    }
}

/// Decodes one video stream to yuv420p frames at the output size (libswscale converts when needed).
/// Not `Sendable`: one task owns it.
public final class VideoDecoder {
    private let core: DecoderCore
    private let output: VideoOutputFormat
    private let frameDuration: Int64
    private var sws: OpaquePointer?
    private var scaled: UnsafeMutablePointer<AVFrame>?
    private var lastPTS: Int64?

    public var streamIndex: Int { core.streamIndex }
    /// Decoder errors that were swallowed because the same call had already produced frames.
    public var skippedErrors: Int { core.skippedErrors }

    init(parameters: UnsafePointer<AVCodecParameters>, streamIndex: Int, timeBase: Rational, frameRate: Rational?,
         output: VideoOutputFormat) throws {
        core = try DecoderCore(parameters: parameters, streamIndex: streamIndex, timeBase: timeBase, kind: "video")
        self.output = output
        if let fps = frameRate, timeBase.isValid {
            // ticks per frame = (1 / fps) / timeBase
            frameDuration = max(1, MediaTime.rescale(Int64(fps.denominator) * Int64(timeBase.denominator),
                                                     from: fps.numerator * timeBase.numerator, to: 1))
        } else {
            frameDuration = 1
        }
    }

    deinit {
        sws_freeContext(sws)
        av_frame_free(&scaled)
    }

    /// Frames in presentation order; `pts` = best-effort timestamp in the stream time base.
    public func decode(_ packet: Packet) throws -> [RawVideoFrame] {
        var frames: [RawVideoFrame] = []
        try core.decode(packet) { frames.append(try convert($0)) }
        return frames
    }

    /// Drains the frames the decoder still holds (end of input), then resets it for new input.
    public func flush() throws -> [RawVideoFrame] {
        var frames: [RawVideoFrame] = []
        try core.decode(nil) { frames.append(try convert($0)) }
        return frames
    }

    private func outputSize(_ w: Int, _ h: Int) -> (Int, Int) {
        switch (output.width, output.height) {
        case let (ow?, oh?): return (ow, oh)
        case let (ow?, nil): return (ow, max(2, Int((Double(h) * Double(ow) / Double(w) / 2).rounded()) * 2))
        case let (nil, oh?): return (max(2, Int((Double(w) * Double(oh) / Double(h) / 2).rounded()) * 2), oh)
        case (nil, nil): return (w, h)
        }
    }

    /// Like `decode(_:)`, but the frames stay in FFmpeg memory: no copy when the decoder already gives
    /// yuv420p at the output size, one libswscale pass into a new frame otherwise.
    public func decodeFrames(_ packet: Packet) throws -> [VideoFrame] {
        var frames: [VideoFrame] = []
        try core.decode(packet) { frames.append(try keep($0)) }
        return frames
    }

    /// Like `flush()`, returning frames that stay in FFmpeg memory.
    public func flushFrames() throws -> [VideoFrame] {
        var frames: [VideoFrame] = []
        try core.decode(nil) { frames.append(try keep($0)) }
        return frames
    }

    private func keep(_ frame: UnsafeMutablePointer<AVFrame>) throws -> VideoFrame {
        let f = frame.pointee
        let w = Int(f.width), h = Int(f.height)
        guard w > 0, h > 0 else { throw FFmpegError.invalid(core.context, "decoded an empty picture") }
        let pts = timestamp(f)
        let (ow, oh) = outputSize(w, h)
        if f.format == AV_PIX_FMT_YUV420P.rawValue && ow == w && oh == h {
            return try VideoFrame(moving: frame, pts: pts)
        }
        guard let out = av_frame_alloc() else {
            throw FFmpegError(code: AV.enomem, call: "av_frame_alloc", context: core.context)
        }
        var owned: UnsafeMutablePointer<AVFrame>? = out
        defer { av_frame_free(&owned) }
        out.pointee.width = Int32(ow)
        out.pointee.height = Int32(oh)
        out.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        try check(av_frame_get_buffer(out, 0), "av_frame_get_buffer", core.context)
        try scale(frame, into: out)
        // Timestamps, colour and side data (A/53 captions among them) stay with the converted picture.
        try check(av_frame_copy_props(out, frame), "av_frame_copy_props", core.context)
        return try VideoFrame(moving: out, pts: pts)
    }

    private func timestamp(_ f: AVFrame) -> Int64 {
        var pts: Int64
        if f.best_effort_timestamp != AV.noPTS { pts = f.best_effort_timestamp }
        else if f.pts != AV.noPTS { pts = f.pts }
        else { pts = (lastPTS.map { $0 + (f.pkt_duration > 0 ? f.pkt_duration : frameDuration) }) ?? 0 }
        if let lastPTS, pts <= lastPTS, f.best_effort_timestamp == AV.noPTS { pts = lastPTS + frameDuration }
        lastPTS = pts
        return pts
    }

    private func convert(_ frame: UnsafeMutablePointer<AVFrame>) throws -> RawVideoFrame {
        let f = frame.pointee
        let w = Int(f.width), h = Int(f.height)
        guard w > 0, h > 0 else { throw FFmpegError.invalid(core.context, "decoded an empty picture") }
        let pts = timestamp(f)
        let (ow, oh) = outputSize(w, h)
        var source = frame
        if f.format != AV_PIX_FMT_YUV420P.rawValue || ow != w || oh != h {
            source = try scale(frame, to: ow, oh)
        }
        let s = source.pointee
        let cw = (ow + 1) / 2, ch = (oh + 1) / 2
        return RawVideoFrame(width: ow, height: oh,
                             y: copyPlane(s.data.0, s.linesize.0, ow, oh),
                             cb: copyPlane(s.data.1, s.linesize.1, cw, ch),
                             cr: copyPlane(s.data.2, s.linesize.2, cw, ch),
                             pts: pts)
    }

    /// Converts `frame` into `out` (yuv420p, its own size) with a cached libswscale context.
    private func scale(_ frame: UnsafeMutablePointer<AVFrame>, into out: UnsafeMutablePointer<AVFrame>) throws {
        let f = frame.pointee
        let ow = out.pointee.width, oh = out.pointee.height
        sws = sws_getCachedContext(sws, f.width, f.height, AVPixelFormat(rawValue: f.format),
                                   ow, oh, AV_PIX_FMT_YUV420P, SWS_BILINEAR, nil, nil, nil)
        guard let sws else {
            let name = av_get_pix_fmt_name(AVPixelFormat(rawValue: f.format)).map { String(cString: $0) } ?? "\(f.format)"
            throw FFmpegError.invalid(core.context, "cannot convert \(name) \(f.width)x\(f.height) to yuv420p \(ow)x\(oh)",
                                      call: "sws_getCachedContext")
        }
        try check(cff_sws_scale_frame(sws, out, frame), "sws_scale", core.context)
    }

    private func scale(_ frame: UnsafeMutablePointer<AVFrame>, to ow: Int, _ oh: Int) throws -> UnsafeMutablePointer<AVFrame> {
        if let s = scaled, s.pointee.width != Int32(ow) || s.pointee.height != Int32(oh) { av_frame_free(&scaled) }
        if scaled == nil {
            guard let s = av_frame_alloc() else {
                throw FFmpegError(code: AV.enomem, call: "av_frame_alloc", context: core.context)
            }
            scaled = s
            s.pointee.width = Int32(ow)
            s.pointee.height = Int32(oh)
            s.pointee.format = AV_PIX_FMT_YUV420P.rawValue
            try check(av_frame_get_buffer(s, 0), "av_frame_get_buffer", core.context)
        }
        let out = scaled!
        try scale(frame, into: out)
        return out
    }
}

/// Copies `height` rows of `width` bytes, dropping the line padding.
func copyPlane(_ base: UnsafeMutablePointer<UInt8>?, _ linesize: Int32, _ width: Int, _ height: Int) -> [UInt8] {
    guard let base, width > 0, height > 0 else { return [] }
    let stride = Int(linesize)
    if stride == width { return copyBytes(base, count: width * height) }
    return [UInt8](unsafeUninitializedCapacity: width * height) { buffer, initialized in
        let dst = UnsafeMutableRawPointer(buffer.baseAddress!)
        for row in 0..<height {
            (dst + row * width).copyMemory(from: base + row * stride, byteCount: width)
        }
        initialized = width * height
    }
}

/// Decodes one audio stream to interleaved s16 at the output rate and channel count (libswresample).
/// `pts` counts output samples, anchored on the stream's timestamps (re-anchored after a jump of > 50 ms).
public final class AudioDecoder {
    private let core: DecoderCore
    private let output: AudioOutputFormat
    private let timeBase: Rational
    private var swr: OpaquePointer?
    private var swrInput: (format: Int32, rate: Int32, layout: String)?
    private var nextPTS: Int64?

    public var streamIndex: Int { core.streamIndex }
    public var skippedErrors: Int { core.skippedErrors }

    init(parameters: UnsafePointer<AVCodecParameters>, streamIndex: Int, timeBase: Rational, output: AudioOutputFormat) throws {
        guard output.sampleRate > 0, output.channelCount > 0 else {
            throw FFmpegError.invalid("cannot decode audio stream \(streamIndex)",
                                      "invalid output \(output.sampleRate) Hz, \(output.channelCount) channels")
        }
        core = try DecoderCore(parameters: parameters, streamIndex: streamIndex, timeBase: timeBase, kind: "audio")
        self.output = output
        self.timeBase = timeBase
    }

    deinit { swr_free(&swr) }

    public func decode(_ packet: Packet) throws -> [RawAudioFrame] {
        var frames: [RawAudioFrame] = []
        try core.decode(packet) { if let f = try convert($0) { frames.append(f) } }
        return frames
    }

    /// Drains the decoder and the resampler (end of input), then resets them for new input.
    public func flush() throws -> [RawAudioFrame] {
        var frames: [RawAudioFrame] = []
        try core.decode(nil) { if let f = try convert($0) { frames.append(f) } }
        if swr != nil, let last = try resample(nil) { frames.append(last) }
        swr_free(&swr)
        swrInput = nil
        return frames
    }

    private func convert(_ frame: UnsafeMutablePointer<AVFrame>) throws -> RawAudioFrame? {
        let f = frame.pointee
        guard f.nb_samples > 0 else { return nil }
        try configure(frame)
        let rate = Int64(output.sampleRate)
        let delay = swr_get_delay(swr, rate)
        let ts = f.best_effort_timestamp != AV.noPTS ? f.best_effort_timestamp : f.pts
        if ts != AV.noPTS, timeBase.isValid {
            let actual = MediaTime.rescale(ts, timeBase: timeBase, to: Int32(clamping: rate)) - delay
            if nextPTS == nil || abs(actual - nextPTS!) > rate / 20 { nextPTS = actual }
        } else if nextPTS == nil {
            nextPTS = 0
        }
        return try resample(frame)
    }

    private func configure(_ frame: UnsafeMutablePointer<AVFrame>) throws {
        let f = frame.pointee
        var inLayout = AVChannelLayout()
        defer { av_channel_layout_uninit(&inLayout) }
        if f.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || f.ch_layout.nb_channels <= 0 {
            av_channel_layout_default(&inLayout, max(1, f.ch_layout.nb_channels))
        } else {
            try check(av_channel_layout_copy(&inLayout, &frame.pointee.ch_layout), "av_channel_layout_copy", core.context)
        }
        let layoutName = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 128) { buf in
            _ = av_channel_layout_describe(&inLayout, buf.baseAddress, buf.count)
            return String(cString: buf.baseAddress!)
        }
        if let input = swrInput, swr != nil, input.format == f.format, input.rate == f.sample_rate,
           input.layout == layoutName { return }
        swr_free(&swr)
        var outLayout = AVChannelLayout()
        defer { av_channel_layout_uninit(&outLayout) }
        av_channel_layout_default(&outLayout, Int32(output.channelCount))
        try check(swr_alloc_set_opts2(&swr, &outLayout, AV_SAMPLE_FMT_S16, Int32(output.sampleRate),
                                      &inLayout, AVSampleFormat(rawValue: f.format), f.sample_rate, 0, nil),
                  "swr_alloc_set_opts2", core.context)
        try check(swr_init(swr), "swr_init", core.context)
        swrInput = (f.format, f.sample_rate, layoutName)
    }

    /// Converts `frame` (nil drains the resampler) into one output frame.
    private func resample(_ frame: UnsafeMutablePointer<AVFrame>?) throws -> RawAudioFrame? {
        guard let swr else { return nil }
        let inSamples = frame.map { Int32($0.pointee.nb_samples) } ?? 0
        let capacity = Int(swr_get_out_samples(swr, inSamples)) + 32
        guard capacity > 0 else { return nil }
        let channels = output.channelCount
        var got: Int32 = 0
        let samples = try [Int16](unsafeUninitializedCapacity: capacity * channels) { buffer, initialized in
            got = buffer.baseAddress!.withMemoryRebound(to: UInt8.self, capacity: capacity * channels * 2) { out in
                cff_swr_convert_to_packed(swr, out, Int32(capacity), frame)
            }
            initialized = got > 0 ? Int(got) * channels : 0
            try check(got, "swr_convert", core.context)
        }
        guard got > 0 else { return nil }
        let pts = nextPTS ?? 0
        nextPTS = pts + Int64(got)
        return RawAudioFrame(sampleRate: output.sampleRate, channelCount: channels, samples: samples, pts: pts)
    }
}
