import MediaCore

/// One AC-3 or E-AC-3 sync frame's header: what the `dac3`/`dec3` boxes and the sample durations need.
///
/// AC-3: syncinfo (ETSI TS 102 366 §4.3.1) + the start of bsi (§4.3.2). E-AC-3: syncinfo + bsi (Annex E.1.2.1/2)
/// up to `addbsi`, where a Dolby Atmos stream flags Joint Object Coding (`flag_ec3_extension_type_a`).
public struct DolbyFrameHeader: Sendable, Equatable {
    public enum StreamType: UInt8, Sendable {
        /// E-AC-3 `strmtyp` 0 (and every AC-3 frame).
        case independent = 0
        case dependent = 1
        /// E-AC-3 `strmtyp` 2: an independent substream converted from AC-3.
        case ac3Converted = 2
    }

    /// 0...8 (AC-3, ≤ 10 decodable as AC-3) or 16 (E-AC-3).
    public var bsid: UInt8
    public var isEnhanced: Bool { bsid > 10 }
    public var streamType: StreamType
    public var substreamID: UInt8
    /// Bytes of the whole frame.
    public var frameSize: Int
    public var fscod: UInt8
    /// Hz (E-AC-3 reduced rates 24/22.05/16 kHz included).
    public var sampleRate: Int
    /// Audio blocks of 256 samples: 6 for AC-3, 1/2/3/6 for E-AC-3.
    public var blocks: Int
    public var bsmod: UInt8
    public var acmod: UInt8
    public var lfeon: Bool
    /// AC-3 only: `frmsizecod` (Table 4.13).
    public var frmsizecod: UInt8
    /// E-AC-3 dependent substreams: the custom channel map (Table E.1.4), when `chanmape` is set.
    public var chanmap: UInt16?
    /// E-AC-3: `complexity_index_type_a` when `addbsi` sets `flag_ec3_extension_type_a` (Joint Object Coding).
    public var jocComplexityIndex: UInt8?

    /// Samples the frame decodes to.
    public var sampleCount: Int { blocks * 256 }

    /// Nominal bit rates in kbit/s by `frmsizecod >> 1` (Table 4.13).
    public static let bitRates = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 576, 640]

    public init(_ bytes: some Collection<UInt8>) throws {
        let b = Array(bytes.prefix(128))   // enough for the longest bsi up to addbsi's first bytes
        guard b.count >= 6, b[0] == 0x0B, b[1] == 0x77 else { throw MP4Error.invalidAC3("no sync word") }
        // bsid sits at the same place in both syntaxes: bits 40...44.
        let id = b[5] >> 3
        var r = BitReader(b, truncated: .invalidAC3("frame header truncated"))
        try r.skip(16)
        if id <= 10 {
            try self.init(ac3: &r, bsid: id)
        } else if id <= 16 {
            try self.init(eac3: &r, bsid: id)
        } else {
            throw MP4Error.invalidAC3("bsid \(id)")
        }
    }

    private init(ac3 r: inout BitReader, bsid: UInt8) throws {
        self.bsid = bsid
        streamType = .independent
        substreamID = 0
        try r.skip(16)                                             // crc1
        fscod = UInt8(try r.bits(2))
        guard fscod != 3 else { throw MP4Error.invalidAC3("reserved fscod") }
        frmsizecod = UInt8(try r.bits(6))
        guard frmsizecod < 38 else { throw MP4Error.invalidAC3("frmsizecod \(frmsizecod)") }
        try r.skip(5)                                              // bsid
        bsmod = UInt8(try r.bits(3))
        acmod = UInt8(try r.bits(3))
        if acmod & 1 != 0 && acmod != 1 { try r.skip(2) }          // cmixlev
        if acmod & 4 != 0 { try r.skip(2) }                        // surmixlev
        if acmod == 2 { try r.skip(2) }                            // dsurmod
        lfeon = try r.flag()
        // bsid 9 and 10 halve and quarter the rate (Annex D "lower sample rates"); the frame keeps its size.
        let shift = Int(max(bsid, 8) - 8)
        sampleRate = DolbyChannels.sampleRate(fscod: fscod) >> shift
        blocks = 6
        frameSize = Self.ac3FrameSize(frmsizecod: frmsizecod, fscod: fscod)
        chanmap = nil
        jocComplexityIndex = nil
    }

    /// Table 4.13: 16-bit words per frame are the kbit/s times 2 (48 kHz), 3 (32 kHz), or 320/147 rounded down plus
    /// the odd code's padding word (44.1 kHz).
    static func ac3FrameSize(frmsizecod: UInt8, fscod: UInt8) -> Int {
        let kbps = bitRates[Int(frmsizecod >> 1)]
        let words = switch fscod {
        case 0: kbps * 2
        case 1: kbps * 320 / 147 + Int(frmsizecod & 1)
        default: kbps * 3
        }
        return words * 2
    }
}

extension DolbyFrameHeader {
    /// E-AC-3 bsi, Annex E.1.2.2, read as far as `addbsi`.
    private init(eac3 r: inout BitReader, bsid: UInt8) throws {
        self.bsid = bsid
        frmsizecod = 0
        guard let type = StreamType(rawValue: UInt8(try r.bits(2))) else { throw MP4Error.invalidAC3("reserved strmtyp") }
        streamType = type
        substreamID = UInt8(try r.bits(3))
        frameSize = (Int(try r.bits(11)) + 1) * 2
        fscod = UInt8(try r.bits(2))
        if fscod == 3 {
            let fscod2 = UInt8(try r.bits(2))
            guard fscod2 != 3 else { throw MP4Error.invalidAC3("reserved fscod2") }
            sampleRate = DolbyChannels.sampleRate(fscod: fscod2) / 2
            blocks = 6
        } else {
            sampleRate = DolbyChannels.sampleRate(fscod: fscod)
            blocks = [1, 2, 3, 6][Int(try r.bits(2))]
        }
        acmod = UInt8(try r.bits(3))
        lfeon = try r.flag()
        try r.skip(5)                                              // bsid
        for _ in 0..<(acmod == 0 ? 2 : 1) {
            try r.skip(5)                                          // dialnorm(2)
            if try r.flag() { try r.skip(8) }                      // compre(2), compr(2)
        }
        chanmap = nil
        if streamType == .dependent, try r.flag() { chanmap = UInt16(try r.bits(16)) }
        if try r.flag() { try Self.skipMixingMetadata(&r, type: streamType, acmod: acmod, lfeon: lfeon, blocks: blocks) }
        bsmod = 0
        if try r.flag() {                                          // infomdate
            bsmod = UInt8(try r.bits(3))
            try r.skip(2)                                          // copyrightb, origbs
            if acmod == 2 { try r.skip(4) }                        // dsurmod, dheadphonmod
            if acmod >= 6 { try r.skip(2) }                        // dsurexmod
            for _ in 0..<(acmod == 0 ? 2 : 1) where try r.flag() { try r.skip(8) }  // audprodie: mixlevel, roomtyp, adconvtyp
            if fscod < 3 { try r.skip(1) }                         // sourcefscod
        }
        if streamType == .independent && blocks != 6 { try r.skip(1) }        // convsync
        if streamType == .ac3Converted, try blocks == 6 || r.flag() { try r.skip(6) }  // blkid, frmsizecod
        jocComplexityIndex = nil
        if try r.flag() {                                          // addbsie
            let length = Int(try r.bits(6)) + 1                    // addbsil + 1 bytes
            // ETSI TS 103 420 (E-AC-3 JOC) puts flag_ec3_extension_type_a in the low bit of the first byte, followed
            // by complexity_index_type_a.
            try r.skip(7)
            if try r.flag(), length >= 2 { jocComplexityIndex = UInt8(try r.bits(8)) }
        }
    }

    /// E.1.2.2 `mixmdate` fields, skipped.
    private static func skipMixingMetadata(_ r: inout BitReader, type: StreamType, acmod: UInt8, lfeon: Bool,
                                           blocks: Int) throws {
        if acmod > 2 { try r.skip(2) }                             // dmixmod
        if acmod & 1 != 0 && acmod > 2 { try r.skip(6) }           // ltrtcmixlev, lorocmixlev
        if acmod & 4 != 0 { try r.skip(6) }                        // ltrtsurmixlev, lorosurmixlev
        if lfeon, try r.flag() { try r.skip(5) }                   // lfemixlevcode, lfemixlevcod
        guard type == .independent else { return }
        for _ in 0..<(acmod == 0 ? 2 : 1) where try r.flag() { try r.skip(6) }  // pgmscle(2), pgmscl(2)
        if try r.flag() { try r.skip(6) }                          // extpgmscle, extpgmscl
        switch try r.bits(2) {                                     // mixdef
        case 1: try r.skip(5)                                      // premixcmpsel, drcsrc, premixcmpscl
        case 2: try r.skip(12)                                     // mixdata
        case 3: try r.skip((Int(try r.bits(5)) + 2) * 8)           // mixdeflen, mixdata
        default: break
        }
        if acmod < 2 {
            for _ in 0..<(acmod == 0 ? 2 : 1) where try r.flag() { try r.skip(14) }  // paninfoe(2): panmean, paninfo
        }
        if try r.flag() {                                          // frmmixcfginfoe
            if blocks == 1 {
                try r.skip(5)                                      // blkmixcfginfo[0]
            } else {
                for _ in 0..<blocks where try r.flag() { try r.skip(5) }  // blkmixcfginfoe, blkmixcfginfo
            }
        }
    }
}

/// The sync frames of one AC-3 / E-AC-3 sample, and the `dac3`/`dec3` contents made from them.
public enum DolbyAudio {
    /// Splits `data` into its sync frames' headers (an MP4 sample holds the frames of 6 blocks: one AC-3 frame, or an
    /// E-AC-3 independent frame and its dependent ones).
    public static func frames(in data: [UInt8]) throws -> [DolbyFrameHeader] {
        var out: [DolbyFrameHeader] = []
        var i = 0
        while i < data.count {
            let h = try DolbyFrameHeader(data[i...])
            guard h.frameSize >= 6, h.frameSize <= data.count - i else {
                throw MP4Error.invalidAC3("frame of \(h.frameSize) bytes overruns the data at \(i)")
            }
            out.append(h)
            i += h.frameSize
        }
        return out
    }

    /// Samples that `data` decodes to: the blocks of its independent frames of substream 0.
    public static func sampleCount(in data: [UInt8]) throws -> Int {
        try frames(in: data).filter { $0.streamType != .dependent && $0.substreamID == 0 }.reduce(0) { $0 + $1.sampleCount }
    }

    /// `dac3` fields from an AC-3 frame (F.4.2: `bit_rate_code` is `frmsizecod >> 1`).
    public static func ac3Config(_ h: DolbyFrameHeader) throws -> AC3Config {
        guard !h.isEnhanced else { throw MP4Error.invalidAC3("an E-AC-3 frame (bsid \(h.bsid)) where AC-3 was expected") }
        return AC3Config(fscod: h.fscod, bsid: h.bsid, bsmod: h.bsmod, acmod: h.acmod, lfeon: h.lfeon,
                         bitRateCode: h.frmsizecod >> 1)
    }

    /// `dec3` fields from the frames of one sample (F.6.2): one entry per independent substream, the channel
    /// locations of its dependent substreams, `data_rate` in kbit/s of all frames together.
    public static func eac3Config(_ frames: [DolbyFrameHeader]) throws -> EAC3Config {
        var subs: [EAC3Config.Substream] = []
        var joc: UInt8?
        for h in frames {
            if h.streamType == .dependent {
                guard !subs.isEmpty else { throw MP4Error.invalidAC3("a dependent substream before any independent one") }
                subs[subs.count - 1].dependentCount += 1
                if let map = h.chanmap { subs[subs.count - 1].channelLocations |= DolbyChannels.channelLocations(chanmap: map) }
            } else if subs.count < 8 {
                subs.append(EAC3Config.Substream(fscod: h.fscod, bsid: h.bsid, bsmod: h.bsmod, acmod: h.acmod, lfeon: h.lfeon))
                if subs.count == 1 { joc = h.jocComplexityIndex }
            }
        }
        guard !subs.isEmpty else { throw MP4Error.invalidAC3("no independent substream") }
        // The bytes of all frames over the time substream 0's frames last.
        let main = frames.filter { $0.streamType != .dependent && $0.substreamID == 0 }
        let samples = main.reduce(0) { $0 + $1.sampleCount }
        let bytes = frames.reduce(0) { $0 + $1.frameSize }
        let rate = main.first?.sampleRate ?? 48_000
        let kbps = samples > 0 ? bytes * 8 * rate / samples / 1000 : 0
        return EAC3Config(dataRate: UInt16(clamping: kbps), independentSubstreams: subs, jocComplexityIndex: joc)
    }
}
