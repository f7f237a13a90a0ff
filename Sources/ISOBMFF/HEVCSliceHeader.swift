import MediaCore

/// Where an H.265 slice segment's header ends (ITU-T H.265 §7.3.6.1, through `byte_alignment()`), for common
/// encryption (ISO/IEC 23001-7 §9.5.2.2: the slice header stays clear; AVPlayer decodes cbcs HEVC only so). The
/// parameter sets come from the `hvcC`. A slice it cannot size (an unknown parameter set, multi-layer or screen
/// content extensions, a truncated header) gives `nil`: the caller then leaves only the NAL header clear.
public struct HEVCSliceHeaderReader: SliceHeaderSizing {
    /// A short-term reference picture set (§7.4.8): its delta POCs and which the current picture uses.
    struct RPS: Sendable {
        var s0: [(delta: Int32, used: Bool)] = []
        var s1: [(delta: Int32, used: Bool)] = []
        var count: Int { s0.count + s1.count }
        var usedCount: Int { s0.filter(\.used).count + s1.filter(\.used).count }
    }
    struct SPS: Sendable {
        var separateColourPlane = false
        var chromaArrayType: UInt32 = 1
        var log2MaxPocLsb = 4
        var picSizeInCtbs = 1
        var sao = false
        var sets: [RPS] = []
        var longTermPresent = false
        var longTermSPS: [Bool] = []                              // used_by_curr_pic_lt_sps_flag
        var temporalMVP = false
    }
    struct PPS: Sendable {
        var spsID: UInt32
        var dependentSlices = false
        var outputFlagPresent = false
        var extraSliceHeaderBits = 0
        var cabacInitPresent = false
        var numRefIdxL0Default: UInt32 = 1
        var numRefIdxL1Default: UInt32 = 1
        var sliceChromaQpOffsetsPresent = false
        var weightedPred = false
        var weightedBipred = false
        var tilesOrSync = false
        var loopFilterAcrossSlices = false
        var deblockingOverrideEnabled = false
        var deblockingDisabled = false
        var listsModificationPresent = false
        var sliceHeaderExtension = false
        var chromaQpOffsetList = false
    }
    var sps: [UInt32: SPS] = [:]
    var pps: [UInt32: PPS] = [:]

    public init?(hvcC: [UInt8]) {
        let sets = HEVC.parameterSets(hvcC: hvcC)
        for s in sets[HEVC.NALType.sps] ?? [] { if let (id, v) = try? Self.parseSPS(s) { sps[id] = v } }
        for p in sets[HEVC.NALType.pps] ?? [] { if let (id, v) = try? Self.parsePPS(p) { pps[id] = v } }
        guard !sps.isEmpty, !pps.isEmpty else { return nil }
    }

    /// Bytes of `nal` (a coded slice segment, from its two-byte NAL header) up to the end of its slice segment header.
    public func headerSize(nal: ArraySlice<UInt8>) -> Int? {
        guard nal.count > 2 else { return nil }
        let type = HEVC.type(nal[nal.startIndex])
        guard type < 32 else { return nil }
        let (rbsp, origin) = SPSInfo.rbspPrefix(nal, headerBytes: 2, limit: 512)
        var r = BitReader(rbsp, truncated: .invalidHEVC("slice header truncated"))
        guard let bits = try? headerBits(&r, type: type), bits % 8 == 0, bits > 0, bits / 8 <= origin.count else { return nil }
        return origin[bits / 8 - 1] + 1
    }

    private func headerBits(_ r: inout BitReader, type: UInt8) throws -> Int {
        let first = try r.flag()                                  // first_slice_segment_in_pic_flag
        if (16...23).contains(type) { try r.skip(1) }             // no_output_of_prior_pics_flag
        guard let p = pps[try r.ue()], let s = sps[p.spsID] else { throw MP4Error.invalidHEVC("unknown parameter set") }
        var dependent = false
        if !first {
            if p.dependentSlices { dependent = try r.flag() }
            try r.skip(Self.ceilLog2(s.picSizeInCtbs))            // slice_segment_address
        }
        if !dependent {
            try r.skip(p.extraSliceHeaderBits)                    // slice_reserved_flag
            let sliceType = try r.ue()                            // B 0, P 1, I 2
            if p.outputFlagPresent { try r.skip(1) }
            if s.separateColourPlane { try r.skip(2) }
            var temporalMVP = false
            var numPicTotalCurr = 0
            if type != 19 && type != 20 {                         // not IDR
                try r.skip(s.log2MaxPocLsb)                       // slice_pic_order_cnt_lsb
                var rps: RPS
                if try r.flag() {                                 // short_term_ref_pic_set_sps_flag
                    let index = s.sets.count > 1 ? Int(try r.bits(Self.ceilLog2(s.sets.count))) : 0
                    guard index < s.sets.count else { throw MP4Error.invalidHEVC("short_term_ref_pic_set_idx") }
                    rps = s.sets[index]
                } else {
                    rps = try Self.parseRPS(&r, index: s.sets.count, sets: s.sets)
                }
                numPicTotalCurr = rps.usedCount
                if s.longTermPresent {
                    let fromSPS = s.longTermSPS.isEmpty ? 0 : Int(try r.ue())
                    let pics = Int(try r.ue())
                    guard fromSPS + pics <= 32 else { throw MP4Error.invalidHEVC("long-term pictures") }
                    for i in 0..<(fromSPS + pics) {
                        if i < fromSPS {
                            let idx = s.longTermSPS.count > 1 ? Int(try r.bits(Self.ceilLog2(s.longTermSPS.count))) : 0
                            guard idx < s.longTermSPS.count else { throw MP4Error.invalidHEVC("lt_idx_sps") }
                            if s.longTermSPS[idx] { numPicTotalCurr += 1 }
                        } else {
                            try r.skip(s.log2MaxPocLsb)           // poc_lsb_lt
                            if try r.flag() { numPicTotalCurr += 1 }
                        }
                        if try r.flag() { _ = try r.ue() }        // delta_poc_msb_present_flag, delta_poc_msb_cycle_lt
                    }
                }
                if s.temporalMVP { temporalMVP = try r.flag() }
            }
            if s.sao {
                try r.skip(1)                                     // slice_sao_luma_flag
                if s.chromaArrayType != 0 { try r.skip(1) }
            }
            if sliceType == 0 || sliceType == 1 {
                let isB = sliceType == 0
                var l0 = p.numRefIdxL0Default, l1 = isB ? p.numRefIdxL1Default : 0
                if try r.flag() {                                 // num_ref_idx_active_override_flag
                    l0 = try r.ue() + 1
                    if isB { l1 = try r.ue() + 1 }
                }
                guard l0 <= 16, l1 <= 16 else { throw MP4Error.invalidHEVC("num_ref_idx") }
                if p.listsModificationPresent && numPicTotalCurr > 1 {
                    let bits = Self.ceilLog2(numPicTotalCurr)
                    if try r.flag() { try r.skip(bits * Int(l0)) }
                    if isB, try r.flag() { try r.skip(bits * Int(l1)) }
                }
                if isB { try r.skip(1) }                          // mvd_l1_zero_flag
                if p.cabacInitPresent { try r.skip(1) }           // cabac_init_flag
                if temporalMVP {
                    let fromL0 = isB ? try r.flag() : true        // collocated_from_l0_flag
                    if (fromL0 && l0 > 1) || (!fromL0 && l1 > 1) { _ = try r.ue() }
                }
                if (p.weightedPred && !isB) || (p.weightedBipred && isB) {
                    // pred_weight_table() §7.3.6.3, single layer: every reference gets its flags.
                    _ = try r.ue()
                    if s.chromaArrayType != 0 { _ = try r.se() }
                    for count in isB ? [l0, l1] : [l0] {
                        let luma = try (0..<count).map { _ in try r.flag() }
                        let chroma = s.chromaArrayType != 0 ? try (0..<count).map { _ in try r.flag() } : Array(repeating: false, count: Int(count))
                        for i in 0..<Int(count) {
                            if luma[i] { _ = try r.se(); _ = try r.se() }
                            if chroma[i] { for _ in 0..<4 { _ = try r.se() } }
                        }
                    }
                }
                _ = try r.ue()                                    // five_minus_max_num_merge_cand
            }
            _ = try r.se()                                        // slice_qp_delta
            if p.sliceChromaQpOffsetsPresent { _ = try r.se(); _ = try r.se() }
            if p.chromaQpOffsetList { try r.skip(1) }             // cu_chroma_qp_offset_enabled_flag
            var deblockingDisabled = p.deblockingDisabled
            if p.deblockingOverrideEnabled, try r.flag() {        // deblocking_filter_override_flag
                deblockingDisabled = try r.flag()
                if !deblockingDisabled { _ = try r.se(); _ = try r.se() }
            }
            if p.loopFilterAcrossSlices && (s.sao || !deblockingDisabled) { try r.skip(1) }
        }
        if p.tilesOrSync {
            let n = try r.ue()                                    // num_entry_point_offsets
            if n > 0 {
                guard n <= 4096 else { throw MP4Error.invalidHEVC("num_entry_point_offsets") }
                let bits = Int(try r.ue()) + 1
                guard bits <= 32 else { throw MP4Error.invalidHEVC("offset_len") }
                try r.skip(bits * Int(n))
            }
        }
        if p.sliceHeaderExtension { try r.skip(8 * Int(try r.ue())) }
        // byte_alignment(): a one bit, then zeros to the byte boundary.
        guard try r.flag() else { throw MP4Error.invalidHEVC("alignment_bit_equal_to_one") }
        while r.bit % 8 != 0 { guard try !r.flag() else { throw MP4Error.invalidHEVC("alignment_bit_equal_to_zero") } }
        return r.bit
    }

    static func ceilLog2(_ n: Int) -> Int {
        var bits = 0
        while (1 << bits) < n { bits += 1 }
        return bits
    }

    /// st_ref_pic_set(stRpsIdx) §7.3.7 with the derivation of §7.4.8 (inter RPS prediction included).
    static func parseRPS(_ r: inout BitReader, index: Int, sets: [RPS]) throws -> RPS {
        if index != 0, try r.flag() {                             // inter_ref_pic_set_prediction_flag
            let deltaIdx = index == sets.count ? Int(try r.ue()) + 1 : 1
            guard deltaIdx <= index else { throw MP4Error.invalidHEVC("delta_idx") }
            let sign = try r.flag()
            let abs = Int32(try r.ue()) + 1
            let deltaRps = sign ? -abs : abs
            let ref = sets[index - deltaIdx]
            var used: [Bool] = [], useDelta: [Bool] = []
            for _ in 0...ref.count {
                let u = try r.flag()
                used.append(u)
                useDelta.append(u ? true : try r.flag())
            }
            // (7-61), (7-62): the reference set's pictures moved by deltaRps, then the reference picture itself.
            var out = RPS()
            let refS0 = ref.s0, refS1 = ref.s1
            for i in stride(from: refS1.count - 1, through: 0, by: -1) {
                let d = refS1[i].delta + deltaRps
                if d < 0 && useDelta[refS0.count + i] { out.s0.append((d, used[refS0.count + i])) }
            }
            if deltaRps < 0 && useDelta[ref.count] { out.s0.append((deltaRps, used[ref.count])) }
            for i in 0..<refS0.count {
                let d = refS0[i].delta + deltaRps
                if d < 0 && useDelta[i] { out.s0.append((d, used[i])) }
            }
            for i in stride(from: refS0.count - 1, through: 0, by: -1) {
                let d = refS0[i].delta + deltaRps
                if d > 0 && useDelta[i] { out.s1.append((d, used[i])) }
            }
            if deltaRps > 0 && useDelta[ref.count] { out.s1.append((deltaRps, used[ref.count])) }
            for i in 0..<refS1.count {
                let d = refS1[i].delta + deltaRps
                if d > 0 && useDelta[refS0.count + i] { out.s1.append((d, used[refS0.count + i])) }
            }
            return out
        }
        let negative = try r.ue(), positive = try r.ue()
        guard negative <= 16, positive <= 16 else { throw MP4Error.invalidHEVC("num_negative_pics") }
        var out = RPS()
        var poc: Int32 = 0
        for _ in 0..<negative {
            poc -= Int32(try r.ue()) + 1
            out.s0.append((poc, try r.flag()))
        }
        poc = 0
        for _ in 0..<positive {
            poc += Int32(try r.ue()) + 1
            out.s1.append((poc, try r.flag()))
        }
        return out
    }

    static func skipScalingListData(_ r: inout BitReader) throws {
        for sizeId in 0..<4 {
            for _ in stride(from: 0, to: 6, by: sizeId == 3 ? 3 : 1) {
                if try !r.flag() {
                    _ = try r.ue()                                // scaling_list_pred_matrix_id_delta
                } else {
                    let coefs = min(64, 1 << (4 + (sizeId << 1)))
                    if sizeId > 1 { _ = try r.se() }
                    for _ in 0..<coefs { _ = try r.se() }
                }
            }
        }
    }

    static func parseSPS(_ nal: [UInt8]) throws -> (UInt32, SPS) {
        var r = BitReader(SPSInfo.rbsp(nal.dropFirst(2)), truncated: .invalidHEVC("SPS truncated"))
        try r.skip(4)                                             // sps_video_parameter_set_id
        let maxSubLayersMinus1 = Int(try r.bits(3))
        try r.skip(1)
        // profile_tier_level(1, maxSubLayersMinus1)
        try r.skip(2 + 1 + 5 + 32 + 48 + 8)
        var profilePresent: [Bool] = [], levelPresent: [Bool] = []
        for _ in 0..<maxSubLayersMinus1 { profilePresent.append(try r.flag()); levelPresent.append(try r.flag()) }
        if maxSubLayersMinus1 > 0 { for _ in maxSubLayersMinus1..<8 { try r.skip(2) } }
        for i in 0..<maxSubLayersMinus1 {
            if profilePresent[i] { try r.skip(88) }
            if levelPresent[i] { try r.skip(8) }
        }
        let id = try r.ue()
        var s = SPS()
        let chroma = try r.ue()
        if chroma == 3 { s.separateColourPlane = try r.flag() }
        s.chromaArrayType = s.separateColourPlane ? 0 : chroma
        let width = Int(try r.ue()), height = Int(try r.ue())
        if try r.flag() { for _ in 0..<4 { _ = try r.ue() } }    // conformance window
        _ = try r.ue(); _ = try r.ue()                            // bit depths
        s.log2MaxPocLsb = Int(try r.ue()) + 4
        let ordering = try r.flag()
        for _ in (ordering ? 0 : maxSubLayersMinus1)...maxSubLayersMinus1 { _ = try r.ue(); _ = try r.ue(); _ = try r.ue() }
        let log2MinCb = Int(try r.ue()) + 3
        let log2Ctb = log2MinCb + Int(try r.ue())
        _ = try r.ue(); _ = try r.ue(); _ = try r.ue(); _ = try r.ue()   // transform sizes, hierarchy depths
        if try r.flag(), try r.flag() { try skipScalingListData(&r) }     // scaling_list_enabled, sps data present
        try r.skip(1)                                             // amp_enabled_flag
        s.sao = try r.flag()
        if try r.flag() {                                         // pcm_enabled_flag
            try r.skip(8); _ = try r.ue(); _ = try r.ue(); try r.skip(1)
        }
        let sets = Int(try r.ue())
        guard sets <= 64, log2Ctb <= 7, s.log2MaxPocLsb <= 16 else { throw MP4Error.invalidHEVC("SPS field out of range") }
        for i in 0..<sets { s.sets.append(try parseRPS(&r, index: i, sets: s.sets)) }
        s.longTermPresent = try r.flag()
        if s.longTermPresent {
            let n = Int(try r.ue())
            guard n <= 32 else { throw MP4Error.invalidHEVC("num_long_term_ref_pics_sps") }
            for _ in 0..<n { try r.skip(s.log2MaxPocLsb); s.longTermSPS.append(try r.flag()) }
        }
        s.temporalMVP = try r.flag()
        let ctb = 1 << log2Ctb
        s.picSizeInCtbs = ((width + ctb - 1) / ctb) * ((height + ctb - 1) / ctb)
        return (id, s)
    }

    static func parsePPS(_ nal: [UInt8]) throws -> (UInt32, PPS) {
        var r = BitReader(SPSInfo.rbsp(nal.dropFirst(2)), truncated: .invalidHEVC("PPS truncated"))
        let id = try r.ue()
        var p = PPS(spsID: try r.ue())
        p.dependentSlices = try r.flag()
        p.outputFlagPresent = try r.flag()
        p.extraSliceHeaderBits = Int(try r.bits(3))
        try r.skip(1)                                             // sign_data_hiding_enabled_flag
        p.cabacInitPresent = try r.flag()
        p.numRefIdxL0Default = try r.ue() + 1
        p.numRefIdxL1Default = try r.ue() + 1
        _ = try r.se()                                            // init_qp_minus26
        try r.skip(1)                                             // constrained_intra_pred_flag
        let transformSkip = try r.flag()
        if try r.flag() { _ = try r.ue() }                        // cu_qp_delta_enabled_flag, diff_cu_qp_delta_depth
        _ = try r.se(); _ = try r.se()                            // pps_cb/cr_qp_offset
        p.sliceChromaQpOffsetsPresent = try r.flag()
        p.weightedPred = try r.flag()
        p.weightedBipred = try r.flag()
        try r.skip(1)                                             // transquant_bypass_enabled_flag
        let tiles = try r.flag()
        let sync = try r.flag()
        p.tilesOrSync = tiles || sync
        if tiles {
            let columns = try r.ue(), rows = try r.ue()
            guard columns < 64, rows < 64 else { throw MP4Error.invalidHEVC("tiles") }
            if try !r.flag() {                                    // uniform_spacing_flag
                for _ in 0..<columns { _ = try r.ue() }
                for _ in 0..<rows { _ = try r.ue() }
            }
            try r.skip(1)                                         // loop_filter_across_tiles_enabled_flag
        }
        p.loopFilterAcrossSlices = try r.flag()
        if try r.flag() {                                         // deblocking_filter_control_present_flag
            p.deblockingOverrideEnabled = try r.flag()
            p.deblockingDisabled = try r.flag()
            if !p.deblockingDisabled { _ = try r.se(); _ = try r.se() }
        }
        if try r.flag() { try skipScalingListData(&r) }           // pps_scaling_list_data_present_flag
        p.listsModificationPresent = try r.flag()
        _ = try r.ue()                                            // log2_parallel_merge_level_minus2
        p.sliceHeaderExtension = try r.flag()
        if try r.flag() {                                         // pps_extension_present_flag
            let range = try r.flag(), multilayer = try r.flag(), threeD = try r.flag(), scc = try r.flag()
            try r.skip(4)
            guard !multilayer, !threeD, !scc else { throw MP4Error.invalidHEVC("PPS extensions") }
            if range {
                if transformSkip { _ = try r.ue() }
                try r.skip(1)                                     // cross_component_prediction_enabled_flag
                p.chromaQpOffsetList = try r.flag()
            }
        }
        return (id, p)
    }
}
