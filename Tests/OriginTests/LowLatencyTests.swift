import Foundation
import HLS
import Hummingbird
import HummingbirdTesting
import Logging
import MediaCore
import Synchronization
import Testing
import MediaPresentation
@testable import Origin

/// LL-HLS: parts, blocking playlist reload, preload-hint part requests.
/// Serialized: several tests measure how fast a blocked request is released (< 100 ms), which the suite's own
/// 50- and 200-waiter tests running alongside on 2 cores would blur.
@Suite(.serialized) struct LowLatencyTests {
    static let partDuration = MediaTime(value: 30_000, timescale: 90_000)  // 1/3 s
    /// The stream's fixed PART-TARGET, as the pipeline derives it: 10 frames of 30 fps, up to whole milliseconds.
    static let partTarget = MediaTime(value: 334, timescale: 1000)
    static let t0: Int64 = 1_763_785_226_000

    /// Distinct bytes per part: `[seq, index, …]`.
    static func partBytes(_ seq: UInt64, _ index: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: seq), UInt8(index)] + [UInt8](repeating: 0xCD, count: 100)
    }

    static func publishParts(_ stream: TestStream, _ count: Int) {
        let seq = stream.snapshot().nextSequence
        let have = stream.snapshot().partial.count
        for i in have..<have + count {
            stream.publishPart(LivePart(bytes: partBytes(seq, i), duration: partDuration, independent: i == 0))
        }
    }

    /// Publishes the rest of the parts (up to 3) and the full segment (`styp` + parts).
    static func publishSegment(_ stream: TestStream) {
        let seq = stream.snapshot().nextSequence
        publishParts(stream, 3 - stream.snapshot().partial.count)
        let bytes = Fixture.box("styp", Array("msdh".utf8) + [0, 0, 0, 0]) + (0..<3).flatMap { partBytes(seq, $0) }
        stream.publish(LiveSegment(bytes: bytes, duration: .seconds(1, timescale: 90_000),
                                   programDateTime: WallClock(millisecondsSince1970: t0 + Int64(seq) * 1000),
                                   videoFrames: 30))
    }

    static func makeStream(segments: Int, windowSize: Int = 6) -> TestStream {
        let stream = TestStream(windowSize: windowSize, targetDuration: 1, partTarget: partTarget)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        for _ in 0..<segments { publishSegment(stream) }
        return stream
    }

    static func makeServer(_ stream: TestStream, reload: Duration = .seconds(3), partWait: Duration = .seconds(1))
        -> OriginServer {
        var logger = Logger(label: "ll-test")
        logger.logLevel = .warning
        return stream.server(configuration: .init(port: 0, firstSegmentWait: .milliseconds(100),
                                                 blockingReloadTimeout: reload, partWait: partWait),
                            logger: logger)
    }

    // MARK: Playlist

    @Test func llPlaylistGolden() throws {
        let stream = Self.makeStream(segments: 4)
        Self.publishParts(stream, 2)
        let text = try #require(stream.mediaPlaylistText)
        // Parts for segments starting within 3 s of the end (0.666 s in progress + seg3 + seg2 = 2.666 s;
        // seg1 would reach 3.666 s), the 2 parts of seg4 in progress, then the hint for seg4.2.
        #expect(text == """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:1
            #EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.002,HOLD-BACK=3.0,CAN-SKIP-UNTIL=6.0,CAN-SKIP-DATERANGES=YES
            #EXT-X-PART-INF:PART-TARGET=0.334
            #EXT-X-MEDIA-SEQUENCE:0
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MAP:URI="init.mp4"
            #EXT-X-PROGRAM-DATE-TIME:2025-11-22T04:20:26.000Z
            #EXTINF:1.0,
            seg0.m4s
            #EXT-X-PROGRAM-DATE-TIME:2025-11-22T04:20:27.000Z
            #EXTINF:1.0,
            seg1.m4s
            #EXT-X-PROGRAM-DATE-TIME:2025-11-22T04:20:28.000Z
            #EXT-X-PART:DURATION=0.333333,URI="seg2.0.m4s",INDEPENDENT=YES
            #EXT-X-PART:DURATION=0.333333,URI="seg2.1.m4s"
            #EXT-X-PART:DURATION=0.333333,URI="seg2.2.m4s"
            #EXTINF:1.0,
            seg2.m4s
            #EXT-X-PROGRAM-DATE-TIME:2025-11-22T04:20:29.000Z
            #EXT-X-PART:DURATION=0.333333,URI="seg3.0.m4s",INDEPENDENT=YES
            #EXT-X-PART:DURATION=0.333333,URI="seg3.1.m4s"
            #EXT-X-PART:DURATION=0.333333,URI="seg3.2.m4s"
            #EXTINF:1.0,
            seg3.m4s
            #EXT-X-PART:DURATION=0.333333,URI="seg4.0.m4s",INDEPENDENT=YES
            #EXT-X-PART:DURATION=0.333333,URI="seg4.1.m4s"
            #EXT-X-PRELOAD-HINT:TYPE=PART,URI="seg4.2.m4s"

            """)
        // Round trip through the parser.
        let parsed = try MediaPlaylist.parse(text)
        #expect(parsed.serverControl?.canBlockReload == true)
        #expect(parsed.trailingParts.count == 2)
        #expect(parsed.preloadHint?.uri == "seg4.2.m4s")
        #expect(try #require(parsed.serverControl?.partHoldBack) >= MediaTime(value: 3 * 333_334, timescale: 1_000_000))
    }

    @Test func partsTrimmedBeyondThreeTargetDurations() throws {
        let stream = Self.makeStream(segments: 8)
        // No part in progress: seg7, seg6, seg5 start 1, 2, 3 s from the end.
        var p = try MediaPlaylist.parse(try #require(stream.mediaPlaylistText))
        #expect(p.segments.filter { !$0.parts.isEmpty }.map(\.sequence) == [5, 6, 7])
        #expect(p.trailingParts.isEmpty && p.preloadHint?.uri == "seg8.0.m4s")
        Self.publishParts(stream, 1)
        p = try MediaPlaylist.parse(try #require(stream.mediaPlaylistText))
        #expect(p.segments.filter { !$0.parts.isEmpty }.map(\.sequence) == [6, 7])
        #expect(p.trailingParts.map(\.uri) == ["seg8.0.m4s"])
        // Every listed part is within 3 target durations (+ one part) of the end.
        var fromEnd: Int64 = p.trailingParts.reduce(0) { $0 + $1.duration.converted(to: 1_000_000).value }
        for s in p.segments.reversed() {
            fromEnd += s.duration.converted(to: 1_000_000).value
            if !s.parts.isEmpty { #expect(fromEnd <= 3_000_000) }
        }
        // Parts of a segment still in the window remain servable although no longer listed.
        #expect(stream.partBytes(3, 1).map { Array($0.readableBytesView) } == Self.partBytes(3, 1))
    }

    /// PART-TARGET and PART-HOLD-BACK are the stream's policy, the same in every reload (Apple's player stops when
    /// they change), and no listed part exceeds PART-TARGET (RFC 8216bis §4.4.4.9).
    @Test func partTargetIsTheStreamsFixedPolicy() throws {
        let stream = Self.makeStream(segments: 1)
        var seen: [MediaPlaylist] = []
        for _ in 0..<4 {
            Self.publishParts(stream, 1)
            seen.append(try MediaPlaylist.parse(try #require(stream.mediaPlaylistText)))
        }
        for p in seen {
            #expect(p.partTarget == MediaTime(value: 334_000, timescale: 1_000_000))
            #expect(p.serverControl?.partHoldBack == MediaTime(value: 1_002_000, timescale: 1_000_000))
            for part in p.trailingParts + p.segments.flatMap(\.parts) { #expect(part.duration <= p.partTarget!) }
        }
    }

    @Test func standardStreamIgnoresPartsAndDirectives() async throws {
        let stream = TestStream(windowSize: 3, targetDuration: 1)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        stream.publishPart(LivePart(bytes: [1, 2], duration: Self.partDuration, independent: true))
        stream.publish(Fixture.liveSegment())
        let text = try #require(stream.mediaPlaylistText)
        #expect(!text.contains("EXT-X-PART") && !text.contains("SERVER-CONTROL") && !text.contains("PRELOAD-HINT"))
        let server = Self.makeServer(stream)
        try await server.makeApplication().test(.router) { client in
            let start = ContinuousClock.now
            let r = try await client.execute(uri: "/stream.m3u8?_HLS_msn=1&_HLS_part=0", method: .get)
            #expect(r.status == .ok)
            #expect(ContinuousClock.now - start < .milliseconds(500))
            #expect(try await client.execute(uri: "/seg1.0.m4s", method: .get).status == .notFound)
            let page = String(buffer: try await client.execute(uri: "/", method: .get).body)
            #expect(page.contains("const LOW_LATENCY_DEFAULT = false;"))
        }
    }

    @Test func playerPageDefaultsToLowLatencyForLLStreams() async throws {
        let server = Self.makeServer(Self.makeStream(segments: 1))
        try await server.makeApplication().test(.router) { client in
            let page = String(buffer: try await client.execute(uri: "/", method: .get).body)
            #expect(page.contains("const LOW_LATENCY_DEFAULT = true;"))
            #expect(page.contains("params.has('lowLatency') ? params.get('lowLatency') === '1' : LOW_LATENCY_DEFAULT"))
            #expect(page.contains("id=\"mode\""))
        }
    }

    // MARK: Parts over HTTP

    @Test func partsAreServedAsISOSegments() async throws {
        let stream = Self.makeStream(segments: 2)
        Self.publishParts(stream, 1)
        let server = Self.makeServer(stream, partWait: .seconds(5))
        try await server.makeApplication().test(.router) { client in
            for (seq, i) in [(0, 0), (1, 2), (2, 0)] {
                let r = try await client.execute(uri: "/seg\(seq).\(i).m4s", method: .get)
                #expect(r.status == .ok)
                #expect(r.headers[.contentType] == "video/iso.segment")
                #expect(r.headers[.accessControlAllowOrigin] == "*")
                #expect(Array(r.body.readableBytesView) == Self.partBytes(UInt64(seq), i))
            }
            // Never-existing parts: 404 at once (segment complete, too far ahead, malformed).
            for uri in ["/seg0.3.m4s", "/seg5.0.m4s", "/seg01.0.m4s", "/seg0.01.m4s", "/seg0.-1.m4s", "/seg0..m4s",
                        "/seg0.1.2.m4s"] {
                let start = ContinuousClock.now
                let r = try await client.execute(uri: uri, method: .get)
                #expect(r.status == .notFound || r.status == .badRequest, "\(uri)")
                #expect(ContinuousClock.now - start < .seconds(1), "\(uri)")  // not the 5 s part wait
            }
            // The full segment still works for non-LL clients.
            let full = try await client.execute(uri: "/seg1.m4s", method: .get)
            #expect(Array(full.body.readableBytesView.suffix(3 * 102)) == (0..<3).flatMap { Self.partBytes(1, $0) })
        }
    }

    @Test func preloadHintedPartBlocksThenServes() async throws {
        let stream = Self.makeStream(segments: 2)
        Self.publishParts(stream, 1)
        let server = Self.makeServer(stream, partWait: .seconds(5))
        try await server.makeApplication().test(.router) { client in
            let hint = try MediaPlaylist.parse(try #require(stream.mediaPlaylistText)).preloadHint
            #expect(hint?.uri == "seg2.1.m4s")
            let done = Atomic<Bool>(false)
            async let response = { let r = try await client.execute(uri: "/seg2.1.m4s", method: .get); done.store(true, ordering: .sequentiallyConsistent); return r }()
            try await Task.sleep(for: .milliseconds(200))
            #expect(done.load(ordering: .sequentiallyConsistent) == false)
            let published = ContinuousClock.now
            Self.publishParts(stream, 1)
            let r = try await response
            #expect(ContinuousClock.now - published < .milliseconds(100))
            #expect(r.status == .ok)
            #expect(Array(r.body.readableBytesView) == Self.partBytes(2, 1))
            // A hinted part that never comes: the segment completes with fewer parts → 404.
            async let never = client.execute(uri: "/seg3.3.m4s", method: .get)
            try await Task.sleep(for: .milliseconds(50))
            Self.publishSegment(stream)  // finishes seg2
            Self.publishSegment(stream)  // seg3 with 3 parts (0…2)
            #expect(try await never.status == .notFound)
        }
        #expect(stream.pendingWaiterCount == 0)
    }

    @Test func partWaitTimesOut() async throws {
        let stream = Self.makeStream(segments: 1)
        let server = Self.makeServer(stream, partWait: .milliseconds(100))
        try await server.makeApplication().test(.router) { client in
            let start = ContinuousClock.now
            let r = try await client.execute(uri: "/seg1.0.m4s", method: .get)
            let elapsed = ContinuousClock.now - start
            #expect(r.status == .serviceUnavailable)
            #expect(elapsed >= .milliseconds(100) && elapsed < .seconds(2))
        }
        #expect(stream.pendingWaiterCount == 0)
    }

    // MARK: Blocking playlist reload

    @Test func blockingReloadReturnsRightAfterPublish() async throws {
        let stream = Self.makeStream(segments: 3)
        let server = Self.makeServer(stream)
        try await server.makeApplication().test(.router) { client in
            let done = Atomic<Bool>(false)
            async let response = { let r = try await client.execute(uri: "/stream.m3u8?_HLS_msn=3", method: .get); done.store(true, ordering: .sequentiallyConsistent); return r }()
            try await Task.sleep(for: .milliseconds(150))
            Self.publishParts(stream, 3)  // parts alone do not complete msn 3
            try await Task.sleep(for: .milliseconds(150))
            #expect(done.load(ordering: .sequentiallyConsistent) == false)
            let published = ContinuousClock.now
            Self.publishSegment(stream)
            let r = try await response
            let latency = ContinuousClock.now - published
            #expect(latency < .milliseconds(100), "released \(latency) after publish")
            #expect(r.status == .ok)
            // A delivery directive's answer stays valid: an edge may share it for three target durations.
            #expect(r.headers[.cacheControl] == "public, max-age=3")
            let p = try MediaPlaylist.parse(String(buffer: r.body))
            #expect(p.segments.last?.sequence == 3)
            // Already satisfied: immediate.
            let start = ContinuousClock.now
            #expect(try await client.execute(uri: "/stream.m3u8?_HLS_msn=2&_HLS_skip=YES", method: .get).status == .ok)
            #expect(ContinuousClock.now - start < .seconds(1))  // not the 3 s reload timeout
        }
    }

    @Test func blockingReloadWithPart() async throws {
        let stream = Self.makeStream(segments: 2)
        Self.publishParts(stream, 1)
        let server = Self.makeServer(stream)
        try await server.makeApplication().test(.router) { client in
            let done = Atomic<Bool>(false)
            async let response = { let r = try await client.execute(uri: "/stream.m3u8?_HLS_msn=2&_HLS_part=1", method: .get); done.store(true, ordering: .sequentiallyConsistent); return r }()
            try await Task.sleep(for: .milliseconds(200))
            #expect(done.load(ordering: .sequentiallyConsistent) == false)
            let published = ContinuousClock.now
            Self.publishParts(stream, 1)
            let r = try await response
            #expect(ContinuousClock.now - published < .milliseconds(100))
            let p = try MediaPlaylist.parse(String(buffer: r.body))
            #expect(p.trailingParts.map(\.uri) == ["seg2.0.m4s", "seg2.1.m4s"])
            #expect(p.preloadHint?.uri == "seg2.2.m4s")
            // A part index beyond the segment's last part is satisfied by the segment's completion.
            async let beyond = client.execute(uri: "/stream.m3u8?_HLS_msn=2&_HLS_part=7", method: .get)
            try await Task.sleep(for: .milliseconds(50))
            Self.publishSegment(stream)
            let b = try MediaPlaylist.parse(String(buffer: try await beyond.body))
            #expect(b.segments.last?.sequence == 2)
        }
    }

    @Test func badDirectivesAre400() async throws {
        let stream = Self.makeStream(segments: 2)  // last msn 1, next 2
        let server = Self.makeServer(stream, reload: .milliseconds(100))
        try await server.makeApplication().test(.router) { client in
            for q in ["_HLS_msn=abc", "_HLS_msn=-1", "_HLS_msn=", "_HLS_msn=1.5", "_HLS_part=0", "_HLS_msn=1&_HLS_part=x",
                      "_HLS_msn=4", "_HLS_msn=99999999999999999999"] {
                let r = try await client.execute(uri: "/stream.m3u8?" + q, method: .get)
                #expect(r.status == .badRequest, "\(q)")
                #expect(r.headers[.accessControlAllowOrigin] == "*")
            }
            // msn = last + 2 is allowed (it blocks; here it times out).
            #expect(try await client.execute(uri: "/stream.m3u8?_HLS_msn=3", method: .get).status == .serviceUnavailable)
        }
    }

    @Test func blockingReloadTimesOutWith503() async throws {
        let stream = Self.makeStream(segments: 1)
        let server = Self.makeServer(stream, reload: .milliseconds(150))
        try await server.makeApplication().test(.router) { client in
            let start = ContinuousClock.now
            let r = try await client.execute(uri: "/stream.m3u8?_HLS_msn=1", method: .get)
            let elapsed = ContinuousClock.now - start
            #expect(r.status == .serviceUnavailable)
            #expect(r.headers[.accessControlAllowOrigin] == "*")
            #expect(elapsed >= .milliseconds(150) && elapsed < .seconds(2))
        }
        #expect(stream.pendingWaiterCount == 0)
    }

    @Test func fiftyBlockedRequestsReleasedByOnePublish() async throws {
        let stream = Self.makeStream(segments: 1)
        let server = Self.makeServer(stream, reload: .seconds(10))
        try await server.makeApplication().test(.router) { client in
            try await withThrowingTaskGroup(of: (HTTPResponse.Status, UInt64?).self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let r = try await client.execute(uri: "/stream.m3u8?_HLS_msn=1", method: .get)
                        return (r.status, try? MediaPlaylist.parse(String(buffer: r.body)).segments.last?.sequence)
                    }
                }
                // Wait until all 50 are parked.
                let deadline = ContinuousClock.now + .seconds(5)
                while stream.pendingWaiterCount < 50 && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
                #expect(stream.pendingWaiterCount == 50)
                let published = ContinuousClock.now
                Self.publishSegment(stream)
                var count = 0
                for try await (status, last) in group {
                    #expect(status == .ok)
                    #expect(last == 1)
                    count += 1
                }
                #expect(count == 50)
                #expect(ContinuousClock.now - published < .seconds(1))
            }
        }
        #expect(stream.pendingWaiterCount == 0)
    }

    @Test func finishReleasesBlockers() async throws {
        let stream = Self.makeStream(segments: 2)
        Self.publishParts(stream, 1)
        let server = Self.makeServer(stream, reload: .seconds(10), partWait: .seconds(10))
        try await server.makeApplication().test(.router) { client in
            async let playlist = client.execute(uri: "/stream.m3u8?_HLS_msn=3", method: .get)
            async let part = client.execute(uri: "/seg2.1.m4s", method: .get)
            let deadline = ContinuousClock.now + .seconds(5)
            while stream.pendingWaiterCount < 2 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(stream.pendingWaiterCount == 2)
            let start = ContinuousClock.now
            stream.finish()
            let (pl, pa) = try await (playlist, part)
            #expect(ContinuousClock.now - start < .milliseconds(200))
            #expect(pl.status == .ok)
            let text = String(buffer: pl.body)
            #expect(text.hasSuffix("#EXT-X-ENDLIST\n"))
            #expect(!text.contains("PRELOAD-HINT"))
            #expect(!text.contains("seg2.0.m4s"))  // parts of the unfinished segment are dropped
            #expect(pa.status == .notFound)
        }
        #expect(stream.pendingWaiterCount == 0)
    }

    @Test func cancelledWaitLeavesNoWaiter() async throws {
        let stream = Self.makeStream(segments: 1)
        let task = Task { await stream.window.wait(for: .playlist(msn: 5, part: nil), timeout: .seconds(30)) }
        let deadline = ContinuousClock.now + .seconds(5)
        while stream.pendingWaiterCount < 1 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(stream.pendingWaiterCount == 1)
        let start = ContinuousClock.now
        task.cancel()
        #expect(await task.value == false)
        #expect(ContinuousClock.now - start < .seconds(1))
        #expect(stream.pendingWaiterCount == 0)
        // Many waits racing with publishes: every one returns and none is left behind.
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                group.addTask {
                    let msn = stream.snapshot().nextSequence
                    _ = await stream.window.wait(for: .part(msn: msn, index: i % 3), timeout: .milliseconds(Int64(i % 7) * 20))
                }
            }
            for _ in 0..<10 { Self.publishSegment(stream); await Task.yield() }
        }
        #expect(stream.pendingWaiterCount == 0)
    }
}
