import ISOBMFF
import MediaCore

/// A finished media segment: `styp` followed by one or more `moof`+`mdat` fragments (its parts).
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
    /// Per track (same order as the segmenter's tracks): sample count and first decode time, in the track timescale
    /// (-1 when the track has no sample in this segment).
    public var trackSampleCounts: [Int]
    public var trackStartTimes: [Int64]
    /// Whether the reference track's first sample is a sync sample.
    public var startsWithSyncSample: Bool
}

/// A low-latency part: one `moof`+`mdat` fragment of the segment in progress, handed on as soon as it is complete.
public struct Part: Sendable {
    /// The segment this part belongs to.
    public var segmentSequence: UInt64
    /// 0-based within its segment.
    public var index: Int
    public var bytes: [UInt8]
    /// Duration on the reference track.
    public var duration: MediaTime
    /// Starts with a sync sample on the reference track (`INDEPENDENT=YES`).
    public var independent: Bool
}

/// What the segmenter produces, in the order it must be published: every part of a segment comes before it.
public enum SegmenterEvent: Sendable {
    case part(Part)
    case segment(Segment)

    public var segment: Segment? {
        if case .segment(let s) = self { return s }
        return nil
    }
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
/// - With `fragmentDuration`, each segment is built from parts (fragments) of about that duration, each handed
///   on as soon as every track has reached its end; the segment is then `styp` + its parts.
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
    /// Samples dropped because they came before the stream's first keyframe or before time zero.
    public private(set) var droppedLeadingSamples = 0
    /// How many decided cuts may wait for a lagging track before fragments are written without it.
    static let maxHeldCuts = 12

    private typealias Ready = (sample: Sample, duration: Int64)

    private struct TrackState {
        var timescale: Int32
        var offset: Int64 = 0
        var lastDTS: Int64?
        /// The look-ahead sample: its duration is known once the next one arrives.
        var pending: Sample?
        /// Samples with known durations, not yet written into a fragment.
        var ready: [Ready] = []
        var ended = false
        var seenFirst = false
        /// The last duration written (for the final sample when it has no hint).
        var lastDuration: Int64 = 0
        /// Samples of the segment in progress already written into parts.
        var segmentSampleCount = 0
        var segmentFirstDTS: Int64?
    }

    /// A decided cut, in reference-track ticks: the end of a part, and maybe of a segment.
    private struct Boundary {
        var time: Int64
        var endsSegment: Bool
        var wallClock: WallClock?
    }

    private var states: [TrackState]
    private var nextSequence: UInt64 = 0
    private var fragmentSequence: UInt32 = 1
    /// Start of the segment being filled and of its latest part, in reference-track ticks (after the offset).
    private var segmentStart: Int64?
    private var partStart: Int64?
    private var boundaries: [Boundary] = []
    /// Parts of the segment in progress: bytes and reference-track duration.
    private var parts: [(bytes: [UInt8], duration: Int64, independent: Bool)] = []
    private var segmentWallClock: WallClock?
    private var segmentStartsWithSync = false
    /// Samples held until every track has shown its first timestamp (to choose the common offset).
    private var preroll: [(track: Int, sample: Sample, wallClock: WallClock?)] = []
    private var offsetChosen = false

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
        try appendEvents(sample, track: track, wallClock: wallClock).compactMap(\.segment)
    }

    /// Feeds one sample and returns the parts and segments it completed, in publishing order.
    public mutating func appendEvents(_ sample: Sample, track: Int, wallClock: WallClock? = nil) throws -> [SegmenterEvent] {
        guard states.indices.contains(track) else { throw SegmenterError.unknownTrack(track) }
        if !offsetChosen {
            preroll.append((track, sample, wallClock))
            states[track].seenFirst = true
            // Wait until every track has a first timestamp, but not forever: a silent track must not stall output.
            if !states.allSatisfy(\.seenFirst) && preroll.count < 256 { return [] }
            return try releasePreroll()
        }
        return try accept(sample, track: track, wallClock: wallClock)
    }

    /// Ends every track: flushes the look-ahead samples and returns the remaining segments.
    public mutating func finish() throws -> [Segment] {
        try finishEvents().compactMap(\.segment)
    }

    /// Ends every track and returns the remaining parts and segments, in publishing order.
    public mutating func finishEvents() throws -> [SegmenterEvent] {
        var out = offsetChosen ? [] : try releasePreroll()
        for t in states.indices {
            if let p = states[t].pending {
                let d = p.durationHint.flatMap { $0 > 0 ? $0 : nil } ?? max(states[t].lastDuration, 1)
                states[t].ready.append((p, d))
                states[t].pending = nil
            }
            states[t].ended = true
        }
        out += try emitReady()
        // Whatever is left forms the last part and segment.
        if states.contains(where: { !$0.ready.isEmpty }) {
            out += try cut(Boundary(time: Int64.max, endsSegment: true, wallClock: nil))
        } else if !parts.isEmpty {
            out += try closeSegment(nextWallClock: nil)
        }
        return out
    }

    // MARK: - Internals

    private mutating func releasePreroll() throws -> [SegmenterEvent] {
        chooseOffset()
        let held = preroll
        preroll = []
        var out: [SegmenterEvent] = []
        for item in held { out += try accept(item.sample, track: item.track, wallClock: item.wallClock) }
        return out
    }

    private mutating func chooseOffset() {
        offsetChosen = true
        // The earliest first DTS over all tracks, compared as media times.
        var firstByTrack: [Int: Int64] = [:]
        for item in preroll where firstByTrack[item.track] == nil { firstByTrack[item.track] = item.sample.dts }
        var earliest: MediaTime?
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

    private mutating func accept(_ input: Sample, track t: Int, wallClock: WallClock?) throws -> [SegmenterEvent] {
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
        if t == referenceTrack && referenceIsVideo && segmentStart == nil && !sample.isSync {
            // A video stream must start with a keyframe: drop what comes before the first one.
            droppedLeadingSamples += 1
            return []
        }
        if t != referenceTrack && referenceIsVideo && droppedLeadingSamples < 4096 {
            // Other tracks begin with the first video keyframe, so the first segment starts in sync.
            let refStart = segmentStart.map { MediaTime(value: $0, timescale: states[referenceTrack].timescale) }
            if refStart == nil || MediaTime(value: sample.pts, timescale: states[t].timescale) < refStart! {
                droppedLeadingSamples += 1
                return []
            }
        }
        states[t].lastDTS = sample.dts
        states[t].seenFirst = true

        if t == referenceTrack { decideBoundary(at: sample, wallClock: wallClock) }
        if let prev = states[t].pending {
            let d = sample.dts - prev.dts
            states[t].ready.append((prev, d))
            states[t].lastDuration = d
        }
        states[t].pending = sample
        return try emitReady()
    }

    /// A reference sample may end the segment (a sync sample far enough in) or, with parts, the part in progress.
    private mutating func decideBoundary(at sample: Sample, wallClock: WallClock?) {
        guard let start = segmentStart else {
            segmentStart = sample.dts
            partStart = sample.dts
            segmentWallClock = wallClock
            return
        }
        let lastSegmentStart = boundaries.last(where: \.endsSegment)?.time ?? start
        if sample.isSync && sample.dts - lastSegmentStart >= ticks(segmentDuration, track: referenceTrack) {
            boundaries.append(Boundary(time: sample.dts, endsSegment: true, wallClock: wallClock))
            return
        }
        if let fragmentDuration {
            let lastPartStart = boundaries.last?.time ?? partStart ?? start
            if sample.dts - lastPartStart >= max(1, ticks(fragmentDuration, track: referenceTrack)) {
                boundaries.append(Boundary(time: sample.dts, endsSegment: false, wallClock: nil))
            }
        }
    }

    private func ticks(_ time: MediaTime, track t: Int) -> Int64 {
        time.converted(to: states[t].timescale, rounding: .up).value
    }

    /// Writes every part (and segment) whose end every track has reached.
    private mutating func emitReady() throws -> [SegmenterEvent] {
        var out: [SegmenterEvent] = []
        while let b = boundaries.first {
            let cutTime = MediaTime(value: b.time, timescale: states[referenceTrack].timescale)
            let reached = states.indices.allSatisfy { t in
                if states[t].ended { return true }
                // A track that has not started yet does not hold the others back.
                guard let f = states[t].pending?.dts else { return t != referenceTrack }
                return MediaTime(value: f, timescale: states[t].timescale) >= cutTime
            }
            // A track that stalls (its input stopped) must not hold output back for more than a few cuts.
            guard reached || boundaries.count > Self.maxHeldCuts || boundaries.filter(\.endsSegment).count > 3 else { break }
            boundaries.removeFirst()
            out += try cut(b)
        }
        return out
    }

    /// Writes the ready samples before the boundary as one part; closes the segment when the boundary ends it.
    private mutating func cut(_ b: Boundary) throws -> [SegmenterEvent] {
        var out: [SegmenterEvent] = []
        let end = b.time == Int64.max ? nil : MediaTime(value: b.time, timescale: states[referenceTrack].timescale)
        if let part = try writePart(upTo: end) { out.append(.part(part)) }
        if b.endsSegment {
            out += try closeSegment(nextWallClock: b.wallClock)
        }
        partStart = b.time == Int64.max ? partStart : b.time
        if b.endsSegment && b.time != Int64.max { segmentStart = b.time }
        return out
    }

    private mutating func writePart(upTo end: MediaTime?) throws -> Part? {
        var taken: [ArraySlice<Ready>] = []
        for t in states.indices {
            let ready = states[t].ready
            var n = ready.count
            if let end {
                let limit = end.converted(to: states[t].timescale, rounding: .up).value
                n = ready.firstIndex { $0.sample.dts >= limit } ?? ready.count
            }
            taken.append(ready[..<n])
        }
        guard taken.contains(where: { !$0.isEmpty }) else { return nil }

        var trafs: [TrackFragment] = []
        var payload = 0
        for (t, items) in taken.enumerated() where !items.isEmpty {
            trafs.append(TrackFragment(
                trackID: tracks[t].trackID,
                baseMediaDecodeTime: UInt64(items.first!.sample.dts),
                samples: items.map {
                    FragmentSample(duration: UInt32(clamping: $0.duration), size: UInt32($0.sample.data.count),
                                   isSync: $0.sample.isSync,
                                   compositionOffset: Int32(clamping: $0.sample.pts - $0.sample.dts))
                },
                isVideo: tracks[t].kind == .video))
            payload += items.reduce(0) { $0 + $1.sample.data.count }
        }
        var bytes = try MediaSegmentBoxes.fragmentHeader(sequenceNumber: fragmentSequence, tracks: trafs)
        fragmentSequence &+= 1
        bytes.reserveCapacity(bytes.count + payload)
        for items in taken { for item in items { bytes += item.sample.data } }

        let ref = taken[referenceTrack]
        let duration = ref.reduce(Int64(0)) { $0 + $1.duration }
        let independent = parts.isEmpty ? (ref.first?.sample.isSync ?? true) : (ref.first?.sample.isSync ?? false)
        if parts.isEmpty { segmentStartsWithSync = ref.first?.sample.isSync ?? false }
        for t in states.indices {
            if states[t].segmentFirstDTS == nil { states[t].segmentFirstDTS = taken[t].first?.sample.dts }
            states[t].segmentSampleCount += taken[t].count
            states[t].ready.removeFirst(taken[t].count)
        }
        let index = parts.count
        parts.append((bytes, duration, independent))
        return Part(segmentSequence: nextSequence, index: index, bytes: bytes,
                    duration: MediaTime(value: duration, timescale: states[referenceTrack].timescale),
                    independent: independent)
    }

    private mutating func closeSegment(nextWallClock: WallClock?) throws -> [SegmenterEvent] {
        defer {
            parts = []
            segmentWallClock = nextWallClock
            for t in states.indices {
                states[t].segmentSampleCount = 0
                states[t].segmentFirstDTS = nil
            }
        }
        guard !parts.isEmpty else { return [] }
        var bytes = MediaSegmentBoxes.styp()
        bytes.reserveCapacity(bytes.count + parts.reduce(0) { $0 + $1.bytes.count })
        var ranges: [Range<Int>] = []
        for (i, p) in parts.enumerated() {
            let start = i == 0 ? 0 : bytes.count
            bytes += p.bytes
            ranges.append(start..<bytes.count)
        }
        let refTimescale = states[referenceTrack].timescale
        let segment = Segment(
            sequence: nextSequence,
            bytes: bytes,
            fragmentRanges: ranges,
            startTime: MediaTime(value: states[referenceTrack].segmentFirstDTS ?? segmentStart ?? 0, timescale: refTimescale),
            duration: MediaTime(value: parts.reduce(0) { $0 + $1.duration }, timescale: refTimescale),
            programDateTime: segmentWallClock,
            trackSampleCounts: states.map(\.segmentSampleCount),
            trackStartTimes: states.map { $0.segmentFirstDTS ?? -1 },
            startsWithSyncSample: segmentStartsWithSync)
        nextSequence += 1
        return [.segment(segment)]
    }
}
