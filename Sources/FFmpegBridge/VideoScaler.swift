internal import CFFmpeg
import MediaCore

/// Scales decoded pictures to one fixed yuv420p size (libswscale), e.g. one rung of a bit-rate ladder:
/// one decoder feeds several scalers, each feeding its own `VideoEncoder`.
///
/// - The output keeps the input's `pts`. Its pixels are square for the caller's purposes: choose the size
///   from the source's display aspect ratio (`Ladder.plan` does); no sample aspect ratio is set on the frame.
/// - An input already yuv420p at the output size is passed on without a pixel copy (a new reference to the
///   same buffers).
/// - Every other output frame owns its own buffer from a pool: a buffer is reused only once every frame
///   that referred to it is gone, so an encoder may keep frames (lookahead) while more are scaled.
/// - The input size may change between calls (a new SPS mid-stream); the output size never does.
///
/// Filter: bicubic (libswscale's and the ffmpeg CLI's default). Measured on the project machine (2 cores,
/// busy; `BenchmarkTests`), 1280x720 in: to 854x480 0.8–1.0 ms/frame with either filter, to 640x360
/// 0.6–0.75 ms bicubic vs 0.47 ms bilinear, against 3.3 and 2.0 ms for libx264 veryfast to encode those
/// rungs: the sharper filter costs under 0.3 ms/frame per rung.
/// Not `Sendable`: one task owns it.
public final class VideoScaler {
    public let width: Int
    public let height: Int
    private let flags: Int32
    private var sws: OpaquePointer?
    private var pool: OpaquePointer?
    private let context: String
    /// Frames passed on without a pixel copy / frames converted by libswscale (test and stats hooks).
    private(set) var passedThrough = 0
    private(set) var scaled = 0

    /// libswscale filters, for measuring; `init(width:height:)` uses `.bicubic`.
    enum Filter {
        case bilinear, bicubic
        var flags: Int32 {
            switch self {
            case .bilinear: SWS_BILINEAR
            case .bicubic: SWS_BICUBIC
            }
        }
    }

    /// `width` and `height` must be positive (even, for 4:2:0 without a half chroma sample at the edges).
    public convenience init(width: Int, height: Int) {
        self.init(width: width, height: height, filter: .bicubic)
    }

    init(width: Int, height: Int, filter: Filter) {
        precondition(width > 0 && height > 0 && width <= 16_384 && height <= 16_384,
                     "VideoScaler: invalid output size \(width)x\(height)")
        self.width = width
        self.height = height
        flags = filter.flags
        context = "cannot scale video to \(width)x\(height)"
    }

    deinit {
        sws_freeContext(sws)
        // Frees the pool once the frames still holding its buffers are gone.
        av_buffer_pool_uninit(&pool)
    }

    /// A new frame at the output size, yuv420p, with `frame`'s `pts`. `frame` is not changed.
    public func scale(_ frame: VideoFrame) throws -> VideoFrame {
        let src = frame.frame
        let s = src.pointee
        guard s.width > 0, s.height > 0 else { throw FFmpegError.invalid(context, "the input picture is empty") }
        guard let out = av_frame_alloc() else {
            throw FFmpegError(code: AV.enomem, call: "av_frame_alloc", context: context)
        }
        var owned: UnsafeMutablePointer<AVFrame>? = out
        defer { av_frame_free(&owned) }
        if s.format == AV_PIX_FMT_YUV420P.rawValue && Int(s.width) == width && Int(s.height) == height {
            try check(av_frame_ref(out, src), "av_frame_ref", context)
            passedThrough += 1
            return try VideoFrame(moving: out, pts: frame.pts)
        }
        out.pointee.width = Int32(width)
        out.pointee.height = Int32(height)
        out.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        try check(cff_frame_get_pool_buffer(out, try bufferPool()), "av_buffer_pool_get", context)
        sws = sws_getCachedContext(sws, s.width, s.height, AVPixelFormat(rawValue: s.format),
                                   Int32(width), Int32(height), AV_PIX_FMT_YUV420P, flags, nil, nil, nil)
        guard let sws else {
            let name = av_get_pix_fmt_name(AVPixelFormat(rawValue: s.format)).map { String(cString: $0) } ?? "\(s.format)"
            throw FFmpegError.invalid(context, "libswscale cannot convert \(name) \(s.width)x\(s.height)",
                                      call: "sws_getCachedContext")
        }
        try check(cff_sws_scale_frame(sws, out, src), "sws_scale", context)
        // What travels with the picture: its colour description (libswscale keeps the range: yuv420p in, yuv420p out),
        // timestamps and side data, among them the A/53 closed captions the encoder writes back (its own SEI).
        try check(av_frame_copy_props(out, src), "av_frame_copy_props", context)
        scaled += 1
        return try VideoFrame(moving: out, pts: frame.pts)
    }

    private func bufferPool() throws -> OpaquePointer {
        if let pool { return pool }
        let size = cff_image_buffer_size(AV_PIX_FMT_YUV420P.rawValue, Int32(width), Int32(height))
        try check(size, "av_image_get_buffer_size", context)
        guard let p = av_buffer_pool_init(Int(size), nil) else {
            throw FFmpegError(code: AV.enomem, call: "av_buffer_pool_init", context: context)
        }
        pool = p
        return p
    }
}
