import HLS
import MediaCore
import Synchronization
import Testing
import TestSupport
@testable import MediaPresentation

@Suite struct LiveWindowTests {
    let scheme = URIScheme.root("stream")

    func playlist(_ w: LiveWindow<[UInt8]>, type: MediaPlaylist.PlaylistType? = nil) throws -> MediaPlaylist {
        try #require(PlaylistBuilder.mediaPlaylist(w.snapshot(), scheme: scheme, playlistType: type))
    }

    @Test func mediaSequenceCountsEvictedSegments() throws {
        let feed = Feed(LiveWindow(windowSize: 3))
        #expect(PlaylistBuilder.mediaPlaylist(feed.window.snapshot(), scheme: scheme, playlistType: nil) == nil)
        for n in 0..<10 {
            feed.segment()
            let evicted = max(0, n + 1 - 3)
            let p = try playlist(feed.window)
            #expect(feed.window.snapshot().mediaSequence == UInt64(evicted))
            #expect(p.mediaSequence == UInt64(evicted))
            #expect(p.segments.map(\.uri) == (evicted...n).map { "seg\($0).m4s" })
            #expect(p.playlistType == nil && !p.endList)
            #expect(try MediaPlaylist.parse(p.render()) == p)
        }
    }

    @Test func discontinuitySequenceCountsEvictedDiscontinuities() throws {
        let clock = ManualClock()
        let feed = Feed(LiveWindow(windowSize: 2, clock: clock.read))
        feed.segment()                       // 0
        feed.segment(discontinuity: true)    // 1: DISCONTINUITY
        feed.segment()                       // 2
        #expect(feed.window.snapshot().discontinuitySequence == 0)
        feed.segment()                       // 3, evicts 1
        var p = try playlist(feed.window)
        #expect(p.mediaSequence == 2 && p.discontinuitySequence == 1)
        #expect(p.segments.allSatisfy { !$0.discontinuity })

        // A new, different init: the next segment gets DISCONTINUITY + EXT-X-MAP:URI="init1.mp4".
        feed.window.setInit(Fixture.initBytes + [0], digest: Fixture.initBytes + [0], tracks: Fixture.tracks)
        feed.segment()                       // 4, evicts 2
        p = try playlist(feed.window)
        #expect(p.segments.map(\.discontinuity) == [false, true])
        #expect(p.segments.map(\.mapURI) == [nil, "init1.mp4"])
        #expect(p.mapURI == "init.mp4")
        #expect(p.render().contains("#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"init1.mp4\"\n#EXT-X-PROGRAM-DATE-TIME:"))
        feed.segment()                       // 5, evicts 3
        feed.segment()                       // 6, evicts 4 (the discontinuity)
        p = try playlist(feed.window)
        #expect(p.discontinuitySequence == 2)
        #expect(p.mapURI == "init1.mp4")
        #expect(p.segments.allSatisfy { $0.mapURI == nil && !$0.discontinuity })
        // The same bytes again: no new URI.
        feed.window.setInit(Fixture.initBytes + [0], digest: Fixture.initBytes + [0], tracks: Fixture.tracks)
        // init.mp4 stays while retained segments need it, then goes.
        #expect(feed.window.snapshot().inits.map(\.index) == [0, 1])
        clock.advance(millis: 60_000)
        feed.segment()
        #expect(feed.window.snapshot().inits.map(\.index) == [1])
    }

    /// RFC 8216 §6.2.2: "When the server removes a media segment URI from the Playlist, the corresponding media
    /// segment MUST remain available to clients for a period of time equal to the duration of the segment plus the
    /// duration of the longest Playlist file distributed by the server containing that segment."
    /// Segment 0 (1 s) was listed in playlists of up to 6 s: it must stay for 7 s after its eviction. The window
    /// keeps it for the playlist after the eviction too (7 s) plus its own second (an LL playlist also lists the
    /// parts of the segment in progress): 8 s.
    @Test func evictedSegmentsStayForTheirDurationPlusThePlaylistDurationInWallClockTime() throws {
        let clock = ManualClock()
        let feed = Feed(LiveWindow(windowSize: 6, clock: clock.read))
        for _ in 0..<7 { feed.segment() }                // 0 evicted at t = 0
        #expect(feed.window.snapshot().windowSequences == 1..<7)
        clock.advance(millis: 7_000)
        feed.segment()                                   // publishing purges what expired: 0 must stay (7 s rule)
        #expect(feed.window.snapshot().segment(0) != nil)
        clock.advance(millis: 1_001)                     // t = 8.001 s
        feed.segment()
        #expect(feed.window.snapshot().segment(0) == nil)
        #expect(feed.window.snapshot().segment(1) != nil)
    }

    /// However fast the input is read (no wall-clock time passes), retention keeps evicted segments, bounded only
    /// by the memory cap.
    @Test func fastInputKeepsSegmentsUpToTheCap() throws {
        let clock = ManualClock()
        let feed = Feed(LiveWindow(windowSize: 3, maxRetained: 10, maxRetainedBytes: 0, clock: clock.read))
        for _ in 0..<100 { feed.segment() }
        let s = feed.window.snapshot()
        #expect(s.window.count == 3)
        #expect(s.retained.count == 10)
        #expect(s.availableSequences == 87..<100)
    }

    /// At the cap, the window asks the producer to wait until the oldest evicted segment's retention ends (RFC 8216
    /// §6.2.2: its duration plus the longest playlist's; the window counts the one it was evicted from with the new
    /// segment in it, 1 + 4 s here); a producer that waits never loses one early.
    @Test func atTheCapTheProducerIsToldHowLongToWait() throws {
        let clock = ManualClock()
        let feed = Feed(LiveWindow(windowSize: 3, maxRetained: 4, maxRetainedBytes: 0, clock: clock.read))
        for _ in 0..<7 { #expect(feed.window.millisUntilRetentionRoom() == 0); feed.segment() }
        // 3 listed, 4 evicted at t = 0, each kept until 5,000 ms.
        #expect(feed.window.snapshot().retained.count == 4)
        #expect(feed.window.millisUntilRetentionRoom() == 5_001)
        clock.advance(millis: 3_000)
        #expect(feed.window.millisUntilRetentionRoom() == 2_001)
        clock.advance(millis: 2_001)
        #expect(feed.window.millisUntilRetentionRoom() == 0)
        feed.segment()
        // The four evicted at t = 0 have all expired: only the one just evicted is kept.
        #expect(feed.window.snapshot().availableSequences == 4..<8)
        #expect(feed.window.millisUntilRetentionRoom() == 0)
    }

    /// The retention holds `maxRetained` segments or `maxRetainedBytes`, whichever is more.
    @Test func smallSegmentsAreKeptUpToTheByteBudget() throws {
        let clock = ManualClock()
        let feed = Feed(LiveWindow(windowSize: 2, maxRetained: 2, maxRetainedBytes: 5_000, clock: clock.read))
        for _ in 0..<7 { feed.segment(bytes: 1_000) }
        #expect(feed.window.snapshot().retained.count == 5)
        #expect(feed.window.millisUntilRetentionRoom() > 0)
        // A producer that does not wait: one more segment is kept (the bytes may go a quarter over), then the oldest
        // go early.
        feed.segment(bytes: 1_000)
        #expect(feed.window.snapshot().retained.count == 6)
        for _ in 0..<3 { feed.segment(bytes: 1_000) }
        #expect(feed.window.snapshot().retained.count == 6)
        // Big segments: the count bound is the larger one.
        let big = Feed(LiveWindow(windowSize: 2, maxRetained: 2, maxRetainedBytes: 5_000, clock: clock.read))
        for _ in 0..<6 { big.segment(bytes: 4_000) }
        #expect(big.window.snapshot().retained.count == 2)
        #expect(big.window.millisUntilRetentionRoom() > 0)
    }

    /// With a recording to read back from, a segment evicted once the retention's memory is full is kept as its
    /// stand-in: nothing leaves early and the producer is not held back.
    @Test func aFullRetentionSpillsToTheRecordingInsteadOfHoldingBack() throws {
        let clock = ManualClock()
        let feed = Feed(LiveWindow(windowSize: 2, maxRetained: 3, maxRetainedBytes: 0, clock: clock.read,
                                   spill: { _ in [0xFF] }))
        for _ in 0..<12 { feed.segment(bytes: 1_000) }
        let s = feed.window.snapshot()
        #expect(s.availableSequences == 0..<12)
        #expect(s.retained.map(\.payload.count) == [1_000, 1_000, 1_000] + Array(repeating: 1, count: 7))
        #expect(feed.window.millisUntilRetentionRoom() == 0)
    }

    /// An evicted segment and its parts are kept in the form `retain` gives them (the origin's: read from the memory
    /// file it already has, its heap buffers let go); listed ones are untouched, and a `nil` keeps them as they were.
    @Test func evictedSegmentsAreKeptInTheFormRetainGives() throws {
        let w = LiveWindow<[UInt8]>(windowSize: 2, policy: TimingPolicy(targetDuration: 1, partTarget: .milliseconds(334)),
                                    retain: { segment, parts in
                                        segment.first == 2 ? nil : ([0xEE], parts.map { [0xE0 + $0[0]] })
                                    })
        w.setInit(Fixture.initBytes, digest: Fixture.initBytes, tracks: Fixture.tracks)
        for n in UInt64(0)..<4 {
            for i in 0..<3 { w.publishPart(Fixture.part(n, i), [UInt8(i)]) }
            w.publishSegment(Fixture.info(n), [UInt8(n), 0, 1, 2])
        }
        let s = w.snapshot()
        #expect(s.retained.map(\.sequence) == [0, 1])
        #expect(s.retained.map(\.payload) == [[0xEE], [0xEE]])
        #expect(s.retained[0].parts.map(\.payload) == [[0xE0], [0xE1], [0xE2]])
        #expect(s.retained[0].parts.map(\.info.index) == [0, 1, 2])
        #expect(s.window.map(\.payload) == [[2, 0, 1, 2], [3, 0, 1, 2]])
        #expect(s.part(3, 1)?.payload == [1])
        // Segment 2 is one `retain` keeps as it is.
        w.publishSegment(Fixture.info(4), [4])
        let after = w.snapshot()
        #expect(after.segment(2)?.payload == [2, 0, 1, 2])
        #expect(after.part(2, 2)?.payload == [2])
    }

    @Test func payloadsAreTheOnesPublished() throws {
        let feed = Feed(LiveWindow(windowSize: 2))
        feed.segment(bytes: 333)
        #expect(try #require(feed.window.snapshot().segment(0)).payload == [UInt8](repeating: 0, count: 333))
        #expect(feed.window.snapshot().segment(0)?.info.byteCount == 333)
    }

    @Test func finishAddsEndListAndVODType() throws {
        let live = Feed(LiveWindow(windowSize: 2))
        for _ in 0..<3 { live.segment() }
        live.window.finish()
        var p = try playlist(live.window)
        #expect(p.endList && p.playlistType == nil && p.segments.count == 2)

        let vod = Feed(LiveWindow(windowSize: 2, playlistType: .vod))
        for _ in 0..<3 { vod.segment() }
        p = try playlist(vod.window, type: .vod)
        #expect(p.playlistType == nil && p.segments.count == 3 && !p.endList)  // no PLAYLIST-TYPE while live
        vod.window.finish()
        p = try playlist(vod.window, type: .vod)
        #expect(p.playlistType == .vod && p.endList && p.mediaSequence == 0)
    }

    @Test func targetDurationCoversLongSegmentsAndKeepsThePolicyFloor() throws {
        let feed = Feed(LiveWindow(windowSize: 3, policy: TimingPolicy(targetDuration: 2)))
        feed.segment()
        #expect(try playlist(feed.window).targetDuration == 2)
        feed.window.publishSegment(SegmentInfo(sequence: 1, startTime: .seconds(1), duration: MediaTime(value: 225_000, timescale: 90_000),
                                               byteCount: 10), [])
        let p = try playlist(feed.window)
        #expect(p.targetDuration == 3)
        for s in p.segments { #expect(MediaPlaylist.roundedDuration(s.duration) <= p.targetDuration) }
    }

    /// An LL stream's first segment is one part long (the encoder puts a keyframe there), so a playlist is given out
    /// after one part, and it always lists a complete segment (a legacy client that loaded a playlist of parts only
    /// would find nothing to play).
    @Test func lowLatencyPlaylistNeedsASegmentAndItsHeaderIsFixed() throws {
        let w = LiveWindow<[UInt8]>(windowSize: 6, policy: TimingPolicy(targetDuration: 1, partTarget: MediaTime(value: 334, timescale: 1000)))
        w.setInit(Fixture.initBytes, digest: Fixture.initBytes, tracks: Fixture.tracks)
        w.publishPart(Fixture.part(0, 0), [1])
        #expect(!w.snapshot().isPlayable)
        w.publishSegment(SegmentInfo(sequence: 0, startTime: .zero(90_000), duration: MediaTime(value: 30_000, timescale: 90_000),
                                     byteCount: 1), [1])
        w.publishPart(Fixture.part(1, 0), [2])
        #expect(w.snapshot().isPlayable)
        let p = try playlist(w)
        #expect(p.segments.map(\.uri) == ["seg0.m4s"])
        #expect(p.segments[0].parts.map(\.uri) == ["seg0.0.m4s"])
        #expect(p.trailingParts.map(\.uri) == ["seg1.0.m4s"])
        #expect(p.preloadHint?.uri == "seg1.1.m4s")
        #expect(p.partTarget == MediaTime(value: 334, timescale: 1000))
        #expect(p.serverControl?.partHoldBack == MediaTime(value: 1_002_000, timescale: 1_000_000))
        let text = p.render()
        #expect(text.contains("PART-HOLD-BACK=1.002") && text.contains("#EXT-X-PART-INF:PART-TARGET=0.334\n"))
        #expect(text.contains("CAN-SKIP-UNTIL=6.0"))
    }

    /// An epoch-locked timeline numbers its first segment by its place on the input clock: the window starts its
    /// numbering there (at the first part already, so the preload hint names the right segment).
    @Test func theFirstObjectPublishedSetsWhereTheNumberingStarts() throws {
        let w = LiveWindow<[UInt8]>(windowSize: 2, policy: TimingPolicy(targetDuration: 1, partTarget: MediaTime(value: 334, timescale: 1000)))
        w.setInit(Fixture.initBytes, digest: Fixture.initBytes, tracks: Fixture.tracks)
        let first: UInt64 = 1_795_193_600
        w.publishPart(Fixture.part(first, 0), [1])
        #expect(w.snapshot().nextSequence == first && w.snapshot().mediaSequence == first)
        w.publishSegment(Fixture.info(first), [1])
        for n in first + 1...first + 3 { w.publishSegment(Fixture.info(n), [2]) }
        let p = try playlist(w)
        #expect(p.mediaSequence == first + 2)
        #expect(p.segments.map(\.uri) == ["seg\(first + 2).m4s", "seg\(first + 3).m4s"])
        #expect(p.preloadHint?.uri == "seg\(first + 4).0.m4s")
    }

    /// RFC 8216bis §4.4.5.3: the hinted URI "MUST match the URI that will be subsequently added to the Playlist".
    /// The last part of a segment is published together with its segment, so no playlist between the two hints
    /// `seg1.2` when the next part to come is `seg2.0`.
    @Test func lastPartAppearsWithItsSegment() throws {
        let w = LiveWindow<[UInt8]>(windowSize: 6, policy: TimingPolicy(targetDuration: 1, partTarget: MediaTime(value: 334, timescale: 1000)))
        w.setInit(Fixture.initBytes, digest: Fixture.initBytes, tracks: Fixture.tracks)
        w.publishPart(Fixture.part(0, 0), [1])
        w.publishSegment(Fixture.info(0), [1])
        w.publishPart(Fixture.part(1, 0), [2])
        w.publishPart(Fixture.part(1, 1), [3])
        let before = w.snapshot().version
        #expect(try playlist(w).preloadHint?.uri == "seg1.2.m4s")
        var last = Fixture.part(1, 2)
        last.endsSegment = true
        w.publishPart(last, [4])
        #expect(w.snapshot().version == before)
        #expect(try playlist(w).preloadHint?.uri == "seg1.2.m4s")
        w.publishSegment(Fixture.info(1), [2, 3, 4])
        let p = try playlist(w)
        #expect(p.segments.last?.parts.map(\.uri) == ["seg1.0.m4s", "seg1.1.m4s", "seg1.2.m4s"])
        #expect(p.preloadHint?.uri == "seg2.0.m4s")
    }

    @Test func partTargetAndHoldBackNeverChange() throws {
        let w = LiveWindow<[UInt8]>(windowSize: 6, policy: TimingPolicy(targetDuration: 1, partTarget: MediaTime(value: 334, timescale: 1000)))
        w.setInit(Fixture.initBytes, digest: Fixture.initBytes, tracks: Fixture.tracks)
        var seen: Set<String> = []
        for n in 0..<20 {
            for i in 0..<3 {
                w.publishPart(Fixture.part(UInt64(n), i, millis: i == 2 ? 332 : 334), [])
                guard w.snapshot().isPlayable else { continue }
                let p = try playlist(w)
                seen.insert("\(String(describing: p.partTarget)) \(String(describing: p.serverControl))")
            }
            w.publishSegment(Fixture.info(UInt64(n)), [])
        }
        #expect(seen.count == 1)
    }

    /// `setWindowSize` (the control API's PATCH of `window`): from the next segment on, fewer or more are listed;
    /// numbering goes on (the media sequence counts what was evicted), nothing else moves.
    @Test func theWindowSizeChangesWhileFed() {
        let w = LiveWindow<[UInt8]>(windowSize: 6)
        w.setInit(Fixture.initBytes, digest: Fixture.initBytes, tracks: Fixture.tracks)
        for n in 0..<8 { w.publishSegment(Fixture.info(UInt64(n)), []) }
        #expect(w.snapshot().window.count == 6 && w.snapshot().mediaSequence == 2)
        w.setWindowSize(3)
        #expect(w.snapshot().window.count == 6, "until the next segment")
        w.publishSegment(Fixture.info(8), [])
        #expect(w.snapshot().window.map(\.sequence) == [6, 7, 8] && w.snapshot().mediaSequence == 6)
        #expect(w.snapshot().segment(5) != nil, "an evicted segment stays downloadable for a while")
        w.setWindowSize(5)
        for n in 9..<12 { w.publishSegment(Fixture.info(UInt64(n)), []) }
        #expect(w.snapshot().window.map(\.sequence) == [7, 8, 9, 10, 11] && w.windowSize == 5)
    }

    @Test func aPresentationsWindowSizeReachesWindowsMadeLater() throws {
        let p = Presentation<[UInt8]>(windowSize: 6) { bytes, _ in bytes }
        p.setWindowSize(2)
        try p.consume(.layout([.muxed()], TimingPolicy(targetDuration: 1)))
        #expect(p.layout?.windows.map(\.windowSize) == [2] && p.windowSize == 2)
        p.setWindowSize(4)
        #expect(p.layout?.windows.map(\.windowSize) == [4])
    }

    @Test func waitForPlayable() async throws {
        let w = LiveWindow<[UInt8]>(windowSize: 3)
        #expect(await w.wait(for: .playable, timeout: .milliseconds(30)) == false)
        w.setInit(Fixture.initBytes, digest: Fixture.initBytes, tracks: Fixture.tracks)
        async let waited = w.wait(for: .playable, timeout: .seconds(10))
        try await Task.sleep(for: .milliseconds(50))
        let start = ContinuousClock.now
        w.publishSegment(Fixture.info(0), [])
        #expect(await waited == true)
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(await w.wait(for: .playable, timeout: .zero) == true)
        #expect(w.pendingWaiterCount == 0)
    }

    @Test func concurrentReadersSeeMonotonicMediaSequence() async throws {
        let window = LiveWindow<[UInt8]>(windowSize: 6)
        window.setInit(Fixture.initBytes, digest: Fixture.initBytes, tracks: Fixture.tracks)
        let total = 10_000
        let readersStarted = StartedCounter()
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                while readersStarted.value.load(ordering: .acquiring) < 3 { await Task.yield() }
                for i in 0..<total {
                    window.publishSegment(Fixture.info(UInt64(i), bytes: 64), [])
                    if i % 64 == 0 { await Task.yield() }
                }
                window.finish()
                return 0
            }
            for _ in 0..<3 {
                group.addTask {
                    readersStarted.value.add(1, ordering: .releasing)
                    var last: UInt64 = 0
                    var lastVersion: UInt64 = 0
                    var reads = 0
                    while true {
                        let s = window.snapshot()
                        #expect(s.mediaSequence >= last)
                        #expect(s.version >= lastVersion)
                        #expect(s.window.count <= 6)
                        #expect(s.window.first.map { $0.sequence == s.mediaSequence } ?? true)
                        last = s.mediaSequence
                        lastVersion = s.version
                        reads += 1
                        if s.finished { break }
                        await Task.yield()
                    }
                    return reads
                }
            }
            var reads = 0
            for try await r in group { reads += r }
            #expect(reads > 3)
        }
        #expect(window.snapshot().mediaSequence == UInt64(total - 6))
        #expect(window.snapshot().nextSequence == UInt64(total))
    }
}

/// Counts reader tasks that have started (shared across the task group).
final class StartedCounter: Sendable {
    let value = Atomic<Int>(0)
}

@Suite struct InProgressDiscontinuityTests {
    /// After a codec change, the parts of the segment in progress come after EXT-X-DISCONTINUITY and the new
    /// EXT-X-MAP; once the segment is complete the tags stand before it as usual.
    @Test func partsOfTheSegmentAfterANewInitCarryTheTags() throws {
        let scheme = URIScheme.nested("720p")
        let w = LiveWindow<[UInt8]>(windowSize: 6, policy: TimingPolicy(targetDuration: 1, partTarget: MediaTime(value: 334, timescale: 1000)))
        w.setInit(Fixture.initBytes, digest: Fixture.initBytes, tracks: Fixture.tracks)
        w.publishSegment(Fixture.info(0), [0])
        w.setInit([9], digest: [9], tracks: Fixture.tracks)
        var p = try #require(PlaylistBuilder.mediaPlaylist(w.snapshot(), scheme: scheme, playlistType: nil))
        #expect(p.render().hasSuffix("#EXTINF:1.0,\n720p/seg0.m4s\n#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"720p/init1.mp4\"\n#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"720p/seg1.0.m4s\"\n"))
        w.publishPart(Fixture.part(1, 0), [1])
        p = try #require(PlaylistBuilder.mediaPlaylist(w.snapshot(), scheme: scheme, playlistType: nil))
        #expect(p.trailingDiscontinuity && p.trailingMapURI == "720p/init1.mp4")
        #expect(p.render().contains("#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"720p/init1.mp4\"\n#EXT-X-PART:DURATION=0.334,URI=\"720p/seg1.0.m4s\",INDEPENDENT=YES\n"))
        #expect(try MediaPlaylist.parse(p.render()) == p)
        w.publishSegment(Fixture.info(1), [1])
        p = try #require(PlaylistBuilder.mediaPlaylist(w.snapshot(), scheme: scheme, playlistType: nil))
        #expect(!p.trailingDiscontinuity && p.trailingMapURI == nil)
        #expect(p.segments[1].discontinuity && p.segments[1].mapURI == "720p/init1.mp4")
        #expect(try MediaPlaylist.parse(p.render()) == p)
    }
}
