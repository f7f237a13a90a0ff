import Testing
@testable import MediaCore

/// Our WebVTT and SubRip readers (W3C WebVTT §4), the cue payload rules and the WebVTT segment writer (RFC 8216 §3.5).
@Suite struct SubtitleFileTests {
    static func ms(_ v: Int64) -> MediaTime { MediaTime(value: v, timescale: 1000) }

    @Test func readsWebVTT() throws {
        let text = """
        \u{FEFF}WEBVTT - a title
        Kind: captions

        NOTE a comment
        spanning lines

        STYLE
        ::cue { color: red }

        intro
        00:00.500 --> 00:01.800 line:10% align:start
        Hello <i>world</i>

        101:02:03.004 --> 101:02:04.000
        Far, with hours
        """
        let f = try SubtitleFile(parsing: text, format: .webVTT)
        #expect(f.warnings.isEmpty)
        #expect(f.cues == [
            SubtitleCue(start: Self.ms(500), end: Self.ms(1800), text: "Hello <i>world</i>", id: "intro", settings: "line:10% align:start"),
            SubtitleCue(start: Self.ms(((101 * 60 + 2) * 60 + 3) * 1000 + 4), end: Self.ms(((101 * 60 + 2) * 60 + 4) * 1000),
                        text: "Far, with hours"),
        ])
    }

    @Test func readsSubRip() throws {
        let text = "1\r\n00:00:00,500 --> 00:00:01,800 X1:10 X2:20\r\nHello\r\nthere\r\n\r\n2\r\n01:00:01,900 --> 01:00:04,200\r\nLater\r\n"
        let f = try SubtitleFile(parsing: text, format: .subRip)
        #expect(f.cues == [
            SubtitleCue(start: Self.ms(500), end: Self.ms(1800), text: "Hello\nthere"),
            SubtitleCue(start: Self.ms(3_601_900), end: Self.ms(3_604_200), text: "Later"),
        ])
    }

    @Test func timestamps() {
        #expect(SubtitleFile.timestamp("00:01.000", format: .webVTT) == 1000)
        #expect(SubtitleFile.timestamp("1000:00:00.001", format: .webVTT) == 3_600_000_001)
        #expect(SubtitleFile.timestamp("1:00:00.000", format: .webVTT) == nil)   // §4.5: hours are two or more digits
        #expect(SubtitleFile.timestamp("00:60.000", format: .webVTT) == nil)
        #expect(SubtitleFile.timestamp("00:00:01.00", format: .webVTT) == nil)
        #expect(SubtitleFile.timestamp("00:00:01,000", format: .webVTT) == nil)
        #expect(SubtitleFile.timestamp("00:00:01,250", format: .subRip) == 1250)
        #expect(SubtitleFile.timestamp("00:00:01.250", format: .subRip) == 1250)
        #expect(SubtitleFile.timestamp("00:01,250", format: .subRip) == nil)
        #expect(SubtitleFile.timestamp("aa:00:01,250", format: .subRip) == nil)
    }

    @Test func malformedCuesAreSkippedWithAWarning() throws {
        let text = """
        1
        00:00:01,000 -> 00:00:02,000
        broken arrow

        2
        00:00:03,000 --> 00:00:02,000
        backwards

        3
        00:00:04,000 --> 00:00:05,000
        fine --> still text
        """
        let f = try SubtitleFile(parsing: text, format: .subRip)
        #expect(f.cues == [SubtitleCue(start: Self.ms(4000), end: Self.ms(5000), text: "fine --&gt; still text")])
        #expect(f.warnings == ["line 1: no cue timing (HH:MM:SS.mmm --> HH:MM:SS.mmm): block skipped",
                               "line 6: cue ends before it starts: cue skipped"])
        let bad = try SubtitleFile(parsing: "WEBVTT\n\n00:00:xx.000 --> 00:00:02.000\nx\n\n00:00:03.000 --> 00:00:04.000\nok\n",
                                   format: .webVTT)
        #expect(bad.cues.count == 1 && bad.warnings == ["line 3: malformed cue timing '00:00:xx.000 --> 00:00:02.000': cue skipped"])
    }

    @Test func notAFileIsOneError() {
        #expect(throws: SubtitleFileError("not a WebVTT file: it does not start with WEBVTT")) {
            try SubtitleFile(parsing: "1\n00:00:01,000 --> 00:00:02,000\nx\n", format: .webVTT)
        }
        #expect(throws: SubtitleFileError.self) { try SubtitleFile(parsing: "WEBVTTX\n", format: .webVTT) }
        #expect(throws: SubtitleFileError("no cue in the file")) { try SubtitleFile(parsing: "WEBVTT\n\nNOTE only\n", format: .webVTT) }
        #expect(throws: SubtitleFileError.self) { try SubtitleFile(parsing: "", format: .subRip) }
        #expect(throws: SubtitleFileError.self) { try SubtitleFile(parsing: String(decoding: [0xFF, 0x00, 0x41], as: UTF8.self), format: .subRip) }
    }

    @Test func sidecarOption() throws {
        let s = try SubtitleSidecar.parse("fra=dir/movie.fr.SRT").get()
        #expect(s.language.bcp47 == "fr" && s.file?.path == "dir/movie.fr.SRT" && s.file?.format == .subRip)
        #expect(s.description == "fr=dir/movie.fr.SRT")
        // No file: a rendition whose cues are posted to the stream.
        let live = try SubtitleSidecar.parse("en").get()
        #expect(live.file == nil && live.description == "en")
        #expect(throws: SubtitleFileError.self) { try SubtitleSidecar.parse("en=").get() }
        #expect(throws: SubtitleFileError.self) { try SubtitleSidecar.parse("=a.vtt").get() }
        #expect(throws: SubtitleFileError.self) { try SubtitleSidecar.parse("en=movie.txt").get() }
        #expect(throws: SubtitleFileError.self) { try SubtitleSidecar.parse("xx yy=a.vtt").get() }
        #expect(throws: SubtitleFileError.self) { try SubtitleSidecar.parse("movie.vtt").get() }
    }

    /// Segments of one second over cues on a 90 kHz timeline: a cue spanning a boundary is in both segments, a segment
    /// without a cue is the header alone (golden text).
    @Test func segments() {
        let t = { (s: Double) in MediaTime(value: Int64(s * 90_000), timescale: 90_000) }
        let cues = [
            SubtitleCue(start: t(0.5), end: t(1.5), text: "across", id: "a"),
            SubtitleCue(start: t(1.2), end: t(1.4), text: "inside", settings: "line:0"),
        ]
        let header = "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000\n"
        let end = "\n"
        #expect(String(decoding: WebVTTSegment.make(cues, from: t(0), to: t(1)), as: UTF8.self)
                == header + "\na\n00:00:00.500 --> 00:00:01.500\nacross\n\n")
        #expect(String(decoding: WebVTTSegment.make(cues, from: t(1), to: t(2)), as: UTF8.self)
                == header + "\na\n00:00:00.500 --> 00:00:01.500\nacross\n\n00:00:01.200 --> 00:00:01.400 line:0\ninside\n\n")
        #expect(String(decoding: WebVTTSegment.make(cues, from: t(2), to: t(3)), as: UTF8.self) == header + "\n")
        // A cue ending exactly at a segment's start is not in it; one starting at its end is not either.
        #expect(String(decoding: WebVTTSegment.make(cues, from: t(1.5), to: t(2)), as: UTF8.self) == header + "\n")
        #expect(WebVTTSegment.timestamp(MediaTime(value: 3_600 * 100 * 90_000 + 45, timescale: 90_000)) == "100:00:00.001")
        #expect(WebVTTSegment.timestamp(MediaTime(value: -5, timescale: 1000)) == "00:00:00.000")
    }

    @Test func placement() {
        let c = SubtitleCue(start: MediaTime(value: 500, timescale: 1000), end: MediaTime(value: 1800, timescale: 1000), text: "x")
        let p = c.placed(shift: MediaTime(value: 6000, timescale: 90_000), timescale: 90_000)
        #expect(p.start == MediaTime(value: 51_000, timescale: 90_000) && p.end == MediaTime(value: 168_000, timescale: 90_000))
        #expect(SubtitleCue.payload("a\r\n\r\nb  \n") == "a\nb")
    }

    /// libavcodec's text subtitle decoders give ASS events (`ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect,
    /// Text`): the text without override blocks, `\N`/`\n` as line breaks, `\h` as a space.
    @Test func assEventText() {
        #expect(SubtitleCue.text(fromASS: "0,0,Default,,0,0,0,,Hello {\\i1}world{\\i0}\\NSecond,\\hline")
                == "Hello world\nSecond, line")
        #expect(SubtitleCue.text(fromASS: "Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,{\\pos(10,20)}Top") == "Top")
        #expect(SubtitleCue.text(fromASS: "3,0,Default,,0,0,0,,{\\an8}") == "")
        #expect(SubtitleCue.text(fromASS: "not an event") == "")
        #expect(SubtitleCue.text(fromASS: "1,0,Default,,0,0,0,,a --> b") == "a --&gt; b")
    }
}
