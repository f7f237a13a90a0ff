/// A video codec the origin encodes to (`--video-codec`, a ladder rung's `:hevc`).
public enum VideoCodecName: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// H.264 with libx264.
    case h264
    /// H.265 with libx265.
    case hevc
    /// AV1 with SVT-AV1 (keyframes from its fixed GOP only: SVT-AV1 1.4 ignores a forced keyframe), or libaom-av1 where
    /// keyframes must fall where they are forced (`VideoEncoderOptions.exactKeyframes`).
    case av1

    /// The libavcodec encoder.
    public var encoderName: String {
        switch self {
        case .h264: "libx264"
        case .hevc: "libx265"
        case .av1: "libsvtav1"
        }
    }

    /// For people: "H.264", "H.265".
    public var description: String {
        switch self {
        case .h264: "H.264"
        case .hevc: "H.265"
        case .av1: "AV1"
        }
    }

    /// Whether the default encoder makes a keyframe exactly where it is told (x264, x265); SVT-AV1 keeps its fixed GOP.
    public var honoursForcedKeyframes: Bool { self != .av1 }

    /// `h264`, `avc`, `x264`; `hevc`, `h265`, `x265`; `av1`, `svtav1` (any case); nil for anything else.
    public init?(name text: String) {
        switch text.lowercased() {
        case "h264", "avc", "x264", "h.264": self = .h264
        case "hevc", "h265", "x265", "h.265": self = .hevc
        case "av1", "svt-av1", "svtav1": self = .av1
        default: return nil
        }
    }
}
