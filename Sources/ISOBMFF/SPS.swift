import MediaCore

/// Fields of an H.264 sequence parameter set (ITU-T H.264 §7.3.2.1.1) needed for `avcC` and the sample entry.
public struct SPSInfo: Sendable, Equatable {
    public var profileIdc: UInt8
    /// constraint_set0..5 flags and reserved bits: the `profile_compatibility` byte.
    public var constraintFlags: UInt8
    public var levelIdc: UInt8
    /// 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4 (1 when the profile does not signal it).
    public var chromaFormatIdc: UInt8
    public var bitDepthLuma: UInt8
    public var bitDepthChroma: UInt8
    /// Picture size after the frame cropping rectangle (§7.4.2.1.1, equations 7-19 to 7-22).
    public var width: Int
    public var height: Int
    /// Pixel aspect ratio from the VUI (Table E-1), nil when not signalled or unspecified.
    public var sampleAspectRatio: Rational?

    /// Parses an SPS NAL unit including its one-byte NAL header; emulation prevention bytes are removed first.
    public init(nal: some Collection<UInt8>) throws {
        let bytes = Array(nal)
        guard let header = bytes.first, header & 0x1F == AVC.NALType.sps else {
            throw MP4Error.invalidH264("not an SPS NAL unit")
        }
        var r = BitReader(SPSInfo.rbsp(bytes.dropFirst()))
        profileIdc = try r.u8()
        constraintFlags = try r.u8()
        levelIdc = try r.u8()
        _ = try r.ue()                                          // seq_parameter_set_id
        chromaFormatIdc = 1
        bitDepthLuma = 8
        bitDepthChroma = 8
        var separateColourPlane = false
        if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profileIdc) {
            let chroma = try r.ue()
            guard chroma <= 3 else { throw MP4Error.invalidH264("chroma_format_idc \(chroma)") }
            chromaFormatIdc = UInt8(chroma)
            if chroma == 3 { separateColourPlane = try r.flag() }
            let lumaMinus8 = try r.ue(), chromaMinus8 = try r.ue()
            guard lumaMinus8 <= 6, chromaMinus8 <= 6 else { throw MP4Error.invalidH264("bit depth") }
            bitDepthLuma = UInt8(8 + lumaMinus8)
            bitDepthChroma = UInt8(8 + chromaMinus8)
            _ = try r.flag()                                    // qpprime_y_zero_transform_bypass_flag
            if try r.flag() {                                   // seq_scaling_matrix_present_flag
                for i in 0..<(chroma != 3 ? 8 : 12) {
                    if try r.flag() { try r.skipScalingList(size: i < 6 ? 16 : 64) }   // seq_scaling_list_present_flag
                }
            }
        }
        _ = try r.ue()                                          // log2_max_frame_num_minus4
        let pocType = try r.ue()
        if pocType == 0 {
            _ = try r.ue()                                      // log2_max_pic_order_cnt_lsb_minus4
        } else if pocType == 1 {
            _ = try r.flag()                                    // delta_pic_order_always_zero_flag
            _ = try r.se()                                      // offset_for_non_ref_pic
            _ = try r.se()                                      // offset_for_top_to_bottom_field
            let cycle = try r.ue()
            guard cycle <= 255 else { throw MP4Error.invalidH264("num_ref_frames_in_pic_order_cnt_cycle") }
            for _ in 0..<cycle { _ = try r.se() }
        }
        _ = try r.ue()                                          // max_num_ref_frames
        _ = try r.flag()                                        // gaps_in_frame_num_value_allowed_flag
        let widthInMbs = Int(try r.ue()) + 1
        let heightInMapUnits = Int(try r.ue()) + 1
        let frameMbsOnly = try r.flag()
        if !frameMbsOnly { _ = try r.flag() }                   // mb_adaptive_frame_field_flag
        _ = try r.flag()                                        // direct_8x8_inference_flag
        var crop = (left: 0, right: 0, top: 0, bottom: 0)
        if try r.flag() {                                       // frame_cropping_flag
            crop = (Int(try r.ue()), Int(try r.ue()), Int(try r.ue()), Int(try r.ue()))
        }
        let chromaArrayType = separateColourPlane ? 0 : Int(chromaFormatIdc)
        let subWidthC = chromaArrayType == 3 ? 1 : 2, subHeightC = chromaArrayType == 1 ? 2 : 1
        let frameFactor = frameMbsOnly ? 1 : 2
        let cropUnitX = chromaArrayType == 0 ? 1 : subWidthC
        let cropUnitY = chromaArrayType == 0 ? frameFactor : subHeightC * frameFactor
        width = widthInMbs * 16 - cropUnitX * (crop.left + crop.right)
        height = frameFactor * heightInMapUnits * 16 - cropUnitY * (crop.top + crop.bottom)
        guard width > 0, height > 0 else { throw MP4Error.invalidH264("cropped size \(width)x\(height)") }
        // VUI (Annex E.1.1): only the aspect ratio; a truncated VUI is not an error for what we need.
        sampleAspectRatio = nil
        if (try? r.flag()) == true, (try? r.flag()) == true, let idc = try? r.u8() {
            if idc == 255 {
                if let w = try? r.bits(16), let h = try? r.bits(16), w > 0, h > 0 {
                    sampleAspectRatio = Rational(Int32(w), Int32(h))
                }
            } else if idc >= 1, Int(idc) <= SPSInfo.sarTable.count {
                let s = SPSInfo.sarTable[Int(idc) - 1]
                sampleAspectRatio = Rational(s.0, s.1)
            }
        }
    }

    /// Table E-1, aspect_ratio_idc 1...16.
    static let sarTable: [(Int32, Int32)] = [(1, 1), (12, 11), (10, 11), (16, 11), (40, 33), (24, 11), (20, 11),
        (32, 11), (80, 33), (18, 11), (15, 11), (64, 33), (160, 99), (4, 3), (3, 2), (2, 1)]

    /// NAL payload -> RBSP: drops each emulation_prevention_three_byte (00 00 03 -> 00 00), H.264 §7.4.1.
    /// Up to `limit` RBSP bytes of `nal` after its `headerBytes`-byte header, and for each the offset in `nal` it was
    /// read from (emulation prevention bytes skipped): where a header that ends at an RBSP bit ends in the NAL unit.
    static func rbspPrefix(_ nal: ArraySlice<UInt8>, headerBytes: Int, limit: Int) -> (rbsp: [UInt8], origin: [Int]) {
        var rbsp: [UInt8] = [], origin: [Int] = []
        var zeros = 0
        var i = nal.startIndex + headerBytes
        while i < nal.endIndex, rbsp.count < limit {
            let b = nal[i]
            if zeros >= 2 && b == 3 { zeros = 0; i += 1; continue }
            rbsp.append(b)
            origin.append(i - nal.startIndex)
            zeros = b == 0 ? zeros + 1 : 0
            i += 1
        }
        return (rbsp, origin)
    }

    static func rbsp(_ payload: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count)
        var zeros = 0
        for b in payload {
            if zeros >= 2 && b == 3 { zeros = 0; continue }
            out.append(b)
            zeros = b == 0 ? zeros + 1 : 0
        }
        return out
    }
}

/// MSB-first bit reader with Exp-Golomb codes (H.264 §9.1).
struct BitReader {
    let bytes: [UInt8]
    var bit = 0
    /// What running out of bits throws.
    let truncated: MP4Error

    init(_ bytes: [UInt8], truncated: MP4Error = .invalidH264("SPS truncated")) {
        self.bytes = bytes
        self.truncated = truncated
    }

    mutating func flag() throws -> Bool { try bits(1) == 1 }
    mutating func u8() throws -> UInt8 { UInt8(try bits(8)) }

    mutating func bits(_ n: Int) throws -> UInt32 {
        precondition(n <= 32)
        guard bit + n <= bytes.count * 8 else { throw truncated }
        var v: UInt32 = 0
        for _ in 0..<n {
            v = v << 1 | UInt32(bytes[bit >> 3] >> (7 - UInt8(bit & 7)) & 1)
            bit += 1
        }
        return v
    }

    mutating func skip(_ n: Int) throws {
        guard n >= 0, bit + n <= bytes.count * 8 else { throw truncated }
        bit += n
    }

    /// ue(v): unsigned Exp-Golomb.
    mutating func ue() throws -> UInt32 {
        var zeros = 0
        while try bits(1) == 0 {
            zeros += 1
            guard zeros < 32 else { throw MP4Error.invalidH264("Exp-Golomb code too long") }
        }
        if zeros == 0 { return 0 }
        return (UInt32(1) << zeros) - 1 + (try bits(zeros))
    }

    /// se(v): signed Exp-Golomb, k -> (-1)^(k+1) * ceil(k / 2).
    mutating func se() throws -> Int32 {
        let k = try ue()
        let m = Int32(bitPattern: (k + 1) / 2)
        return k & 1 == 1 ? m : -m
    }

    /// scaling_list() of §7.3.2.1.1.1, values discarded.
    mutating func skipScalingList(size: Int) throws {
        var last: Int64 = 8, next: Int64 = 8
        for _ in 0..<size {
            if next != 0 { next = ((last + Int64(try se())) % 256 + 256) % 256 }
            if next != 0 { last = next }
        }
    }
}
