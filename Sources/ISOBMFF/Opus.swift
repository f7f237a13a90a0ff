import MediaCore

/// Opus in MP4: the identification header that FFmpeg gives as extradata, and the packet durations.
public enum Opus {
    /// Parses an `OpusHead` identification header (RFC 7845 §5.1; multi-byte fields little-endian):
    ///
    /// ```
    /// "OpusHead" version(1) channels(1) pre-skip(LE16) input-rate(LE32) gain(LE16) mapping-family(1)
    ///   [stream-count(1) coupled-count(1) mapping(channels)]       when mapping-family != 0
    /// ```
    public static func config(fromOpusHead b: [UInt8]) throws -> OpusConfig {
        guard b.count >= 19, Array(b[0..<8]) == Array("OpusHead".utf8) else {
            throw MP4Error.invalidOpus("extradata is not an OpusHead (\(b.count) bytes)")
        }
        // §5.1: a version whose upper four bits are 0 is one this format can read.
        guard b[8] >> 4 == 0 else { throw MP4Error.invalidOpus("OpusHead version \(b[8])") }
        let channels = b[9]
        guard channels > 0 else { throw MP4Error.invalidOpus("OpusHead with 0 channels") }
        func le16(_ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
        var c = OpusConfig(outputChannelCount: channels, preSkip: le16(10),
                           inputSampleRate: UInt32(le16(12)) | UInt32(le16(14)) << 16,
                           outputGain: Int16(bitPattern: le16(16)), channelMappingFamily: b[18])
        if c.channelMappingFamily != 0 {
            guard b.count >= 21 + Int(channels) else {
                throw MP4Error.invalidOpus("OpusHead channel mapping table truncated")
            }
            c.streamCount = b[19]
            c.coupledCount = b[20]
            c.channelMapping = Array(b[21..<(21 + Int(channels))])
        } else {
            guard channels <= 2 else { throw MP4Error.invalidOpus("mapping family 0 with \(channels) channels") }
            c.streamCount = 1
            c.coupledCount = channels - 1
        }
        return c
    }

    /// The OpusHead FFmpeg's decoder expects when a stream has no extradata (MPEG-TS without the descriptor's
    /// details): RFC 7845 §5.1 defaults for 1 or 2 channels, no pre-skip.
    public static func defaultConfig(channelCount: Int) -> OpusConfig {
        let n = UInt8(clamping: min(max(channelCount, 1), 2))
        return OpusConfig(outputChannelCount: n, preSkip: 0, inputSampleRate: 48_000,
                          channelMappingFamily: 0, streamCount: 1, coupledCount: n - 1)
    }

    /// Samples at 48 kHz that one Opus packet decodes to, from its TOC byte and frame count (RFC 6716 §3.1, §3.2):
    /// 2.5 ... 60 ms per frame, up to 120 ms per packet. A self-delimited multistream packet carries one such
    /// packet per stream, all of the same duration, so the first one's TOC answers for all.
    public static func sampleCount(packet p: [UInt8]) throws -> Int {
        guard let toc = p.first else { throw MP4Error.invalidOpus("empty packet") }
        let config = Int(toc >> 3)
        let frameSamples: Int
        switch config {
        case 0...11: frameSamples = [480, 960, 1920, 2880][config & 3]          // SILK: 10, 20, 40, 60 ms
        case 12...15: frameSamples = [480, 960][config & 1]                     // Hybrid: 10, 20 ms
        default: frameSamples = [120, 240, 480, 960][config & 3]                // CELT: 2.5, 5, 10, 20 ms
        }
        let frames: Int
        switch toc & 3 {
        case 0: frames = 1
        case 1, 2: frames = 2
        default:
            guard p.count >= 2 else { throw MP4Error.invalidOpus("code 3 packet without a frame count byte") }
            frames = Int(p[1] & 0x3F)
            guard frames > 0 else { throw MP4Error.invalidOpus("code 3 packet with 0 frames") }
        }
        // §3.2.5: a packet lasts at most 120 ms.
        guard frames * frameSamples <= 5760 else { throw MP4Error.invalidOpus("packet longer than 120 ms") }
        return frames * frameSamples
    }
}

/// `dOps`, "Encapsulation of Opus in ISO Base Media File Format" v0.6.8 §4.3.2: a plain Box (not a FullBox) with
/// the OpusHead fields in big-endian order and without the magic:
///
/// ```
/// Version(8) = 0  OutputChannelCount(8)  PreSkip(16)  InputSampleRate(32)  OutputGain(s16)
/// ChannelMappingFamily(8)  [StreamCount(8) CoupledCount(8) ChannelMapping(8 x OutputChannelCount)]
/// ```
public enum OpusSpecificBox {
    public static let type: FourCC = "dOps"

    public static func write(to w: inout BoxWriter, config c: OpusConfig) throws {
        try w.box(type) { w in
            w.write(UInt8(0))                         // Version
            w.write(c.outputChannelCount)             // OutputChannelCount
            w.write(c.preSkip)                        // PreSkip
            w.write(c.inputSampleRate)                // InputSampleRate
            w.write(c.outputGain)                     // OutputGain
            w.write(c.channelMappingFamily)           // ChannelMappingFamily
            if c.channelMappingFamily != 0 {
                w.write(c.streamCount)                // StreamCount
                w.write(c.coupledCount)               // CoupledCount
                w.write(bytes: c.channelMapping)      // ChannelMapping
            }
        }
    }
}
