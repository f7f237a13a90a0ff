import TestSupport
import Testing
@testable import ISOBMFF
@testable import MediaCore
@testable import Segmenter

/// Epoch locking (`TimelineAnchor.inputClock`): segmenters fed the same input from different moments write the same
/// segments and parts under the same numbers (redundant origins).
@Suite struct EpochLockTests {
    /// 2026-11-20T16:53:20Z, the moment both "origins" think it is (give or take the test's own drift).
    static let now = WallClock(millisecondsSince1970: 1_795_193_600_000)
    static let wrap = TimelineAnchor.mpegTSWrap.value

    /// `makeStream` placed on the input clock: video and audio timestamps are UTC modulo the 33-bit wrap, plus
    /// `turns` extra wraps (a demuxer that unwrapped from an earlier start).
    static func stream(seconds: Int, audio: Bool, turns: Int64 = 0, rng: inout SplitMix64) -> [(track: Int, sample: Sample)] {
        // A multiple of 15 ticks of 90 kHz is a whole number of 48 kHz ticks; 0.4 s into a second.
        let base90 = (Int64(now.millisecondsSince1970 / 1000) * 90_000 + 36_000) % wrap + turns * wrap
        let base48 = base90 * 8 / 15
        return makeStream(seconds: seconds, fps: 25, gop: 25, audio: audio, rng: &rng).map { item in
            var s = item.sample
            let add = item.track == 0 ? base90 : base48
            s.dts += add
            s.pts += add
            return (item.track, s)
        }
    }

    static func segment(_ stream: [(track: Int, sample: Sample)], audio: Bool) throws -> (segments: [UInt64: [UInt8]], parts: [String: [UInt8]], slips: Int) {
        var seg = try Segmenter(tracks: audio ? [videoTrack, audioTrack] : [videoTrack], segmentDuration: .seconds(1),
                                fragmentDuration: MediaTime(value: 1, timescale: 3),
                                anchor: .inputClock(now: now, wrap: TimelineAnchor.mpegTSWrap))
        var events: [SegmenterEvent] = []
        for item in stream { events += try seg.appendEvents(item.sample, track: item.track) }
        var segments: [UInt64: [UInt8]] = [:]
        var parts: [String: [UInt8]] = [:]
        for e in events {
            switch e {
            case .segment(let s): segments[s.sequence] = s.bytes.joined
            case .part(let p): parts["\(p.segmentSequence).\(p.index)"] = p.bytes.joined
            }
        }
        return (segments, parts, seg.epochSlips)
    }

    @Test func aLateJoinerWritesTheSameSegmentsAndPartsUnderTheSameNumbers() throws {
        var rng = SplitMix64(seed: 7)
        let input = Self.stream(seconds: 12, audio: true, rng: &rng)
        let early = try Self.segment(input, audio: true)
        // The late one joins 3.5 s in: mid-GOP, and after audio that belongs to the segment it joins.
        let join = input.firstIndex { $0.track == 0 && $0.sample.dts >= input[0].sample.dts + 90_000 * 7 / 2 }!
        let late = try Self.segment(Array(input[join...]), audio: true)

        // Numbers are seconds since 1970 (1-s segments on the grid counted from then).
        let first = early.segments.keys.min()!
        #expect(first >= UInt64(Self.now.millisecondsSince1970 / 1000) && first < UInt64(Self.now.millisecondsSince1970 / 1000) + 3)
        // The late one starts at the first whole segment after its join (the one in progress is incomplete there).
        let lateFirst = late.segments.keys.min()!
        #expect(lateFirst == first + 4)
        #expect(late.segments.count >= 6)
        for (n, bytes) in late.segments {
            #expect(early.segments[n] == bytes, "segment \(n)")
        }
        #expect(late.parts.count >= 18)
        for (name, bytes) in late.parts {
            #expect(early.parts[name] == bytes, "part \(name)")
        }
        #expect(early.slips == 0 && late.slips == 0)
        // tfdt is the input clock in the track's ticks: the keyframe 0.4 s into its second, decoded two frames
        // before it is presented (the stream has B-frames).
        let t = try trafs(late.segments[lateFirst]!)
        #expect(t[0].baseMediaDecodeTime == lateFirst * 90_000 + 36_000 - 2 * 3_600)
    }

    @Test func aDemuxerThatUnwrappedTheTimestampsAnotherTurnChangesNothing() throws {
        var rng = SplitMix64(seed: 8)
        let a = try Self.segment(Self.stream(seconds: 8, audio: false, rng: &rng), audio: false)
        rng = SplitMix64(seed: 8)
        let b = try Self.segment(Self.stream(seconds: 8, audio: false, turns: 1, rng: &rng), audio: false)
        #expect(!a.segments.isEmpty && a.segments == b.segments && a.parts == b.parts)
    }

    @Test func theWrapTurnIsTheOneNearestToNow() {
        let m = TimelineAnchor.mpegTSWrap
        let nowTicks = Self.now.millisecondsSince1970 * 90
        let deltas: [Int64] = [0, 90_000 * 3600 * 12, -90_000 * 3600 * 12, 5]
        for delta in deltas {
            // An input stamped `delta` from now, seen modulo the wrap, at any turn.
            let absolute = nowTicks + delta
            for turn in [Int64(-1), 0, 3] {
                let input = absolute % m.value + turn * m.value
                let shift = TimelineAnchor.epochShift(earliest: MediaTime(value: input, timescale: 90_000), now: Self.now, wrap: m)
                #expect(input + shift.value == absolute, "delta \(delta) turn \(turn)")
            }
        }
    }

    @Test func keyframesFurtherApartThanASegmentAreCounted() throws {
        var rng = SplitMix64(seed: 9)
        // A keyframe every 2 s with 1-s segments: every segment spans two cells, its successor's number is not its
        // cell; the sink logs it once.
        let input = makeStream(seconds: 10, fps: 25, gop: 50, audio: false, rng: &rng)
        var seg = try Segmenter(tracks: [videoTrack], segmentDuration: .seconds(1),
                                anchor: .inputClock(now: Self.now, wrap: TimelineAnchor.mpegTSWrap))
        _ = try run(&seg, input)
        #expect(seg.epochSlips > 0)
    }
}
