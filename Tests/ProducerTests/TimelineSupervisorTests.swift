import MediaCore
import Producer
import Segmenter
import Testing

/// `TimelineSupervisor`: one timeline through codec changes, timestamp jumps and reconnects, on its own.
@Suite struct TimelineSupervisorTests {
    static func make(parts: Bool = false) -> TimelineSupervisor {
        TimelineSupervisor(groups: [[0, 1]], trackCount: 2, segmentDuration: .seconds(1),
                           partDuration: parts ? MediaTime(value: 333, timescale: 1000) : nil, logger: quiet)
    }

    /// Feeds `seconds` of A+V from second `from` (video timestamps shifted by `offset` ticks).
    static func feed(_ s: inout TimelineSupervisor, seconds: Int, from: Int = 0, offset: Int64 = 0) throws -> [TimelineSupervisor.Output] {
        var out: [TimelineSupervisor.Output] = []
        for e in events(seconds: seconds, from: from, offset: offset, formats: false) {
            guard case .samples(let t, let samples, let w) = e else { continue }
            for x in samples { out += try s.accept(x, track: t, wallClock: w) }
        }
        return out
    }

    static func segments(_ out: [TimelineSupervisor.Output]) -> [Segment] {
        out.compactMap { if case .segment(let s) = $0, s.group == 0 { s } else { nil } }
    }
    static func initCount(_ out: [TimelineSupervisor.Output]) -> Int {
        out.filter { if case .inits = $0 { true } else { false } }.count
    }

    /// tfdt[n+1] == tfdt[n] + duration[n] across every discontinuity: the timeline continues.
    static func expectContinuous(_ segs: [Segment]) {
        for (a, b) in zip(segs, segs.dropFirst()) {
            #expect(b.sequence == a.sequence + 1)
            #expect(b.startTime == a.startTime + a.duration, "segment \(b.sequence) at \(b.startTime)")
        }
    }

    @Test func startMakesTheSegmenterAndItsInits() throws {
        var s = Self.make()
        let inits = try s.start([video, audio])
        guard case .inits(let list)? = inits.first else { Issue.record("\(inits)"); return }
        #expect(list.count == 1 && list[0].tracks == [video, audio])
        var out = try Self.feed(&s, seconds: 3)
        out += try s.finish()
        let segs = Self.segments(out)
        #expect(segs.count == 3 && segs.allSatisfy { !$0.discontinuity })
        Self.expectContinuous(segs)
    }

    @Test func anHourForwardThenBackIsTwoDiscontinuitiesOnOneTimeline() throws {
        var s = Self.make()
        _ = try s.start([video, audio])
        var out = try Self.feed(&s, seconds: 3)
        out += try Self.feed(&s, seconds: 3, from: 3600)
        out += try Self.feed(&s, seconds: 3, from: 10)
        out += try s.finish()
        let segs = Self.segments(out)
        #expect(segs.count == 9)
        #expect(segs.map(\.discontinuity) == [false, false, false, true, false, false, true, false, false])
        #expect(segs.allSatisfy { $0.duration <= MediaTime.seconds(1, timescale: 90_000) }, "no segment spans a jump")
        #expect(Self.initCount(out) == 2, "a jump keeps the formats: inits again (same bytes: no new URI), per segmenter")
        Self.expectContinuous(segs)
    }

    @Test func aCodecChangeMakesNewInitsAtTheNextSample() throws {
        var s = Self.make()
        _ = try s.start([video, audio])
        var out = try Self.feed(&s, seconds: 2)
        var changed = video
        changed.codec = .h264(avcC: avcB)
        s.formatChange(track: 0, [changed, audio])
        out += try Self.feed(&s, seconds: 2, from: 2)
        out += try s.finish()
        let segs = Self.segments(out)
        #expect(segs.map(\.discontinuity) == [false, false, true, false])
        let lastInits = out.compactMap { if case .inits(let l) = $0 { l } else { nil } }.last
        #expect(lastInits?.first?.tracks == [changed, audio])
        Self.expectContinuous(segs)
    }

    @Test func theSameFormatAnnouncedAgainChangesNothing() throws {
        var s = Self.make()
        _ = try s.start([video, audio])
        var out = try Self.feed(&s, seconds: 1)
        s.formatChange(track: 0, [video, audio])
        out += try Self.feed(&s, seconds: 2, from: 1)
        out += try s.finish()
        #expect(Self.segments(out).allSatisfy { !$0.discontinuity } && Self.initCount(out) == 0)
    }

    @Test func aReconnectEndsTheSegmentAndTheNextConnectionContinues() throws {
        var s = Self.make(parts: true)
        _ = try s.start([video, audio])
        var out = try Self.feed(&s, seconds: 2)
        out += try Self.feed(&s, seconds: 1, from: 2)   // the third segment is in progress (no keyframe at 3 s yet)
        let before = Self.segments(out + (try s.reconnect()))
        #expect(!s.isRunning)
        #expect(try s.accept(frame(0), track: 0, wallClock: nil).isEmpty, "nothing runs until the next connection starts")
        // The next connection's timestamps start from zero again.
        out = try s.start([video, audio])
        out += try Self.feed(&s, seconds: 2)
        out += try s.finish()
        let after = Self.segments(out)
        #expect(after.first?.discontinuity == true)
        Self.expectContinuous(before + after)
    }
}
