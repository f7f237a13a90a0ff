/// A point or span on a media timeline: integer ticks in a timescale, like `CMTime`.
///
/// Timestamps and durations are never stored as `Double`. Conversions between timescales go through
/// an `Int128` intermediate with a named rounding rule. `seconds` exists for display and `EXTINF` only.
public struct MediaTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var value: Int64
    public var timescale: Int32

    public init(value: Int64, timescale: Int32) {
        precondition(timescale > 0, "MediaTime timescale must be positive")
        self.value = value
        self.timescale = timescale
    }

    public static func zero(_ timescale: Int32) -> MediaTime { MediaTime(value: 0, timescale: timescale) }

    /// Whole seconds as a time in the given timescale.
    public static func seconds(_ s: Int64, timescale: Int32 = 1) -> MediaTime {
        MediaTime(value: s * Int64(timescale), timescale: timescale)
    }

    /// Milliseconds as a time in the given timescale (rounded to nearest).
    public static func milliseconds(_ ms: Int64, timescale: Int32 = 1000) -> MediaTime {
        MediaTime(value: ms, timescale: 1000).converted(to: timescale)
    }

    public enum Rounding: Sendable {
        /// Toward negative infinity.
        case down
        /// Toward positive infinity.
        case up
        /// To nearest, halves away from zero.
        case nearest
    }

    /// Rescales `value * timescale' / timescale` exactly, rounded by `rounding`.
    public static func rescale(_ value: Int64, from: Int32, to: Int32, rounding: Rounding = .nearest) -> Int64 {
        if from == to { return value }
        return scale(value, by: Int64(to), over: Int64(from), rounding: rounding)
    }

    /// Ticks of a time base (seconds per tick, as libavformat's `time_base`: 1/90000, 1001/30000, 1/1200000) in
    /// ticks of `timescale`: `ticks × num × timescale / den`, exactly.
    public static func rescale(_ ticks: Int64, timeBase: Rational, to timescale: Int32, rounding: Rounding = .nearest) -> Int64 {
        precondition(timeBase.isValid, "a time base is positive")
        if timeBase.numerator == 1 && timeBase.denominator == timescale { return ticks }
        return scale(ticks, by: Int64(timeBase.numerator) * Int64(timescale), over: Int64(timeBase.denominator), rounding: rounding)
    }

    /// Ticks of `timescale` in ticks of a time base: `value × den / (timescale × num)`, exactly.
    public static func rescale(_ value: Int64, from timescale: Int32, toTimeBase timeBase: Rational,
                               rounding: Rounding = .nearest) -> Int64 {
        precondition(timeBase.isValid, "a time base is positive")
        if timeBase.numerator == 1 && timeBase.denominator == timescale { return value }
        return scale(value, by: Int64(timeBase.denominator), over: Int64(timescale) * Int64(timeBase.numerator), rounding: rounding)
    }

    /// This time in ticks of a time base.
    public func ticks(inTimeBase timeBase: Rational, rounding: Rounding = .nearest) -> Int64 {
        Self.rescale(value, from: timescale, toTimeBase: timeBase, rounding: rounding)
    }

    /// `ticks` of a time base as a time in `timescale`.
    public init(ticks: Int64, timeBase: Rational, timescale: Int32, rounding: Rounding = .nearest) {
        self.init(value: Self.rescale(ticks, timeBase: timeBase, to: timescale, rounding: rounding), timescale: timescale)
    }

    /// `value × multiplier / divisor` computed exactly (an `Int128` intermediate: no product of two `Int64`s can
    /// overflow it), rounded by `rounding` and clamped to `Int64`. `divisor` must be positive.
    public static func scale(_ value: Int64, by multiplier: Int64, over divisor: Int64, rounding: Rounding = .nearest) -> Int64 {
        precondition(divisor > 0, "a divisor is positive")
        let num = Int128(value) * Int128(multiplier)
        let den = Int128(divisor)
        var q = num / den
        let r = num % den
        if r != 0 {
            switch rounding {
            case .down: if num < 0 { q -= 1 }
            case .up: if num > 0 { q += 1 }
            case .nearest:
                let twice = (r < 0 ? -r : r) * 2
                if twice >= den { q += num < 0 ? -1 : 1 }
            }
        }
        return Int64(clamping: q)
    }

    public func converted(to newTimescale: Int32, rounding: Rounding = .nearest) -> MediaTime {
        MediaTime(value: Self.rescale(value, from: timescale, to: newTimescale, rounding: rounding), timescale: newTimescale)
    }

    /// Seconds as a floating-point number: for display and `EXTINF` only, never for storage.
    public var seconds: Double { Double(value) / Double(timescale) }

    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) < Int128(rhs.value) * Int128(lhs.timescale)
    }

    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) == Int128(rhs.value) * Int128(lhs.timescale)
    }

    public func hash(into hasher: inout Hasher) {
        // Equal times in different timescales must hash alike: hash the reduced fraction.
        var a = value.magnitude, b = UInt64(timescale)
        while b != 0 { (a, b) = (b, a % b) }
        let g = Swift.max(a, 1)
        hasher.combine(value / Int64(g))
        hasher.combine(Int64(timescale) / Int64(g))
    }

    /// Sum and difference in the left operand's timescale (the right one is rescaled, rounded to nearest).
    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        MediaTime(value: lhs.value + rhs.converted(to: lhs.timescale).value, timescale: lhs.timescale)
    }

    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        MediaTime(value: lhs.value - rhs.converted(to: lhs.timescale).value, timescale: lhs.timescale)
    }

    public var description: String { "\(value)/\(timescale)" }
}

/// A rational number such as a stream time base (1/90000) or a frame rate (30000/1001).
public struct Rational: Sendable, Hashable, CustomStringConvertible {
    public var numerator: Int32
    public var denominator: Int32
    public init(_ numerator: Int32, _ denominator: Int32) {
        self.numerator = numerator
        self.denominator = denominator
    }
    public var isValid: Bool { numerator > 0 && denominator > 0 }
    public var description: String { "\(numerator)/\(denominator)" }

    /// As a frame rate: one frame in ticks of `timescale` (`den × timescale / num`), at least 1.
    public func frameDuration(timescale: Int32, rounding: MediaTime.Rounding = .nearest) -> Int64 {
        precondition(isValid, "a frame rate is positive")
        return max(1, MediaTime.scale(Int64(denominator), by: Int64(timescale), over: Int64(numerator), rounding: rounding))
    }

    /// As a frame rate: the frames in `duration` (`duration × num / den`), rounded by `rounding`.
    public func frames(in duration: MediaTime, rounding: MediaTime.Rounding = .up) -> Int64 {
        precondition(isValid, "a frame rate is positive")
        return MediaTime.scale(duration.value, by: Int64(numerator), over: Int64(duration.timescale) * Int64(denominator),
                               rounding: rounding)
    }
}
