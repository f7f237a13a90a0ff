import HLS
import MediaCore
import Synchronization
import Testing
@testable import MediaPresentation

/// Time-shift windows (`history` + `spill`): what leaves the hot part is replaced by its stand-in, and the
/// playlist still lists it.
@Suite struct TimeShiftTests {
    let scheme = URIScheme.root("stream")

    /// Spilled payloads are `[0xFF, low byte of the sequence]`; `refuse` makes the hook answer `nil`.
    final class Spiller: Sendable {
        let refuse = Mutex<Set<UInt64>>([])
        let calls = Mutex<[UInt64]>([])
        var hook: LiveWindow<[UInt8]>.Spill {
            { [self] seg in
                calls.withLock { $0.append(seg.sequence) }
                if refuse.withLock({ $0.contains(seg.sequence) }) { return nil }
                return [0xFF, UInt8(truncatingIfNeeded: seg.sequence)]
            }
        }
    }

    func lowLatencyWindow(hot: Int, history: Int64, spiller: Spiller) -> LiveWindow<[UInt8]> {
        LiveWindow(windowSize: hot, policy: TimingPolicy(targetDuration: 1, partTarget: MediaTime(value: 334, timescale: 1000)),
                   history: .seconds(history, timescale: 1000), spill: spiller.hook)
    }

    /// Publishes segment `n` with three parts.
    func publish(_ w: LiveWindow<[UInt8]>, _ n: UInt64) {
        for i in 0..<3 {
            w.publishPart(Fixture.part(n, i), [UInt8](repeating: UInt8(i), count: 300))
        }
        w.publishSegment(Fixture.info(n), [UInt8](repeating: UInt8(truncatingIfNeeded: n), count: 1000))
    }

    @Test func segmentsBeyondTheHotWindowAreSpilledAndStayListed() throws {
        let spiller = Spiller()
        let w = lowLatencyWindow(hot: 3, history: 10, spiller: spiller)
        w.setInit(Fixture.initBytes, digest: Fixture.initBytes, tracks: Fixture.tracks)
        for n in 0..<25 { publish(w, UInt64(n)) }
        let snap = w.snapshot()
        // 10 s of history: 10 one-second segments listed (15 evicted), the newest 3 as published.
        #expect(snap.mediaSequence == 15)
        #expect(snap.window.map(\.sequence) == Array(15..<25))
        for seg in snap.window.dropLast(3) {
            #expect(seg.payload == [0xFF, UInt8(seg.sequence)])
            #expect(seg.parts.isEmpty)
            #expect(seg.info == Fixture.info(seg.sequence))
        }
        for seg in snap.window.suffix(3) {
            #expect(seg.payload == [UInt8](repeating: UInt8(seg.sequence), count: 1000))
            #expect(seg.parts.count == 3)
        }
        // Every segment was spilled once, in order, as it left the hot part.
        #expect(spiller.calls.withLock { $0 } == Array(0..<22))
        #expect(snap.segment(16)?.payload == [0xFF, 16])
        // The playlist lists all ten; parts only near the end.
        let p = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: scheme, playlistType: nil))
        #expect(p.segments.map(\.sequence) == Array(15..<25))
        #expect(p.segments.prefix(7).allSatisfy { $0.parts.isEmpty })
        #expect(p.targetDuration == 1)
        // Evicted (spilled) segments are retained like any other.
        #expect(snap.retained.last?.sequence == 14)
        #expect(snap.segment(14)?.payload == [0xFF, 14])
    }

    @Test func aSegmentThatCannotBeSpilledEndsTheHistory() throws {
        let spiller = Spiller()
        spiller.refuse.withLock { $0 = [8] }
        let w = lowLatencyWindow(hot: 2, history: 100, spiller: spiller)
        w.setInit(Fixture.initBytes, digest: Fixture.initBytes, tracks: Fixture.tracks)
        for n in 0..<10 { publish(w, UInt64(n)) }
        // 8 left the hot part when 10 was... 9 arrived with 8 and 9 hot; 8 leaves at 10. So far all spilled.
        #expect(w.snapshot().window.map(\.sequence) == Array(0..<10))
        publish(w, 10)
        // 8 refused: 0...8 leave the playlist; 9 and 10 stay.
        let snap = w.snapshot()
        #expect(snap.mediaSequence == 9)
        #expect(snap.window.map(\.sequence) == [9, 10])
        #expect(snap.segment(8)?.payload == [UInt8](repeating: 8, count: 1000))
        publish(w, 11)
        #expect(w.snapshot().window.map(\.sequence) == [9, 10, 11])
        #expect(w.snapshot().window[0].payload == [0xFF, 9])
    }

    /// Thousands of segments across many chunks: every snapshot stays what it was when taken, and lists exactly
    /// the history (by time, with segments of two lengths).
    @Test func longHistoryAcrossChunksKeepsSnapshotsImmutable() throws {
        let spiller = Spiller()
        let w = LiveWindow<[UInt8]>(windowSize: 6, policy: TimingPolicy(targetDuration: 2),
                                    history: .seconds(900, timescale: 1), spill: spiller.hook)
        w.setInit(Fixture.initBytes, digest: Fixture.initBytes, tracks: Fixture.tracks)
        var kept: [(WindowSnapshot<[UInt8]>, [UInt64])] = []
        var start: Int64 = 0
        for n in 0..<3000 {
            let seconds: Int64 = n % 3 == 0 ? 2 : 1
            w.publishSegment(SegmentInfo(sequence: UInt64(n), startTime: .seconds(start, timescale: 90_000),
                                         duration: .seconds(seconds, timescale: 90_000), byteCount: 10),
                             [UInt8](repeating: 1, count: 10))
            start += seconds
            let snap = w.snapshot()
            let total = snap.window.reduce(Int64(0)) { $0 + $1.info.duration.value / 90_000 }
            // At least the history once it is reached; never one segment more than needed.
            if start >= 900 {
                #expect(total >= 900)
                #expect(total - (snap.window.first!.info.duration.value / 90_000) < 900)
            }
            #expect(snap.window.first?.sequence == snap.mediaSequence)
            if n % 257 == 0 { kept.append((snap, snap.window.map(\.sequence))) }
        }
        for (snap, sequences) in kept {
            #expect(snap.window.map(\.sequence) == sequences)
            #expect(sequences == Array(sequences.first!...sequences.last!))
        }
        let snap = w.snapshot()
        #expect(snap.window.dropLast(6).allSatisfy { $0.payload == [0xFF, UInt8(truncatingIfNeeded: $0.sequence)] })
        #expect(snap.targetDuration == 2)
    }

    @Test func targetDurationFollowsTheListedSegments() throws {
        let feed = Feed(LiveWindow(windowSize: 2))
        feed.segment(seconds: 3)
        feed.segment()
        #expect(feed.window.snapshot().targetDuration == 3)
        feed.segment()
        #expect(feed.window.snapshot().targetDuration == 1)
    }
}
