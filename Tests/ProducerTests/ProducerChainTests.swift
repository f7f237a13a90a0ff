import MediaCore
import MediaPresentation
import Producer
import Testing

/// `ProducerChain`: the stages together, as `SamplePublisher` and the pipeline use them.
@Suite struct ProducerChainTests {
    static func chain(_ out: Recorded, keyframes: TimingPlanner.Keyframes? = .onGrid, parts: Bool = true) -> ProducerChain {
        ProducerChain(plan: .muxed(trackCount: 2), kinds: [.video, .audio],
                      settings: .init(segmentDuration: .seconds(1), partDuration: parts ? MediaTime(value: 333, timescale: 1000) : nil,
                                      keyframes: keyframes),
                      output: out, logger: quiet)
    }

    @Test func announcesTheLayoutOnceThenInitsPartsSegmentsAndTheEnd() throws {
        let out = Recorded()
        var c = Self.chain(out)
        for e in events(seconds: 3) { try c.accept(e) }
        try c.finish()
        let all = out.all
        guard case .layout(let renditions, let policy)? = all.first else { Issue.record("\(all.prefix(2))"); return }
        #expect(renditions.map(\.name) == ["stream"])
        #expect(policy.targetDuration == 1 && policy.partTarget == MediaTime(value: 334, timescale: 1000))
        #expect(all.filter { if case .layout = $0 { true } else { false } }.count == 1)
        guard case .initSegment? = all.dropFirst().first else { Issue.record("an init segment before any part"); return }
        #expect(out.segments.count == 3 && out.ended)
        // Every part of a segment before the segment.
        var parts = 0
        for e in all {
            if case .part = e { parts += 1 }
            if case .segment(_, let info, _) = e { #expect(parts == info.partRanges.count); parts = 0 }
        }
    }

    @Test func copiedLiveVideoAnnouncesTheTargetItsFirstGOPNeeds() throws {
        let out = Recorded()
        var c = Self.chain(out, keyframes: nil, parts: false)
        for e in events(seconds: 8, gop: 60) { try c.accept(e) }
        try c.finish()
        #expect(out.policy?.targetDuration == 2)
        #expect(out.segments.count == 4)
    }

    @Test func aReconnectContinuesNumberingAndTimelineAfterADiscontinuity() throws {
        let out = Recorded()
        var c = Self.chain(out, parts: false)
        for e in events(seconds: 3) { try c.accept(e) }
        try c.reconnect()
        for e in events(seconds: 3) { try c.accept(e) }   // the new connection's clock starts at zero again
        try c.finish()
        let segs = out.segments
        #expect(segs.map(\.sequence) == Array(0..<UInt64(segs.count)))
        #expect(segs.filter(\.discontinuity).count == 1)
        for (a, b) in zip(segs, segs.dropFirst()) { #expect(b.startTime == a.startTime + a.duration) }
        // The next connection's segmenter announces its init segments again: the same bytes, which a window keeps as one.
        let inits = out.all.compactMap { if case .initSegment(0, let b, _) = $0 { b } else { nil } }
        #expect(inits.count == 2 && Set(inits).count == 1)
    }

    @Test func anInputThatEndsBeforeItsFormatsAreKnownNeverStarts() throws {
        let out = Recorded()
        var c = Self.chain(out)
        try c.accept(.format(track: 0, video))
        try c.accept(.samples(track: 0, [frame(0)], wallClock: nil))
        try c.finish()
        #expect(!c.started && out.all.isEmpty)
    }
}
