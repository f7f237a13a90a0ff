import Foundation
import HLS
import Hummingbird
import HummingbirdTesting
import MediaCore
import Testing
import MediaPresentation
@testable import Origin

/// How a live window stores what LL-HLS publishes: a segment made of its parts shares their buffers, and once it has
/// left the playlist it and its parts are ranges of its memory file (issue 25 §4). The protocol (parts, blocking
/// reloads) is `LowLatencyTests`, whose stream helpers these use.
@Suite struct PartStorageTests {
    @Test func aSegmentMadeOfItsPartsSharesTheirBuffers() throws {
        let stream = LowLatencyTests.makeStream(segments: 1)
        LowLatencyTests.publishParts(stream, 2)
        // A segment whose producer names no parts: its own bytes; the parts keep theirs.
        stream.publish(LiveSegment(bytes: [9, 9, 9], duration: .seconds(1, timescale: 90_000),
                                   programDateTime: WallClock(millisecondsSince1970: LowLatencyTests.t0)))
        #expect(stream.partBytes(1, 0).map { Array($0.readableBytesView) } == LowLatencyTests.partBytes(1, 0))
        #expect(stream.partBytes(1, 1).map { Array($0.readableBytesView) } == LowLatencyTests.partBytes(1, 1))
        #expect(stream.partBytes(1, 2) == nil)
        #expect(stream.segmentBytes(1).map { Array($0.readableBytesView) } == [9, 9, 9])
        // A segment that is its parts in turn (`partRanges`, as the segmenter makes it): served from the parts'
        // buffers, the same storage, not a copy.
        LowLatencyTests.publishParts(stream, 3)
        let parts = (0..<3).map { LowLatencyTests.partBytes(2, $0) }
        var ranges: [Range<Int>] = []
        for p in parts { ranges.append((ranges.last?.upperBound ?? 0)..<((ranges.last?.upperBound ?? 0) + p.count)) }
        stream.publish(LiveSegment(bytes: parts.flatMap { $0 }, duration: .seconds(1, timescale: 90_000),
                                   programDateTime: WallClock(millisecondsSince1970: LowLatencyTests.t0 + 2000), partRanges: ranges))
        let segment = try #require(stream.snapshot().segment(2)?.payload.body)
        #expect(Array(segment.joined.readableBytesView) == parts.flatMap { $0 })
        #expect(segment.chunks.count == 3)
        for i in 0..<3 {
            let part = try #require(stream.snapshot().part(2, i)?.payload.body.chunks.first)
            #expect(part.withUnsafeReadableBytes { a in segment.chunks[i].withUnsafeReadableBytes { $0.baseAddress == a.baseAddress } })
        }
    }

    /// Publishes 3 parts and the segment that is them in turn (`partRanges`, as the segmenter makes it).
    static func publishTiledSegment(_ stream: TestStream) {
        let seq = stream.snapshot().nextSequence
        LowLatencyTests.publishParts(stream, 3)
        let parts = (0..<3).map { LowLatencyTests.partBytes(seq, $0) }
        var ranges: [Range<Int>] = []
        for p in parts { ranges.append((ranges.last?.upperBound ?? 0)..<((ranges.last?.upperBound ?? 0) + p.count)) }
        stream.publish(LiveSegment(bytes: parts.flatMap { $0 }, duration: .seconds(1, timescale: 90_000),
                                   programDateTime: WallClock(millisecondsSince1970: LowLatencyTests.t0 + Int64(seq) * 1000),
                                   partRanges: ranges))
    }

    /// Issue 25 §4: a segment that has left the playlist is kept for its RFC 8216 §6.2.2 time in its memory file
    /// only (its parts as ranges of it): the same bytes, whole, by range and part by part, on the router and over a
    /// real socket (the fast path's `sendfile` of a range); a segment not made of its parts keeps them as they are.
    @Test func anEvictedSegmentAndItsPartsAreServedFromItsMemoryFile() async throws {
        let stream = TestStream(windowSize: 2, targetDuration: 1, partTarget: LowLatencyTests.partTarget)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        for _ in 0..<4 { Self.publishTiledSegment(stream) }
        let snap = stream.snapshot()
        #expect(snap.retained.map(\.sequence) == [0, 1])
        for r in snap.retained {
            #expect(r.payload.body.fileRange?.range == 0..<306)
            #expect(r.parts.map { $0.payload.body.fileRange?.range } == [0..<102, 102..<204, 204..<306])
        }
        #expect(snap.segment(3)?.payload.body.fileRange == nil)
        let whole = (0..<3).flatMap { LowLatencyTests.partBytes(0, $0) }
        for mode in [TestingSetup.router, .live] {
            try await LowLatencyTests.makeServer(stream).makeApplication().test(mode) { client in
                let seg = try await client.execute(uri: "/seg0.m4s", method: .get)
                #expect(seg.status == .ok)
                #expect(Array(seg.body.readableBytesView) == whole)
                #expect(seg.headers[.contentLength] == "306")
                for i in 0..<3 {
                    let part = try await client.execute(uri: "/seg0.\(i).m4s", method: .get)
                    #expect(part.status == .ok)
                    #expect(Array(part.body.readableBytesView) == LowLatencyTests.partBytes(0, i), "part \(i), \(mode)")
                }
                let range = try await client.execute(uri: "/seg1.m4s", method: .get, headers: [.range: "bytes=100-209"])
                #expect(range.status == .partialContent)
                #expect(Array(range.body.readableBytesView) == Array((0..<3).flatMap { LowLatencyTests.partBytes(1, $0) }[100...209]))
                let head = try await client.execute(uri: "/seg1.m4s", method: .head)
                #expect(head.headers[.contentLength] == "306" && head.body.readableBytes == 0)
            }
        }
        // Parts the segment was not made of (AES-128 seals them apart): kept as they were.
        let apart = TestStream(windowSize: 1, targetDuration: 1, partTarget: LowLatencyTests.partTarget)
        apart.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        LowLatencyTests.publishParts(apart, 3)
        apart.publish(LiveSegment(bytes: [9, 9, 9], duration: .seconds(1, timescale: 90_000),
                                  programDateTime: WallClock(millisecondsSince1970: LowLatencyTests.t0)))
        Self.publishTiledSegment(apart)
        let kept = try #require(apart.snapshot().retained.first)
        #expect(kept.payload.body.fileRange == nil && kept.parts.allSatisfy { $0.payload.body.fileRange == nil })
        #expect(apart.partBytes(0, 1).map { Array($0.readableBytesView) } == LowLatencyTests.partBytes(0, 1))
    }
}
