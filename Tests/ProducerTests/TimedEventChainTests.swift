import MediaCore
import MediaPresentation
import Producer
import Testing

/// Timed events through the chain: placed once on the output timeline and the PDT clock, before the segment they
/// start in; a splice is a segment boundary.
@Suite struct TimedEventChainTests {
    @Test func aSpliceIsPlacedAndStartsASegment() throws {
        let out = Recorded()
        var c = ProducerChainTests.chain(out, parts: false)
        let offset: Int64 = 900_000  // the input clock starts at 10 s
        let all = events(seconds: 5, gop: 15, offset: offset)
        let splice = TimedEvent(id: "splice-1", kind: .spliceOut, time: .input(MediaTime(value: offset + 225_000, timescale: 90_000)),
                                plannedDuration: .seconds(1, timescale: 90_000), section: [0xFC])
        for (i, e) in all.enumerated() {
            if i == all.count / 5 { try c.accept(.event(splice)) }  // a second in: the cue comes ahead of its splice
            try c.accept(e)
        }
        try c.finish()
        let events = out.all
        let placed = events.compactMap { if case .event(let e) = $0 { e } else { nil } }
        #expect(placed.count == 1)
        let e = try #require(placed.first)
        #expect(e.id == "splice-1" && e.kind == .spliceOut && e.section == [0xFC])
        #expect(e.mediaTime == MediaTime(value: 225_000, timescale: 90_000))
        // Sent right before the segment that starts at the splice; START-DATE is that segment's date.
        let i = try #require(events.firstIndex { if case .event = $0 { true } else { false } })
        guard case .segment(_, let info, _) = events[i + 1] else { Issue.record("no segment after the event"); return }
        #expect(info.startTime == MediaTime(value: 225_000, timescale: 90_000))
        #expect(info.programDateTime == e.startDate)
        // The segments either side are half a second; none is longer than one.
        let segs = out.segments
        #expect(segs.contains { $0.startTime.value == 180_000 && $0.duration.value == 45_000 })
        #expect(segs.dropLast().allSatisfy { $0.duration <= .seconds(1, timescale: 90_000) })
    }

    @Test func aTimeSignalIsPlacedWithoutACut() throws {
        let out = Recorded()
        var c = ProducerChainTests.chain(out, parts: false)
        let all = events(seconds: 4, gop: 15)
        let signal = TimedEvent(id: "s", kind: .timeSignal, time: .input(MediaTime(value: 225_000, timescale: 90_000)), section: [1])
        for (i, e) in all.enumerated() {
            if i == all.count / 4 { try c.accept(.event(signal)) }
            try c.accept(e)
        }
        try c.finish()
        #expect(out.segments.dropLast().allSatisfy { $0.duration == .seconds(1, timescale: 90_000) })
        let placed = out.all.compactMap { if case .event(let e) = $0 { e } else { nil } }
        #expect(placed.map(\.mediaTime) == [MediaTime(value: 225_000, timescale: 90_000)])
    }
}
