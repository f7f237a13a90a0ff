import MediaCore

/// The fields every AudioSampleEntry opens with, ISO/IEC 14496-12 §12.2.3 (version 0).
enum AudioSampleEntryFields {
    static func write(to w: inout BoxWriter, channelCount: Int, sampleRate: Int, sampleSize: Int = 16) {
        w.writeZeros(6)                               // SampleEntry reserved
        w.write(UInt16(1))                            // data_reference_index
        w.writeZeros(8)                               // reserved 2x32
        w.write(UInt16(clamping: channelCount))       // channelcount
        w.write(UInt16(clamping: sampleSize))         // samplesize
        w.write(UInt16(0))                            // pre_defined
        w.write(UInt16(0))                            // reserved
        w.write(sampleRate <= 0xFFFF ? UInt32(sampleRate) << 16 : 0)   // samplerate 16.16
    }
}

/// `Opus` OpusSampleEntry, "Encapsulation of Opus in ISO Base Media File Format" v0.6.8 §4.3.1: channelcount is
/// OutputChannelCount, samplesize 16, samplerate 48000, then its `dOps`.
///
/// ```
/// |Opus| |dOps|
/// ```
public enum OpusSampleEntry {
    public static let type: FourCC = "Opus"

    public static func write(to w: inout BoxWriter, config: OpusConfig) throws {
        try w.box(type) { w in
            AudioSampleEntryFields.write(to: &w, channelCount: Int(config.outputChannelCount), sampleRate: OpusConfig.sampleRate)
            try OpusSpecificBox.write(to: &w, config: config)
        }
    }
}

/// `ac-3` AC3SampleEntry, ETSI TS 102 366 Annex F.3, with its `dac3`.
///
/// ```
/// |ac-3| |dac3|
/// ```
public enum AC3SampleEntry {
    public static let type: FourCC = "ac-3"

    public static func write(to w: inout BoxWriter, config: AC3Config) throws {
        try w.box(type) { w in
            AudioSampleEntryFields.write(to: &w, channelCount: config.channelCount, sampleRate: config.sampleRate)
            try AC3SpecificBox.write(to: &w, config: config)
        }
    }
}

/// `ec-3` EC3SampleEntry, ETSI TS 102 366 Annex F.5, with its `dec3`.
///
/// ```
/// |ec-3| |dec3|
/// ```
public enum EC3SampleEntry {
    public static let type: FourCC = "ec-3"

    public static func write(to w: inout BoxWriter, config: EAC3Config) throws {
        try w.box(type) { w in
            AudioSampleEntryFields.write(to: &w, channelCount: config.channelCount, sampleRate: config.sampleRate)
            try EC3SpecificBox.write(to: &w, config: config)
        }
    }
}

/// `fLaC` FLACSampleEntry, "Encapsulation of FLAC in ISO Base Media File Format" v0.0.3 §3.3.1: channelcount,
/// samplesize and samplerate from STREAMINFO (a rate above 65535 Hz as `FLAC.sampleEntryRate` reduces it), then its
/// `dfLa`.
///
/// ```
/// |fLaC| |dfLa|
/// ```
public enum FLACSampleEntry {
    public static let type: FourCC = "fLaC"

    public static func write(to w: inout BoxWriter, config: FLACConfig) throws {
        try w.box(type) { w in
            AudioSampleEntryFields.write(to: &w, channelCount: config.channelCount,
                                         sampleRate: FLAC.sampleEntryRate(config.sampleRate), sampleSize: config.bitsPerSample)
            try FLACSpecificBox.write(to: &w, config: config)
        }
    }
}

/// `dac3`, ETSI TS 102 366 F.4 (24 bits):
///
/// ```
/// fscod(2) bsid(5) bsmod(3) acmod(3) lfeon(1) bit_rate_code(5) reserved(5) = 0
/// ```
public enum AC3SpecificBox {
    public static let type: FourCC = "dac3"

    public static func write(to w: inout BoxWriter, config c: AC3Config) throws {
        var b = BitWriter()
        b.put(c.fscod, 2); b.put(c.bsid, 5); b.put(c.bsmod, 3); b.put(c.acmod, 3); b.put(c.lfeon ? 1 : 0, 1)
        b.put(c.bitRateCode, 5); b.put(0, 5)
        try w.box(type) { w in w.write(bytes: b.bytes) }
    }
}

/// `dec3`, ETSI TS 102 366 F.6:
///
/// ```
/// data_rate(13) num_ind_sub(3)                               num_ind_sub = substreams - 1
/// per independent substream:
///   fscod(2) bsid(5) reserved(1) asvc(1) bsmod(3) acmod(3) lfeon(1) reserved(3) num_dep_sub(4)
///   chan_loc(9) when num_dep_sub > 0, else reserved(1)
/// reserved(7) flag_ec3_extension_type_a(1) complexity_index_type_a(8)   only for Joint Object Coding (Atmos)
/// ```
public enum EC3SpecificBox {
    public static let type: FourCC = "dec3"

    public static func write(to w: inout BoxWriter, config c: EAC3Config) throws {
        precondition((1...8).contains(c.independentSubstreams.count), "dec3 holds 1 to 8 independent substreams")
        var b = BitWriter()
        b.put(UInt32(min(c.dataRate, 0x1FFF)), 13)
        b.put(UInt32(c.independentSubstreams.count - 1), 3)
        for s in c.independentSubstreams {
            b.put(s.fscod, 2); b.put(s.bsid, 5); b.put(0, 1); b.put(0, 1); b.put(s.bsmod, 3); b.put(s.acmod, 3)
            b.put(s.lfeon ? 1 : 0, 1); b.put(0, 3); b.put(s.dependentCount, 4)
            if s.dependentCount > 0 { b.put(UInt32(s.channelLocations & 0x1FF), 9) } else { b.put(0, 1) }
        }
        if let joc = c.jocComplexityIndex {
            b.put(0, 7); b.put(1, 1); b.put(joc, 8)
        }
        try w.box(type) { w in w.write(bytes: b.bytes) }
    }
}

/// MSB-first bit packing for the Dolby configuration boxes; the last byte is padded with zeros.
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var used = 0

    mutating func put<T: BinaryInteger>(_ value: T, _ count: Int) {
        let v = UInt32(truncatingIfNeeded: value)
        for i in stride(from: count - 1, through: 0, by: -1) {
            if used == 0 { bytes.append(0) }
            bytes[bytes.count - 1] |= UInt8((v >> UInt32(i)) & 1) << (7 - UInt8(used))
            used = (used + 1) & 7
        }
    }
}

/// `mp4a` AudioSampleEntry (ISO/IEC 14496-12 §12.2.3, ISO/IEC 14496-14 §5.6) with its `esds`.
public enum MP4AudioSampleEntry {
    public static let type: FourCC = "mp4a"

    public static func write(to w: inout BoxWriter, track t: TrackFormat, audioSpecificConfig asc: [UInt8]) throws {
        try w.box(type) { w in
            w.writeZeros(6)                           // SampleEntry reserved
            w.write(UInt16(1))                        // data_reference_index
            w.writeZeros(8)                           // reserved 2x32
            w.write(UInt16(t.channelCount))           // channelcount
            w.write(UInt16(16))                       // samplesize
            w.write(UInt16(0))                        // pre_defined
            w.write(UInt16(0))                        // reserved
            // samplerate 16.16; rates above 65535 do not fit and are written as 0 (the ASC is authoritative).
            w.write(t.sampleRate <= 0xFFFF ? UInt32(t.sampleRate) << 16 : 0)
            try ElementaryStreamDescriptorBox.write(to: &w, audioSpecificConfig: asc,
                                                    channelCount: t.channelCount, sampleRate: t.sampleRate)
        }
    }
}

/// `esds`, ISO/IEC 14496-14 §3.3.2: an ES_Descriptor (ISO/IEC 14496-1 §7.2.6.5) for AAC.
///
/// ```
/// |esds| ES_Descriptor(0x03)
///          DecoderConfigDescriptor(0x04)   objectTypeIndication 0x40 (Audio ISO/IEC 14496-3), streamType 5
///            DecoderSpecificInfo(0x05)     the AudioSpecificConfig
///          SLConfigDescriptor(0x06)        predefined 2 (reserved for MP4 files)
/// ```
/// Descriptor lengths use the one-byte form (every length here is < 128). `bufferSizeDB` is the AAC decoder input
/// buffer (6144 bits per channel, ISO/IEC 14496-3 §4.5.3.1), `maxBitrate` the rate that buffer allows at one
/// frame per 1024 samples, `avgBitrate` 0 = variable bitrate (ISO/IEC 14496-1 §7.2.6.6.2).
public enum ElementaryStreamDescriptorBox {
    public static let type: FourCC = "esds"

    public static func write(to w: inout BoxWriter, audioSpecificConfig asc: [UInt8],
                             channelCount: Int, sampleRate: Int) throws {
        precondition(asc.count < 128, "AudioSpecificConfig longer than a one-byte descriptor length")
        let bufferSize = UInt32(clamping: 6144 / 8 * max(channelCount, 1))
        let maxBitrate = UInt32(clamping: Int64(6144) * Int64(max(channelCount, 1)) * Int64(sampleRate) / 1024)
        let dsiLength = asc.count
        let dcdLength = 13 + 2 + dsiLength
        let esLength = 3 + 2 + dcdLength + 3
        try w.fullBox(type, version: 0, flags: 0) { w in
            w.write(UInt8(0x03)); w.write(UInt8(esLength))      // ES_DescrTag
            w.write(UInt16(0))                                  // ES_ID (0 in MP4 files, 14496-14 §3.1.2)
            w.write(UInt8(0))                                   // no dependence, URL or OCR; priority 0
            w.write(UInt8(0x04)); w.write(UInt8(dcdLength))     // DecoderConfigDescrTag
            w.write(UInt8(0x40))                                // objectTypeIndication: Audio ISO/IEC 14496-3
            w.write(UInt8(0x05 << 2 | 0 << 1 | 1))              // streamType 5 (audio), upStream 0, reserved 1
            w.write(UInt8(truncatingIfNeeded: bufferSize >> 16)) // bufferSizeDB (24 bits)
            w.write(UInt16(truncatingIfNeeded: bufferSize))
            w.write(maxBitrate)                                 // maxBitrate
            w.write(UInt32(0))                                  // avgBitrate (0: variable)
            w.write(UInt8(0x05)); w.write(UInt8(dsiLength))     // DecSpecificInfoTag
            w.write(bytes: asc)                                 // AudioSpecificConfig
            w.write(UInt8(0x06)); w.write(UInt8(1))             // SLConfigDescrTag
            w.write(UInt8(0x02))                                // predefined = 2
        }
    }
}
