import MediaCore
import TestSupport
import Testing
@testable import ISOBMFF

/// `fLaC` + `dfLa` ("Encapsulation of FLAC in ISO Base Media File Format" v0.0.3) and FLAC frame headers (RFC 9639
/// §9.1): golden bytes from FFmpeg 5.1's own mov muxer for the same stream, field by field, and real frame headers
/// from FFmpeg's FLAC encoder.
@Suite("FLAC boxes")
struct FLACBoxTests {
    static func boxBytes(_ write: (inout BoxWriter) throws -> Void) rethrows -> [UInt8] {
        var w = BoxWriter()
        try write(&w)
        return w.bytes
    }

    /// The extradata of `ffmpeg -f lavfi -i sine=f=440:sample_rate=48000 -t 5 -ac 2 -c:a flac x.mkv` as libavformat's
    /// Matroska demuxer gives it (`ffprobe -show_data`): STREAMINFO alone, 34 bytes.
    static let realStreamInfo = hex("1200 1200 0000cb 00051d 0bb802f0 0003a980 0a2b3b4974a6939f83b945d6982d5a74")

    @Test func parsesRealStreamInfo() throws {
        #expect(Self.realStreamInfo.count == 34)
        let c = try FLAC.config(fromExtradata: Self.realStreamInfo)
        #expect(c.minimumBlockSize == 4608 && c.maximumBlockSize == 4608)   // 12 00, 12 00
        #expect(c.sampleRate == 48000)        // 0b b8 0 (20 bits)
        #expect(c.channelCount == 2)          // (0x02 >> 1 & 7) + 1
        #expect(c.bitsPerSample == 16)        // (0x02 & 1) << 4 | 0xf0 >> 4 = 15, + 1
        #expect(c.otherBlocks.isEmpty)
    }

    /// `ffmpeg -i x.mkv -map 0:a -c copy -strict -2 x.mp4` writes this `dfLa` for the same stream: size 0x32 (50),
    /// "dfLa", version 0 and flags 0, then one METADATA_BLOCK_HEADER: last flag 1 | type 0 (STREAMINFO) = 0x80,
    /// length 0x000022 (34), and the STREAMINFO bytes as they came.
    @Test func dfLaGoldenMatchesFFmpeg() throws {
        let ffmpeg = hex("00000032 64664c61 00000000 80 000022") + Self.realStreamInfo
        let c = try FLAC.config(fromExtradata: Self.realStreamInfo)
        #expect(try Self.boxBytes { try FLACSpecificBox.write(to: &$0, config: c) } == ffmpeg)
    }

    /// FFmpeg's whole `fLaC` entry for that stream, less the `btrt` it appends (20 bytes; we write none, as for the
    /// other audio entries): size 0x56, "fLaC", reserved(6) data_reference_index 1, reserved(8), channelcount 2,
    /// samplesize 16, pre_defined 0, reserved 0, samplerate 48000 << 16, then the `dfLa` above.
    @Test func sampleEntryGoldenMatchesFFmpeg() throws {
        let ffmpeg = hex("00000056 664c6143 000000000000 0001 0000000000000000 0002 0010 0000 0000 bb800000")
            + hex("00000032 64664c61 00000000 80 000022") + Self.realStreamInfo
        let c = try FLAC.config(fromExtradata: Self.realStreamInfo)
        #expect(try Self.boxBytes { try FLACSampleEntry.write(to: &$0, config: c) } == ffmpeg)
    }

    /// A stream header with the "fLaC" marker (the other form libavcodec accepts): STREAMINFO, PADDING, a
    /// VORBIS_COMMENT flagged last. The padding goes; the comment stays, and the last-block flag moves to it.
    @Test func wholeStreamHeaderKeepsItsMetadataButPadding() throws {
        let comment = Array("\u{6}\0\0\0ffmpeg\0\0\0\0".utf8)
        let header = Array("fLaC".utf8) + [0x00, 0x00, 0x00, 0x22] + Self.realStreamInfo
            + [0x01, 0x00, 0x00, 0x04, 0, 0, 0, 0] + [0x84, 0x00, 0x00, UInt8(comment.count)] + comment
        let c = try FLAC.config(fromExtradata: header)
        #expect(c.streamInfo == Self.realStreamInfo)
        #expect(c.otherBlocks == [FLACConfig.MetadataBlock(type: 4, data: comment)])
        let box = try Self.boxBytes { try FLACSpecificBox.write(to: &$0, config: c) }
        #expect(Array(box[12..<16]) == [0x00, 0x00, 0x00, 0x22])                           // STREAMINFO, not last
        #expect(Array(box[50..<54]) == [0x84, 0x00, 0x00, UInt8(comment.count)])          // last | VORBIS_COMMENT
        #expect(Array(box[54...]) == comment && box.count == 54 + comment.count)
    }

    @Test func rejectsBadMetadata() {
        #expect(throws: MP4Error.self) { try FLAC.config(fromExtradata: Array(Self.realStreamInfo.prefix(33))) }
        #expect(throws: MP4Error.self) { try FLAC.config(fromExtradata: Array("fLaC".utf8) + [0x84, 0, 0, 0]) }  // no STREAMINFO first
        #expect(throws: MP4Error.self) {
            try FLAC.config(fromExtradata: Array("fLaC".utf8) + [0x80, 0, 0, 0x22] + Self.realStreamInfo.prefix(20))
        }
        var zeroRate = Self.realStreamInfo
        zeroRate[10] = 0; zeroRate[11] = 0; zeroRate[12] &= 0x0F
        #expect(throws: MP4Error.self) { try FLAC.config(fromExtradata: zeroRate) }
    }

    /// isoflac §3.3.1: the rate itself when it fits 16 bits, else its greatest regular division (48000 for 96 and
    /// 192 kHz), else 65535.
    @Test func sampleEntryRates() {
        #expect(FLAC.sampleEntryRate(44100) == 44100 && FLAC.sampleEntryRate(65535) == 65535)
        #expect(FLAC.sampleEntryRate(96000) == 48000 && FLAC.sampleEntryRate(192000) == 48000)
        #expect(FLAC.sampleEntryRate(88200) == 44100 && FLAC.sampleEntryRate(176400) == 44100)
        #expect(FLAC.sampleEntryRate(100_001) == 65535)
    }

    /// A 24-bit 96 kHz 6-channel STREAMINFO: samplesize 24, samplerate 48000.0, channelcount 6; the track keeps
    /// 96000 as its timescale.
    @Test func highRateEntryFields() throws {
        var si = Self.realStreamInfo
        // sample rate 96000 = 0x17700 (20 bits), channels-1 = 5, bps-1 = 23.
        si[10] = 0x17; si[11] = 0x70; si[12] = 0x00 | 5 << 1 | 23 >> 4; si[13] = (23 & 0x0F) << 4 | si[13] & 0x0F
        let c = try FLAC.config(fromExtradata: si)
        #expect(c.sampleRate == 96000 && c.channelCount == 6 && c.bitsPerSample == 24)
        let t = TrackFormat(trackID: 1, kind: .audio, timescale: 96000, codec: .flac(c), sampleRate: 96000, channelCount: 6)
        let bytes = try InitSegment.make(tracks: [t])
        let moov = try BoxReader.walk(bytes)[1]
        let e = try #require(moov.find(["trak", "mdia", "minf", "stbl", "stsd", "fLaC"]))
        #expect(e.children.map(\.type) == ["dfLa"])
        let d = Bytes(bytes)
        #expect(try d.u16(e.contentStart + 16) == 6)                  // channelcount
        #expect(try d.u16(e.contentStart + 18) == 24)                 // samplesize
        #expect(try d.u32(e.contentStart + 24) == 48000 << 16)        // samplerate 16.16
        let mdhd = try #require(moov.find(["trak", "mdia", "mdhd"]))
        #expect(try d.u32(mdhd.contentStart + 12) == 96000)           // timescale (version 0)
        // A timescale other than the sample rate would make every FLAC sample's duration wrong (§3.3.4).
        var wrong = t
        wrong.timescale = 48000
        #expect(throws: MP4Error.self) { try InitSegment.make(tracks: [wrong]) }
    }

    /// Frame headers FFmpeg's encoder wrote into that stream: the first (block size code 5: 4608, 48 kHz, left/side,
    /// 16 bits, frame 0, CRC-8 0x37) and the last (code 7: a 16-bit block size minus one, 0x017F: 384 samples;
    /// frame 52, CRC-8 0xD3). Then headers built by hand: variable blocking with a two-byte sample number, an 8-bit
    /// block size and an 8-bit kHz rate; code 1 (192 samples).
    @Test func frameBlockSizes() throws {
        #expect(try FLAC.blockSize(frame: hex("fff85a88 00 37") + [0, 0]) == 4608)
        #expect(try FLAC.blockSize(frame: hex("fff87a88 34 017f d3") + [0, 0]) == 384)
        #expect(try FLAC.blockSize(frame: hex("fff96c08 c280 bf 30 7d") + [0]) == 192)
        #expect(try FLAC.blockSize(frame: hex("fff81908 05 a1") + [0]) == 192)
    }

    @Test func rejectsBadFrames() {
        #expect(throws: MP4Error.self) { try FLAC.blockSize(frame: hex("fff85a88 00 38 0000")) }   // CRC
        #expect(throws: MP4Error.self) { try FLAC.blockSize(frame: hex("fffa5a88 00 37 0000")) }   // no sync
        #expect(throws: MP4Error.self) { try FLAC.blockSize(frame: hex("fff80a88 00 37 0000")) }   // block size code 0
        #expect(throws: MP4Error.self) { try FLAC.blockSize(frame: hex("fff87a88 34 01")) }         // truncated
        #expect(throws: MP4Error.self) { try FLAC.blockSize(frame: hex("fff85a88 80 37 0000")) }   // 10xxxxxx number
    }

    @Test func codecStrings() throws {
        let c = try FLAC.config(fromExtradata: Self.realStreamInfo)
        let t = TrackFormat(trackID: 1, kind: .audio, timescale: 48000, codec: .flac(c), sampleRate: 48000, channelCount: 2)
        #expect(t.codecString == "fLaC" && t.dashCodecString == "flac")
        #expect(t.hlsChannels == "2" && t.longestAudioFrame == 4608)
        let opus = TrackFormat(trackID: 1, kind: .audio, timescale: 48000, codec: .opus(Opus.defaultConfig(channelCount: 2)), channelCount: 2)
        #expect(opus.dashCodecString == opus.codecString)
    }
}
