import ISOBMFF
import MediaCore
import TestSupport

// The bodies of the libFuzzer targets of `scripts/fuzz` (annexb, sps, avcc, adts, boxreader), compiled both into
// the fuzz binaries (with `Tests/Fuzz/<target>.swift`) and into this test target, where `FuzzReplayTests` runs
// every committed seed of `Tests/FuzzSeeds/<target>/` through them. No Foundation, no Testing: the fuzz build
// compiles this file with swiftc alone.
//
// A parser that throws on bad bytes is doing its job; a trap (out-of-bounds index, overflow, force unwrap) is a
// bug, and so is a broken invariant, reported as `FuzzInvariantViolation`.

public enum ISOBMFFFuzz {
    // MARK: annexb

    /// NAL splitting, Annex-B -> length-prefixed, in-band parameter sets, IDR detection.
    public static func annexB(_ data: [UInt8]) throws(FuzzInvariantViolation) {
        let nals = AVC.nalUnits(annexB: data)
        var previousEnd = 0
        for nal in nals {
            try require(!nal.isEmpty, "annexb: empty NAL unit returned")
            try require(nal.startIndex >= previousEnd && nal.endIndex <= data.count, "annexb: NAL \(nal.indices) out of order or past \(data.count)")
            // H.264 §B.2: trailing_zero_8bits belong to the byte stream, not to the NAL unit.
            try require(nal.last != 0, "annexb: NAL unit ends with a zero byte")
            // §7.4.1: "the following three-byte sequences shall not occur at any byte-aligned position: 0x000001"
            // (the scanner must have split there).
            try require(!contains(nal, [0, 0, 1]), "annexb: NAL unit contains a start code")
            previousEnd = nal.endIndex
        }
        for drop in [false, true] {
            let lp = AVC.lengthPrefixed(fromAnnexB: data, dropParameterSets: drop)
            let kept = nals.filter { nal in
                let t = nal.first! & 0x1F
                return t != AVC.NALType.accessUnitDelimiter && !(drop && (t == AVC.NALType.sps || t == AVC.NALType.pps))
            }
            // Round trip: reading the 4-byte lengths back gives the NAL units that were kept, and nothing else.
            let back = AVC.nalUnits(lengthPrefixed: lp)
            try require(back.map(Array.init) == kept.map(Array.init), "annexb: length-prefixed round trip differs (drop \(drop))")
            try require(lp.count == kept.reduce(0) { $0 + $1.count + 4 }, "annexb: length-prefixed size \(lp.count)")
        }
        var consumed = 0
        for nal in AVC.nalUnits(lengthPrefixed: data) {
            try require(nal.startIndex >= consumed + 4 && nal.endIndex <= data.count, "annexb: length-prefixed NAL \(nal.indices) past \(data.count)")
            consumed = nal.endIndex
        }
        // containsIDR and parameterSets(in:) read Annex-B when the data starts with a start code, else lengths.
        let units = AVC.isAnnexB(data) ? nals : AVC.nalUnits(lengthPrefixed: data)
        let idr = units.contains { $0.first.map { $0 & 0x1F == AVC.NALType.idrSlice } ?? false }
        try require(AVC.containsIDR(data) == idr, "annexb: containsIDR disagrees with the NAL units")
        let ps = AVC.parameterSets(in: data)
        let all = units.map(Array.init)
        try require(ps.sps.allSatisfy { $0[0] & 0x1F == AVC.NALType.sps && all.contains($0) }, "annexb: parameterSets(in:) SPS not a NAL unit of type 7")
        try require(ps.pps.allSatisfy { $0[0] & 0x1F == AVC.NALType.pps && all.contains($0) }, "annexb: parameterSets(in:) PPS not a NAL unit of type 8")
    }

    // MARK: sps

    /// `SPSInfo(nal:)`, on the bytes as given and with the NAL header forced to type 7, then `makeAVCC`.
    public static func sps(_ data: [UInt8]) throws(FuzzInvariantViolation) {
        _ = try? SPSInfo(nal: data)
        guard !data.isEmpty else { return }
        var nal = data
        nal[0] = nal[0] & 0xE0 | AVC.NALType.sps
        guard let info = try? SPSInfo(nal: nal) else { return }
        try require(info.width > 0 && info.height > 0, "sps: size \(info.width)x\(info.height)")
        try require(info.chromaFormatIdc <= 3, "sps: chroma_format_idc \(info.chromaFormatIdc)")
        // §7.4.2.1.1: bit_depth_luma_minus8 and bit_depth_chroma_minus8 "shall be in the range of 0 to 6".
        try require((8...14).contains(info.bitDepthLuma) && (8...14).contains(info.bitDepthChroma), "sps: bit depth")
        // profile_idc and the constraint byte come before any emulation prevention byte can occur.
        try require(info.profileIdc == nal[1] && info.constraintFlags == nal[2], "sps: profile bytes")
        if let sar = info.sampleAspectRatio { try require(sar.isValid, "sps: sample aspect ratio \(sar)") }
        if nal.count >= 4 && nal.count <= 0xFFFF {
            let pps: [UInt8] = [0x68, 0xEB, 0xE3, 0xCB, 0x22, 0xC0]
            do {
                let record = try AVC.makeAVCC(sps: [nal], pps: [pps])
                let back = AVC.parameterSets(avcC: record)
                try require(back.sps == [nal] && back.pps == [pps], "sps: makeAVCC -> parameterSets(avcC:) round trip")
            } catch let v as FuzzInvariantViolation {
                throw v
            } catch {
                // SPSInfo already parsed this SPS, so makeAVCC has no reason to refuse it.
                throw FuzzInvariantViolation(description: "sps: makeAVCC rejected a parsed SPS: \(error)")
            }
        }
    }

    // MARK: avcc

    /// `AVC.avcC(fromExtradata:)`, `parameterSets(avcC:)`, `makeAVCC`, `sameParameterSets`.
    public static func avcc(_ data: [UInt8]) throws(FuzzInvariantViolation) {
        if let record = try? AVC.avcC(fromExtradata: data) {
            if data.first == 1 {
                try require(record == data, "avcc: an avcC record is returned as is")
            } else {
                // ISO/IEC 14496-15 §5.3.3.1: the record lists the SPS and PPS of the Annex-B extradata.
                let inBand = AVC.parameterSets(in: data)
                let back = AVC.parameterSets(avcC: record)
                try require(back.sps == inBand.sps && back.pps == inBand.pps, "avcc: Annex-B extradata -> avcC round trip")
                try require(record[0] == 1 && record[4] == 0xFF && Int(record[5] & 0x1F) == inBand.sps.count,
                            "avcc: record header")
            }
        }
        let ps = AVC.parameterSets(avcC: data)
        for set in ps.sps + ps.pps { try require(contains(data[...], set), "avcc: parameter set not taken from the record") }
        try require(AVC.sameParameterSets(data, data), "avcc: a record differs from itself")
        if let record = try? AVC.makeAVCC(sps: ps.sps, pps: ps.pps) {
            let back = AVC.parameterSets(avcC: record)
            try require(back.sps == ps.sps && back.pps == ps.pps, "avcc: makeAVCC -> parameterSets(avcC:) round trip")
            try require(AVC.sameParameterSets(record, data), "avcc: rebuilt record has other parameter sets")
        }
    }

    // MARK: adts

    /// `ADTSHeader`, `ADTS.frames(in:)`, `ADTS.audioSpecificConfig(for:)`.
    public static func adts(_ data: [UInt8]) throws(FuzzInvariantViolation) {
        if let h = try? ADTSHeader(data) {
            try require(ADTS.isADTS(data), "adts: header parsed without a sync word")
            try checkHeader(h)
        }
        guard let frames = try? ADTS.frames(in: data) else { return }
        var at = 0
        for (h, payload) in frames {
            try checkHeader(h)
            try require(payload.startIndex == at + h.headerLength && payload.endIndex == at + h.frameLength,
                        "adts: payload \(payload.indices) of the frame at \(at)")
            at += h.frameLength
        }
        // The frames tile the input: no byte is skipped or read twice.
        try require(at == data.count, "adts: frames cover \(at) of \(data.count) bytes")
    }

    static func checkHeader(_ h: ADTSHeader) throws(FuzzInvariantViolation) {
        try require(h.headerLength == 7 || h.headerLength == 9, "adts: header length \(h.headerLength)")
        try require(h.frameLength > h.headerLength && h.frameLength < 1 << 13, "adts: frame_length \(h.frameLength)")
        try require(ADTSHeader.sampleRates[Int(h.samplingFrequencyIndex)] == h.sampleRate, "adts: sample rate")
        // ISO/IEC 14496-3 §1.6.2.1: audioObjectType(5) samplingFrequencyIndex(4) channelConfiguration(4) 0 0 0.
        let asc = ADTS.audioSpecificConfig(for: h)
        try require(asc.count == 2, "adts: AudioSpecificConfig of \(asc.count) bytes")
        try require(asc[0] >> 3 == h.audioObjectType, "adts: ASC audioObjectType")
        try require((asc[0] & 7) << 1 | asc[1] >> 7 == h.samplingFrequencyIndex, "adts: ASC samplingFrequencyIndex")
        try require((asc[1] >> 3) & 0x0F == h.channelConfiguration && asc[1] & 7 == 0, "adts: ASC channelConfiguration")
    }

    // MARK: boxreader

    /// The test-only box walker and fragment reader of TestSupport.
    public static func boxReader(_ data: [UInt8]) throws(FuzzInvariantViolation) {
        for truncated in [false, true] {
            guard let boxes = try? BoxReader.walk(data, allowTruncatedMdat: truncated) else { continue }
            try checkTiling(boxes, 0..<data.count, truncated: truncated)
        }
        if let fragments = try? FragmentReader.readSegment(data) {
            for f in fragments {
                for t in f.tracks {
                    try require(t.samples.count == t.sampleRanges.count, "boxreader: one range per sample")
                    for r in t.sampleRanges {
                        try require(r.lowerBound >= f.mdatPayload.lowerBound && r.upperBound <= f.mdatPayload.upperBound,
                                    "boxreader: sample \(r) outside mdat payload \(f.mdatPayload)")
                    }
                }
            }
        }
        if let f = try? FragmentReader.read(data) {
            try require(f.mdatPayload.upperBound <= data.count, "boxreader: mdat payload \(f.mdatPayload) past \(data.count)")
            let total = f.tracks.reduce(0) { $0 + $1.samples.reduce(0) { $0 + Int($1.size) } }
            try require(total == f.mdatPayload.count, "boxreader: samples \(total) != mdat payload \(f.mdatPayload.count)")
        }
    }

    /// ISO/IEC 14496-12 §4.2: boxes follow one another, each at least its header, children inside their parent.
    static func checkTiling(_ boxes: [ParsedBox], _ range: Range<Int>, truncated: Bool) throws(FuzzInvariantViolation) {
        var at = range.lowerBound
        for (i, b) in boxes.enumerated() {
            try require(b.offset == at && b.size >= b.headerSize, "boxreader: \(b.type) at \(b.offset), expected \(at)")
            let last = i == boxes.count - 1
            if !(truncated && last && b.type == "mdat") {
                try require(b.end <= range.upperBound, "boxreader: \(b.type) ends at \(b.end) past \(range.upperBound)")
            }
            if let first = b.children.first {
                let content = first.offset..<b.end
                try require(content.lowerBound >= b.contentStart, "boxreader: child of \(b.type) inside its header")
                try checkTiling(b.children, content, truncated: false)
            }
            at = b.end
        }
        if !(truncated && boxes.last?.type == "mdat") {
            try require(at == range.upperBound, "boxreader: boxes end at \(at), range at \(range.upperBound)")
        }
    }

    // MARK: cues

    /// What rides beside the pictures, from untrusted inputs: SCTE-35 `splice_info_section`s (an MPEG-TS 0x86 PID) and
    /// A/53 caption SEI (H.264 and H.265 access units). A section the parser takes is its own `bytes`, which parse to
    /// the same section again, with a splice time within 33 bits; the caption scan never traps, and a prefix SEI
    /// written for caption data it reads as captions again.
    public static func cues(_ data: [UInt8]) throws(FuzzInvariantViolation) {
        if let s = try? SpliceInfoSection(data) {
            try require(data.starts(with: s.bytes), "cues: a section's bytes are not what it was read from")
            try require((try? SpliceInfoSection(s.bytes)) == s, "cues: a section's own bytes parse differently")
            if let t = s.spliceTime { try require(t >= 0 && t < (1 << 33), "cues: splice time \(t) beyond 33 bits") }
        }
        _ = SEI.captions(inAccessUnit: data, hevc: false)
        _ = SEI.captions(inAccessUnit: data, hevc: true)
        if let nal = SEI.hevcCaptionNAL(ccData: data) {
            let n = nal.count
            let sample = [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + nal
            let valid = stride(from: 0, to: data.count / 3 * 3, by: 3).contains { data[$0] & 0x04 != 0 && data[$0] & 0x03 != 1 }
            try require(!valid || !SEI.captions(inAccessUnit: sample, hevc: true).isEmpty,
                        "cues: written caption SEI reads as no captions")
        }
    }

    // MARK: codecs

    /// The parsers of the codecs copied beside H.264 and AAC, on the same bytes: H.265 (record, SPS, samples, HDR
    /// SEI), AV1 (OBUs, sequence header, record, samples), Opus and AC-3/E-AC-3 headers. A thrown error is the
    /// parser refusing; the invariants are what a sample or record the segmenter writes must hold.
    public static func codecs(_ data: [UInt8]) throws(FuzzInvariantViolation) {
        if let record = try? HEVC.hvcC(fromExtradata: data) {
            try require(record.count >= 23 && record[0] == 1, "codecs: hvcC without its header")
            _ = VideoCodecStrings.hevc(hvcC: record)
            _ = HEVC.parameterSets(hvcC: record)
        }
        _ = try? HEVCSPSInfo(nal: data)
        _ = HEVC.hdrMetadata(in: data)
        let hvc = HEVC.sample(from: data)
        // ISO/IEC 14496-15 §8.4.1 (hvc1): no parameter set or delimiter left in a sample.
        for nal in AVC.nalUnits(lengthPrefixed: hvc) {
            try require(![32, 33, 34, 35].contains(HEVC.type(nal[nal.startIndex])), "codecs: hvc1 sample keeps NAL type \(HEVC.type(nal[nal.startIndex]))")
        }
        _ = HEVC.containsIRAP(data)
        var end = 0
        for obu in AV1.obus(in: data) {
            try require(obu.bytes.startIndex == end && obu.payload.endIndex == obu.bytes.endIndex && obu.bytes.endIndex <= data.count,
                        "codecs: OBUs do not tile the input at \(end)")
            end = obu.bytes.endIndex
        }
        try require(!AV1.obus(in: AV1.sample(from: data)).contains { $0.type == AV1.OBUType.temporalDelimiter },
                    "codecs: a temporal delimiter left in an av01 sample")
        if let record = (try? AV1.av1C(inBand: data)) ?? nil {
            try require(record.count > 4 && record[0] == 0x81, "codecs: av1C without its marker")
            try require(AV1.sequenceHeader(av1C: record) != nil, "codecs: av1C whose own sequence header does not parse")
            _ = VideoCodecStrings.av1(av1C: record, colour: AV1.sequenceHeader(av1C: record)?.colour)
        }
        _ = try? AV1SequenceHeader(payload: data)
        if data.count >= 4 { _ = VideoCodecStrings.av1(av1C: data, colour: nil) }
        _ = try? Opus.config(fromOpusHead: data)
        _ = try? Opus.sampleCount(packet: data)
        if let frames = try? DolbyAudio.frames(in: data), let first = frames.first {
            _ = try? DolbyAudio.ac3Config(first)
            _ = try? DolbyAudio.eac3Config(frames)
        }
        if let flac = try? FLAC.config(fromExtradata: data) {
            var w = BoxWriter()
            try require((try? FLACSpecificBox.write(to: &w, config: flac)) != nil, "codecs: a parsed FLAC config's dfLa does not write")
            let expected = 12 + 4 + FLACConfig.streamInfoSize + flac.otherBlocks.reduce(0) { $0 + 4 + $1.data.count }
            try require(w.bytes.count == expected, "codecs: dfLa of \(w.bytes.count) bytes, expected \(expected)")
        }
        if let samples = try? FLAC.blockSize(frame: data) {
            try require((1...65535).contains(samples), "codecs: a FLAC frame of \(samples) samples")
        }
    }

    static func contains(_ hay: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, hay.count >= needle.count else { return needle.isEmpty }
        var i = hay.startIndex
        while i + needle.count <= hay.endIndex {
            if hay[i] == needle[0] && hay[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }
}
