import DASH
import HLS
import MediaCore
import Testing
@testable import MediaPresentation

/// Timed events in a presentation: merged by id in every window, listed while their segments are, rendered as
/// EXT-X-DATERANGE and as the MPD's EventStream on the same timeline.
@Suite struct EventTests {
    static let pdt: Int64 = 1_763_785_226_000
    static let out: [UInt8] = [0xFC, 0x30, 0x01]
    static let back: [UInt8] = [0xFC, 0x30, 0x02]

    static func event(_ id: String, _ kind: TimedEvent.Kind, at seconds: Int64, planned: Int64? = nil,
                      section: [UInt8] = out) -> EventInfo {
        EventInfo(id: id, kind: kind, startDate: WallClock(millisecondsSince1970: pdt + seconds * 1000),
                  mediaTime: .seconds(seconds, timescale: 90_000), plannedDuration: planned.map { .seconds($0, timescale: 90_000) },
                  section: section)
    }

    static func presentation() throws -> Presentation<Int> {
        let p = Presentation<Int>(windowSize: 4) { bytes, _ in bytes.count }
        try p.consume(.layout([Rendition.muxed()], TimingPolicy(targetDuration: 1)))
        try p.consume(.initSegment(rendition: 0, bytes: [1], tracks: Fixture.tracks))
        return p
    }

    @Test func outThenInIsOneRangeWithItsDuration() {
        var list = EventList()
        let r1 = list.add(Self.event("b", .spliceOut, at: 2, planned: 30))
        #expect(r1)
        let r2 = list.add(Self.event("b", .spliceOut, at: 2, planned: 30))
        #expect(!r2)  // a repeated cue
        let r3 = list.add(Self.event("b", .spliceIn, at: 5, section: Self.back))
        #expect(r3)
        #expect(list.events.count == 1)
        #expect(list.events[0].duration == .seconds(3, timescale: 90_000))
        #expect(list.events[0].outSection == Self.out && list.events[0].inSection == Self.back)
    }

    @Test func plannedDurationEndsTheBreakWhenTheMediaPassesIt() {
        var list = EventList()
        _ = list.add(Self.event("b", .spliceOut, at: 2, planned: 3))
        let r4 = list.elapse(to: WallClock(millisecondsSince1970: Self.pdt + 4_999))
        #expect(!r4)
        let r5 = list.elapse(to: WallClock(millisecondsSince1970: Self.pdt + 5_000))
        #expect(r5)
        #expect(list.events[0].duration == .seconds(3, timescale: 90_000))
    }

    @Test func listedWhileTheirSegmentsAre() throws {
        let p = try Self.presentation()
        try p.consume(.event(Self.event("a", .spliceOut, at: 0, planned: 2)))
        try p.consume(.event(Self.event("s", .timeSignal, at: 3)))
        for n in 0..<UInt64(4) { try p.consume(.segment(rendition: 0, Fixture.info(n), bytes: [0])) }
        var snap = try #require(p.layout?.windows[0].snapshot())
        #expect(snap.events.map(\.id) == ["a", "s"])
        var text = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: Rendition.muxed().scheme, playlistType: nil)).render()
        #expect(text.contains("#EXT-X-DATERANGE:ID=\"a\",START-DATE=\"2025-11-22T04:20:26.000Z\",DURATION=2.0,PLANNED-DURATION=2.0,SCTE35-OUT=0xFC3001\n"))
        #expect(text.contains("#EXT-X-DATERANGE:ID=\"s\",START-DATE=\"2025-11-22T04:20:29.000Z\",SCTE35-CMD=0xFC3001\n"))
        // Segments 0 and 1 leave the window: "a" (0–2 s) goes with them, "s" (at 3 s) stays.
        for n in 4..<UInt64(6) { try p.consume(.segment(rendition: 0, Fixture.info(n), bytes: [0])) }
        snap = try #require(p.layout?.windows[0].snapshot())
        #expect(snap.events.map(\.id) == ["s"])
        #expect(snap.removedEvents == [RemovedEvent(id: "a", at: WallClock(millisecondsSince1970: Self.pdt + 2000))])
        text = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: Rendition.muxed().scheme, playlistType: nil)).render()
        #expect(!text.contains("ID=\"a\""))
    }

    @Test func manifestEventStreamOnTheSegmentTimeline() throws {
        let p = try Self.presentation()
        try p.consume(.event(Self.event("a", .spliceOut, at: 1, planned: 30)))
        for n in 0..<UInt64(3) { try p.consume(.segment(rendition: 0, Fixture.info(n), bytes: [0])) }
        let layout = try #require(p.layout)
        let mpd = try #require(ManifestBuilder.live(layout.renditions, layout.snapshots(),
                                                    options: .init(now: WallClock(millisecondsSince1970: Self.pdt))))
        let stream = try #require(mpd.periods[0].eventStreams.first)
        #expect(stream.schemeIdUri == "urn:scte:scte35:2014:xml+bin" && stream.timescale == 90_000)
        #expect(stream.events == [MPD.Event(id: MPD.Event.numericID("a"), presentationTime: 90_000, duration: 30 * 90_000,
                                            binary: Self.out)])
        let xml = mpd.render()
        #expect(xml.contains("<EventStream schemeIdUri=\"urn:scte:scte35:2014:xml+bin\" timescale=\"90000\">"))
        #expect(xml.contains("<Binary>/DAB</Binary>"))
        // Before the AdaptationSets (§5.3.2.2).
        let es = try #require(xml.range(of: "<EventStream"))
        let set = try #require(xml.range(of: "<AdaptationSet"))
        #expect(es.lowerBound < set.lowerBound)
    }

    /// An ID3v2.4 tag: a UTF-8 TIT2 with a double quote, a Latin-1 TPE1, a TXXX (not listed).
    static let id3Tag: [UInt8] = {
        func frame(_ id: String, _ body: [UInt8]) -> [UInt8] {
            Array(id.utf8) + [0, 0, UInt8(body.count >> 7), UInt8(body.count & 0x7F), 0, 0] + body
        }
        let frames = frame("TIT2", [3] + Array("Say \"hi\"".utf8)) + frame("TPE1", [0, 0x42, 0xE9, 0x61])
            + frame("TXXX", [3] + Array("k\0v".utf8))
        return Array("ID3".utf8) + [4, 0, 0, 0, 0, UInt8(frames.count >> 7), UInt8(frames.count & 0x7F)] + frames
    }()

    @Test func id3TextFramesAreADaterangeInHLSAndNotInTheEventStream() throws {
        #expect(TimedID3.textFrames(Self.id3Tag) == [ID3TextFrame(id: "TIT2", text: "Say \"hi\""),
                                                     ID3TextFrame(id: "TPE1", text: "Béa")])
        let p = try Self.presentation()
        try p.consume(.event(Self.event("song", .id3, at: 1, section: Self.id3Tag)))
        try p.consume(.event(Self.event("a", .spliceOut, at: 2, planned: 30)))
        for n in 0..<UInt64(3) { try p.consume(.segment(rendition: 0, Fixture.info(n), bytes: [0])) }
        let layout = try #require(p.layout)
        let snap = try #require(layout.windows[0].snapshot())
        let text = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: Rendition.muxed().scheme, playlistType: nil)).render()
        // "Say "hi"" cannot be a quoted-string (§4.2): its UTF-8 as a hexadecimal-sequence.
        #expect(text.contains("#EXT-X-DATERANGE:ID=\"song\",START-DATE=\"2025-11-22T04:20:27.000Z\",X-ID3-TIT2=0x5361792022686922,X-ID3-TPE1=\"Béa\"\n"))
        let mpd = try #require(ManifestBuilder.live(layout.renditions, layout.snapshots(),
                                                    options: .init(now: WallClock(millisecondsSince1970: Self.pdt))))
        #expect(mpd.periods[0].eventStreams.first?.events.map(\.id) == [MPD.Event.numericID("a")])
        #expect(mpd.periods[0].adaptationSets.allSatisfy { $0.inbandEventSchemes == [TimedEvent.id3Scheme] })
        // A tag without text frames is carried (emsg) and declared, not listed.
        var list = EventList()
        let first = list.add(Self.event("x", .id3, at: 1, section: Array(Self.id3Tag.prefix(10))))
        #expect(first && list.carriesID3 && list.events.isEmpty)
    }

    @Test func inbandSCTE35IsDeclaredNotInTheEventStreamAndStillADaterange() throws {
        let p = try Self.presentation()
        var e = Self.event("a", .spliceOut, at: 1, planned: 30)
        e.inband = true
        try p.consume(.event(e))
        for n in 0..<UInt64(3) { try p.consume(.segment(rendition: 0, Fixture.info(n), bytes: [0])) }
        let layout = try #require(p.layout)
        let mpd = try #require(ManifestBuilder.live(layout.renditions, layout.snapshots(),
                                                    options: .init(now: WallClock(millisecondsSince1970: Self.pdt))))
        #expect(mpd.periods[0].eventStreams.isEmpty)
        #expect(mpd.periods[0].adaptationSets.allSatisfy { $0.inbandEventSchemes == [TimedEvent.scte35InbandScheme] })
        let snap = try #require(layout.windows[0].snapshot())
        let text = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: Rendition.muxed().scheme, playlistType: nil)).render()
        #expect(text.contains("#EXT-X-DATERANGE:ID=\"a\""))
    }

    @Test func inboxRefusesADuplicate() throws {
        let inbox = EventInbox()
        let e = TimedEvent(id: "x", kind: .spliceOut, time: .liveEdge(after: .zero(1000)), section: [])
        try inbox.post(e)
        #expect(throws: EventInbox.Refusal.duplicate("x")) { try inbox.post(e) }
        try inbox.post(TimedEvent(id: "x", kind: .spliceIn, time: .liveEdge(after: .zero(1000)), section: []))
        #expect(inbox.take().count == 2)
        #expect(inbox.take().isEmpty)
    }
}

/// `--cue-tags legacy`, `--interstitial URL` and `--interstitial-list URL`.
@Suite struct EventSignallingTests {
    @Test func legacyCueTagsAroundABreak() throws {
        let p = try EventTests.presentation()
        try p.consume(.event(EventTests.event("b", .spliceOut, at: 1, planned: 2)))
        for n in 0..<UInt64(4) { try p.consume(.segment(rendition: 0, Fixture.info(n), bytes: [0])) }
        let snap = try #require(p.layout?.windows[0].snapshot())
        let text = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: Rendition.muxed().scheme, playlistType: nil,
                                                              events: EventSignalling(legacyCueTags: true))).render()
        let lines = text.split(separator: "\n").map(String.init)
        func before(_ uri: String) -> String { lines[lines.firstIndex(of: uri)! - 3] }
        #expect(before("seg1.m4s") == "#EXT-X-CUE-OUT:DURATION=2.0")
        #expect(before("seg2.m4s") == "#EXT-X-CUE-OUT-CONT:ElapsedTime=1.0,Duration=2.0")
        #expect(before("seg3.m4s") == "#EXT-X-CUE-IN")
        #expect(!text.contains("CUE-OUT") || text.contains("#EXT-X-DATERANGE:ID=\"b\""))
        let plain = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: Rendition.muxed().scheme, playlistType: nil)).render()
        #expect(!plain.contains("#EXT-X-CUE"))
    }

    @Test func interstitialBesideTheBreak() throws {
        let p = try EventTests.presentation()
        try p.consume(.event(EventTests.event("b", .spliceOut, at: 1, planned: 30)))
        try p.consume(.segment(rendition: 0, Fixture.info(0), bytes: [0]))
        try p.consume(.segment(rendition: 0, Fixture.info(1), bytes: [0]))
        let snap = try #require(p.layout?.windows[0].snapshot())
        let text = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: Rendition.muxed().scheme, playlistType: nil,
                                                              events: EventSignalling(interstitial: .uri("https://ads.example/a.m3u8")))).render()
        #expect(text.contains(#"#EXT-X-DATERANGE:ID="b.interstitial",CLASS="com.apple.hls.interstitial",START-DATE="2025-11-22T04:20:27.000Z",DURATION=30.0,X-ASSET-URI="https://ads.example/a.m3u8",X-RESUME-OFFSET=30.0,X-RESTRICT="SKIP,JUMP""#))
        #expect(text.contains(#"#EXT-X-DATERANGE:ID="b",START-DATE="2025-11-22T04:20:27.000Z",PLANNED-DURATION=30.0,SCTE35-OUT=0xFC3001"#))
    }

    @Test func interstitialWithAnAssetList() throws {
        let p = try EventTests.presentation()
        try p.consume(.event(EventTests.event("b", .spliceOut, at: 1, planned: 30)))
        try p.consume(.event(EventTests.event("c", .spliceOut, at: 2)))  // no planned duration
        for n in 0..<UInt64(3) { try p.consume(.segment(rendition: 0, Fixture.info(n), bytes: [0])) }
        let events = EventSignalling(interstitial: .list("https://ads.example/list.json?site=7"))
        func rendered() throws -> String {
            let snap = try #require(p.layout?.windows[0].snapshot())
            return try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: Rendition.muxed().scheme, playlistType: nil,
                                                              events: events)).render()
        }
        let text = try rendered()
        #expect(text.contains(#"#EXT-X-DATERANGE:ID="b.interstitial",CLASS="com.apple.hls.interstitial",START-DATE="2025-11-22T04:20:27.000Z",DURATION=30.0,X-ASSET-LIST="https://ads.example/list.json?site=7&break=b&duration=30.0",X-RESUME-OFFSET=30.0,X-RESTRICT="SKIP,JUMP""#))
        #expect(!text.contains("X-ASSET-URI"))
        let open = #"ID="c.interstitial",CLASS="com.apple.hls.interstitial",START-DATE="2025-11-22T04:20:28.000Z",X-ASSET-LIST="https://ads.example/list.json?site=7&break=c","#
        #expect(text.contains(open))
        // The break ends: its DURATION comes, the asset list's URL stays the same (§4.4.5.1).
        try p.consume(.event(EventTests.event("c", .spliceIn, at: 3, section: EventTests.back)))
        try p.consume(.segment(rendition: 0, Fixture.info(3), bytes: [0]))
        let ended = try rendered()
        #expect(ended.contains(#"X-ASSET-LIST="https://ads.example/list.json?site=7&break=c","#))
        #expect(ended.contains(#"ID="c.interstitial",CLASS="com.apple.hls.interstitial",START-DATE="2025-11-22T04:20:28.000Z",DURATION=1.0,"#))
        // Without a planned length there is no X-RESUME-OFFSET, before or after the break ends (no 0 turning into the
        // real length: §4.4.5.1, an attribute keeps its value from one reload to the next).
        let cLine = { (t: String) in t.split(separator: "\n").first { $0.contains(#"ID="c.interstitial""#) }.map(String.init) ?? "" }
        #expect(!cLine(text).contains("X-RESUME-OFFSET") && !cLine(ended).contains("X-RESUME-OFFSET"))
        // A planned break that ends early keeps its DURATION and X-RESUME-OFFSET (the SCTE-35 range says how long).
        try p.consume(.event(EventTests.event("b", .spliceIn, at: 4, section: EventTests.back)))
        try p.consume(.segment(rendition: 0, Fixture.info(4), bytes: [0]))
        let early = try rendered()
        #expect(early.contains(#"ID="b.interstitial",CLASS="com.apple.hls.interstitial",START-DATE="2025-11-22T04:20:27.000Z",DURATION=30.0,"#))
        #expect(early.contains(#"X-RESUME-OFFSET=30.0,X-RESTRICT="SKIP,JUMP""#))
        #expect(early.contains(#"#EXT-X-DATERANGE:ID="b",START-DATE="2025-11-22T04:20:27.000Z",DURATION=3.0,PLANNED-DURATION=30.0"#))
    }

    @Test func assetListURLKeepsItsQueryAndFragment() {
        let minute = MediaTime.seconds(60, timescale: 90_000)
        #expect(InterstitialAsset.listURL("https://a.example/l", breakID: "splice-7", planned: minute)
                == "https://a.example/l?break=splice-7&duration=60.0")
        #expect(InterstitialAsset.listURL("https://a.example/l?", breakID: "x", planned: nil) == "https://a.example/l?break=x")
        #expect(InterstitialAsset.listURL("https://a.example/l?a=1&", breakID: "x", planned: nil) == "https://a.example/l?a=1&break=x")
        #expect(InterstitialAsset.listURL("https://a.example/l?a=1#f", breakID: "x", planned: nil) == "https://a.example/l?a=1&break=x#f")
        #expect(InterstitialAsset.listURL("https://a.example/l", breakID: "a b\"é", planned: nil) == "https://a.example/l?break=a%20b%22%C3%A9")
    }
}

@Suite struct ID3EventWindowTests {
    @Test func id3WithoutTextFramesIsNotListedButTheMPDDeclaresItsScheme() throws {
        let p = try EventTests.presentation()
        try p.consume(.segment(rendition: 0, Fixture.info(0), bytes: [0]))
        let layout = try #require(p.layout)
        let before = try #require(ManifestBuilder.live(layout.renditions, layout.snapshots(),
                                                       options: .init(now: WallClock(millisecondsSince1970: EventTests.pdt))))
        #expect(!before.render().contains("InbandEventStream"))
        try p.consume(.event(EventTests.event("song", .id3, at: 1, section: Array("ID3".utf8))))
        try p.consume(.segment(rendition: 0, Fixture.info(1), bytes: [0]))
        let snap = try #require(p.layout?.windows[0].snapshot())
        #expect(snap.events.isEmpty && snap.carriesID3)
        let mpd = try #require(ManifestBuilder.live(layout.renditions, layout.snapshots(),
                                                    options: .init(now: WallClock(millisecondsSince1970: EventTests.pdt))))
        #expect(mpd.periods[0].eventStreams.isEmpty)
        #expect(mpd.render().contains(#"<InbandEventStream schemeIdUri="https://aomedia.org/emsg/ID3" value=""/>"#))
    }
}
