import TestSupport
import Synchronization
import Testing
import HLS
import MediaCore
@testable import Origin

@Suite struct LiveStreamTests {
    @Test func mediaSequenceCountsEvictedSegments() throws {
        let stream = LiveStream(windowSize: 3, targetDuration: 1)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        #expect(stream.snapshot().playlist == nil)
        for n in 0..<10 {
            stream.publish(Fixture.liveSegment(at: 1000 * Int64(n)))
            let snap = stream.snapshot()
            let evicted = max(0, n + 1 - 3)
            #expect(snap.mediaSequence == UInt64(evicted))
            let playlist = try #require(snap.playlist)
            #expect(playlist.mediaSequence == UInt64(evicted))
            #expect(playlist.segments.map(\.uri) == (evicted...n).map { "seg\($0).m4s" })
            #expect(playlist.playlistType == nil)
            #expect(!playlist.endList)
            // The rendered text parses back to the same model.
            #expect(try MediaPlaylist.parse(try #require(snap.mediaPlaylistText)) == playlist)
        }
    }

    @Test func discontinuitySequenceCountsEvictedDiscontinuities() throws {
        let stream = LiveStream(windowSize: 2, targetDuration: 1)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        stream.publish(Fixture.liveSegment())                       // 0
        stream.publish(Fixture.liveSegment(discontinuity: true))    // 1: DISCONTINUITY
        stream.publish(Fixture.liveSegment())                       // 2
        #expect(stream.snapshot().discontinuitySequence == 0)
        stream.publish(Fixture.liveSegment())                       // 3, evicts 1
        var p = try #require(stream.snapshot().playlist)
        #expect(p.mediaSequence == 2 && p.discontinuitySequence == 1)
        #expect(p.segments.allSatisfy { !$0.discontinuity })

        // A new, different init: next segment gets DISCONTINUITY + EXT-X-MAP:URI="init1.mp4".
        stream.setInitSegment(Fixture.initBytes + [0], tracks: Fixture.tracks)
        stream.publish(Fixture.liveSegment())                       // 4, evicts 2
        p = try #require(stream.snapshot().playlist)
        #expect(p.segments.map(\.discontinuity) == [false, true])
        #expect(p.segments.map(\.mapURI) == [nil, "init1.mp4"])
        #expect(p.mapURI == "init.mp4")
        let text = try #require(stream.snapshot().mediaPlaylistText)
        #expect(text.contains("#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"init1.mp4\"\n#EXT-X-PROGRAM-DATE-TIME:"))
        stream.publish(Fixture.liveSegment())                       // 5, evicts 3
        stream.publish(Fixture.liveSegment())                       // 6, evicts 4 (the discontinuity)
        p = try #require(stream.snapshot().playlist)
        #expect(p.discontinuitySequence == 2)
        #expect(p.mapURI == "init1.mp4")
        #expect(p.segments.allSatisfy { $0.mapURI == nil && !$0.discontinuity })
        // Same bytes again: no new URI.
        stream.setInitSegment(Fixture.initBytes + [0], tracks: Fixture.tracks)
        #expect(stream.snapshot().initURIs.last == "init1.mp4")
    }

    @Test func evictedSegmentsAreRetainedForOnePlaylistDurationThenExpire() throws {
        let stream = LiveStream(windowSize: 3, targetDuration: 1)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        for _ in 0..<4 { stream.publish(Fixture.liveSegment()) }   // 0..3, 0 evicted (playlist duration 3 s)
        #expect(stream.snapshot().windowSequences == 1..<4)
        #expect(stream.snapshot().segmentBytes(0) != nil)
        // 3 s of media published after eviction (segments 3, 4, 5): still there.
        stream.publish(Fixture.liveSegment())
        stream.publish(Fixture.liveSegment())
        #expect(stream.snapshot().segmentBytes(0) != nil)
        // More than a playlist duration later: gone.
        stream.publish(Fixture.liveSegment())
        let snap = stream.snapshot()
        #expect(snap.segmentBytes(0) == nil)
        #expect(snap.segmentBytes(1) != nil)
        #expect(snap.segmentBytes(6) != nil)
        #expect(snap.segmentBytes(7) == nil)
        // Memory stays bounded: window + retention, however long the stream runs.
        for _ in 0..<500 { stream.publish(Fixture.liveSegment()) }
        let s = stream.snapshot()
        #expect(s.window.count == 3)
        #expect(s.retained.count <= 4)
        #expect(s.availableSequences.lowerBound >= 506 - 7)
    }

    @Test func segmentBytesAreTheOnesPublished() throws {
        let stream = LiveStream(windowSize: 2, targetDuration: 1)
        let seg = Fixture.liveSegment(payload: 333)
        stream.publish(seg)
        let bytes = try #require(stream.snapshot().segmentBytes(0))
        #expect(Array(bytes.readableBytesView) == seg.bytes)
    }

    @Test func finishAddsEndListAndVODType() throws {
        let live = LiveStream(windowSize: 2, targetDuration: 1)
        live.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        for _ in 0..<3 { live.publish(Fixture.liveSegment()) }
        live.finish()
        var p = try #require(live.snapshot().playlist)
        #expect(p.endList && p.playlistType == nil && p.segments.count == 2)

        let vod = LiveStream(windowSize: 2, targetDuration: 1, playlistType: .vod)
        vod.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        for _ in 0..<3 { vod.publish(Fixture.liveSegment()) }
        p = try #require(vod.snapshot().playlist)
        #expect(p.playlistType == nil && p.segments.count == 3 && !p.endList)  // no PLAYLIST-TYPE while live
        vod.finish()
        p = try #require(vod.snapshot().playlist)
        #expect(p.playlistType == .vod && p.endList && p.mediaSequence == 0)
    }

    @Test func targetDurationCoversLongSegments() throws {
        let stream = LiveStream(windowSize: 3, targetDuration: 1)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        stream.publish(Fixture.liveSegment())
        stream.publish(LiveSegment(bytes: Fixture.segment(videoSamples: 75), duration: MediaTime(value: 225_000, timescale: 90_000),
                                   programDateTime: WallClock(millisecondsSince1970: 0)))
        let p = try #require(stream.snapshot().playlist)
        #expect(p.targetDuration == 3)
        for s in p.segments { #expect(MediaPlaylist.roundedDuration(s.duration) <= p.targetDuration) }
    }

    @Test func multivariantAttributesFromRealSegments() throws {
        let stream = LiveStream(windowSize: 3, targetDuration: 1)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        #expect(stream.snapshot().multivariant == nil)
        stream.publish(Fixture.liveSegment(payload: 100_000))
        stream.publish(Fixture.liveSegment(payload: 200_000))
        let snap = stream.snapshot()
        let v = try #require(snap.multivariant?.variants.first)
        let sizes = try [0, 1].map { try #require(snap.segmentBytes($0)).readableBytes }
        #expect(v.codecs == "avc1.64001f,mp4a.40.2")
        #expect(v.bandwidth == sizes[1] * 8)                         // peak over 1 s segments
        #expect(v.averageBandwidth == (sizes[0] + sizes[1]) * 8 / 2)
        #expect(v.resolution == .init(width: 1280, height: 720))
        #expect(v.frameRate == 30)                                    // 30 trun samples per 1 s
        #expect(v.uri == "stream.m3u8")
        let text = try #require(snap.multivariantText)
        #expect(text.contains("CODECS=\"avc1.64001f,mp4a.40.2\",RESOLUTION=1280x720,FRAME-RATE=30.000\nstream.m3u8\n"))
    }

    @Test func frameRateFallsBackToTheDeclaredRate() throws {
        let stream = LiveStream(windowSize: 3, targetDuration: 1)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks, frameRate: 25)
        stream.publish(LiveSegment(bytes: [0, 0, 0, 8] + Array("mdat".utf8), duration: .seconds(1, timescale: 90_000),
                                   programDateTime: WallClock(millisecondsSince1970: 0)))
        #expect(stream.snapshot().multivariant?.variants.first?.frameRate == 25)
    }

    @Test func producerSuppliedFrameCountAndTargetDuration() throws {
        let stream = LiveStream(windowSize: 3)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks, targetDuration: 4)
        var seg = Fixture.liveSegment(seconds: 2)   // trun says 60 samples
        seg.videoFrames = 50                         // the producer knows better: 25 fps
        stream.publish(seg)
        let snap = stream.snapshot()
        #expect(snap.multivariant?.variants.first?.frameRate == 25)
        #expect(snap.playlist?.targetDuration == 4)
        #expect(stream.targetDuration == 4)
        #expect(snap.segmentCount == 1)
    }

    @Test func fragmentInspectorIsDefensive() {
        #expect(FragmentInspector.sampleCounts(in: Fixture.segment(videoSamples: 31, audioSamples: 48)) == [1: 31, 2: 48])
        #expect(FragmentInspector.sampleCounts(in: []) == [:])
        #expect(FragmentInspector.sampleCounts(in: [0, 0, 0, 200, 0x6D, 0x6F, 0x6F, 0x66, 1, 2]) == [:])
        var rng = SplitMix64(seed: 3)
        let good = Fixture.segment(videoSamples: 30)
        for _ in 0..<2000 {  // random corruption and truncation never crash
            var b = good
            for _ in 0..<4 { b[Int.random(in: 0..<b.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            _ = FragmentInspector.sampleCounts(in: Array(b.prefix(Int.random(in: 0...b.count, using: &rng))))
        }
    }

    @Test func waitForFirstSegment() async throws {
        let stream = LiveStream(windowSize: 3, targetDuration: 1)
        #expect(await stream.waitForFirstSegment(timeout: .milliseconds(50)) == false)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        async let waited = stream.waitForFirstSegment(timeout: .seconds(10))
        try await Task.sleep(for: .milliseconds(50))
        let start = ContinuousClock.now
        stream.publish(Fixture.liveSegment())
        #expect(await waited == true)
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(await stream.waitForFirstSegment(timeout: .zero) == true)
    }

    @Test func concurrentReadersSeeMonotonicMediaSequence() async throws {
        let stream = LiveStream(windowSize: 6, targetDuration: 1)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        let total = 10_000
        let segment = Fixture.liveSegment(payload: 64)
        let readersStarted = StartedCounter()
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                // Start publishing once the readers run, and let them in now and then (2 cores, parallel tests).
                while readersStarted.value.load(ordering: .acquiring) < 3 { await Task.yield() }
                for i in 0..<total {
                    stream.publish(segment)
                    if i % 64 == 0 { await Task.yield() }
                }
                stream.finish()
                return 0
            }
            for _ in 0..<3 {
                group.addTask {
                    readersStarted.value.add(1, ordering: .releasing)
                    var last: UInt64 = 0
                    var reads = 0
                    while true {
                        let s = stream.snapshot()
                        #expect(s.mediaSequence >= last)
                        #expect(s.window.count <= 6)
                        if let p = s.playlist {
                            #expect(p.mediaSequence == s.mediaSequence)
                            #expect(p.segments.first?.sequence == s.mediaSequence)
                        }
                        last = s.mediaSequence
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
        #expect(stream.snapshot().mediaSequence == UInt64(total - 6))
        #expect(stream.snapshot().nextSequence == UInt64(total))
    }
}


/// Counts reader tasks that have started (shared across the task group).
final class StartedCounter: Sendable {
    let value = Atomic<Int>(0)
}
