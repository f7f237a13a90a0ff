import MediaCore

/// AV1 bitstream helpers: OBUs (AV1 Bitstream & Decoding Process §5.3), the sequence header (§5.5), and the
/// AV1CodecConfigurationRecord (AV1 Codec ISO Media File Format Binding §2.3) built from it.
///
/// A copied or encoded AV1 track keeps its samples as "Low Overhead Bitstream Format" OBUs with size fields, without
/// temporal delimiters (the binding §2.4: "OBUs of type OBU_TEMPORAL_DELIMITER … SHOULD NOT be present"); the
/// sequence header rides in `av1C`'s configOBUs (and may stay in keyframe samples, as §2.4 allows).
public enum AV1 {
    public enum OBUType {
        public static let sequenceHeader: UInt8 = 1
        public static let temporalDelimiter: UInt8 = 2
    }

    /// One OBU: its type and its whole bytes (header, size field, payload), and where the payload lies in them.
    public struct OBU: Sendable {
        public var type: UInt8
        public var bytes: ArraySlice<UInt8>
        public var payload: ArraySlice<UInt8>
    }

    /// The OBUs of a sample or of extradata (each with `obu_has_size_field` = 1, the only form MP4 carries; an OBU
    /// without one runs to the end). Stops at anything malformed.
    public static func obus(in data: [UInt8]) -> [OBU] {
        var out: [OBU] = []
        var i = 0
        while i < data.count {
            let header = data[i]
            guard header & 0x80 == 0 else { break }                    // obu_forbidden_bit
            let type = header >> 3 & 0x0F
            var p = i + 1 + (header & 0x04 != 0 ? 1 : 0)                // obu_extension_flag
            var size = data.count - p
            if header & 0x02 != 0 {                                     // obu_has_size_field: leb128 (§4.10.5)
                guard let (value, length) = leb128(data, at: p) else { break }
                p += length
                size = value
            }
            guard p <= data.count, size >= 0, size <= data.count - p else { break }
            out.append(OBU(type: type, bytes: data[i..<(p + size)], payload: data[p..<(p + size)]))
            i = p + size
        }
        return out
    }

    private static func leb128(_ d: [UInt8], at start: Int) -> (Int, Int)? {
        var value = 0
        for k in 0..<8 {
            guard start + k < d.count else { return nil }
            value |= Int(d[start + k] & 0x7F) << (7 * k)
            if d[start + k] & 0x80 == 0 { return (value, k + 1) }
        }
        return nil
    }

    /// The sample without temporal delimiters; `data` itself when it has none.
    public static func sample(from data: [UInt8]) -> [UInt8] {
        let all = obus(in: data)
        guard all.contains(where: { $0.type == OBUType.temporalDelimiter }) else { return data }
        return all.filter { $0.type != OBUType.temporalDelimiter }.flatMap(\.bytes)
    }

    /// `av1C` from codec extradata: the container's record as it is (MP4, Matroska, WebM: marker bit and version 1),
    /// or one built from a sequence header OBU (an encoder's extradata, an OBU stream).
    public static func av1C(fromExtradata data: [UInt8]) throws -> [UInt8] {
        if data.count >= 4, data[0] == 0x81 { return data }
        guard let record = try av1C(inBand: data) else {
            throw MP4Error.invalidAV1("no AV1CodecConfigurationRecord and no sequence header in the extradata")
        }
        return record
    }

    /// `av1C` built from the first sequence header OBU in `data`, nil when there is none.
    ///
    /// ```
    /// marker(1)=1 version(7)=1 | seq_profile(3) seq_level_idx_0(5) | seq_tier_0 high_bitdepth twelve_bit monochrome
    /// chroma_subsampling_x chroma_subsampling_y chroma_sample_position(2) | reserved(3) initial_presentation_delay(5)=0
    /// | configOBUs: the sequence header OBU
    /// ```
    public static func av1C(inBand data: [UInt8]) throws -> [UInt8]? {
        guard let obu = obus(in: data).first(where: { $0.type == OBUType.sequenceHeader }) else { return nil }
        let h = try AV1SequenceHeader(payload: Array(obu.payload))
        var out: [UInt8] = [0x81, h.profile << 5 | h.levelIndex0 & 0x1F]
        out.append(h.tier0 << 7 | (h.highBitDepth ? 0x40 : 0) | (h.twelveBit ? 0x20 : 0) | (h.monochrome ? 0x10 : 0)
                   | h.subsamplingX << 3 | h.subsamplingY << 2 | h.chromaSamplePosition & 3)
        out.append(0)
        // configOBUs: the sequence header with its size field (§2.3.4: "obu_has_size_field … SHALL be set to 1").
        if obu.bytes.first.map({ $0 & 0x02 != 0 }) == true {
            out += obu.bytes
        } else {
            // The header with obu_has_size_field set, its extension byte if any, the leb128 size, the payload.
            out.append(obu.bytes[obu.bytes.startIndex] | 0x02)
            out += obu.bytes[(obu.bytes.startIndex + 1)..<obu.payload.startIndex]
            var n = obu.payload.count
            repeat { out.append(UInt8(n & 0x7F) | (n >= 0x80 ? 0x80 : 0)); n >>= 7 } while n > 0
            out += obu.payload
        }
        return out
    }

    /// The sequence header of an `av1C`'s configOBUs, when it parses.
    public static func sequenceHeader(av1C: [UInt8]) -> AV1SequenceHeader? {
        guard av1C.count > 4, let obu = obus(in: Array(av1C[4...])).first(where: { $0.type == OBUType.sequenceHeader }) else {
            return nil
        }
        return try? AV1SequenceHeader(payload: Array(obu.payload))
    }
}

/// What `av1C`, the track header and the colour boxes need from an AV1 sequence header OBU (AV1 spec §5.5).
public struct AV1SequenceHeader: Sendable, Equatable {
    public var profile: UInt8
    public var levelIndex0: UInt8
    public var tier0: UInt8
    public var maxWidth: Int
    public var maxHeight: Int
    public var highBitDepth: Bool
    public var twelveBit: Bool
    public var monochrome: Bool
    public var subsamplingX: UInt8
    public var subsamplingY: UInt8
    public var chromaSamplePosition: UInt8
    /// color_primaries, transfer_characteristics, matrix_coefficients (H.273 code points), color_range; nil when
    /// color_description_present_flag is 0.
    public var colour: ColourInfo?

    public init(payload: [UInt8]) throws {
        var r = BitReader(payload, truncated: .invalidAV1("sequence header truncated"))
        profile = UInt8(try r.bits(3))
        guard profile <= 2 else { throw MP4Error.invalidAV1("seq_profile \(profile)") }
        _ = try r.flag()                                        // still_picture
        let reduced = try r.flag()                              // reduced_still_picture_header
        var decoderModelInfo = false, bufferDelayLength = 0
        if reduced {
            levelIndex0 = UInt8(try r.bits(5))
            tier0 = 0
        } else {
            if try r.flag() {                                   // timing_info_present_flag
                try r.skip(64)                                  // num_units_in_display_tick, time_scale
                if try r.flag() { try Self.skipUVLC(&r) }       // equal_picture_interval: num_ticks_per_picture_minus_1
                decoderModelInfo = try r.flag()
                if decoderModelInfo {
                    bufferDelayLength = Int(try r.bits(5)) + 1
                    try r.skip(32 + 5 + 5)
                }
            }
            let initialDisplayDelay = try r.flag()
            let count = Int(try r.bits(5)) + 1
            var level0: UInt8 = 0, t0: UInt8 = 0
            for i in 0..<count {
                try r.skip(12)                                  // operating_point_idc
                let level = UInt8(try r.bits(5))
                let tier = level > 7 ? UInt8(try r.bits(1)) : 0
                if i == 0 { level0 = level; t0 = tier }
                if decoderModelInfo, try r.flag() { try r.skip(2 * bufferDelayLength + 1) }
                if initialDisplayDelay, try r.flag() { try r.skip(4) }
            }
            levelIndex0 = level0
            tier0 = t0
        }
        let widthBits = Int(try r.bits(4)) + 1, heightBits = Int(try r.bits(4)) + 1
        maxWidth = Int(try r.bits(widthBits)) + 1
        maxHeight = Int(try r.bits(heightBits)) + 1
        if !reduced, try r.flag() { try r.skip(4 + 3) }         // frame_id_numbers_present_flag
        try r.skip(3)                                           // 128x128 superblock, filter intra, intra edge
        if !reduced {
            try r.skip(4)                                       // interintra, masked compound, warped motion, dual filter
            let orderHint = try r.flag()
            if orderHint { try r.skip(2) }                      // jnt_comp, ref_frame_mvs
            let forceScreenContent: UInt32 = try r.flag() ? 2 : try r.bits(1)
            if forceScreenContent > 0, !(try r.flag()) { try r.skip(1) }   // seq_choose_integer_mv / seq_force_integer_mv
            if orderHint { try r.skip(3) }
        }
        try r.skip(3)                                           // superres, cdef, restoration
        // color_config() §5.5.2
        highBitDepth = try r.flag()
        twelveBit = profile == 2 && highBitDepth ? try r.flag() : false
        monochrome = profile == 1 ? false : try r.flag()
        var cp: UInt16 = 2, tc: UInt16 = 2, mc: UInt16 = 2
        let described = try r.flag()
        if described {
            cp = UInt16(try r.bits(8)); tc = UInt16(try r.bits(8)); mc = UInt16(try r.bits(8))
        }
        var fullRange = false
        chromaSamplePosition = 0
        if monochrome {
            fullRange = try r.flag()
            subsamplingX = 1; subsamplingY = 1
        } else if cp == 1 && tc == 13 && mc == 0 {              // sRGB
            fullRange = true
            subsamplingX = 0; subsamplingY = 0
        } else {
            fullRange = try r.flag()
            switch profile {
            case 0: subsamplingX = 1; subsamplingY = 1
            case 1: subsamplingX = 0; subsamplingY = 0
            default:
                if twelveBit {
                    subsamplingX = UInt8(try r.bits(1))
                    subsamplingY = subsamplingX == 1 ? UInt8(try r.bits(1)) : 0
                } else {
                    subsamplingX = 1; subsamplingY = 0
                }
            }
            if subsamplingX == 1 && subsamplingY == 1 { chromaSamplePosition = UInt8(try r.bits(2)) }
        }
        colour = described ? ColourInfo(primaries: cp, transfer: tc, matrix: mc, fullRange: fullRange) : nil
    }

    /// uvlc() (§4.10.3): leading zeros, then as many value bits.
    private static func skipUVLC(_ r: inout BitReader) throws {
        var zeros = 0
        while !(try r.flag()) {
            zeros += 1
            guard zeros < 32 else { throw MP4Error.invalidAV1("uvlc too long") }
        }
        try r.skip(zeros)
    }
}
