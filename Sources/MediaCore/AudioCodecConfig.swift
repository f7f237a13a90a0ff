/// The fields of an Opus stream's identification header that its MP4 sample entry carries: the
/// `OpusSpecificBox` (`dOps`) of "Encapsulation of Opus in ISO Base Media File Format" v0.6.8 §4.3.2, which holds
/// the OpusHead fields of RFC 7845 §5.1 (the writer and the parser are in ISOBMFF).
public struct OpusConfig: Sendable, Hashable {
    public var outputChannelCount: UInt8
    /// Samples at 48 kHz to discard from the decoder's output at the start (the encoder's look-ahead).
    public var preSkip: UInt16
    /// The original input's sample rate in Hz (informational: Opus always decodes at 48 kHz).
    public var inputSampleRate: UInt32
    /// Q7.8 dB.
    public var outputGain: Int16
    /// RFC 7845 §5.1.1: 0 = mono/stereo in one stream, 1 = Vorbis channel order, 255 = undefined.
    public var channelMappingFamily: UInt8
    /// Only when `channelMappingFamily != 0`.
    public var streamCount: UInt8
    public var coupledCount: UInt8
    public var channelMapping: [UInt8]

    public init(outputChannelCount: UInt8, preSkip: UInt16, inputSampleRate: UInt32, outputGain: Int16 = 0,
                channelMappingFamily: UInt8 = 0, streamCount: UInt8 = 1, coupledCount: UInt8 = 0,
                channelMapping: [UInt8] = []) {
        self.outputChannelCount = outputChannelCount
        self.preSkip = preSkip
        self.inputSampleRate = inputSampleRate
        self.outputGain = outputGain
        self.channelMappingFamily = channelMappingFamily
        self.streamCount = streamCount
        self.coupledCount = coupledCount
        self.channelMapping = channelMapping
    }

    /// Opus in MP4 always uses a 48 kHz media timescale (the encapsulation spec §4.3.1).
    public static let sampleRate = 48_000
}

/// The AC-3 fields of an `AC3SpecificBox` (`dac3`), ETSI TS 102 366 Annex F.4, copied from the bitstream's first
/// sync frame (syncinfo §5.3.1 and bsi §5.3.2).
public struct AC3Config: Sendable, Hashable {
    /// 0 = 48 kHz, 1 = 44.1 kHz, 2 = 32 kHz.
    public var fscod: UInt8
    public var bsid: UInt8
    /// Bitstream mode (main, music and effects, commentary, ...).
    public var bsmod: UInt8
    /// Audio coding mode: the full-bandwidth channels (Table 4.3).
    public var acmod: UInt8
    public var lfeon: Bool
    /// `frmsizecod >> 1`: the nominal bit rate (Table F.4.1, 32 ... 640 kbit/s).
    public var bitRateCode: UInt8

    public init(fscod: UInt8, bsid: UInt8, bsmod: UInt8, acmod: UInt8, lfeon: Bool, bitRateCode: UInt8) {
        self.fscod = fscod
        self.bsid = bsid
        self.bsmod = bsmod
        self.acmod = acmod
        self.lfeon = lfeon
        self.bitRateCode = bitRateCode
    }

    public var sampleRate: Int { DolbyChannels.sampleRate(fscod: fscod) }
    public var channelCount: Int { DolbyChannels.count(acmod: acmod, lfeon: lfeon) }
    /// The 16-bit channel mask of the Dolby DASH audio channel configuration scheme (Table E.1.4 order).
    public var channelMask: UInt16 { DolbyChannels.mask(acmod: acmod, lfeon: lfeon) }
}

/// The E-AC-3 fields of an `EC3SpecificBox` (`dec3`), ETSI TS 102 366 Annex F.6, from the independent and
/// dependent substreams of the first sync frames (bsi §E.1.2.2).
public struct EAC3Config: Sendable, Hashable {
    public struct Substream: Sendable, Hashable {
        public var fscod: UInt8
        public var bsid: UInt8
        public var bsmod: UInt8
        public var acmod: UInt8
        public var lfeon: Bool
        /// Dependent substreams that belong to this independent one.
        public var dependentCount: UInt8
        /// F.6.2.12 `chan_loc`: the channel locations the dependent substreams add (Table F.6.1, bit 8 first).
        public var channelLocations: UInt16

        public init(fscod: UInt8, bsid: UInt8, bsmod: UInt8, acmod: UInt8, lfeon: Bool,
                    dependentCount: UInt8 = 0, channelLocations: UInt16 = 0) {
            self.fscod = fscod
            self.bsid = bsid
            self.bsmod = bsmod
            self.acmod = acmod
            self.lfeon = lfeon
            self.dependentCount = dependentCount
            self.channelLocations = channelLocations
        }
    }

    /// kbit/s of all substreams together.
    public var dataRate: UInt16
    public var independentSubstreams: [Substream]
    /// The Dolby Atmos (Joint Object Coding) complexity index when the bitstream signals
    /// `flag_ec3_extension_type_a` (ETSI TS 102 366 F.6.2.14/15), else nil.
    public var jocComplexityIndex: UInt8?

    public init(dataRate: UInt16, independentSubstreams: [Substream], jocComplexityIndex: UInt8? = nil) {
        self.dataRate = dataRate
        self.independentSubstreams = independentSubstreams
        self.jocComplexityIndex = jocComplexityIndex
    }

    public var sampleRate: Int { independentSubstreams.first.map { DolbyChannels.sampleRate(fscod: $0.fscod) } ?? 48_000 }

    /// The first independent substream's channels plus those its dependent substreams add.
    public var channelCount: Int {
        guard let s = independentSubstreams.first else { return 0 }
        let added = DolbyChannels.locations.indices.reduce(0) { n, i in
            s.channelLocations & (1 << (8 - i)) != 0 ? n + DolbyChannels.locations[i].count : n
        }
        return DolbyChannels.count(acmod: s.acmod, lfeon: s.lfeon) + added
    }

    public var channelMask: UInt16 {
        guard let s = independentSubstreams.first else { return 0 }
        return DolbyChannels.locations.indices.reduce(DolbyChannels.mask(acmod: s.acmod, lfeon: s.lfeon)) { m, i in
            s.channelLocations & (1 << (8 - i)) != 0 ? m | DolbyChannels.locations[i].maskBit : m
        }
    }
}

/// Channel facts shared by AC-3 and E-AC-3 (ETSI TS 102 366).
public enum DolbyChannels {
    /// §4.4.1.3, Table 4.1 (fscod 3 is reserved; E-AC-3's reduced rates say so with fscod2).
    public static func sampleRate(fscod: UInt8) -> Int { [48_000, 44_100, 32_000, 48_000][Int(fscod & 3)] }

    /// Full-bandwidth channels per acmod, Table 4.3 (acmod 0 is 1+1 dual mono).
    static let acmodChannels = [2, 1, 2, 3, 3, 4, 4, 5]

    public static func count(acmod: UInt8, lfeon: Bool) -> Int { acmodChannels[Int(acmod & 7)] + (lfeon ? 1 : 0) }

    /// Table E.1.4 (`chanmap`): bit 15 = L, 14 = C, 13 = R, 12 = Ls, 11 = Rs, 10 = Lc/Rc, 9 = Lrs/Rrs, 8 = Cs,
    /// 7 = Ts, 6 = Lsd/Rsd, 5 = Lw/Rw, 4 = Vhl/Vhr, 3 = Vhc, 2 = Lts/Rts, 1 = LFE2, 0 = LFE.
    static let acmodMasks: [UInt16] = [0xA000, 0x4000, 0xA000, 0xE000, 0xA100, 0xE100, 0xB800, 0xF800]

    public static func mask(acmod: UInt8, lfeon: Bool) -> UInt16 { acmodMasks[Int(acmod & 7)] | (lfeon ? 0x0001 : 0) }

    /// `chan_loc` bits 0...8 (Table F.6.1): the channels each adds and its `chanmap` bit.
    static let locations: [(count: Int, maskBit: UInt16)] = [
        (2, 0x0400), (2, 0x0200), (1, 0x0100), (1, 0x0080), (2, 0x0040), (2, 0x0020), (2, 0x0010), (1, 0x0008),
        (1, 0x0002),
    ]

    /// `chan_loc` (F.6.2.12) from a dependent substream's `chanmap` (Table E.1.4): the locations beyond 5.1.
    public static func channelLocations(chanmap: UInt16) -> UInt16 {
        locations.indices.reduce(UInt16(0)) { loc, i in
            chanmap & locations[i].maskBit != 0 ? loc | 1 << (8 - i) : loc
        }
    }
}

/// A FLAC stream's metadata as its MP4 sample entry carries it: the `FLACSpecificBox` (`dfLa`) of "Encapsulation of
/// FLAC in ISO Base Media File Format" v0.0.3 §3.3.2 holds FLAC metadata blocks, STREAMINFO first (RFC 9639 §8;
/// the parser and the writer are in ISOBMFF).
public struct FLACConfig: Sendable, Hashable {
    /// One METADATA_BLOCK other than STREAMINFO (RFC 9639 §8.1): its BLOCK_TYPE (7 bits) and its data.
    public struct MetadataBlock: Sendable, Hashable {
        public var type: UInt8
        public var data: [UInt8]

        public init(type: UInt8, data: [UInt8]) {
            self.type = type
            self.data = data
        }
    }

    /// METADATA_BLOCK_STREAMINFO's 34 bytes (RFC 9639 §8.2):
    ///
    /// ```
    /// min_block_size(16) max_block_size(16) min_frame_size(24) max_frame_size(24)
    /// sample_rate(20) channels-1(3) bits_per_sample-1(5) total_samples(36) md5(128)
    /// ```
    public var streamInfo: [UInt8]
    /// The input's other metadata blocks kept in the `dfLa`, in their order (a Vorbis comment's channel mask, ...).
    public var otherBlocks: [MetadataBlock]

    public static let streamInfoSize = 34

    public init(streamInfo: [UInt8], otherBlocks: [MetadataBlock] = []) {
        precondition(streamInfo.count == Self.streamInfoSize, "STREAMINFO is 34 bytes")
        self.streamInfo = streamInfo
        self.otherBlocks = otherBlocks
    }

    /// Samples per channel in the shortest and longest block (frame) of the stream.
    public var minimumBlockSize: Int { Int(streamInfo[0]) << 8 | Int(streamInfo[1]) }
    public var maximumBlockSize: Int { Int(streamInfo[2]) << 8 | Int(streamInfo[3]) }
    /// Hz, 1 ... 1 048 575 (a valid STREAMINFO never says 0).
    public var sampleRate: Int { Int(streamInfo[10]) << 12 | Int(streamInfo[11]) << 4 | Int(streamInfo[12]) >> 4 }
    /// 1 ... 8.
    public var channelCount: Int { Int(streamInfo[12] >> 1 & 0x07) + 1 }
    /// 4 ... 32.
    public var bitsPerSample: Int { Int((streamInfo[12] & 0x01) << 4 | streamInfo[13] >> 4) + 1 }
}
