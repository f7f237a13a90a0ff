/// A video codec the origin encodes to (`--video-codec`, a ladder rung's `:hevc`).
public enum VideoCodecName: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// H.264 with libx264.
    case h264
    /// H.265 with libx265.
    case hevc

    /// The libavcodec encoder.
    public var encoderName: String {
        switch self {
        case .h264: "libx264"
        case .hevc: "libx265"
        }
    }

    /// For people: "H.264", "H.265".
    public var description: String {
        switch self {
        case .h264: "H.264"
        case .hevc: "H.265"
        }
    }

    /// `h264`, `avc`, `x264`; `hevc`, `h265`, `x265` (any case); nil for anything else.
    public init?(parsing text: String) {
        switch text.lowercased() {
        case "h264", "avc", "x264", "h.264": self = .h264
        case "hevc", "h265", "x265", "h.265": self = .hevc
        default: return nil
        }
    }
}
