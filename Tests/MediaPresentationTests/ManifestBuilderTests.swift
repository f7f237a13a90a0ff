import DASH
import HLS
import MediaCore
import Testing
@testable import MediaPresentation

@Suite struct ManifestBuilderTests {
    static let now = WallClock(millisecondsSince1970: 1_763_785_300_000)

    /// The live MPD lists the HLS playlist's segments: same numbers (`startNumber` = media sequence), `t` = tfdt,
    /// and AST + t / timescale = EXT-X-PROGRAM-DATE-TIME.
    @Test func liveManifestMatchesTheHLSPlaylists() throws {
        let p = try PresentationTests.fed(segments: 9)
        let layout = try #require(p.layout)
        let snaps = layout.snapshots()
        let mpd = try #require(ManifestBuilder.live(layout.renditions, snaps, options: .init(now: Self.now, timeURL: "http://h/time")))
        #expect(mpd.type == .dynamic)
        #expect(mpd.profiles == [MPD.liveProfile, MPD.cmafProfile])
        #expect(mpd.publishTime == Self.now)
        let ast = try #require(mpd.availabilityStartTime)
        #expect(mpd.periods.count == 1)
        let sets = mpd.periods[0].adaptationSets
        #expect(sets.map(\.contentType) == [.video, .audio])
        #expect(sets[0].representations.map(\.id) == ["720p", "360p"])  // highest bandwidth first
        #expect(sets[0].representations[0].width == 1280)
        #expect(sets[0].representations[0].frameRate == Rational(30, 1))
        for (i, r) in layout.renditions.enumerated() {
            let rep = try #require(sets.flatMap(\.representations).first { $0.id == r.name })
            guard case .template(let t) = rep.segments else { Issue.record("no template"); continue }
            #expect(t.startNumber == snaps[i].mediaSequence)
            #expect(t.media == r.scheme.directory + "seg$Number$.m4s")
            #expect(t.initialization == r.scheme.initURI(0))
            var cursor: Int64 = 0
            var listed: [(Int64, Int64)] = []
            for e in t.timeline {
                if let time = e.time { cursor = time }
                for _ in 0...e.repeatCount { listed.append((cursor, e.duration)); cursor += e.duration }
            }
            // The window, then (low latency) the segment in progress with the policy's… here unknown: none.
            let window = snaps[i].window
            #expect(Array(listed.prefix(window.count)).map(\.0) == window.map { $0.info.startTime.converted(to: t.timescale).value })
            for seg in window {
                let pdt = try #require(seg.info.programDateTime)
                let t0 = seg.info.startTime
                #expect(ast.millisecondsSince1970 + MediaTime.rescale(t0.value, from: t0.timescale, to: 1000) == pdt.millisecondsSince1970)
            }
        }
        #expect(mpd.timeShiftBufferDepth == .seconds(6, timescale: 1000))
        #expect(mpd.utcTimings == [MPD.UTCTiming(schemeIdUri: MPD.UTCTiming.httpISO, value: "http://h/time")])
    }

    /// Low latency: the segment in progress is announced with the policy's segment duration, and its first part
    /// makes it available (availabilityTimeOffset = segment − part).
    @Test func lowLatencyAnnouncesTheSegmentInProgress() throws {
        let policy = TimingPolicy(targetDuration: 1, partTarget: MediaTime(value: 333, timescale: 1000),
                                  segmentDuration: .seconds(1))
        let p = Presentation<Int>(windowSize: 6) { bytes, _ in bytes.count }
        try p.consume(.layout([Rendition.muxed()], policy))
        try p.consume(.initSegment(rendition: 0, bytes: [1], tracks: Fixture.tracks))
        for n in 0..<UInt64(3) {
            try p.consume(.part(rendition: 0, Fixture.part(n, 0), bytes: [0]))
            try p.consume(.segment(rendition: 0, Fixture.info(n), bytes: [0]))
        }
        try p.consume(.part(rendition: 0, Fixture.part(3, 0), bytes: [0]))
        let layout = try #require(p.layout)
        let mpd = try #require(ManifestBuilder.live(layout.renditions, layout.snapshots(), options: .init(now: Self.now)))
        #expect(mpd.profiles == [MPD.liveProfile])  // muxed: not CMAF
        #expect(mpd.periods[0].adaptationSets[0].contentType == nil)
        guard case .template(let t) = mpd.periods[0].adaptationSets[0].representations[0].segments else {
            Issue.record("no template"); return
        }
        #expect(t.timeline == [MPD.TimelineEntry(time: 0, duration: 90_000, repeatCount: 3)])
        #expect(t.availabilityTimeOffset == MediaTime(value: 667, timescale: 1000))
        #expect(t.availabilityTimeComplete == false)
        #expect(mpd.targetLatencyMilliseconds == 999)
        #expect(mpd.utcTimings.isEmpty)
    }

    @Test func finishedPresentationsAreStatic() throws {
        let p = try PresentationTests.fed(segments: 3, finish: true)
        let layout = try #require(p.layout)
        let live = try #require(ManifestBuilder.live(layout.renditions, layout.snapshots(), options: .init(now: Self.now)))
        #expect(live.type == .static)
        #expect(live.minimumUpdatePeriod == nil)
        let vod = try #require(ManifestBuilder.onDemand(layout.renditions, layout.snapshots()))
        #expect(vod.type == .static)
        #expect(vod.availabilityStartTime == nil)
        #expect(vod.mediaPresentationDuration == .seconds(3, timescale: 1000))
    }

    @Test func nothingBeforeEveryRenditionIsPlayable() throws {
        let p = Presentation<Int>(windowSize: 6) { bytes, _ in bytes.count }
        try p.consume(.layout(PresentationTests.ladder(), PresentationTests.policy))
        let layout = try #require(p.layout)
        #expect(ManifestBuilder.live(layout.renditions, layout.snapshots(), options: .init(now: Self.now)) == nil)
    }

    @Test func frameRatesAsFrameRateType() {
        #expect(ManifestBuilder.frameRate(30) == Rational(30, 1))
        #expect(ManifestBuilder.frameRate(29.97003) == Rational(30000, 1001))
        #expect(ManifestBuilder.frameRate(59.94006) == Rational(60000, 1001))
        #expect(ManifestBuilder.frameRate(12.5) == Rational(12500, 1000))
    }
}
