/// A Dolby Vision stream's configuration, as its container gives it (the `dvcC`/`dvvC` record of "Dolby Vision
/// Streams Within the ISO Base Media File Format" §3.2; FFmpeg's `AVDOVIDecoderConfigurationRecord`).
///
/// Profile 8 has a base layer any HEVC decoder plays (HDR10 for 8.1, SDR for 8.2, HLG for 8.4): the track stays
/// `hvc1` with a `dvvC` box, and HLS names Dolby Vision in `SUPPLEMENTAL-CODECS` (`dvh1.08.06/db1p`) so a player
/// without it still picks the variant by its `CODECS`.
public struct DolbyVisionConfig: Sendable, Hashable {
    public var versionMajor: UInt8
    public var versionMinor: UInt8
    public var profile: UInt8
    public var level: UInt8
    public var rpuPresent: Bool
    public var enhancementLayerPresent: Bool
    public var baseLayerPresent: Bool
    /// `dv_bl_signal_compatibility_id`: what the base layer is on its own (1 HDR10, 2 SDR, 4 HLG, 6 BD HDR10).
    public var compatibilityID: UInt8

    public init(versionMajor: UInt8 = 1, versionMinor: UInt8 = 0, profile: UInt8, level: UInt8, rpuPresent: Bool = true,
                enhancementLayerPresent: Bool = false, baseLayerPresent: Bool = true, compatibilityID: UInt8) {
        self.versionMajor = versionMajor
        self.versionMinor = versionMinor
        self.profile = profile
        self.level = level
        self.rpuPresent = rpuPresent
        self.enhancementLayerPresent = enhancementLayerPresent
        self.baseLayerPresent = baseLayerPresent
        self.compatibilityID = compatibilityID
    }

    /// The 24-byte body of `dvcC` (profiles up to 7) or `dvvC` (8 to 10): version, then profile(7) level(6)
    /// rpu(1) el(1) bl(1), compatibility id(4) and 28 reserved bits, then 4 reserved 32-bit words.
    public var record: [UInt8] {
        let bits = UInt16(profile & 0x7F) << 9 | UInt16(level & 0x3F) << 3 | (rpuPresent ? 4 : 0)
            | (enhancementLayerPresent ? 2 : 0) | (baseLayerPresent ? 1 : 0)
        return [versionMajor, versionMinor, UInt8(bits >> 8), UInt8(bits & 0xFF), compatibilityID << 4, 0, 0, 0]
            + [UInt8](repeating: 0, count: 16)
    }

    /// `dvcC` for profiles 0-7, `dvvC` for 8-10 (§3.2).
    public var boxType: String { profile <= 7 ? "dvcC" : "dvvC" }

    /// HLS `SUPPLEMENTAL-CODECS` (draft-pantos-hls-rfc8216bis §4.4.6.2; Apple's HLS authoring specification) for a
    /// profile 8 stream: `dvh1.08.LL/<brand>` with the brand of its base layer (`db1p` HDR10, `db2g` SDR, `db4h` HLG);
    /// nil for other profiles and compatibility ids (their samples need a Dolby Vision decoder: not signalled here).
    public var supplementalCodecs: String? {
        guard profile == 8 else { return nil }
        let brand: String
        switch compatibilityID {
        case 1, 6: brand = "db1p"
        case 2: brand = "db2g"
        case 4: brand = "db4h"
        default: return nil
        }
        return "dvh1.08.\(level < 10 ? "0" : "")\(level)/\(brand)"
    }
}
