import MediaCore
import Segmenter
import TestSupport

// The body of the `timeline` libFuzzer target of `scripts/fuzz`, compiled both into the fuzz binary (with
// `Tests/Fuzz/timeline.swift`) and into this test target, where `FuzzReplayTests` runs every committed seed of
// `Tests/FuzzSeeds/timeline/` through it. No Foundation, no Testing: the fuzz build compiles it with swiftc alone.

public enum SegmenterFuzz {
    /// Reads the fuzzer's bytes as numbers; past the end, zeros.
    struct Numbers {
        let data: [UInt8]
        var at = 0
        mutating func u64() -> UInt64 {
            var v: UInt64 = 0
            for _ in 0..<8 { v = v << 8 | UInt64(at < data.count ? data[at] : 0); at += 1 }
            return v
        }
        mutating func u8() -> UInt8 { defer { at += 1 }; return at < data.count ? data[at] : 0 }
        /// 1 ... Int32.max.
        mutating func positive() -> Int32 { Int32(truncatingIfNeeded: u64() % UInt64(Int32.max)) + 1 }
        var isAtEnd: Bool { at >= data.count }
    }

    static let avcC: [UInt8] = [1, 0x64, 0, 0x1F, 0xFF, 0xE1, 0, 4, 0x67, 0x64, 0, 0x1F, 1, 0, 2, 0x68, 0xEE]

    /// Issue 26's class of bug: time arithmetic on whatever an input reports. A time base and a frame rate (any
    /// positive pair), a track timescale, and timestamps that step by any amount: the conversions keep their
    /// definition (floor, ceiling), the keyframe grid and the segmenter never trap, and the segments the segmenter
    /// writes tile the timeline (`tfdt[n+1] == tfdt[n] + Σ duration[n]`).
    public static func timeline(_ data: [UInt8]) throws(FuzzInvariantViolation) {
        var n = Numbers(data: data)
        let timeBase = Rational(n.positive(), n.positive())
        let frameRate = Rational(n.positive(), n.positive())
        let timescale = n.positive()
        let t = Int64(bitPattern: n.u64())

        // Conversions: `.down` is the floor of the exact value, `.up` its ceiling (both clamped to Int64).
        let down = MediaTime.rescale(t, timeBase: timeBase, to: timescale, rounding: .down)
        let up = MediaTime.rescale(t, timeBase: timeBase, to: timescale, rounding: .up)
        let exact = Int128(t) * Int128(timeBase.numerator) * Int128(timescale)
        let den = Int128(timeBase.denominator)
        if down != Int64.min && down != Int64.max {
            try require(Int128(down) * den <= exact && exact < (Int128(down) + 1) * den, "timeline: floor of \(t)·\(timeBase) in 1/\(timescale) is not \(down)")
        }
        try require(up >= down && (up == down || up == down + 1 || down == Int64.min || up == Int64.max),
                    "timeline: ceiling \(up) vs floor \(down)")
        _ = MediaTime.rescale(t, from: timescale, toTimeBase: timeBase, rounding: .nearest)
        let frame = frameRate.frameDuration(timescale: timescale)
        try require(frame >= 1, "timeline: a frame of \(frameRate) lasts \(frame) ticks of 1/\(timescale)")
        _ = frameRate.frames(in: MediaTime(value: t, timescale: timescale))

        // The keyframe grid and the segmenter on timestamps that step by anything the bytes say.
        let interval = MediaTime.seconds(1).converted(to: timescale, rounding: .up).value
        var grid = KeyframeGrid(interval: interval, startup: interval / 3, tolerance: frame / 2)
        let track = TrackFormat(trackID: 1, kind: .video, timescale: timescale, codec: .h264(avcC: avcC), width: 64, height: 48)
        guard var segmenter = try? Segmenter(tracks: [track], segmentDuration: .seconds(1),
                                             fragmentDuration: n.u8() & 1 == 0 ? nil : MediaTime(value: 333, timescale: 1000))
        else { throw FuzzInvariantViolation(description: "timeline: no segmenter for a valid track") }
        var segments: [Segment] = []
        var dts = t >> Int64(n.u8() % 64)
        var count = 0
        while !n.isAtEnd && count < 400 {
            let kind = n.u8()
            let step: Int64 = kind < 200 ? frame : kind < 240 ? Int64(n.u8()) - 64 : Int64(bitPattern: n.u64()) >> Int64(n.u8() % 64)
            dts = dts.addingReportingOverflow(step).overflow ? dts : dts + step
            let sync = grid.isBoundary(dts) || kind == 255
            let sample = Sample(data: [0, 0, 0, 1, 0x65], dts: dts, pts: dts, isSync: sync, durationHint: frame)
            do {
                segments += try segmenter.append(sample, track: 0)
            } catch {
                return  // an out-of-range timestamp is a clear error: nothing to check past it
            }
            count += 1
        }
        do { segments += try segmenter.finish() } catch { return }
        for (a, b) in zip(segments, segments.dropFirst()) {
            try require(a.startTime + a.duration == b.startTime,
                        "timeline: segment \(b.sequence) starts at \(b.startTime), the one before ends at \(a.startTime + a.duration)")
        }
        for s in segments { try require(s.duration.value >= 0 && s.startTime.value >= 0, "timeline: segment \(s.sequence) \(s.startTime) + \(s.duration)") }
    }
}
