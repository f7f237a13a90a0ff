import MediaCore
import Producer
import Testing

/// `FormatGate`: the chain's first stage, on its own.
@Suite struct FormatGateTests {
    static func starts(_ out: [FormatGate.Output]) -> [(formats: [TrackFormat], frames: [Int64?], gop: MediaTime?, resuming: Bool)] {
        out.compactMap { if case .start(let f, let d, let g, let r) = $0 { (f, d, g, r) } else { nil } }
    }
    static func samples(_ out: [FormatGate.Output]) -> [(Int, Sample)] {
        out.compactMap { if case .sample(let t, let s, _) = $0 { (t, s) } else { nil } }
    }

    @Test func holdsUntilEveryFormatIsKnownThenReleasesInOrder() throws {
        var gate = FormatGate(kinds: [.video, .audio], measureGOP: false)
        #expect(try gate.accept(.format(track: 0, video)).isEmpty)
        #expect(try gate.accept(.samples(track: 0, [frame(0), frame(1)], wallClock: nil)).isEmpty)
        #expect(try gate.accept(.format(track: 1, audio)).isEmpty, "a format alone does not open the stream")
        let out = try gate.accept(.samples(track: 1, [aac(0)], wallClock: nil))
        let start = try #require(Self.starts(out).first)
        #expect(start.formats == [video, audio] && start.gop == nil && !start.resuming)
        #expect(start.frames == [3000, 1024], "frame durations from the held samples' spacing and hints")
        #expect(Self.samples(out).map(\.0) == [0, 0, 1])
        #expect(gate.isOpen)
        // Open: samples pass straight through.
        #expect(Self.samples(try gate.accept(.samples(track: 0, [frame(2)], wallClock: nil))).count == 1)
    }

    @Test func aNewFormatAfterTheStartIsAChangeTheSameOneIsNot() throws {
        var gate = FormatGate(kinds: [.video], measureGOP: false)
        _ = try gate.accept(.format(track: 0, video))
        _ = try gate.accept(.samples(track: 0, [frame(0)], wallClock: nil))
        #expect(try gate.accept(.format(track: 0, video)).isEmpty)
        var other = video
        other.codec = .h264(avcC: avcB)
        let out = try gate.accept(.format(track: 0, other))
        guard case .formatChange(0, let formats)? = out.first else { Issue.record("\(out)"); return }
        #expect(formats == [other])
    }

    @Test func measuresTheFirstGOPOfCopiedLiveVideo() throws {
        var gate = FormatGate(kinds: [.video], measureGOP: true)
        _ = try gate.accept(.format(track: 0, video))
        for i in 0..<60 { #expect(try gate.accept(.samples(track: 0, [frame(i, gop: 60)], wallClock: nil)).isEmpty) }
        let out = try gate.accept(.samples(track: 0, [frame(60, gop: 60)], wallClock: nil))
        #expect(Self.starts(out).first?.gop == MediaTime(value: 180_000, timescale: 90_000))
        #expect(Self.samples(out).count == 61)
    }

    @Test func givesUpOnASecondKeyframeAfterTenSeconds() throws {
        var gate = FormatGate(kinds: [.video], measureGOP: true)
        _ = try gate.accept(.format(track: 0, video))
        var out: [FormatGate.Output] = []
        var i = 0
        while out.isEmpty && i < 400 {
            out = try gate.accept(.samples(track: 0, [frame(i, gop: 1000)], wallClock: nil))
            i += 1
        }
        #expect(i == 302, "10 s of 30 fps video and one frame more")
        #expect(Self.starts(out).first.map { $0.gop == nil } == true)
    }

    @Test func tooManySamplesWithoutAFormatIsAnError() throws {
        var gate = FormatGate(kinds: [.video, .audio], measureGOP: false)
        _ = try gate.accept(.format(track: 1, audio))
        #expect(throws: ProducerError.self) {
            for i in 0...FormatGate.holdLimit { _ = try gate.accept(.samples(track: 0, [frame(i)], wallClock: nil)) }
        }
    }

    @Test func resumingStartsAtTheNewConnectionsFirstKeyframe() throws {
        var gate = FormatGate(kinds: [.video, .audio], measureGOP: true)
        _ = try gate.accept(.format(track: 0, video))
        _ = try gate.accept(.format(track: 1, audio))
        _ = try gate.accept(.samples(track: 0, [frame(0), frame(1)], wallClock: nil))
        _ = try gate.accept(.samples(track: 0, [frame(30)], wallClock: nil))
        gate.reconnect(resume: true)
        #expect(!gate.isOpen && gate.formats == [nil, nil], "formats come anew with the next connection")
        _ = try gate.accept(.format(track: 0, video))
        _ = try gate.accept(.format(track: 1, audio))
        // The new connection joins mid-GOP: frames 5-9 and audio presented before frame 10's keyframe are dropped.
        #expect(try gate.accept(.samples(track: 1, (0..<30).map { aac($0) }, wallClock: nil)).isEmpty)
        #expect(try gate.accept(.samples(track: 0, (5..<10).map { frame($0) }, wallClock: nil)).isEmpty)
        let out = try gate.accept(.samples(track: 0, [frame(10, gop: 10), frame(11, gop: 10)], wallClock: nil))
        let start = try #require(Self.starts(out).first)
        #expect(start.resuming && start.gop == nil, "no GOP measured when resuming: the timing is the stream's")
        let kept = Self.samples(out)
        #expect(kept.filter { $0.0 == 0 }.map(\.1.dts) == [30_000, 33_000])
        // AAC frames presented at or after 1/3 s (frame 10's keyframe, 16000 ticks of 48 kHz): from frame 16.
        #expect(kept.filter { $0.0 == 1 }.map(\.1.dts) == (16..<30).map { Int64($0) * 1024 })
        #expect(gate.droppedBeforeKeyframe == 5 + 16)
    }

    @Test func finishReleasesWhatIsHeld() throws {
        var gate = FormatGate(kinds: [.video], measureGOP: true)
        _ = try gate.accept(.format(track: 0, video))
        _ = try gate.accept(.samples(track: 0, (0..<10).map { frame($0) }, wallClock: nil))
        let out = gate.finish()
        #expect(Self.starts(out).count == 1 && Self.samples(out).count == 10)
    }
}
