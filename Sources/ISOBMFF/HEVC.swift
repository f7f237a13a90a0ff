import MediaCore

/// H.265 / HEVC bitstream helpers (ITU-T H.265 Annex B byte streams, ISO/IEC 14496-15 §8 length-prefixed samples).
///
/// A copied HEVC track is written as `hvc1`: every VPS, SPS and PPS lives in the `hvcC` record (array_completeness
/// 1, ISO/IEC 14496-15 §8.4.1), none in the samples, as Apple's HLS authoring rules require for fMP4. In-band sets
/// different from the record's make a new record (a new init segment and a discontinuity follow).
public enum HEVC {
    /// NAL unit types used here (H.265 Table 7-1).
    public enum NALType {
        public static let vps: UInt8 = 32
        public static let sps: UInt8 = 33
        public static let pps: UInt8 = 34
        public static let accessUnitDelimiter: UInt8 = 35
        public static let prefixSEI: UInt8 = 39
        /// BLA_W_LP (16) … RSV_IRAP_VCL23 (23): intra random access points.
        public static let irap: ClosedRange<UInt8> = 16...23
    }

    /// nal_unit_type of a NAL unit's first header byte (H.265 §7.3.1.2: forbidden bit, then six bits of type).
    @inline(__always) public static func type(_ header: UInt8) -> UInt8 { header >> 1 & 0x3F }

    /// The parameter sets of one access unit (Annex-B or 4-byte length-prefixed), each kept once, in order.
    public static func parameterSets(in data: [UInt8]) -> (vps: [[UInt8]], sps: [[UInt8]], pps: [[UInt8]]) {
        var vps: [[UInt8]] = [], sps: [[UInt8]] = [], pps: [[UInt8]] = []
        AVC.forEachNAL(in: data) { nal in
            guard nal.count >= 3 else { return true }
            let set = Array(nal)
            switch type(nal[nal.startIndex]) {
            case NALType.vps: if !vps.contains(set) { vps.append(set) }
            case NALType.sps: if !sps.contains(set) { sps.append(set) }
            case NALType.pps: if !pps.contains(set) { pps.append(set) }
            default: break
            }
            return true
        }
        return (vps, sps, pps)
    }

    /// A sample as `hvc1` wants it: 4-byte length-prefixed, without access unit delimiters and parameter sets.
    /// Returns `data` itself (no copy) when it is already length-prefixed and holds none of them.
    /// `prefixSEI`: a NAL unit (without length) placed first, before the picture's slices, as a prefix SEI goes.
    public static func sample(from data: [UInt8], prefixSEI: [UInt8]? = nil) -> [UInt8] {
        let annexB = AVC.isAnnexB(data)
        if let sei = prefixSEI {
            let n = UInt32(truncatingIfNeeded: sei.count)
            return [UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8),
                    UInt8(truncatingIfNeeded: n)] + sei + sample(from: data)
        }
        if !annexB {
            var clean = true
            AVC.forEachNAL(in: data) { nal in
                clean = !dropped(nal[nal.startIndex])
                return clean
            }
            if clean { return data }
        }
        var out: [UInt8] = []
        out.reserveCapacity(data.count + data.count / 4 + 4)
        AVC.forEachNAL(in: data) { nal in
            if !dropped(nal[nal.startIndex]) {
                let n = UInt32(truncatingIfNeeded: nal.count)
                out.append(UInt8(truncatingIfNeeded: n >> 24)); out.append(UInt8(truncatingIfNeeded: n >> 16))
                out.append(UInt8(truncatingIfNeeded: n >> 8)); out.append(UInt8(truncatingIfNeeded: n))
                out.append(contentsOf: nal)
            }
            return true
        }
        return out
    }

    private static func dropped(_ header: UInt8) -> Bool {
        let t = type(header)
        return t == NALType.accessUnitDelimiter || t == NALType.vps || t == NALType.sps || t == NALType.pps
    }

    /// Whether the access unit holds an IRAP picture's slice (a keyframe a decoder can start at).
    public static func containsIRAP(_ data: [UInt8]) -> Bool {
        var found = false
        AVC.forEachNAL(in: data) { nal in
            if NALType.irap.contains(type(nal[nal.startIndex])) { found = true; return false }
            return true
        }
        return found
    }

    /// `hvcC` from codec extradata that is either already an HEVCDecoderConfigurationRecord (first byte 1: MP4,
    /// Matroska) or Annex-B VPS/SPS/PPS (libx265, MPEG-TS).
    public static func hvcC(fromExtradata data: [UInt8]) throws -> [UInt8] {
        if data.first == 1 {
            guard data.count >= 23 else { throw MP4Error.invalidHEVC("hvcC record of \(data.count) bytes") }
            return data
        }
        guard AVC.isAnnexB(data) else { throw MP4Error.invalidHEVC("extradata is neither hvcC nor Annex-B") }
        let sets = parameterSets(in: data)
        return try makeHVCC(vps: sets.vps, sps: sets.sps, pps: sets.pps)
    }

    /// Builds an HEVCDecoderConfigurationRecord (ISO/IEC 14496-15 §8.3.3.1.2), lengthSizeMinusOne 3, one array
    /// each of VPS, SPS and PPS (array_completeness 1), profile, tier, level, chroma format and bit depths from
    /// the first SPS.
    ///
    /// ```
    /// configurationVersion 1 | profile_space tier profile_idc | compatibility (32) | constraints (48) | level_idc
    /// 1111 min_spatial_segmentation (12) | 111111 parallelismType | 111111 chromaFormat | 11111 bitDepthLuma-8
    /// 11111 bitDepthChroma-8 | avgFrameRate (16) | constantFrameRate (2) numTemporalLayers (3) temporalIdNested
    /// lengthSizeMinusOne (2) | numOfArrays | { completeness 0 type (6) | numNalus (16) | { length (16) | NAL } }
    /// ```
    public static func makeHVCC(vps: [[UInt8]], sps: [[UInt8]], pps: [[UInt8]]) throws -> [UInt8] {
        guard let firstSPS = sps.first else { throw MP4Error.invalidHEVC("no SPS") }
        guard !vps.isEmpty else { throw MP4Error.invalidHEVC("no VPS") }
        guard !pps.isEmpty else { throw MP4Error.invalidHEVC("no PPS") }
        for set in vps + sps + pps where set.count < 3 || set.count > 0xFFFF {
            throw MP4Error.invalidHEVC("parameter set of \(set.count) bytes")
        }
        let info = try HEVCSPSInfo(nal: firstSPS)
        var out: [UInt8] = [1, info.profileSpace << 6 | info.tier << 5 | info.profileIDC]
        for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: info.compatibility >> UInt32(shift))) }
        out += info.constraints
        out.append(info.levelIDC)
        out += [0xF0, 0x00]                                  // min_spatial_segmentation_idc 0 (unknown)
        out.append(0xFC)                                     // parallelismType 0 (unknown)
        out.append(0xFC | info.chromaFormat)
        out.append(0xF8 | (info.bitDepthLuma - 8))
        out.append(0xF8 | (info.bitDepthChroma - 8))
        out += [0, 0]                                        // avgFrameRate 0 (unspecified)
        out.append(info.maxSubLayers << 3 | (info.temporalIDNesting ? 1 << 2 : 0) | 3)
        out.append(3)                                        // numOfArrays
        for (type, sets) in [(NALType.vps, vps), (NALType.sps, sps), (NALType.pps, pps)] {
            out.append(0x80 | type)                          // array_completeness 1, reserved 0
            out.append(UInt8(sets.count >> 8)); out.append(UInt8(sets.count & 0xFF))
            for s in sets {
                out.append(UInt8(s.count >> 8)); out.append(UInt8(s.count & 0xFF))
                out += s
            }
        }
        return out
    }

    /// The NAL units of each array of an `hvcC` record, by type; empty arrays for a record that does not parse.
    public static func parameterSets(hvcC: [UInt8]) -> [UInt8: [[UInt8]]] {
        guard hvcC.count >= 23 else { return [:] }
        var result: [UInt8: [[UInt8]]] = [:]
        var i = 23
        for _ in 0..<Int(hvcC[22]) {
            guard i + 3 <= hvcC.count else { return [:] }
            let type = hvcC[i] & 0x3F
            let count = Int(hvcC[i + 1]) << 8 | Int(hvcC[i + 2])
            i += 3
            for _ in 0..<count {
                guard i + 2 <= hvcC.count else { return [:] }
                let n = Int(hvcC[i]) << 8 | Int(hvcC[i + 1])
                guard i + 2 + n <= hvcC.count else { return [:] }
                result[type, default: []].append(Array(hvcC[(i + 2)..<(i + 2 + n)]))
                i += 2 + n
            }
        }
        return result
    }

    /// Whether two records hold the same parameter sets (by content: emulation prevention and trailing zeros aside).
    public static func sameParameterSets(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        if a == b { return true }
        let pa = parameterSets(hvcC: a).mapValues { $0.map(AVC.canonical) }
        let pb = parameterSets(hvcC: b).mapValues { $0.map(AVC.canonical) }
        return !pa.isEmpty && pa == pb
    }

    /// HDR static metadata from the prefix SEI of an access unit (H.265 §D.2.28 mastering_display_colour_volume,
    /// payload 137, 24 bytes; §D.2.35 content_light_level_info, payload 144, 4 bytes): the payloads are the bodies
    /// of the `mdcv` and `clli` boxes as they are.
    public static func hdrMetadata(in data: [UInt8]) -> (masteringDisplay: [UInt8]?, contentLightLevel: [UInt8]?) {
        var mdcv: [UInt8]?, clli: [UInt8]?
        SEI.forEachMessage(inAccessUnit: data, hevc: true) { type, payload in
            if type == 137, payload.count == 24 { mdcv = Array(payload) }
            if type == 144, payload.count == 4 { clli = Array(payload) }
        }
        return (mdcv, clli)
    }
}

/// What `hvcC` and the track header need from an H.265 sequence parameter set (H.265 §7.3.2.2.1 up to
/// bit_depth_chroma_minus8, with profile_tier_level of §7.3.3).
public struct HEVCSPSInfo: Sendable, Equatable {
    public var profileSpace: UInt8
    public var tier: UInt8
    public var profileIDC: UInt8
    /// general_profile_compatibility_flag[0…31], flag j at bit 31 − j.
    public var compatibility: UInt32
    /// The 48 bits from general_progressive_source_flag to general_inbld_flag / reserved bit, as 6 bytes.
    public var constraints: [UInt8]
    public var levelIDC: UInt8
    public var maxSubLayers: UInt8
    public var temporalIDNesting: Bool
    public var chromaFormat: UInt8
    public var bitDepthLuma: UInt8
    public var bitDepthChroma: UInt8
    /// Picture size after the conformance window's cropping.
    public var width: Int
    public var height: Int

    /// Parses an SPS NAL unit with its two-byte header.
    public init(nal: [UInt8]) throws {
        guard nal.count >= 4, HEVC.type(nal[0]) == HEVC.NALType.sps else { throw MP4Error.invalidHEVC("not an SPS") }
        var r = BitReader(SPSInfo.rbsp(nal.dropFirst(2)))
        do {
            _ = try r.bits(4)                                 // sps_video_parameter_set_id
            let maxSubLayersMinus1 = Int(try r.bits(3))
            maxSubLayers = UInt8(maxSubLayersMinus1 + 1)
            temporalIDNesting = try r.flag()
            profileSpace = UInt8(try r.bits(2))
            tier = UInt8(try r.bits(1))
            profileIDC = UInt8(try r.bits(5))
            compatibility = try r.bits(32)
            constraints = try (0..<6).map { _ in try r.u8() }
            levelIDC = try r.u8()
            var profilePresent: [Bool] = [], levelPresent: [Bool] = []
            for _ in 0..<maxSubLayersMinus1 {
                profilePresent.append(try r.flag())
                levelPresent.append(try r.flag())
            }
            if maxSubLayersMinus1 > 0 { for _ in maxSubLayersMinus1..<8 { _ = try r.bits(2) } }
            for i in 0..<maxSubLayersMinus1 {
                if profilePresent[i] { for _ in 0..<11 { _ = try r.u8() } }   // 88 bits
                if levelPresent[i] { _ = try r.u8() }
            }
            _ = try r.ue()                                    // sps_seq_parameter_set_id
            let chroma = try r.ue()
            guard chroma <= 3 else { throw MP4Error.invalidHEVC("chroma_format_idc \(chroma)") }
            chromaFormat = UInt8(chroma)
            let separatePlanes = chroma == 3 ? try r.flag() : false
            let codedWidth = Int(try r.ue()), codedHeight = Int(try r.ue())
            var crop = (left: 0, right: 0, top: 0, bottom: 0)
            if try r.flag() {                                 // conformance_window_flag
                crop = (Int(try r.ue()), Int(try r.ue()), Int(try r.ue()), Int(try r.ue()))
            }
            // Table 6-1: SubWidthC/SubHeightC (1 when the chroma planes are coded separately or absent).
            let arrayType = separatePlanes ? 0 : chroma
            let subW = arrayType == 1 || arrayType == 2 ? 2 : 1, subH = arrayType == 1 ? 2 : 1
            width = codedWidth - subW * (crop.left + crop.right)
            height = codedHeight - subH * (crop.top + crop.bottom)
            let luma = try r.ue(), chromaDepth = try r.ue()
            guard luma <= 8, chromaDepth <= 8 else { throw MP4Error.invalidHEVC("bit depth above 16") }
            bitDepthLuma = UInt8(luma + 8)
            bitDepthChroma = UInt8(chromaDepth + 8)
        } catch MP4Error.invalidH264 {
            throw MP4Error.invalidHEVC("SPS truncated")
        }
        guard width > 0, height > 0, width <= 0xFFFF, height <= 0xFFFF else {
            throw MP4Error.invalidHEVC("picture size \(width)x\(height)")
        }
    }
}
