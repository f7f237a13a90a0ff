/// A video track's colour description, as ITU-T H.273 / ISO/IEC 23091-2 code points (the numbering H.264/H.265 VUI,
/// AV1's color_config, the `colr` box of ISO/IEC 14496-12 §12.1.5 and FFmpeg's `AVColor*` enums all share), and its
/// HDR static metadata when the input carries it.
public struct ColourInfo: Sendable, Hashable {
    /// H.273 ColourPrimaries: 1 BT.709, 9 BT.2020, 12 P3-D65.
    public var primaries: UInt16
    /// H.273 TransferCharacteristics: 1 BT.709, 14/15 BT.2020, 16 SMPTE ST 2084 (PQ), 18 ARIB STD-B67 (HLG).
    public var transfer: UInt16
    /// H.273 MatrixCoefficients: 1 BT.709, 9 BT.2020 non-constant luminance.
    public var matrix: UInt16
    /// True for full-range samples (0-255 at 8 bits), false for video range.
    public var fullRange: Bool
    /// The 24 bytes of a `mdcv` box body / H.265 mastering_display_colour_volume SEI (display primaries in G, B, R
    /// order, white point, max and min luminance), when the input says.
    public var masteringDisplay: [UInt8]?
    /// The 4 bytes of a `clli` box body / content_light_level_info SEI (MaxCLL, MaxFALL), when the input says.
    public var contentLightLevel: [UInt8]?

    public init(primaries: UInt16, transfer: UInt16, matrix: UInt16, fullRange: Bool = false,
                masteringDisplay: [UInt8]? = nil, contentLightLevel: [UInt8]? = nil) {
        self.primaries = primaries
        self.transfer = transfer
        self.matrix = matrix
        self.fullRange = fullRange
        self.masteringDisplay = masteringDisplay
        self.contentLightLevel = contentLightLevel
    }

    /// H.273's "unspecified" code point (2) for each of the three.
    public static let unspecified: UInt16 = 2

    /// The HLS `VIDEO-RANGE` (draft-pantos-hls-rfc8216bis §4.4.6.2): PQ for transfer 16, HLG for 18, SDR otherwise
    /// (1, 6, 13, 14, 15 and unspecified).
    public var videoRange: VideoRange {
        switch transfer {
        case 16: .pq
        case 18: .hlg
        default: .sdr
        }
    }
}

/// The dynamic range a video rendition needs (HLS `VIDEO-RANGE`).
public enum VideoRange: String, Sendable, Hashable {
    case sdr = "SDR"
    case pq = "PQ"
    case hlg = "HLG"
}
