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

/// DASH's sets of encrypted video: representations of different keys (per-track keys) in sets of their own, switchable;
/// representations of one key in one set whatever key period each one's latest segment is in (the init segment's KID,
/// `defaultKeyID`, decides, and is what `cenc:default_KID` states).
@Suite struct EncryptedSetsTests {
    static func kid(_ b: UInt8) -> [UInt8] { [UInt8](repeating: b, count: 16) }

    /// A cbcs segment under key period `period`'s key (KID `0x10 + period`), its init segment made under `initPeriod`'s.
    static func encryption(period: UInt8, initPeriod: UInt8 = 0, track: UInt8 = 0) -> SegmentEncryption {
        let keyID = kid(0x10 + track * 0x20 + period)
        var e = SegmentEncryption(method: .sampleAES, key: ContentKey(id: UInt64(period), bytes: kid(1), keyID: keyID),
                                  iv: kid(2), keySystems: [KeySystemKey(keyFormat: "org.w3.clearkey", uri: "data:,", systemID: kid(3))])
        if period != initPeriod {
            e.initKeyID = kid(0x10 + track * 0x20 + initPeriod)
            e.initKeySystems = e.keySystems
        }
        return e
    }

    static func facts(_ name: String, height: Int, _ e: SegmentEncryption) -> ManifestBuilder.RepresentationFacts {
        var video = Fixture.video
        video.height = height
        let template = MPD.SegmentTemplate(timescale: 90_000, initialization: "\(name)/init.mp4", media: "\(name)/seg$Number$.m4s",
                                           startNumber: 0, timeline: [MPD.TimelineEntry(time: 0, duration: 90_000)])
        return ManifestBuilder.RepresentationFacts(rendition: Rendition(name: name, kind: .video, scheme: .nested(name)),
                                                   tracks: [video], statistics: VariantStatistics(peakBitRate: height * 1000, averageBitRate: height * 1000, frameRate: 30),
                                                   segments: .template(template), encryption: e)
    }

    static func videoSets(_ facts: [ManifestBuilder.RepresentationFacts]) throws -> [MPD.AdaptationSet] {
        try #require(ManifestBuilder.onDemand(facts, duration: .seconds(1), targetDuration: 1)).periods[0].adaptationSets
            .filter { $0.contentType == .video }
    }

    @Test func oneKeyIsOneSetWhateverPeriodEachRenditionIsIn() throws {
        // A rotating one-key ladder: 720p's latest segment already in period 4, 360p's still in 3.
        let sets = try Self.videoSets([Self.facts("720p", height: 720, Self.encryption(period: 4)),
                                       Self.facts("360p", height: 360, Self.encryption(period: 3))])
        #expect(sets.count == 1 && sets[0].representations.count == 2 && sets[0].switchableWith.isEmpty)
        #expect(sets[0].contentProtection.first?.defaultKID == "10101010-1010-1010-1010-101010101010", "the init segment's KID")
    }

    @Test func perTrackKeysAreSwitchableSetsOfTheirOwn() throws {
        let sets = try Self.videoSets([Self.facts("720p", height: 720, Self.encryption(period: 0, track: 1)),
                                       Self.facts("360p", height: 360, Self.encryption(period: 0, track: 0))])
        #expect(sets.map { $0.representations.map(\.id) } == [["720p"], ["360p"]])
        #expect(sets[0].switchableWith == [sets[1].id] && sets[1].switchableWith == [sets[0].id])
        #expect(sets.map { $0.contentProtection.first?.defaultKID } == ["30303030-3030-3030-3030-303030303030",
                                                                       "10101010-1010-1010-1010-101010101010"])
    }
}
