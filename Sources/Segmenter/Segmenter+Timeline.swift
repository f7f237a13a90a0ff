import MediaCore

// Where a segmenter's timeline starts: from zero, or on the input's clock (epoch locking).
/// Where a segmenter's output timeline has its zero.
public enum TimelineAnchor: Sendable, Equatable {
    /// The earliest sample decodes at 0 (or where a continued timeline ended): the timeline counts from when this
    /// process began to segment.
    case startsAtZero
    /// Epoch locking: the input's timestamps are a UTC clock (seconds since 1970) that wraps every `wrap` (MPEG-TS:
    /// 2^33 ticks of 90 kHz, 26.5 h), as an encoder stamping its capture clock sends them. The output timeline is
    /// that clock, resolved to the turn of the wrap nearest to `now`, so decode times are seconds since 1970, segments
    /// are cut on a grid of whole segment durations counted from 1970, and a segment's number is its cell on that
    /// grid. Two segmenters fed the same input, started at different moments (and with clocks within half a wrap of
    /// each other), write the same bytes under the same numbers: redundant origins an edge can fail over between.
    case inputClock(now: WallClock, wrap: MediaTime)

    /// MPEG-TS timestamps: 33 bits of 90 kHz.
    public static let mpegTSWrap = MediaTime(value: 1 << 33, timescale: 90_000)

    public static func epochLocked(now: WallClock = .now) -> TimelineAnchor { .inputClock(now: now, wrap: mpegTSWrap) }

    /// `t`, a time on a clock that wraps every `wrap` (an SCTE-35 time, an `X-TIMESTAMP-MAP` MPEGTS value: 33 bits of
    /// 90 kHz), moved by whole wraps to the turn nearest `near`, a time on a clock that runs on past a wrap (libavformat's
    /// timestamps). In `wrap`'s timescale.
    public static func nearestTurn(of t: MediaTime, to near: MediaTime, wrap: MediaTime = mpegTSWrap) -> MediaTime {
        let m = wrap.value
        let v = t.converted(to: wrap.timescale, rounding: .nearest).value
        let d = near.converted(to: wrap.timescale, rounding: .nearest).value - v + m / 2
        return MediaTime(value: v + (d >= 0 ? d / m : (d - m + 1) / m) * m, timescale: wrap.timescale)
    }

    var isEpoch: Bool {
        if case .inputClock = self { return true }
        return false
    }

    /// Output time − input time for the input time `earliest`: places it at the turn of the wrap nearest to `now`.
    static func epochShift(earliest: MediaTime, now: WallClock, wrap: MediaTime) -> MediaTime {
        let ts = wrap.timescale
        let t = earliest.converted(to: ts, rounding: .down).value
        let m = wrap.value
        let phase = ((t % m) + m) % m
        let nowTicks = MediaTime(value: MediaTime.rescale(now.millisecondsSince1970, from: 1000, to: ts), timescale: ts)
        let turn = nearestTurn(of: MediaTime(value: phase, timescale: ts), to: nowTicks, wrap: wrap)
        return MediaTime(value: turn.value - t, timescale: ts)
    }
}

extension Segmenter {
    /// Each track's first decode time in the preroll, and the earliest of them as a media time.
    func prerollFirsts() -> (byTrack: [Int: Int64], earliest: MediaTime?) {
        var firstByTrack: [Int: Int64] = [:]
        for item in preroll where firstByTrack[item.track] == nil { firstByTrack[item.track] = item.sample.dts }
        var earliest: MediaTime?
        for (t, dts) in firstByTrack {
            let time = MediaTime(value: dts, timescale: states[t].timescale)
            if earliest == nil || time < earliest! { earliest = time }
        }
        return (firstByTrack, earliest)
    }

    /// Output time − input time: the earliest sample decodes at 0; continuing a timeline, at the previous one's end
    /// (the first segment after the discontinuity then starts exactly where the playlist places it, the sum of the
    /// EXTINFs before it, which is where a player maps a new timeline: hls.js puts the earliest tfdt at the
    /// segment's start); epoch-locked, at its place on the input clock.
    func shift(forEarliest earliest: MediaTime) -> MediaTime {
        switch anchor {
        case .startsAtZero: (continuing?.end ?? .zero(earliest.timescale)) - earliest
        case .inputClock(let now, let wrap): TimelineAnchor.epochShift(earliest: earliest, now: now, wrap: wrap)
        }
    }

    /// Epoch-locked: the output decode time of the first reference sync sample in a later grid cell than the
    /// preroll's first one, once the preroll reaches it.
    func epochJoinPoint() -> Int64? {
        guard let earliest = prerollFirsts().earliest else { return nil }
        let shift = shift(forEarliest: earliest)
        let offset = MediaTime.rescale(shift.value, from: shift.timescale, to: states[referenceTrack].timescale, rounding: .up)
        let segmentTicks = ticks(segmentDuration, track: referenceTrack)
        let early = referenceIsVideo ? segmentTicks / 20 : 0
        var firstCell: Int64?
        for item in preroll where item.track == referenceTrack && item.sample.isSync {
            let cell = Self.cell(item.sample.dts + offset, ticks: segmentTicks, early: early)
            guard let first = firstCell else { firstCell = cell; continue }
            if cell > first { return item.sample.dts + offset }
        }
        return nil
    }

    /// The grid cell (of one segment duration, counted from time 0) a decode time falls in; a time up to `early`
    /// before a cell's start counts as in it.
    static func cell(_ time: Int64, ticks: Int64, early: Int64) -> Int64 {
        let t = time + early
        return t >= 0 ? t / ticks : (t - ticks + 1) / ticks
    }
}
