internal import CFFmpeg
import MediaCore

/// One H.264 keyframe → a small JPEG (the stream list's thumbnails): libavcodec's H.264 decoder, libswscale to a
/// full-range picture at most `maxWidth` wide (display aspect kept), libavcodec's MJPEG encoder.
///
/// Each call opens its own decoder and encoder (a keyframe decodes on its own; a thumbnail is made at most every few
/// seconds per stream), so nothing is kept between calls and any thread may call it.
public enum JPEGThumbnail {
    /// `avcC`: the AVCDecoderConfigurationRecord of the track; `sample`: one IDR access unit, length-prefixed NAL
    /// units as in MP4. `sampleAspect`: the pixel aspect ratio (`num/den`), for the display width.
    public static func make(avcC: [UInt8], sample: [UInt8], sampleAspect: Rational = Rational(1, 1),
                            maxWidth: Int = 320, quality: Int = 5) throws -> [UInt8] {
        let context = "cannot make a thumbnail"
        guard !avcC.isEmpty, !sample.isEmpty else { throw FFmpegError.invalid(context, "no keyframe") }
        let picture = try decode(avcC: avcC, sample: sample, context: context)
        defer { var p: UnsafeMutablePointer<AVFrame>? = picture; av_frame_free(&p) }
        let srcW = Int(picture.pointee.width), srcH = Int(picture.pointee.height)
        guard srcW > 0, srcH > 0 else { throw FFmpegError.invalid(context, "the decoded picture is empty") }
        // Display width from the pixel aspect; then fit into maxWidth, even sizes for 4:2:0.
        let sar = sampleAspect.isValid && sampleAspect.numerator > 0 ? sampleAspect : Rational(1, 1)
        let displayW = max(1, srcW * Int(sar.numerator) / Int(sar.denominator))
        let width = min(maxWidth, displayW) & ~1
        let height = max(2, (srcH * width / displayW) & ~1)
        guard width >= 2 else { throw FFmpegError.invalid(context, "the picture is too narrow (\(srcW)x\(srcH))") }
        let scaled = try scale(picture, width: width, height: height, context: context)
        defer { var p: UnsafeMutablePointer<AVFrame>? = scaled; av_frame_free(&p) }
        return try encode(scaled, quality: quality, context: context)
    }

    /// Decodes the one access unit (sent, then drained) into a new frame the caller frees.
    static func decode(avcC: [UInt8], sample: [UInt8], context: String) throws -> UnsafeMutablePointer<AVFrame> {
        try decode(.h264(avcC: avcC), sample: sample, context: context)
    }

    /// `decode` for a keyframe of H.264 (`avcC`), H.265 (`hvcC`) or AV1 (`av1C`, dav1d preferred: FFmpeg 5.1's own AV1
    /// decoder needs a hardware accelerator), the track's configuration record given to the decoder as its
    /// extradata, as MP4 carries it.
    static func decode(_ record: TrackFormat.Codec, sample: [UInt8], context: String) throws -> UnsafeMutablePointer<AVFrame> {
        let found: (codec: UnsafePointer<AVCodec>?, extradata: [UInt8])
        switch record {
        case .h264(let avcC): found = (avcodec_find_decoder(AV_CODEC_ID_H264), avcC)
        case .hevc(let hvcC): found = (avcodec_find_decoder(AV_CODEC_ID_HEVC), hvcC)
        case .av1(let av1C): found = (avcodec_find_decoder_by_name("libdav1d") ?? avcodec_find_decoder(AV_CODEC_ID_AV1), av1C)
        default: throw FFmpegError.invalid(context, "not a video codec with keyframes to decode")
        }
        guard let codec = found.codec else {
            throw FFmpegError(code: cff_averror_decoder_not_found(), call: "avcodec_find_decoder", context: context)
        }
        let avcC = found.extradata
        var ctx = avcodec_alloc_context3(codec)
        var packet = av_packet_alloc()
        var frame = av_frame_alloc()
        defer {
            avcodec_free_context(&ctx)
            av_packet_free(&packet)
        }
        guard let ctx, let packet, let out = frame else {
            av_frame_free(&frame)
            throw FFmpegError(code: AV.enomem, call: "avcodec_alloc_context3", context: context)
        }
        do {
            // The configuration record as extradata: the decoder reads the parameter sets (or the AV1 sequence
            // header) from it and expects length-prefixed NAL units (AV1: OBUs as MP4 stores them).
            guard let extra = av_mallocz(avcC.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))?.assumingMemoryBound(to: UInt8.self) else {
                throw FFmpegError(code: AV.enomem, call: "av_mallocz", context: context)
            }
            avcC.withUnsafeBufferPointer { extra.update(from: $0.baseAddress!, count: avcC.count) }
            ctx.pointee.extradata = extra
            ctx.pointee.extradata_size = Int32(avcC.count)
            ctx.pointee.thread_count = 1
            try check(avcodec_open2(ctx, codec, nil), "avcodec_open2", context)
            try check(av_new_packet(packet, Int32(sample.count)), "av_new_packet", context)
            sample.withUnsafeBufferPointer { packet.pointee.data.update(from: $0.baseAddress!, count: sample.count) }
            packet.pointee.flags = AV_PKT_FLAG_KEY
            packet.pointee.pts = 0
            packet.pointee.dts = 0
            try check(avcodec_send_packet(ctx, packet), "avcodec_send_packet", context)
            _ = avcodec_send_packet(ctx, nil)
            let r = avcodec_receive_frame(ctx, out)
            if r == AV.eof || r == AV.eagain { throw FFmpegError.invalid(context, "the keyframe decoded to no picture") }
            try check(r, "avcodec_receive_frame", context)
            return out
        } catch {
            av_frame_free(&frame)
            throw error
        }
    }

    /// Scales to a new full-range yuv420p frame (a JPEG's range) the caller frees.
    private static func scale(_ src: UnsafeMutablePointer<AVFrame>, width: Int, height: Int,
                              context: String) throws -> UnsafeMutablePointer<AVFrame> {
        var out = av_frame_alloc()
        guard let frame = out else { throw FFmpegError(code: AV.enomem, call: "av_frame_alloc", context: context) }
        let s = src.pointee
        var sws = sws_getContext(s.width, s.height, AVPixelFormat(rawValue: s.format), Int32(width), Int32(height),
                                 AV_PIX_FMT_YUV420P, SWS_BICUBIC, nil, nil, nil)
        defer { sws_freeContext(sws); sws = nil }
        do {
            guard let sws else {
                throw FFmpegError.invalid(context, "libswscale cannot convert the decoded picture", call: "sws_getContext")
            }
            frame.pointee.width = Int32(width)
            frame.pointee.height = Int32(height)
            frame.pointee.format = AV_PIX_FMT_YUV420P.rawValue
            try check(av_frame_get_buffer(frame, 0), "av_frame_get_buffer", context)
            // Limited range in (what H.264 carries unless it says otherwise), full range out (what a JPEG means).
            let srcFull: Int32 = s.color_range == AVCOL_RANGE_JPEG ? 1 : 0
            let coefficients = sws_getCoefficients(s.colorspace == AVCOL_SPC_BT709 ? SWS_CS_ITU709 : SWS_CS_DEFAULT)
            _ = sws_setColorspaceDetails(sws, coefficients, srcFull, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16)
            try check(cff_sws_scale_frame(sws, frame, src), "sws_scale", context)
            frame.pointee.color_range = AVCOL_RANGE_JPEG
            return frame
        } catch {
            av_frame_free(&out)
            throw error
        }
    }

    static func encode(_ frame: UnsafeMutablePointer<AVFrame>, quality: Int, context: String) throws -> [UInt8] {
        let core = try EncoderCore(codecName: "mjpeg", context: context) { ctx in
            ctx.pointee.width = frame.pointee.width
            ctx.pointee.height = frame.pointee.height
            ctx.pointee.pix_fmt = AV_PIX_FMT_YUV420P
            ctx.pointee.color_range = AVCOL_RANGE_JPEG
            ctx.pointee.time_base = AVRational(num: 1, den: 25)
            // Fixed quantizer (2 best … 31 worst), as `ffmpeg -q:v`.
            ctx.pointee.flags |= AV_CODEC_FLAG_QSCALE
            ctx.pointee.global_quality = Int32(max(2, min(31, quality))) * FF_QP2LAMBDA
        }
        frame.pointee.quality = Int32(max(2, min(31, quality))) * FF_QP2LAMBDA
        frame.pointee.pts = 0
        var packets = try core.encode(frame)
        packets += try core.encode(nil)
        guard let jpeg = packets.first?.data, !jpeg.isEmpty else { throw FFmpegError.invalid(context, "the JPEG encoder gave nothing") }
        return jpeg
    }
}
