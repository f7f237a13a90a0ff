/// RFC 6381 `codecs` values of the video codecs whose configuration records carry more than three bytes of profile:
/// read from the record itself, so the string always describes the bytes the init segment holds.
public enum VideoCodecStrings {
    /// ISO/IEC 14496-15 Annex E.3 for an HEVCDecoderConfigurationRecord (§8.3.3.1.2):
    /// `hvc1.[A|B|C]<profile_idc>.<compatibility flags, bit-reversed, hex>.<L|H><level_idc>[.<constraint byte>…]`,
    /// the six constraint-indicator bytes in hex with trailing zero bytes omitted, e.g. `hvc1.2.4.L123.B0` (Main 10,
    /// level 4.1). FFmpeg's own `hvc1.2.4.L123.B01` style is not valid: each byte is one hex pair.
    public static func hevc(hvcC: [UInt8]) -> String {
        guard hvcC.count >= 13 else { return "hvc1" }
        let space = hvcC[1] >> 6, tier = hvcC[1] >> 5 & 1, profile = hvcC[1] & 0x1F
        let compatibility = UInt32(hvcC[2]) << 24 | UInt32(hvcC[3]) << 16 | UInt32(hvcC[4]) << 8 | UInt32(hvcC[5])
        var reversed: UInt32 = 0
        for bit in 0..<32 where compatibility >> bit & 1 == 1 { reversed |= 1 << (31 - bit) }
        var constraints = Array(hvcC[6..<12])
        while constraints.last == 0 { constraints.removeLast() }
        let spaceLetter = space == 0 ? "" : String(UnicodeScalar(UInt8(ascii: "A") + space - 1))
        var s = "hvc1.\(spaceLetter)\(profile).\(String(reversed, radix: 16, uppercase: true))"
        s += ".\(tier == 1 ? "H" : "L")\(hvcC[12])"
        for b in constraints { s += "." + String(b, radix: 16, uppercase: true) }
        return s
    }

    /// AV1 Codec ISO Media File Format Binding §5 ("Codecs Parameter String"): `av01.P.LLT.DD` from the
    /// AV1CodecConfigurationRecord (seq_profile, seq_level_idx_0, seq_tier_0, bit depth), followed by the optional
    /// `.M.CCC.cp.tc.mc.F` (monochrome, chroma subsampling and sample position, colour primaries, transfer, matrix,
    /// full range) when the colour description is not the default BT.709 video range: an HDR rendition says so in
    /// its `CODECS`.
    public static func av1(av1C: [UInt8], colour: ColourInfo?) -> String {
        guard av1C.count >= 4 else { return "av01" }
        let profile = av1C[1] >> 5, level = av1C[1] & 0x1F
        let tier = av1C[2] >> 7, high = av1C[2] >> 6 & 1, twelve = av1C[2] >> 5 & 1
        let mono = av1C[2] >> 4 & 1, sx = av1C[2] >> 3 & 1, sy = av1C[2] >> 2 & 1, position = av1C[2] & 3
        let depth = profile == 2 && high == 1 ? (twelve == 1 ? 12 : 10) : (high == 1 ? 10 : 8)
        var s = "av01.\(profile).\(twoDigits(Int(level)))\(tier == 1 ? "H" : "M").\(twoDigits(depth))"
        if let c = colour, !(c.primaries == 1 && c.transfer == 1 && c.matrix == 1 && !c.fullRange),
           c.primaries != ColourInfo.unspecified || c.transfer != ColourInfo.unspecified {
            let chroma = "\(sx)\(sy)\(sx == 1 && sy == 1 ? position : 0)"
            s += ".\(mono).\(chroma).\(twoDigits(Int(c.primaries))).\(twoDigits(Int(c.transfer)))"
            s += ".\(twoDigits(Int(c.matrix))).\(c.fullRange ? 1 : 0)"
        }
        return s
    }

    private static func twoDigits(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
}
