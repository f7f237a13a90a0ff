import TestSupport
import Testing
import MediaCore
@testable import ISOBMFF

@Suite("Init segment")
struct InitSegmentTests {
    static let avcC = try! AVC.makeAVCC(sps: [AVCTests.x264SPS720p], pps: [AVCTests.x264PPS720p])
    static let video = TrackFormat(trackID: 1, kind: .video, timescale: 90000, codec: .h264(avcC: avcC),
                                   width: 1280, height: 720)
    static let audio = TrackFormat(trackID: 2, kind: .audio, timescale: 48000, codec: .aac(audioSpecificConfig: [0x11, 0x90]),
                                   sampleRate: 48000, channelCount: 2, language: "eng")

    @Test func structure() throws {
        let bytes = try InitSegment.make(tracks: [Self.video, Self.audio])
        let top = try BoxReader.walk(bytes)
        #expect(top.map(\.type) == ["ftyp", "moov"])
        let outline = top[1].outline()
        #expect(outline == [
            "moov", " mvhd",
            " trak", "  tkhd", "  mdia", "   mdhd", "   hdlr", "   minf", "    vmhd", "    dinf", "     dref", "      url ",
            "    stbl", "     stsd", "      avc1", "       avcC", "     stts", "     stsc", "     stsz", "     stco",
            " trak", "  tkhd", "  mdia", "   mdhd", "   hdlr", "   minf", "    smhd", "    dinf", "     dref", "      url ",
            "    stbl", "     stsd", "      mp4a", "       esds", "     stts", "     stsc", "     stsz", "     stco",
            " mvex", "  trex", "  trex",
        ])
        let d = Bytes(bytes)
        let moov = top[1]
        // mvhd next_track_ID = 3 (last field).
        let mvhd = try #require(moov.child("mvhd"))
        #expect(try d.u32(mvhd.end - 4) == 3)
        // avcC payload is the record, unchanged.
        let avcCBox = try #require(moov.find(["trak", "mdia", "minf", "stbl", "stsd", "avc1", "avcC"]))
        #expect(Array(bytes[avcCBox.contentStart..<avcCBox.end]) == Self.avcC)
        // avc1 fields: width, height at offsets 24/26 of the entry content; depth and pre_defined.
        let avc1 = try #require(moov.find(["trak", "mdia", "minf", "stbl", "stsd", "avc1"]))
        #expect(try d.u16(avc1.contentStart + 6) == 1)        // data_reference_index
        #expect(try d.u16(avc1.contentStart + 24) == 1280)
        #expect(try d.u16(avc1.contentStart + 26) == 720)
        #expect(try d.u32(avc1.contentStart + 28) == 0x0048_0000)
        #expect(try d.u8(avc1.contentStart + 42) == 10)       // compressorname length
        #expect(try d.u16(avc1.contentStart + 74) == 0x0018)
        #expect(try d.u16(avc1.contentStart + 76) == 0xFFFF)
        #expect(avc1.child("pasp") == nil)
        // Audio: mdhd language eng, mp4a channel count / sample size / rate.
        let traks = moov.all("trak")
        let mdhd = try #require(traks[1].find(["mdia", "mdhd"]))
        #expect(try d.u32(mdhd.contentStart + 12) == 48000)
        #expect(try d.u16(mdhd.contentStart + 20) == 0x15C7)
        let mp4a = try #require(traks[1].find(["mdia", "minf", "stbl", "stsd", "mp4a"]))
        #expect(try d.u16(mp4a.contentStart + 16) == 2)
        #expect(try d.u16(mp4a.contentStart + 18) == 16)
        #expect(try d.u32(mp4a.contentStart + 24) == 48000 << 16)
        // trex: track IDs and default_sample_description_index 1.
        let trex = moov.child("mvex")!.all("trex")
        #expect(try trex.map { try d.u32($0.contentStart + 4) } == [1, 2])
        #expect(try trex.map { try d.u32($0.contentStart + 8) } == [1, 1])
        // hdlr names.
        let hdlr = try #require(traks[1].find(["mdia", "hdlr"]))
        #expect(String(decoding: bytes[(hdlr.contentStart + 24)..<(hdlr.end - 1)], as: UTF8.self) == "SoundHandler")
        #expect(bytes[hdlr.end - 1] == 0)
    }

    @Test func audioOnlyAndOrder() throws {
        let a = try BoxReader.walk(try InitSegment.make(tracks: [Self.audio]))
        #expect(a[1].all("trak").count == 1)
        let both = try InitSegment.make(tracks: [Self.audio, Self.video])
        let moov = try BoxReader.walk(both)[1]
        let d = Bytes(both)
        #expect(try moov.all("trak").map { try d.u32($0.child("tkhd")!.contentStart + 12) } == [2, 1])
    }

    @Test func paspForNonSquarePixels() throws {
        var v = Self.video
        v.sampleAspectRatio = Rational(4, 3)
        let bytes = try InitSegment.make(tracks: [v])
        let moov = try BoxReader.walk(bytes)[1]
        let pasp = try #require(moov.find(["trak", "mdia", "minf", "stbl", "stsd", "avc1", "pasp"]))
        let d = Bytes(bytes)
        #expect(try d.u32(pasp.contentStart) == 4)
        #expect(try d.u32(pasp.contentStart + 4) == 3)
        let tkhd = try #require(moov.find(["trak", "tkhd"]))
        #expect(try d.u32(tkhd.end - 8) == 1280 * 4 * 65536 / 3)   // display width
        #expect(try d.u32(tkhd.end - 4) == 720 << 16)
    }

    @Test func highSampleRateWritesZero() throws {
        var a = Self.audio
        a.sampleRate = 96000
        a.timescale = 96000
        let bytes = try InitSegment.make(tracks: [a])
        let mp4a = try #require(try BoxReader.walk(bytes)[1].find(["trak", "mdia", "minf", "stbl", "stsd", "mp4a"]))
        #expect(try Bytes(bytes).u32(mp4a.contentStart + 24) == 0)
    }

    @Test func rejectsBadConfigurations() {
        var v2 = Self.video; v2.trackID = 3
        var dup = Self.audio; dup.trackID = 1
        var zero = Self.video; zero.trackID = 0
        var tiny = Self.video; tiny.width = 0
        var huge = Self.video; huge.height = 70000
        var mismatch = Self.audio; mismatch.kind = .video
        var badAVCC = Self.video; badAVCC.codec = .h264(avcC: [0, 0, 0, 1, 0x67])
        var noChannels = Self.audio; noChannels.channelCount = 0
        for tracks in [[], [Self.video, v2], [Self.video, dup], [zero], [tiny], [huge], [mismatch], [badAVCC], [noChannels]] {
            #expect(throws: MP4Error.self) { try InitSegment.make(tracks: tracks) }
        }
    }
}
