import ISOBMFF
import MediaCore

/// A finished media segment: `styp` followed by one or more `moof`+`mdat` fragments.
public struct Segment: Sendable {
    /// 0-based, continuous.
    public var sequence: UInt64
    /// The whole segment file.
    public var bytes: [UInt8]
    /// Byte ranges of the fragments inside `bytes` (the `styp` belongs to the first one).
    public var fragmentRanges: [Range<Int>]
    /// Decode time of the segment's first sample on the reference track (its `tfdt`).
    public var startTime: MediaTime
    /// Exact duration on the reference track (video when present, else audio): the sum of its sample durations.
    public var duration: MediaTime
    /// Wall-clock time at which the segment's first reference sample was taken in, if the caller gave one.
    public var programDateTime: WallClock?
    /// Per track (same order as the segmenter's tracks): sample count and first decode time, in the track timescale.
    public var trackSampleCounts: [Int]
    public var trackStartTimes: [Int64]
    /// Whether the reference track's first sample is a sync sample (always true for video but the very first
    /// segment of a stream that did not begin with one, which the segmenter drops instead).
    public var startsWithSyncSample: Bool
}

public enum SegmenterError: Error, Equatable, CustomStringConvertible {
    case noTracks
    case unknownTrack(Int)

    public var description: String {
        switch self {
        case .noTracks: "no video or audio track to segment"
        case .unknownTrack(let i): "sample for unknown track \(i)"
        }
    }
}

/// Cuts samples of one or two tracks into segments of fMP4 fragments.
///
/// - Cuts a segment at the first reference-track sync sample whose DTS is at least `segmentDuration` past the
///   segment start (video: keyframes, so segments follow the keyframes when they are farther apart; audio-only:
///   any frame). Other tracks are cut at the same media time.
/// - A sample's duration is the next sample's DTS minus its own (one sample of look-ahead per track), so
///   `tfdt[n+1] == tfdt[n] + Σ durations[n]` holds exactly. The last sample of the stream uses its duration hint.
/// - Timestamps are shifted by one common offset so the earliest sample of any track decodes at 0 (B-frames and
///   AAC priming give negative first timestamps).
/// - DTS that does not increase is nudged forward by one tick (broken inputs), never reordered.
public struct Segmenter {
    public let tracks: [TrackFormat]
    public let segmentDuration: MediaTime
    /// When set, each segment is written as several fragments of about this duration (low-latency parts).
    public let fragmentDuration: MediaTime?
    public let initSegment: [UInt8]
    /// Index into `tracks` of the track that decides where segments are cut.
    public let referenceTrack: Int

    private var states: [TrackState]
    private var nextSequence: UInt64 = 0
    private var fragmentSequence: UInt32 = 1
    /// Start of the segment being filled, in reference-track ticks (after the common offset).
    private var currentStart: Int64?
    /// Cut points (reference-track ticks) already decided but not yet emitted, oldest first.
    private var pendingCuts: [Int64] = []
    /// Samples held until every track has shown its first timestamp (to choose the common offset).
    private var preroll: [(track: Int, sample: Sample, wallClock: WallClock?)] = []
    private var offsetChosen = false
    private var currentWallClock: WallClock?
    private var pendingWallClocks: [WallClock?] = []
    /// Samples dropped because they came before the stream's first keyframe or before time zero.
    public private(set) var droppedLeadingSamples = 0
    /// How many decided cuts may wait for a lagging track before segments are emitted without it.
    static let maxHeldCuts = 3

    struct TrackState {
        var timescale: Int32
        var offset: Int64 = 0
        var lastDTS: Int64?
        /// The look-ahead sample: its duration is known once the next one arrives.
        var pending: Sample?
        /// Samples with known durations, not yet written into a segment.
        var ready: [(sample: Sample, duration: Int64)] = []
        var ended = false
        var seenFirst = false
        /// The last duration written (for the final sample when it has no hint).
        var lastDuration: Int64 = 0
    }

    public init(tracks: [TrackFormat], segmentDuration: MediaTime, fragmentDuration: MediaTime? = nil) throws {
        guard !tracks.isEmpty else { throw SegmenterError.noTracks }
        self.tracks = tracks
        self.segmentDuration = segmentDuration
        self.fragmentDuration = fragmentDuration
        self.referenceTrack = tracks.firstIndex { $0.kind == .video } ?? 0
        self.states = tracks.map { TrackState(timescale: $0.timescale) }
        self.initSegment = try InitSegment.make(tracks: tracks)
    }

    private var referenceIsVideo: Bool { tracks[referenceTrack].kind == .video }

    /// Feeds one sample (in DTS order within its track) and returns the segments it completed.
    public mutating func append(_ sample: Sample, track: Int, wallClock: WallClock? = nil) throws -> [Segment] {
        guard states.indices.contains(track) else { throw SegmenterError.unknownTrack(track) }
        if !offsetChosen {
            preroll.append((track, sample, wallClock))
            states[track].seenFirst = true
            // Wait until every track has a first timestamp, but not forever: a silent track must not stall output.
            let allSeen = states.allSatisfy(\.seenFirst)
            if !allSeen && preroll.count < 256 { return [] }
            chooseOffset()
            var out: [Segment] = []
            let held = preroll
            preroll = []
            for item in held { out += try accept(item.sample, track: item.track, wallClock: item.wallClock) }
            return out
        }
        return try accept(sample, track: track, wallClock: wallClock)
    }

    /// Ends every track: flushes the look-ahead samples and returns the remaining segments.
    public mutating func finish() throws -> [Segment] {
        var out: [Segment] = []
        if !offsetChosen {
            chooseOffset()
            let held = preroll
            preroll = []
            for item in held { out += try accept(item.sample, track: item.track, wallClock: item.wallClock) }
        }
        for t in states.indices {
            if let p = states[t].pending {
                let d = p.durationHint.flatMap { $0 > 0 ? $0 : nil } ?? max(states[t].lastDuration, 1)
                states[t].ready.append((p, d))
                states[t].pending = nil
            }
            states[t].ended = true
        }
        out += try emitReadySegments()
        // Whatever is left forms the last segment.
        if states.contains(where: { !$0.ready.isEmpty }) {
            if let seg = try makeSegment(upTo: nil) { out.append(seg) }
        }
        return out
    }

    // MARK: - Internals

    private mutating func chooseOffset() {
        offsetChosen = true
        // The earliest first DTS over all tracks, compared as media times.
        var earliest: MediaTime?
        var firstByTrack: [Int: Int64] = [:]
        for item in preroll where firstByTrack[item.track] == nil { firstByTrack[item.track] = item.sample.dts }
        for (t, dts) in firstByTrack {
            let time = MediaTime(value: dts, timescale: states[t].timescale)
            if earliest == nil || time < earliest! { earliest = time }
        }
        guard let earliest else { return }
        for t in states.indices {
            // Round the shift down so that no track's first DTS becomes negative.
            states[t].offset = -MediaTime.rescale(earliest.value, from: earliest.timescale, to: states[t].timescale, rounding: .down)
        }
    }

    private mutating func accept(_ input: Sample, track t: Int, wallClock: WallClock?) throws -> [Segment] {
        var sample = input
        sample.dts += states[t].offset
        sample.pts += states[t].offset
        if let last = states[t].lastDTS, sample.dts <= last {
            let shift = last + 1 - sample.dts
            sample.dts += shift
            if sample.pts < sample.dts { sample.pts = sample.dts }
        }
        if sample.dts < 0 {
            // Before the common origin (rounding): cannot be expressed with a non-negative tfdt.
            droppedLeadingSamples += 1
            return []
        }
        if t == referenceTrack && referenceIsVideo && currentStart == nil && !sample.isSync {
            // A video stream must start with a keyframe: drop what comes before the first one.
            droppedLeadingSamples += 1
            return []
        }
        if t != referenceTrack && referenceIsVideo && droppedLeadingSamples < 4096 {
            // Other tracks begin with the first video keyframe, so the first segment starts in sync.
            let refStart = currentStart.map { MediaTime(value: $0, timescale: states[referenceTrack].timescale) }
            if refStart == nil || MediaTime(value: sample.pts, timescale: states[t].timescale) < refStart! {
                droppedLeadingSamples += 1
                return []
            }
        }
        states[t].lastDTS = sample.dts
        states[t].seenFirst = true

        if t == referenceTrack {
            if currentStart == nil {
                currentStart = sample.dts
                currentWallClock = wallClock
            } else if sample.isSync {
                let lastCut = pendingCuts.last ?? currentStart!
                if sample.dts - lastCut >= ticks(segmentDuration, track: t) {
                    pendingCuts.append(sample.dts)
                    pendingWallClocks.append(wallClock)
                }
            }
        }
        if let prev = states[t].pending {
            let d = sample.dts - prev.dts
            states[t].ready.append((prev, d))
            states[t].lastDuration = d
        }
        states[t].pending = sample
        return try emitReadySegments()
    }

    private func ticks(_ time: MediaTime, track t: Int) -> Int64 {
        time.converted(to: states[t].timescale, rounding: .up).value
    }

    /// Emits every segment whose end (a pending cut) every track has reached.
    private mutating func emitReadySegments() throws -> [Segment] {
        var out: [Segment] = []
        while let cut = pendingCuts.first {
            let cutTime = MediaTime(value: cut, timescale: states[referenceTrack].timescale)
            let reached = states.indices.allSatisfy { t in
                if states[t].ended { return true }
                // A track that has not started yet does not hold the others back.
                guard let f = states[t].pending?.dts else { return t != referenceTrack }
                return MediaTime(value: f, timescale: states[t].timescale) >= cutTime
            }
            // A track that stalls (its input stopped) must not hold segments back for more than a few cuts.
            guard reached || pendingCuts.count > Self.maxHeldCuts else { break }
            pendingCuts.removeFirst()
            if let seg = try makeSegment(upTo: cutTime) { out.append(seg) }
            currentStart = cut
            currentWallClock = pendingWallClocks.removeFirst()
        }
        return out
    }

    /// Takes the ready samples before `end` (all of them when nil) from every track and writes a segment.
    private mutating func makeSegment(upTo end: MediaTime?) throws -> Segment? {
        var taken: [[(sample: Sample, duration: Int64)]] = []
        for t in states.indices {
            let ready = states[t].ready
            var n = ready.count
            if let end {
                let limit = end.converted(to: states[t].timescale, rounding: .up).value
                n = ready.firstIndex { $0.sample.dts >= limit } ?? ready.count
            }
            taken.append(Array(ready[..<n]))
            states[t].ready.removeFirst(n)
        }
        let ref = taken[referenceTrack]
        guard !taken.allSatisfy(\.isEmpty) else { return nil }

        // Fragments: the whole segment, or parts of about `fragmentDuration` on the reference track.
        var groups: [[ArraySlice<(sample: Sample, duration: Int64)>]] = []
        if let fragmentDuration, !ref.isEmpty {
            let partTicks = max(1, ticks(fragmentDuration, track: referenceTrack))
            var bounds: [Int64] = []  // reference-track DTS where a new fragment starts
            var next = ref[0].sample.dts + partTicks
            for item in ref where item.sample.dts >= next {
                bounds.append(item.sample.dts)
                next = item.sample.dts + partTicks
            }
            var cursors = Array(repeating: 0, count: taken.count)
            for b in bounds + [Int64.max] {
                let bTime = b == Int64.max ? nil : MediaTime(value: b, timescale: states[referenceTrack].timescale)
                var group: [ArraySlice<(sample: Sample, duration: Int64)>] = []
                for t in taken.indices {
                    let lim = bTime.map { $0.converted(to: states[t].timescale, rounding: .up).value } ?? Int64.max
                    let start = cursors[t]
                    var e = start
                    while e < taken[t].count && taken[t][e].sample.dts < lim { e += 1 }
                    group.append(taken[t][start..<e])
                    cursors[t] = e
                }
                groups.append(group)
            }
        } else {
            groups.append(taken.map { $0[...] })
        }

        var bytes = MediaSegmentBoxes.styp()
        var ranges: [Range<Int>] = []
        let payloadTotal = taken.reduce(0) { $0 + $1.reduce(0) { $0 + $1.sample.data.count } }
        bytes.reserveCapacity(bytes.count + payloadTotal + 256 * groups.count)
        for group in groups where group.contains(where: { !$0.isEmpty }) {
            let start = ranges.isEmpty ? 0 : bytes.count
            var trafs: [TrackFragment] = []
            for (t, items) in group.enumerated() where !items.isEmpty {
                trafs.append(TrackFragment(
                    trackID: tracks[t].trackID,
                    baseMediaDecodeTime: UInt64(items.first!.sample.dts),
                    samples: items.map {
                        FragmentSample(duration: UInt32(clamping: $0.duration), size: UInt32($0.sample.data.count),
                                       isSync: $0.sample.isSync,
                                       compositionOffset: Int32(clamping: $0.sample.pts - $0.sample.dts))
                    },
                    isVideo: tracks[t].kind == .video))
            }
            bytes += try MediaSegmentBoxes.fragmentHeader(sequenceNumber: fragmentSequence, tracks: trafs)
            fragmentSequence &+= 1
            for items in group { for item in items { bytes += item.sample.data } }
            ranges.append(start..<bytes.count)
        }

        let refTimescale = states[referenceTrack].timescale
        let startTicks = ref.first?.sample.dts ?? currentStart ?? 0
        let durationTicks = ref.reduce(Int64(0)) { $0 + $1.duration }
        let segment = Segment(
            sequence: nextSequence,
            bytes: bytes,
            fragmentRanges: ranges,
            startTime: MediaTime(value: startTicks, timescale: refTimescale),
            duration: MediaTime(value: durationTicks, timescale: refTimescale),
            programDateTime: currentWallClock,
            trackSampleCounts: taken.map(\.count),
            trackStartTimes: taken.map { $0.first?.sample.dts ?? -1 },
            startsWithSyncSample: ref.first?.sample.isSync ?? false)
        nextSequence += 1
        return segment
    }
}
