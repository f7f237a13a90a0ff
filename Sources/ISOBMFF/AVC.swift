import MediaCore

/// H.264 / AVC bitstream helpers (ITU-T H.264 Annex B byte streams, ISO/IEC 14496-15 length-prefixed samples).
///
/// The scans run over `withUnsafeBufferPointer` and skip three bytes at a time where no start code can begin,
/// so a whole-file segmenter can call them once per sample.
public enum AVC {
    /// NAL unit types used here (H.264 Table 7-1).
    public enum NALType {
        public static let nonIDRSlice: UInt8 = 1
        public static let idrSlice: UInt8 = 5
        public static let sei: UInt8 = 6
        public static let sps: UInt8 = 7
        public static let pps: UInt8 = 8
        public static let accessUnitDelimiter: UInt8 = 9
    }

    /// True if data starts with a 3- or 4-byte Annex-B start code.
    public static func isAnnexB(_ data: [UInt8]) -> Bool {
        guard data.count >= 3, data[0] == 0, data[1] == 0 else { return false }
        guard data[2] == 1 || (data.count >= 4 && data[2] == 0 && data[3] == 1) else { return false }
        // A 4-byte NAL length of 256-511 also begins 00 00 01 (FLV, MP4 and MKV samples): a buffer whose 4-byte
        // lengths chain exactly to its end, over NAL headers with forbidden_zero_bit 0, is length-prefixed.
        return !chainsAsLengthPrefixed(data)
    }

    private static func chainsAsLengthPrefixed(_ data: [UInt8]) -> Bool {
        var i = 0
        while i + 4 < data.count {
            let n = Int(data[i]) << 24 | Int(data[i + 1]) << 16 | Int(data[i + 2]) << 8 | Int(data[i + 3])
            guard n > 0, n <= data.count - i - 4, data[i + 4] & 0x80 == 0 else { return false }
            i += 4 + n
        }
        return i == data.count
    }

    /// Annex-B byte stream -> NAL units (without start codes). Handles 3- and 4-byte start codes and trailing
    /// zero bytes (H.264 §B.2 `trailing_zero_8bits`); bytes before the first start code are ignored.
    public static func nalUnits(annexB data: [UInt8]) -> [ArraySlice<UInt8>] {
        var result: [ArraySlice<UInt8>] = []
        data.withUnsafeBufferPointer { buf in
            scanAnnexB(buf) { r in result.append(data[r]) }
        }
        return result
    }

    /// NAL units of a sample whose NAL units are each preceded by a 4-byte big-endian length
    /// (ISO/IEC 14496-15 §5.3.2, lengthSizeMinusOne = 3). Tolerant: stops at a length that overruns the data.
    public static func nalUnits(lengthPrefixed data: [UInt8]) -> [ArraySlice<UInt8>] {
        var result: [ArraySlice<UInt8>] = []
        data.withUnsafeBufferPointer { buf in
            scanLengthPrefixed(buf) { r in result.append(data[r]) }
        }
        return result
    }

    /// Annex-B access unit -> 4-byte length-prefixed sample in one linear scan. Drops access unit delimiters
    /// (type 9) and, when `dropParameterSets`, SPS/PPS (types 7/8), which then live in `avcC` only.
    public static func lengthPrefixed(fromAnnexB data: [UInt8], dropParameterSets: Bool = false) -> [UInt8] {
        // Every NAL unit of n bytes consumes at least n + 3 input bytes (start code) and produces n + 4,
        // and needs at least 4 input bytes, so the output never exceeds count + count / 4 + 4.
        let bound = data.count + data.count / 4 + 4
        return data.withUnsafeBufferPointer { src in
            [UInt8](unsafeUninitializedCapacity: bound) { out, written in
                var o = 0
                scanAnnexB(src) { r in
                    let type = src[r.lowerBound] & 0x1F
                    if type == NALType.accessUnitDelimiter { return }
                    if dropParameterSets && (type == NALType.sps || type == NALType.pps) { return }
                    let n = UInt32(truncatingIfNeeded: r.count)
                    out[o] = UInt8(truncatingIfNeeded: n >> 24)
                    out[o + 1] = UInt8(truncatingIfNeeded: n >> 16)
                    out[o + 2] = UInt8(truncatingIfNeeded: n >> 8)
                    out[o + 3] = UInt8(truncatingIfNeeded: n)
                    o += 4
                    // Both base addresses exist: `out` has capacity >= 4 and `r` is a non-empty range of `src`.
                    (out.baseAddress! + o).update(from: src.baseAddress! + r.lowerBound, count: r.count)
                    o += r.count
                }
                written = o
            }
        }
    }

    /// Builds an AVCDecoderConfigurationRecord (ISO/IEC 14496-15 §5.3.3.1) from SPS and PPS NAL units
    /// (with their one-byte NAL header), lengthSizeMinusOne = 3. For High profiles (100, 110, 122, 144) the
    /// chroma_format / bit_depth extension is filled from the first SPS.
    public static func makeAVCC(sps: [[UInt8]], pps: [[UInt8]]) throws -> [UInt8] {
        guard let first = sps.first else { throw MP4Error.invalidH264("no SPS") }
        guard !pps.isEmpty else { throw MP4Error.invalidH264("no PPS") }
        guard sps.count <= 31, pps.count <= 255 else { throw MP4Error.invalidH264("too many parameter sets") }
        guard sps.allSatisfy({ $0.count >= 4 && $0.count <= 0xFFFF && $0[0] & 0x1F == NALType.sps }) else {
            throw MP4Error.invalidH264("malformed SPS NAL unit")
        }
        guard pps.allSatisfy({ $0.count >= 2 && $0.count <= 0xFFFF && $0[0] & 0x1F == NALType.pps }) else {
            throw MP4Error.invalidH264("malformed PPS NAL unit")
        }
        let info = try SPSInfo(nal: first)
        var out: [UInt8] = []
        out.reserveCapacity(11 + sps.reduce(0) { $0 + $1.count + 2 } + pps.reduce(0) { $0 + $1.count + 2 })
        out.append(1)                                   // configurationVersion
        out.append(first[1])                            // AVCProfileIndication
        out.append(first[2])                            // profile_compatibility
        out.append(first[3])                            // AVCLevelIndication
        out.append(0xFC | 3)                            // reserved 6 bits + lengthSizeMinusOne = 3
        out.append(0xE0 | UInt8(sps.count))             // reserved 3 bits + numOfSequenceParameterSets
        for s in sps {
            out.append(UInt8(s.count >> 8)); out.append(UInt8(s.count & 0xFF))
            out.append(contentsOf: s)
        }
        out.append(UInt8(pps.count))                    // numOfPictureParameterSets
        for p in pps {
            out.append(UInt8(p.count >> 8)); out.append(UInt8(p.count & 0xFF))
            out.append(contentsOf: p)
        }
        if [100, 110, 122, 144].contains(info.profileIdc) {
            out.append(0xFC | info.chromaFormatIdc)             // reserved 6 bits + chroma_format
            out.append(0xF8 | (info.bitDepthLuma - 8))          // reserved 5 bits + bit_depth_luma_minus8
            out.append(0xF8 | (info.bitDepthChroma - 8))        // reserved 5 bits + bit_depth_chroma_minus8
            out.append(0)                                       // numOfSequenceParameterSetExt
        }
        return out
    }

    /// `avcC` from codec extradata that is either already an AVCDecoderConfigurationRecord (first byte 1)
    /// or Annex-B SPS/PPS (libx264, MPEG-TS).
    public static func avcC(fromExtradata data: [UInt8]) throws -> [UInt8] {
        if data.first == 1 {
            guard data.count >= 7 else { throw MP4Error.invalidH264("avcC record of \(data.count) bytes") }
            return data
        }
        guard isAnnexB(data) else { throw MP4Error.invalidH264("extradata is neither avcC nor Annex-B") }
        let ps = parameterSets(in: data)
        return try makeAVCC(sps: ps.sps, pps: ps.pps)
    }

    /// SPS and PPS NAL units carried in-band in an Annex-B or 4-byte length-prefixed access unit
    /// (raw .h264 and MPEG-TS inputs without extradata). Duplicates are kept once.
    public static func parameterSets(in data: [UInt8]) -> (sps: [[UInt8]], pps: [[UInt8]]) {
        var sps: [[UInt8]] = [], pps: [[UInt8]] = []
        forEachNAL(in: data) { nal in
            guard let header = nal.first else { return true }
            switch header & 0x1F {
            case NALType.sps: let a = Array(nal); if !sps.contains(where: { canonical($0) == canonical(a) }) { sps.append(a) }
            case NALType.pps: let a = Array(nal); if !pps.contains(where: { canonical($0) == canonical(a) }) { pps.append(a) }
            default: break
            }
            return true
        }
        return (sps, pps)
    }

    /// The SPS and PPS NAL units of an AVCDecoderConfigurationRecord (ISO/IEC 14496-15 §5.3.3.1); what does not
    /// parse is left out.
    public static func parameterSets(avcC: [UInt8]) -> (sps: [[UInt8]], pps: [[UInt8]]) {
        var i = 5
        func sets(_ count: Int) -> [[UInt8]] {
            var out: [[UInt8]] = []
            for _ in 0..<count {
                guard i + 2 <= avcC.count else { break }
                let n = Int(avcC[i]) << 8 | Int(avcC[i + 1])
                i += 2
                guard i + n <= avcC.count else { break }
                out.append(Array(avcC[i..<(i + n)]))
                i += n
            }
            return out
        }
        guard avcC.count > 6, avcC[0] == 1 else { return ([], []) }
        let spsCount = Int(avcC[i] & 0x1F)
        i += 1
        let sps = sets(spsCount)
        guard i < avcC.count else { return (sps, []) }
        let ppsCount = Int(avcC[i])
        i += 1
        return (sps, sets(ppsCount))
    }

    /// Whether two configuration records carry the same SPS and PPS (the rest of the record is derived from them),
    /// compared by meaning rather than by bytes (`canonical`): the parameter sets a broadcast source repeats in-band
    /// before every keyframe are the same ones as its `avcC`'s even when a muxer padded those with a zero byte.
    public static func sameParameterSets(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        if a == b { return true }
        let pa = parameterSets(avcC: a), pb = parameterSets(avcC: b)
        return pa.sps.map(canonical) == pb.sps.map(canonical) && pa.pps.map(canonical) == pb.pps.map(canonical)
    }

    /// A parameter set's content, for comparing two of them: its RBSP (emulation-prevention bytes removed) without
    /// trailing zero bytes. H.264 §7.4.1: "The last byte of the NAL unit shall not be equal to 0x00"; zero bytes after
    /// it are the byte stream's `trailing_zero_8bits` (Annex B.1), which some muxers leave inside a record's set.
    public static func canonical(_ nal: [UInt8]) -> [UInt8] {
        var r = SPSInfo.rbsp(nal)
        while r.last == 0 { r.removeLast() }
        return r
    }

    /// Whether the access unit (Annex-B or length-prefixed) contains an IDR slice (NAL type 5).
    public static func containsIDR(_ data: [UInt8]) -> Bool {
        var found = false
        forEachNAL(in: data) { nal in
            if let h = nal.first, h & 0x1F == NALType.idrSlice { found = true; return false }
            return true
        }
        return found
    }

    // MARK: - Scanners

    /// Calls `body` for each NAL unit of an Annex-B or length-prefixed access unit; `body` returns false to stop.
    static func forEachNAL(in data: [UInt8], _ body: (ArraySlice<UInt8>) -> Bool) {
        var stop = false
        data.withUnsafeBufferPointer { buf in
            if isAnnexB(data) {
                scanAnnexB(buf) { r in if !stop, !body(data[r]) { stop = true } }
            } else {
                scanLengthPrefixed(buf) { r in if !stop, !body(data[r]) { stop = true } }
            }
        }
    }

    /// Ranges (start code excluded, trailing zero bytes trimmed) of the NAL units of an Annex-B buffer.
    @inline(__always)
    static func scanAnnexB(_ buf: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Void) {
        let n = buf.count
        var i = 0
        var nalStart = -1
        @inline(__always) func emit(_ end: Int) {
            var e = end
            while e > nalStart && buf[e - 1] == 0 { e -= 1 }
            if e > nalStart { body(nalStart..<e) }
        }
        guard let base = UnsafeRawPointer(buf.baseAddress) else { return }
        while i + 2 < n {
            // Eight bytes without a zero byte cannot hold the start of a start code (it needs two zeros at
            // p, p+1): skip them (SWAR zero-byte test, "Bit Twiddling Hacks", haszero).
            if i + 8 <= n {
                let w = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                if (w &- 0x0101_0101_0101_0101) & ~w & 0x8080_8080_8080_8080 == 0 { i += 8; continue }
            }
            let b2 = buf[i + 2]
            if b2 > 1 { i += 3; continue }      // no start code can begin at i, i+1 or i+2
            if b2 == 1 && buf[i] == 0 && buf[i + 1] == 0 {
                if nalStart >= 0 { emit(i) }    // the leading 0 of a 4-byte start code is trimmed as a trailing zero
                nalStart = i + 3
                i += 3
                continue
            }
            i += 1
        }
        if nalStart >= 0 { emit(n) }
    }

    /// Ranges of the NAL units of a 4-byte length-prefixed buffer; stops at a length that overruns.
    @inline(__always)
    static func scanLengthPrefixed(_ buf: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Void) {
        var i = 0
        let n = buf.count
        while n - i >= 4 {
            let len = Int(buf[i]) << 24 | Int(buf[i + 1]) << 16 | Int(buf[i + 2]) << 8 | Int(buf[i + 3])
            i += 4
            guard len <= n - i else { return }
            if len > 0 { body(i..<(i + len)) }
            i += len
        }
    }
}
