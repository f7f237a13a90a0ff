internal import CFFmpeg
import MediaCore

/// A decoded yuv420p picture kept in FFmpeg memory (a reference-counted `AVFrame`), so it can go from
/// `VideoDecoder` to `VideoEncoder` without being copied. Not `Sendable`: one task owns it.
public final class VideoFrame {
    let frame: UnsafeMutablePointer<AVFrame>
    /// Best-effort presentation timestamp in the decoded stream's time base.
    public let pts: Int64

    /// Takes over the picture `source` refers to (moves its reference; `source` is left blank).
    init(moving source: UnsafeMutablePointer<AVFrame>, pts: Int64) throws {
        guard let f = av_frame_alloc() else {
            throw FFmpegError(code: AV.enomem, call: "av_frame_alloc", context: "cannot keep a decoded picture")
        }
        av_frame_move_ref(f, source)
        frame = f
        self.pts = pts
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
    }

    /// The ATSC A/53 closed-caption data the decoder found with this picture (`AV_FRAME_DATA_A53_CC`: `cc_count`
    /// constructs of three bytes, CTA-708 §4.4), `nil` when there is none.
    public var a53Captions: [UInt8]? {
        guard let sd = av_frame_get_side_data(frame, AV_FRAME_DATA_A53_CC), sd.pointee.size > 0,
              let data = sd.pointee.data else { return nil }
        return Array(UnsafeBufferPointer(start: data, count: Int(sd.pointee.size)))
    }

    public var width: Int { Int(frame.pointee.width) }
    public var height: Int { Int(frame.pointee.height) }

    /// A packed copy of the planes (for tests and callers that need Swift arrays).
    public func raw() -> RawVideoFrame {
        let f = frame.pointee
        let w = width, h = height, cw = (w + 1) / 2, ch = (h + 1) / 2
        return RawVideoFrame(width: w, height: h,
                             y: copyPlane(f.data.0, f.linesize.0, w, h),
                             cb: copyPlane(f.data.1, f.linesize.1, cw, ch),
                             cr: copyPlane(f.data.2, f.linesize.2, cw, ch),
                             pts: pts)
    }
}
