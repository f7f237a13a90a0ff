import MediaCore
import Testing
import TestSupport

/// Time-base arithmetic (issue 26: an ordinary 30 fps stream in FFmpeg's time base 1/1200000 at 1000000/33333 fps
/// trapped in a hand-written `rescale(t * tb.numerator, …)`). Every conversion goes through `MediaTime.scale`'s exact
/// `Int128` arithmetic; these check its definition (floor/ceiling/nearest of the exact quotient) on the time bases and
/// rates inputs give, on random ones, and on values that overflow any `Int64` product.
@Suite struct TimeBaseTests {
    /// Time bases and frame rates libavformat reports (the list) and a few more.
    static let timeBases = [Rational(1, 1_200_000), Rational(1001, 30000), Rational(1, 90000), Rational(1, 1000),
                            Rational(1, 25), Rational(1, 44100), Rational(1, 48000), Rational(33333, 1_000_000),
                            Rational(100, 2997), Rational(1, 15360), Rational(1, 1), Rational(Int32.max, 1),
                            Rational(1, Int32.max)]
    static let frameRates = [Rational(30, 1), Rational(30000, 1001), Rational(1_000_000, 33333), Rational(2997, 100),
                             Rational(25, 1), Rational(60000, 1001), Rational(1, 1), Rational(90000, 1),
                             Rational(Int32.max, 1), Rational(1, Int32.max)]
    static let timescales: [Int32] = [1, 1000, 44100, 48000, 90000, 1_200_000, Int32.max]

    /// `scale`'s rounding is the exact quotient's floor, ceiling or nearest, clamped to `Int64`: q·d ≤ v·m < (q+1)·d
    /// for `.down`.
    static func checkQuotient(_ v: Int64, _ m: Int64, _ d: Int64) {
        let exact = Int128(v) * Int128(m), den = Int128(d)
        var floor = exact / den
        if exact % den != 0 && exact < 0 { floor -= 1 }
        let ceiling = exact % den == 0 ? floor : floor + 1
        #expect(floor * den <= exact && exact < (floor + 1) * den)
        let down = MediaTime.scale(v, by: m, over: d, rounding: .down)
        let up = MediaTime.scale(v, by: m, over: d, rounding: .up)
        let nearest = MediaTime.scale(v, by: m, over: d, rounding: .nearest)
        #expect(down == Int64(clamping: floor), "floor of \(v)·\(m)/\(d)")
        #expect(up == Int64(clamping: ceiling), "ceiling of \(v)·\(m)/\(d)")
        #expect(nearest == down || nearest == up)
        if Int64(exactly: ceiling) != nil && Int64(exactly: floor) != nil {
            let distance = (exact - Int128(nearest) * den).magnitude * 2
            #expect(distance <= UInt128(d), "nearest to \(v)·\(m)/\(d)")
        }
    }

    @Test func scaleIsTheExactQuotientRounded() {
        var rng = SplitMix64(seed: 26)
        let edges: [Int64] = [0, 1, -1, 2, 1001, 33333, 1 << 33, 1 << 62, Int64.max, Int64.min, Int64.min + 1, Int64.max - 1]
        for v in edges { for m in edges where m != 0 { for d in edges where d > 0 { Self.checkQuotient(v, m, d) } } }
        for _ in 0..<20_000 {
            let v = Int64(bitPattern: rng.next()) >> Int64(rng.next() % 63)
            let m = Int64(bitPattern: rng.next()) >> Int64(rng.next() % 63)
            let d = max(1, Int64(rng.next() >> (1 + rng.next() % 63)))
            Self.checkQuotient(v, m, d)
        }
    }

    @Test func timeBaseConversionsRoundTrip() {
        var rng = SplitMix64(seed: 1_200_000)
        for tb in Self.timeBases {
            for ts in Self.timescales {
                for _ in 0..<200 {
                    let ticks = Int64(bitPattern: rng.next()) >> Int64(20 + rng.next() % 44)
                    let t = MediaTime.rescale(ticks, timeBase: tb, to: ts, rounding: .down)
                    // Down then back up never passes the start; exact when the timescale is at least as fine.
                    let back = MediaTime.rescale(t, from: ts, toTimeBase: tb, rounding: .up)
                    #expect(back <= ticks || t == Int64.max || t == Int64.min, "\(ticks) in \(tb) -> \(t)/\(ts) -> \(back)")
                    if tb.numerator == 1 && Int64(ts) % Int64(tb.denominator) == 0 && t != Int64.max && t != Int64.min {
                        #expect(back == ticks)
                    }
                    #expect(MediaTime(ticks: ticks, timeBase: tb, timescale: ts, rounding: .down).value == t)
                }
            }
        }
        // The case: frame 30 of a 1000000/33333 fps stream in 1/1200000 is a hair before one second.
        #expect(MediaTime.rescale(1_199_988, timeBase: Rational(1, 1_200_000), to: 90000) == 89_999)
    }

    @Test func frameRatesGiveFrameDurationsAndCounts() {
        for fr in Self.frameRates {
            for ts in Self.timescales {
                let d = fr.frameDuration(timescale: ts)
                #expect(d >= 1)
                // The exact duration den·ts/num lies within half a tick of it (or below one tick).
                let exact = Int128(fr.denominator) * Int128(ts)
                #expect((exact - Int128(d) * Int128(fr.numerator)).magnitude * 2 <= UInt128(fr.numerator) || d == 1)
            }
            for seconds in [MediaTime(value: 1, timescale: 1), MediaTime(value: 333, timescale: 1000),
                            MediaTime(value: 60000, timescale: 1000), MediaTime(value: Int64.max, timescale: 1)] {
                let n = fr.frames(in: seconds, rounding: .up)
                let exact = Int128(seconds.value) * Int128(fr.numerator)
                let den = Int128(seconds.timescale) * Int128(fr.denominator)
                if n != Int64.max { #expect(Int128(n) * den >= exact && (Int128(n) - 1) * den < exact) }
            }
        }
        // 1 s at 1000000/33333 fps is 30.0003 frames: 31 whole frames cover it, 30 are nearest.
        #expect(Rational(1_000_000, 33333).frames(in: .seconds(1)) == 31)
        #expect(Rational(1_000_000, 33333).frames(in: .seconds(1), rounding: .nearest) == 30)
        #expect(Rational(30000, 1001).frames(in: .seconds(1)) == 30)
        #expect(Rational(30000, 1001).frameDuration(timescale: 90000) == 3003)
        #expect(Rational(1_000_000, 33333).frameDuration(timescale: 1_200_000) == 40000)
    }
}
