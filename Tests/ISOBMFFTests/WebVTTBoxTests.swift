import MediaCore
import TestSupport
import Testing
@testable import ISOBMFF

/// WebVTT in ISO-BMFF (ISO/IEC 14496-30 §7). Each expected literal is written field by field from the standard, not
/// copied from output; whole init segments and fragments are walked with the test box reader (shares no code with
/// the writer).
@Suite struct WebVTTBoxTests {
    static func t(_ ms: Int64) -> MediaTime { MediaTime(value: ms * 90, timescale: 90_000) }

    @Test func sampleEntry() throws {
        var w = BoxWriter()
        try WebVTTTrack.writeSampleEntry(to: &w, label: "en")
        #expect(hexString(w.bytes) == hexString(hex("""
            00000028 77767474   size 40, 'wvtt' (PlainTextSampleEntry)
            000000000000        reserved (6 bytes)
            0001                data_reference_index 1
            0000000e 76747443   size 14, 'vttC' WebVTTConfigurationBox
            574542565454        boxstring "WEBVTT"
            0000000a 766c6162   size 10, 'vlab' WebVTTSourceLabelBox
            656e                boxstring "en"
            """.strippingComments)))
    }

    @Test func cueAndEmptySamples() throws {
        let cue = SubtitleCue(start: Self.t(0), end: Self.t(1000), text: "Hi", id: "a", settings: "line:0")
        #expect(hexString(try WebVTTTrack.sample([cue])) == hexString(hex("""
            00000029 76747463   size 41, 'vttc' VTTCueBox
            00000009 6964656e   size 9, 'iden' CueIDBox
            61                  "a"
            0000000e 73747467   size 14, 'sttg' CueSettingsBox
            6c696e653a30        "line:0"
            0000000a 7061796c   size 10, 'payl' CuePayloadBox
            4869                "Hi"
            """.strippingComments)))
        #expect(hexString(try WebVTTTrack.sample([])) == hexString(hex("""
            00000008 76747465   size 8, 'vtte' VTTEmptyCueBox
            """.strippingComments)))
    }

    /// Samples cut wherever a cue starts or ends: [0, 500) nothing, [500, 800) A, [800, 1000) A and B; the durations
    /// tile the segment.
    @Test func samplesOfASegment() throws {
        let a = SubtitleCue(start: Self.t(500), end: Self.t(1500), text: "A")
        let b = SubtitleCue(start: Self.t(800), end: Self.t(900), text: "B")
        let s = try WebVTTTrack.samples([a, b], from: Self.t(0), to: Self.t(1000))
        #expect(s.map(\.duration) == [45_000, 27_000, 9_000, 9_000])
        #expect(s.map(\.bytes) == [try WebVTTTrack.sample([]), try WebVTTTrack.sample([a]), try WebVTTTrack.sample([a, b]),
                                   try WebVTTTrack.sample([a])])
        #expect(try WebVTTTrack.samples([], from: Self.t(0), to: Self.t(1000)).map(\.duration) == [90_000])
    }

    @Test func initSegmentAndFragmentWalk() throws {
        let initBytes = try WebVTTTrack.initSegment(timescale: 90_000, language: "fra")
        let top = try BoxReader.walk(initBytes)
        #expect(top.map(\.type) == ["ftyp", "moov"])
        let trak = try #require(top[1].child("trak"))
        let hdlr = try #require(trak.find(["mdia", "hdlr"]))
        let b = Bytes(initBytes)
        #expect(try b.type(hdlr.contentStart + 8) == "text")
        #expect(trak.find(["mdia", "minf", "nmhd"]) != nil)
        let entry = try #require(trak.find(["mdia", "minf", "stbl", "stsd", "wvtt"]))
        #expect(entry.children.map(\.type) == ["vttC"])
        let seg = try WebVTTTrack.segment([SubtitleCue(start: Self.t(500), end: Self.t(1500), text: "A")],
                                          from: Self.t(1000), to: Self.t(2000), sequenceNumber: 3)
        let boxes = try BoxReader.walk(seg)
        #expect(boxes.map(\.type) == ["styp", "moof", "mdat"])
        let mdat = boxes[2]
        // One sample [1000, 1500) with A, then one empty: the payload is those two samples.
        let payload = Array(seg[mdat.contentStart..<mdat.end])
        let cue = SubtitleCue(start: Self.t(500), end: Self.t(1500), text: "A")
        #expect(payload == (try WebVTTTrack.sample([cue])) + (try WebVTTTrack.sample([])))
        let tfdt = try #require(boxes[1].find(["traf", "tfdt"]))
        #expect(try Bytes(seg).u64(tfdt.contentStart + 4) == 90_000)
    }
}
