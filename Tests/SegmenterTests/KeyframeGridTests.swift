import MediaCore
import Segmenter
import Testing
import TestSupport

/// `KeyframeGrid`: where an encoder forces its IDRs (every rung of a ladder on the same grid). Checked against its
/// definition on random frame timings: the first frame is a keyframe; afterwards a frame is a keyframe exactly when a
/// grid point lies in (previous frame + tolerance, this frame + tolerance]; each grid point is `interval` after the
/// last one passed (skipping those that fell in a gap), counted from the first frame.
@Suite struct KeyframeGridTests {
    /// The rule, written out: grid points g_k = first + k·interval; frame f is a keyframe when some g_k with k ≥ 1 and
    /// g_k > the last keyframe's grid point satisfies g_k ≤ f + tolerance.
    static func expected(_ pts: [Int64], interval: Int64, tolerance: Int64) -> [Bool] {
        guard let first = pts.first else { return [] }
        var out = [true]
        var lastCell: Int128 = 0
        for p in pts.dropFirst() {
            let cell = (Int128(p) + Int128(tolerance) - Int128(first)) / Int128(interval)
            if cell > lastCell { out.append(true); lastCell = cell } else { out.append(false) }
        }
        return out
    }

    @Test func forcesTheFrameNearestEachGridPoint() {
        var rng = SplitMix64(seed: 33333)
        for _ in 0..<2000 {
            let frame = Int64(1 + rng.next() % 5000)
            let interval = frame * Int64(1 + rng.next() % 60) + Int64(rng.next() % UInt64(frame))
            let tolerance = frame / 2
            var pts: [Int64] = [Int64(bitPattern: rng.next()) >> 24]
            for _ in 0..<300 {
                // Jittered frames (VFR), now and then a gap of several intervals.
                let step = rng.next() % 50 == 0 ? interval * Int64(2 + rng.next() % 5) : max(1, frame + Int64(rng.next() % UInt64(frame)) - frame / 2)
                pts.append(pts.last! + step)
            }
            var grid = KeyframeGrid(interval: interval, tolerance: tolerance)
            let got = pts.map { grid.isBoundary($0) }
            #expect(got == Self.expected(pts, interval: interval, tolerance: tolerance))
        }
    }

    @Test func takesTheFrameAHairBeforeTheGrid() {
        // 1000000/33333 fps in 90 kHz: frame 30 is at 89999, a tick before one second.
        var grid = KeyframeGrid(interval: 90000, tolerance: 1500)
        let keys = (0..<91).filter { i in grid.isBoundary(MediaTime.rescale(Int64(i) * 33333, from: 1_000_000, to: 90000)) }
        #expect(keys == [0, 30, 60, 90])
        var strict = KeyframeGrid(interval: 90000)
        let strictKeys = (0..<91).filter { i in strict.isBoundary(MediaTime.rescale(Int64(i) * 33333, from: 1_000_000, to: 90000)) }
        #expect(strictKeys == [0, 31, 61])
    }

    @Test func extremeTimestampsNeverTrap() {
        for start in [Int64.min, Int64.min + 1, -1, 0, Int64.max - 1, Int64.max] {
            var grid = KeyframeGrid(interval: 90000, startup: 30000, tolerance: 1500)
            let first = grid.isBoundary(start)
            #expect(first)
            _ = grid.isBoundary(start == Int64.max ? start : start + 1)
            _ = grid.isBoundary(Int64.max)
        }
        var tiny = KeyframeGrid(interval: 0, tolerance: 10)
        let both = tiny.isBoundary(0) && tiny.isBoundary(1)
        #expect(both)
    }
}
