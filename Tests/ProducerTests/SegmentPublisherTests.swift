import MediaCore
import MediaPresentation
import Producer
import Segmenter
import Testing

/// `SegmentPublisher`: the segmenter's output as the facts consumers read, and the program date-time rules.
@Suite struct SegmentPublisherTests {
    static let t0: Int64 = 1_763_785_226_000

    /// One-second segments of the reference track, each arriving at `arrivals[n]` (ms since 1970).
    static func segments(arrivals: [Int64]) throws -> [Segment] {
        var seg = try Segmenter(tracks: [video], segmentDuration: .seconds(1))
        var out: [Segment] = []
        for (n, arrival) in arrivals.enumerated() {
            for i in 0..<30 {
                out += try seg.append(frame(n * 30 + i), track: 0, wallClock: WallClock(millisecondsSince1970: arrival + Int64(i) * 33))
            }
        }
        return out + (try seg.finish())
    }

    static func infos(_ p: inout SegmentPublisher, _ segs: [Segment]) -> [SegmentInfo] {
        segs.flatMap { p.events(.segment($0)) }.compactMap { if case .segment(_, let i, _) = $0 { i } else { nil } }
    }

    @Test func programDateTimeAdvancesWithTheMediaNotTheArrivalJitter() throws {
        // Arrivals wobble by ±300 ms around one a second.
        let arrivals = [0, 1300, 1700, 3250, 4000].map { Self.t0 + $0 }
        var p = SegmentPublisher(targetDuration: 1, logger: quiet)
        let infos = Self.infos(&p, try Self.segments(arrivals: arrivals))
        #expect(infos.compactMap { $0.programDateTime?.millisecondsSince1970 } == (0..<5).map { Self.t0 + Int64($0) * 1000 })
    }

    @Test func aStallOfMoreThanFiveSecondsReanchors() throws {
        let arrivals = [0, 1000, 9000, 10000].map { Self.t0 + $0 }
        var p = SegmentPublisher(targetDuration: 1, logger: quiet)
        let dates = Self.infos(&p, try Self.segments(arrivals: arrivals)).compactMap { $0.programDateTime?.millisecondsSince1970 }
        #expect(dates == [Self.t0, Self.t0 + 1000, Self.t0 + 9000, Self.t0 + 10000])
        // After a reconnect the next segment is anchored afresh (it would project 2000 otherwise).
        var q = SegmentPublisher(targetDuration: 1, logger: quiet)
        let segs = try Self.segments(arrivals: [0, 3000].map { Self.t0 + $0 })
        _ = Self.infos(&q, [segs[0]])
        q.reconnected()
        #expect(Self.infos(&q, [segs[1]]).first?.programDateTime?.millisecondsSince1970 == Self.t0 + 3000)
    }

    @Test func aFileReadFasterThanRealTimeIsNeverReanchored() throws {
        // `package` / `--no-realtime`: every segment arrives within 100 ms; the dates still advance by the media.
        let arrivals = (0..<8).map { Self.t0 + Int64($0) * 10 }
        var p = SegmentPublisher(targetDuration: 1, reanchorsOnDrift: false, logger: quiet)
        let dates = Self.infos(&p, try Self.segments(arrivals: arrivals)).compactMap { $0.programDateTime?.millisecondsSince1970 }
        #expect(dates == (0..<8).map { Self.t0 + Int64($0) * 1000 })
        // The same arrivals on a live input: re-anchored once the projection runs 5 s ahead of them.
        var live = SegmentPublisher(targetDuration: 1, logger: quiet)
        let liveDates = Self.infos(&live, try Self.segments(arrivals: arrivals)).compactMap { $0.programDateTime?.millisecondsSince1970 }
        #expect(liveDates != dates)
    }

    /// A daterange listed ahead named its date on the projection: the segments up to `keepsClockThrough` keep it
    /// through a stall.
    @Test func theClockIsKeptThroughAListedBreak() throws {
        let arrivals = [0, 1000, 9000, 10000].map { Self.t0 + $0 }
        var p = SegmentPublisher(targetDuration: 1, logger: quiet)
        p.keepsClockThrough = .seconds(2)
        let dates = Self.infos(&p, try Self.segments(arrivals: arrivals)).compactMap { $0.programDateTime?.millisecondsSince1970 }
        #expect(dates == [Self.t0, Self.t0 + 1000, Self.t0 + 2000, Self.t0 + 10000])
    }

    @Test func epochLockedDatesAreTheSegmentsStartOnTheInputClock() throws {
        var p = SegmentPublisher(targetDuration: 1, epochLocked: true, logger: quiet)
        let infos = Self.infos(&p, try Self.segments(arrivals: [Self.t0, Self.t0 + 5000]))
        #expect(infos.map { $0.programDateTime?.millisecondsSince1970 } == [0, 1000])
    }

    @Test func factsCarryForward() throws {
        var seg = try Segmenter(tracks: [video, audio], segmentDuration: .seconds(1), fragmentDuration: MediaTime(value: 333, timescale: 1000))
        var outputs: [TimelineSupervisor.Output] = []
        for e in events(seconds: 2, formats: false) {
            guard case .samples(let t, let samples, _) = e else { continue }
            for s in samples {
                outputs += try seg.appendEvents(s, track: t).map { e -> TimelineSupervisor.Output in
                    switch e { case .part(let p): .part(p); case .segment(let s): .segment(s) }
                }
            }
        }
        var p = SegmentPublisher(targetDuration: 1, logger: quiet)
        p.arrival = WallClock(millisecondsSince1970: Self.t0)
        let published = outputs.flatMap { p.events($0) }
        let parts = published.compactMap { if case .part(_, let i, let b) = $0, i.segmentSequence == 0 { (i, b) } else { nil } }
        let segments = published.compactMap { if case .segment(_, let i, let b) = $0 { (i, b) } else { nil } }
        #expect(segments.count == 1 && parts.count == 3)
        let (info, bytes) = segments[0]
        #expect(info.byteCount == bytes.count && info.videoSampleCount == 30 && info.startsWithSyncSample)
        #expect(info.partRanges == parts.map { $0.0.offset..<($0.0.offset + $0.0.byteCount) })
        #expect(parts.allSatisfy { $0.0.closedAt?.millisecondsSince1970 == Self.t0 })
        #expect(bytes == MediaBytes(chunks: parts.flatMap(\.1.chunks)), "a segment is its parts in turn")
    }
}
