import MediaCore

/// Sizes the slice header of a coded slice NAL unit (from its NAL header), `nil` when it cannot.
public protocol SliceHeaderSizing: Sendable {
    func headerSize(nal: ArraySlice<UInt8>) -> Int?
}

/// Where an H.264 slice's header ends (ITU-T H.264 §7.3.3), for common encryption: ISO/IEC 23001-7 (3rd edition)
/// §9.5.2.2 says "only video data in slice NALs SHOULD be encrypted", so a subsample leaves the slice header clear
/// (hardware decoders, FairPlay's among them, parse it before decrypting), as Shaka Packager and GPAC do.
///
/// The parameter sets come from the `avcC` (an `avc1` sample entry carries all of them there). A slice this reader
/// cannot size (slice groups, an unknown parameter set, a truncated header) gives `nil`: the caller then leaves only
/// the NAL header clear, which is still a valid subsample map.
public struct AVCSliceHeaderReader: SliceHeaderSizing {
    struct SPS: Sendable {
        var separateColourPlane = false
        var chromaArrayType: UInt32 = 1
        var log2MaxFrameNum = 4
        var pocType: UInt32 = 0
        var log2MaxPocLsb = 4
        var deltaPicOrderAlwaysZero = false
        var frameMbsOnly = true
    }
    struct PPS: Sendable {
        var spsID: UInt32
        var entropyCodingMode: Bool
        var bottomFieldPicOrderInFramePresent: Bool
        var numRefIdxL0Default: UInt32
        var numRefIdxL1Default: UInt32
        var weightedPred: Bool
        var weightedBipredIdc: UInt32
        var deblockingFilterControlPresent: Bool
        var redundantPicCntPresent: Bool
    }
    var sps: [UInt32: SPS] = [:]
    var pps: [UInt32: PPS] = [:]

    /// The reader of the parameter sets in `avcC` (ISO/IEC 14496-15 §5.3.3.1); `nil` if it holds none that parse.
    public init?(avcC: [UInt8]) {
        guard avcC.count >= 7 else { return nil }
        var at = 6
        func sets(count: Int) -> [[UInt8]] {
            var out: [[UInt8]] = []
            for _ in 0..<count {
                guard at + 2 <= avcC.count else { return out }
                let n = Int(avcC[at]) << 8 | Int(avcC[at + 1])
                guard at + 2 + n <= avcC.count else { return out }
                out.append(Array(avcC[(at + 2)..<(at + 2 + n)]))
                at += 2 + n
            }
            return out
        }
        let spsList = sets(count: Int(avcC[5] & 0x1F))
        let ppsCount = at < avcC.count ? Int(avcC[at]) : 0
        at += 1
        let ppsList = sets(count: ppsCount)
        for s in spsList { if let (id, v) = try? Self.parseSPS(s) { sps[id] = v } }
        for p in ppsList { if let (id, v) = try? Self.parsePPS(p) { pps[id] = v } }
        guard !sps.isEmpty, !pps.isEmpty else { return nil }
    }

    /// Bytes of `nal` (a coded slice, from its one-byte NAL header) up to the end of its slice header, emulation
    /// prevention bytes counted; for CABAC slices through `cabac_alignment_one_bit`, where slice data begins.
    public func headerSize(nal: ArraySlice<UInt8>) -> Int? {
        guard let first = nal.first else { return nil }
        let nalType = first & 0x1F
        guard (1...5).contains(nalType) else { return nil }
        // RBSP of the first bytes (a slice header is short) and where each RBSP byte was in the NAL unit.
        let (rbsp, origin) = SPSInfo.rbspPrefix(nal, headerBytes: 1, limit: 256)
        var r = BitReader(rbsp, truncated: .invalidH264("slice header truncated"))
        guard let bits = try? headerBits(&r, nalType: nalType, nalRefIdc: (first >> 5) & 3) else { return nil }
        let bytes = (bits + 7) / 8
        guard bytes > 0, bytes <= origin.count else { return nil }
        return origin[bytes - 1] + 1
    }

    private func headerBits(_ r: inout BitReader, nalType: UInt8, nalRefIdc: UInt8) throws -> Int {
        let idr = nalType == 5
        _ = try r.ue()                                            // first_mb_in_slice
        let sliceType = try r.ue() % 5                            // P 0, B 1, I 2, SP 3, SI 4
        guard let p = pps[try r.ue()], let s = sps[p.spsID] else { throw MP4Error.invalidH264("unknown parameter set") }
        if s.separateColourPlane { try r.skip(2) }                // colour_plane_id
        try r.skip(s.log2MaxFrameNum)                             // frame_num
        var fieldPic = false
        if !s.frameMbsOnly {
            fieldPic = try r.flag()
            if fieldPic { try r.skip(1) }                         // bottom_field_flag
        }
        if idr { _ = try r.ue() }                                 // idr_pic_id
        if s.pocType == 0 {
            try r.skip(s.log2MaxPocLsb)                           // pic_order_cnt_lsb
            if p.bottomFieldPicOrderInFramePresent && !fieldPic { _ = try r.se() }
        } else if s.pocType == 1 && !s.deltaPicOrderAlwaysZero {
            _ = try r.se()
            if p.bottomFieldPicOrderInFramePresent && !fieldPic { _ = try r.se() }
        }
        if p.redundantPicCntPresent { _ = try r.ue() }
        let isB = sliceType == 1, isP = sliceType == 0 || sliceType == 3, isI = sliceType == 2 || sliceType == 4
        if isB { try r.skip(1) }                                  // direct_spatial_mv_pred_flag
        var l0 = p.numRefIdxL0Default, l1 = p.numRefIdxL1Default
        if isP || isB, try r.flag() {                             // num_ref_idx_active_override_flag
            l0 = try r.ue() + 1
            if isB { l1 = try r.ue() + 1 }
        }
        // ref_pic_list_modification() §7.3.3.1
        for _ in 0..<(isB ? 2 : isI ? 0 : 1) {
            if try r.flag() {
                var idc: UInt32
                repeat {
                    idc = try r.ue()
                    if idc <= 2 { _ = try r.ue() }
                    guard idc <= 5 else { throw MP4Error.invalidH264("modification_of_pic_nums_idc") }
                } while idc != 3
            }
        }
        // pred_weight_table() §7.3.3.2
        if (p.weightedPred && isP) || (p.weightedBipredIdc == 1 && isB) {
            _ = try r.ue()                                        // luma_log2_weight_denom
            if s.chromaArrayType != 0 { _ = try r.ue() }
            for count in isB ? [l0, l1] : [l0] {
                guard count <= 32 else { throw MP4Error.invalidH264("num_ref_idx") }
                for _ in 0..<count {
                    if try r.flag() { _ = try r.se(); _ = try r.se() }
                    if s.chromaArrayType != 0, try r.flag() { for _ in 0..<4 { _ = try r.se() } }
                }
            }
        }
        // dec_ref_pic_marking() §7.3.3.3
        if nalRefIdc != 0 {
            if idr {
                try r.skip(2)
            } else if try r.flag() {
                var op: UInt32
                repeat {
                    op = try r.ue()
                    if op == 1 || op == 3 { _ = try r.ue() }
                    if op == 2 { _ = try r.ue() }
                    if op == 3 || op == 6 { _ = try r.ue() }
                    if op == 4 { _ = try r.ue() }
                    guard op <= 6 else { throw MP4Error.invalidH264("memory_management_control_operation") }
                } while op != 0
            }
        }
        if p.entropyCodingMode && !isI { _ = try r.ue() }          // cabac_init_idc
        _ = try r.se()                                            // slice_qp_delta
        if sliceType == 3 || sliceType == 4 {
            if sliceType == 3 { try r.skip(1) }                   // sp_for_switch_flag
            _ = try r.se()                                        // slice_qs_delta
        }
        if p.deblockingFilterControlPresent, try r.ue() != 1 {    // disable_deblocking_filter_idc
            _ = try r.se(); _ = try r.se()
        }
        if p.entropyCodingMode {
            // cabac_alignment_one_bit until byte-aligned: slice data starts on a byte.
            while r.bit % 8 != 0 { guard try r.flag() else { throw MP4Error.invalidH264("cabac_alignment_one_bit") } }
        }
        return r.bit
    }

    static func parseSPS(_ nal: [UInt8]) throws -> (UInt32, SPS) {
        var r = BitReader(SPSInfo.rbsp(nal.dropFirst()))
        let profile = try r.u8()
        try r.skip(16)                                            // constraint flags, level_idc
        let id = try r.ue()
        var s = SPS()
        if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profile) {
            let chroma = try r.ue()
            if chroma == 3 { s.separateColourPlane = try r.flag() }
            s.chromaArrayType = s.separateColourPlane ? 0 : chroma
            _ = try r.ue(); _ = try r.ue()                        // bit depths
            try r.skip(1)                                         // qpprime_y_zero_transform_bypass_flag
            if try r.flag() {
                for i in 0..<(chroma != 3 ? 8 : 12) {
                    if try r.flag() { try r.skipScalingList(size: i < 6 ? 16 : 64) }
                }
            }
        }
        s.log2MaxFrameNum = Int(try r.ue()) + 4
        s.pocType = try r.ue()
        if s.pocType == 0 {
            s.log2MaxPocLsb = Int(try r.ue()) + 4
        } else if s.pocType == 1 {
            s.deltaPicOrderAlwaysZero = try r.flag()
            _ = try r.se(); _ = try r.se()
            let cycle = try r.ue()
            guard cycle <= 255 else { throw MP4Error.invalidH264("num_ref_frames_in_pic_order_cnt_cycle") }
            for _ in 0..<cycle { _ = try r.se() }
        }
        _ = try r.ue()                                            // max_num_ref_frames
        try r.skip(1)                                             // gaps_in_frame_num_value_allowed_flag
        _ = try r.ue(); _ = try r.ue()                            // size in macroblocks
        s.frameMbsOnly = try r.flag()
        guard s.log2MaxFrameNum <= 16, s.log2MaxPocLsb <= 16 else { throw MP4Error.invalidH264("SPS field out of range") }
        return (id, s)
    }

    static func parsePPS(_ nal: [UInt8]) throws -> (UInt32, PPS) {
        var r = BitReader(SPSInfo.rbsp(nal.dropFirst()), truncated: .invalidH264("PPS truncated"))
        let id = try r.ue()
        let spsID = try r.ue()
        let cabac = try r.flag()
        let bottom = try r.flag()
        guard try r.ue() == 0 else { throw MP4Error.invalidH264("slice groups") }   // num_slice_groups_minus1
        let l0 = try r.ue() + 1, l1 = try r.ue() + 1
        let weighted = try r.flag()
        let bipred = try r.bits(2)
        _ = try r.se(); _ = try r.se(); _ = try r.se()           // pic_init_qp/qs, chroma_qp_index_offset
        let deblocking = try r.flag()
        try r.skip(1)                                             // constrained_intra_pred_flag
        let redundant = try r.flag()
        return (id, PPS(spsID: spsID, entropyCodingMode: cabac, bottomFieldPicOrderInFramePresent: bottom,
                        numRefIdxL0Default: l0, numRefIdxL1Default: l1, weightedPred: weighted, weightedBipredIdc: bipred,
                        deblockingFilterControlPresent: deblocking, redundantPicCntPresent: redundant))
    }
}
