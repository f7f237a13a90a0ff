import MediaCore
import MediaPresentation
import Producer
import Testing

/// Timed events through the chain: placed once on the output timeline and the PDT clock, ahead of the segment they
/// start in; a splice is a segment boundary.
@Suite struct TimedEventChainTests {
    /// The samples as a live input gives them: each arrives at its time on a wall clock (from 2027-01-15).
    static func arriving(_ all: [SourceEvent]) -> [SourceEvent] {
        all.map { e in
            guard case .samples(let track, let samples, _) = e, let first = samples.first else { return e }
            let ms = MediaTime.rescale(first.dts, from: track == 0 ? video.timescale : audio.timescale, to: 1000)
            return .samples(track: track, samples, wallClock: WallClock(millisecondsSince1970: 1_800_000_000_000 + ms))
        }
    }

    @Test func aSpliceIsPlacedAndStartsASegment() throws {
        let out = Recorded()
        var c = ProducerChainTests.chain(out, parts: false)
        let offset: Int64 = 900_000  // the input clock starts at 10 s
        let all = Self.arriving(events(seconds: 5, gop: 15, offset: offset))
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
        // Sent ahead of the splice: with the first segment finished after the cue came (the one ending at 1 s), before
        // any segment at or after the splice. START-DATE is the date of the segment that starts at the splice.
        let i = try #require(events.firstIndex { if case .event = $0 { true } else { false } })
        guard case .segment(_, let next, _) = events[i + 1] else { Issue.record("no segment after the event"); return }
        #expect(next.startTime < MediaTime(value: 225_000, timescale: 90_000))
        let cut = try #require(out.segments.first { $0.startTime == MediaTime(value: 225_000, timescale: 90_000) })
        #expect(cut.programDateTime == e.startDate)
        // The segments either side are half a second; none is longer than one.
        let segs = out.segments
        #expect(segs.contains { $0.startTime.value == 180_000 && $0.duration.value == 45_000 })
        #expect(segs.dropLast().allSatisfy { $0.duration <= .seconds(1, timescale: 90_000) })
    }

    /// Samples with no arrival time: each segment is dated when it is published, so a date ahead cannot be known; the
    /// splice is listed with the segment it starts in, right before it, on that segment's date.
    @Test func withoutArrivalTimesASpliceIsListedWithItsSegment() throws {
        let out = Recorded()
        var c = ProducerChainTests.chain(out, parts: false)
        let all = events(seconds: 5, gop: 15)
        let splice = TimedEvent(id: "s", kind: .spliceOut, time: .input(MediaTime(value: 225_000, timescale: 90_000)), section: [0xFC])
        for (i, e) in all.enumerated() {
            if i == all.count / 5 { try c.accept(.event(splice)) }
            try c.accept(e)
        }
        try c.finish()
        let events = out.all
        let i = try #require(events.firstIndex { if case .event = $0 { true } else { false } })
        guard case .event(let e) = events[i], case .segment(_, let info, _) = events[i + 1] else {
            Issue.record("no segment after the event"); return
        }
        #expect(info.startTime == MediaTime(value: 225_000, timescale: 90_000))
        #expect(info.programDateTime == e.startDate)
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
