/// An audio codec the origin encodes to (`--audio-codec`).
public enum AudioCodecName: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// AAC-LC with FFmpeg's native encoder.
    case aac
    /// Opus with libopus (48 kHz).
    case opus
    /// AC-3 with FFmpeg's native encoder.
    case ac3

    /// The libavcodec encoder.
    public var encoderName: String {
        switch self {
        case .aac: "aac"
        case .opus: "libopus"
        case .ac3: "ac3"
        }
    }

    /// For people: "AAC", "Opus", "AC-3".
    public var description: String {
        switch self {
        case .aac: "AAC"
        case .opus: "Opus"
        case .ac3: "AC-3"
        }
    }

    /// The sample rates the encoder takes; the first is the one used when the input's is not among them.
    public var sampleRates: [Int] {
        switch self {
        case .aac: [48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000]
        case .opus: [48000]
        case .ac3: [48000, 44100, 32000]
        }
    }

    /// AC-3's nominal bit rates, kbit/s (ETSI TS 102 366 Table F.4.1: `bit_rate_code` is the index).
    public static let ac3BitRates = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 576, 640]

    /// `aac`, `opus`, `ac3` (also `ac-3`), any case; nil for anything else.
    public init?(name text: String) {
        switch text.lowercased() {
        case "aac": self = .aac
        case "opus": self = .opus
        case "ac3", "ac-3": self = .ac3
        default: return nil
        }
    }
}
