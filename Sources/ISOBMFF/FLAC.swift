import MediaCore

/// FLAC in MP4: the metadata FFmpeg gives as extradata, and the block size of each frame (RFC 9639).
public enum FLAC {
    /// BLOCK_TYPE of STREAMINFO (RFC 9639 §8.1, Table 2).
    static let streamInfoType: UInt8 = 0
    /// Block types the `dfLa` keeps besides STREAMINFO: APPLICATION (2), VORBIS_COMMENT (4: tags, and the
    /// WAVEFORMATEXTENSIBLE_CHANNEL_MASK of an unusual layout), CUESHEET (5). PADDING (1) says nothing, a SEEKTABLE
    /// (3) points into a file that the fragments are not, and a PICTURE (6) is cover art that every init segment
    /// would carry again; reserved types (7-126) are not understood, 127 is forbidden.
    static let keptTypes: Set<UInt8> = [2, 4, 5]

    /// The metadata of a FLAC stream from a demuxer's extradata, in either form libavcodec accepts
    /// (`ff_flac_is_extradata_valid`):
    ///
    /// ```
    /// STREAMINFO (34 bytes)                                              flac, Matroska, MP4, Ogg demuxers
    /// "fLaC" METADATA_BLOCK_HEADER(4) STREAMINFO [METADATA_BLOCK ...]    a whole stream header
    ///        last(1) type(7) length(24)
    /// ```
    public static func config(fromExtradata b: [UInt8]) throws -> FLACConfig {
        guard b.count >= 4, Array(b[0..<4]) == Array("fLaC".utf8) else {
            // libavcodec reads the first 34 bytes and ignores any more.
            guard b.count >= FLACConfig.streamInfoSize else {
                throw MP4Error.invalidFLAC("extradata of \(b.count) bytes is no STREAMINFO")
            }
            return try validated(FLACConfig(streamInfo: Array(b[0..<FLACConfig.streamInfoSize])))
        }
        var at = 4
        var streamInfo: [UInt8]?
        var others: [FLACConfig.MetadataBlock] = []
        while at + 4 <= b.count {
            let last = b[at] & 0x80 != 0
            let type = b[at] & 0x7F
            let length = Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
            at += 4
            guard at + length <= b.count else { throw MP4Error.invalidFLAC("metadata block of type \(type) truncated") }
            let data = Array(b[at..<(at + length)])
            at += length
            if streamInfo == nil {
                // §8: STREAMINFO comes first.
                guard type == streamInfoType, length == FLACConfig.streamInfoSize else {
                    throw MP4Error.invalidFLAC("the first metadata block is type \(type) of \(length) bytes, not STREAMINFO")
                }
                streamInfo = data
            } else if keptTypes.contains(type) {
                others.append(FLACConfig.MetadataBlock(type: type, data: data))
            }
            if last { break }
        }
        guard let streamInfo else { throw MP4Error.invalidFLAC("stream header without STREAMINFO") }
        return try validated(FLACConfig(streamInfo: streamInfo, otherBlocks: others))
    }

    private static func validated(_ c: FLACConfig) throws -> FLACConfig {
        guard c.sampleRate > 0 else { throw MP4Error.invalidFLAC("STREAMINFO with sample rate 0") }
        // §8.2: block sizes of 16 ... 65535 samples (the last frame of a stream may be shorter).
        guard c.minimumBlockSize >= 16, c.maximumBlockSize >= c.minimumBlockSize else {
            throw MP4Error.invalidFLAC("STREAMINFO block sizes \(c.minimumBlockSize)...\(c.maximumBlockSize)")
        }
        return c
    }

    /// Samples per channel that one FLAC frame decodes to (the sample's duration in a track whose timescale is the
    /// sample rate, isoflac §3.3.4), from its FRAME_HEADER (RFC 9639 §9.1), whose CRC-8 is checked:
    ///
    /// ```
    /// sync(15) = 0x7FFC  blocking_strategy(1)  block_size(4)  sample_rate(4)  channels(4)  bit_depth(3)  reserved(1) = 0
    /// coded number (1-7 bytes, UTF-8-like)  [block size - 1 (8 or 16)]  [sample rate (8 or 16)]  crc8(8)
    /// ```
    public static func blockSize(frame p: [UInt8]) throws -> Int {
        guard p.count >= 6 else { throw MP4Error.invalidFLAC("frame of \(p.count) bytes") }
        guard p[0] == 0xFF, p[1] & 0xFE == 0xF8 else { throw MP4Error.invalidFLAC("no frame sync code") }
        let sizeCode = p[2] >> 4
        let rateCode = p[2] & 0x0F
        guard sizeCode != 0 else { throw MP4Error.invalidFLAC("reserved block size code 0") }
        guard rateCode != 0x0F else { throw MP4Error.invalidFLAC("forbidden sample rate code 15") }
        guard p[3] >> 4 <= 0x0A else { throw MP4Error.invalidFLAC("reserved channel assignment \(p[3] >> 4)") }
        guard p[3] >> 1 & 0x07 != 0x03, p[3] & 0x01 == 0 else { throw MP4Error.invalidFLAC("reserved bit depth bits") }
        // §9.1.5: the frame or sample number, coded as UTF-8 is (one to seven bytes, the first says how many).
        // The leading one bits of its first byte: none for one byte, else the byte count (10xxxxxx continues a
        // number and cannot begin one).
        var at = 4
        let ones = (~p[at]).leadingZeroBitCount
        guard ones != 1, ones <= 7 else { throw MP4Error.invalidFLAC("bad coded frame number") }
        at += max(ones, 1)
        var samples: Int
        switch sizeCode {
        case 1: samples = 192
        case 2...5: samples = 144 << Int(sizeCode)                  // 576, 1152, 2304, 4608
        case 6, 7:                                                    // uncommon: stored minus one after the number
            let n = sizeCode == 6 ? 1 : 2
            guard at + n <= p.count else { throw MP4Error.invalidFLAC("frame header truncated") }
            samples = (n == 1 ? Int(p[at]) : Int(p[at]) << 8 | Int(p[at + 1])) + 1
            at += n
        default: samples = 1 << Int(sizeCode)                         // 8...15: 256 ... 32768
        }
        switch rateCode {
        case 12: at += 1
        case 13, 14: at += 2
        default: break
        }
        guard at < p.count else { throw MP4Error.invalidFLAC("frame header truncated") }
        guard crc8(p[0..<at]) == p[at] else { throw MP4Error.invalidFLAC("frame header CRC mismatch") }
        // §9.1.6: a block of 65536 samples is forbidden.
        guard samples <= 65535 else { throw MP4Error.invalidFLAC("block of \(samples) samples") }
        return samples
    }

    /// §9.1.8: CRC-8, polynomial x^8 + x^2 + x + 1 (0x07), initial value 0, no reflection.
    static func crc8(_ bytes: ArraySlice<UInt8>) -> UInt8 {
        var crc: UInt8 = 0
        for b in bytes {
            crc ^= b
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? crc << 1 ^ 0x07 : crc << 1 }
        }
        return crc
    }

    /// The AudioSampleEntry `samplerate` (16.16) for a FLAC stream, isoflac §3.3.1: the rate itself up to 65535 Hz;
    /// above, the greatest regular division of it that fits (halved until it does: 48000 for 96 and 192 kHz, 44100
    /// for 88.2 and 176.4 kHz), or 65535 when halving leaves no whole number that fits. Readers take the real rate
    /// from STREAMINFO.
    public static func sampleEntryRate(_ rate: Int) -> Int {
        var r = rate
        while r > 0xFFFF {
            guard r % 2 == 0 else { return 0xFFFF }
            r /= 2
        }
        return r
    }
}

/// `dfLa` FLACSpecificBox, "Encapsulation of FLAC in ISO Base Media File Format" v0.0.3 §3.3.2: a FullBox (version 0,
/// flags 0) filled with FLAC METADATA_BLOCKs as they are in a FLAC stream, STREAMINFO first, the last one flagged:
///
/// ```
/// per block:  LastMetadataBlockFlag(1) BlockType(7) Length(24) BlockData(8 x Length)
/// ```
public enum FLACSpecificBox {
    public static let type: FourCC = "dfLa"

    public static func write(to w: inout BoxWriter, config c: FLACConfig) throws {
        let blocks = [FLACConfig.MetadataBlock(type: FLAC.streamInfoType, data: c.streamInfo)] + c.otherBlocks
        try w.fullBox(type, version: 0, flags: 0) { w in
            for (i, b) in blocks.enumerated() {
                guard b.data.count <= 0xFF_FFFF, b.type < 0x7F else {
                    throw MP4Error.invalidConfiguration("FLAC metadata block of type \(b.type), \(b.data.count) bytes")
                }
                w.write(UInt8(i == blocks.count - 1 ? 0x80 : 0) | b.type)     // LastMetadataBlockFlag, BlockType
                w.write(UInt8(b.data.count >> 16))                             // Length (24 bits)
                w.write(UInt16(b.data.count & 0xFFFF))
                w.write(bytes: b.data)                                         // BlockData
            }
        }
    }
}
