import ISOBMFF
import MediaCore

/// Cuts samples of one or more tracks into segments of fMP4 fragments, for one or more renditions.
///
/// - Tracks are partitioned into `groups` (renditions): each group gets its own init segment and its own
///   fragments, holding only its tracks (a ladder: one group per video rung and one for audio, CMAF style; a
///   single muxed rendition: one group with every track). Every group is cut at the same boundaries, decided on
///   one reference track, so segment N and part N.i start at the same media time in every rendition.
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
/// - With `anchor: .inputClock`, the timeline is the input's own clock instead (see `TimelineAnchor`): two
///   segmenters fed the same input from different moments write the same segments under the same numbers.
public struct Segmenter {
    public let tracks: [TrackFormat]
    public let segmentDuration: MediaTime
    /// When set, each segment is written as several fragments of about this duration (low-latency parts).
    public let fragmentDuration: MediaTime?
    /// Track indices of each rendition, in order.
    public let groups: [[Int]]
    /// The init segment of each group (only its tracks).
    public let initSegments: [[UInt8]]
    /// The first group's init segment.
    public var initSegment: [UInt8] { initSegments[0] }
    /// Index into `tracks` of the track that decides where segments are cut.
    public let referenceTrack: Int
    /// Per group: the track whose samples define the group's part and segment durations (its first video track,
    /// else its first track).
    let groupReference: [Int]
    /// Samples dropped because they came before the stream's first keyframe or before time zero.
    public private(set) var droppedLeadingSamples = 0
    /// The largest timestamp magnitude taken, in track ticks: 2^60 (over 400,000 years at 90 kHz), so every offset,
    /// difference and sum of two of them stays within `Int64`.
    public static let timestampLimit: UInt64 = 1 << 60
    /// How many decided cuts may wait for a lagging track before fragments are written without it.
    static let maxHeldCuts = 12

    typealias Ready = (sample: Sample, duration: Int64)

    struct TrackState {
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
        /// End (decode time + duration) of the last sample written into a fragment.
        var end: Int64?
        /// Samples of the segment in progress already written into parts.
        var segmentSampleCount = 0
        var segmentFirstDTS: Int64?
        /// The smallest presentation time (`dts + composition offset`, as written) of the segment so far.
        var segmentEarliestPTS: Int64?
    }

    /// A decided cut, in reference-track ticks: the end of a part, and maybe of a segment.
    struct Boundary {
        var time: Int64
        var endsSegment: Bool
        var wallClock: WallClock?
    }

    var states: [TrackState]
    /// Where the output timeline's zero lies.
    public let anchor: TimelineAnchor
    /// Epoch-locked segments whose number is not their cell on the grid (keyframes further apart than a segment, or
    /// a timeline that moved): a redundant origin that joined at another moment may number them differently.
    public internal(set) var epochSlips = 0

    /// Per group: the parts of the segment in progress and the numbering of its objects.
    struct GroupState {
        var parts: [(bytes: MediaBytes, offset: Int, duration: Int64, independent: Bool)] = []
        var nextSequence: UInt64 = 0
        var fragmentSequence: UInt32 = 1
        var startsWithSync = false
        var discontinuity = false
        /// The fragment of the segment in progress that opens with its first video keyframe, once written.
        var keyframe: KeyframeFragment?
        /// The reference track's first sample when it is a sync sample (its array, shared): `Segment.keyframeSample`.
        var keyframeSample: [UInt8]?
    }
    var groupStates: [GroupState]
    /// The timeline this segmenter continues (after a codec change), if any.
    let continuing: Timeline?
    /// Output time = input time + `shift`, chosen once every track has shown its first timestamp.
    private var shift: MediaTime?
    /// End of the last sample written on the reference track, in its ticks.
    var referenceEnd: Int64?
    /// Start of the segment being filled and of its latest part, in reference-track ticks (after the offset).
    var segmentStart: Int64?
    /// Where the current segment-duration cell began: a segment is cut at the first sync sample one segment
    /// duration past it. The short first segment does not move it, so the second one ends on the grid.
    var gridStart: Int64?
    /// With parts, the first segment ends at the first sync sample one part in (one part long when the encoder put
    /// a keyframe there), so every client, LL or not, has a complete segment to start with after one part.
    var shortFirstSegmentDecided = false
    var partStart: Int64?
    var boundaries: [Boundary] = []
    /// Splice points still to cut at (reference-track ticks, output timeline), ascending: the first sync sample at or
    /// after each ends the segment in progress (`requestCut`).
    var spliceCuts: [Int64] = []
    /// Event messages for the segments not started yet, by the sequence number of the segment that carries them
    /// (`addEventMessage`): each group writes them after its `styp`.
    var eventMessages: [(sequence: UInt64, box: [UInt8])] = []
    /// Cuts made for splice points: where each was asked for and the sync sample it fell on (reference ticks).
    public internal(set) var spliceCutsMade: [(requested: Int64, at: Int64)] = []
    var segmentWallClock: WallClock?
    /// Samples held until every track has shown its first timestamp (to choose the common offset).
    var preroll: [(track: Int, sample: Sample, wallClock: WallClock?)] = []
    private var offsetChosen = false
    /// Epoch-locked from a fresh start: the reference decode time (output ticks) where output begins.
    private var epochJoin: Int64?
    /// How many samples an epoch-locked start holds while looking for the next cell's first sync sample.
    static let maxEpochPreroll = 4096
    /// Epoch-locked without a numbering to continue: the first segment's number is its cell on the grid.
    let numberedFromGrid: Bool
    private var prerollReferenceStart: Int64?

    /// - Parameters:
    ///   - groups: track indices per rendition (default: one rendition with every track).
    ///   - firstSequences: the first segment sequence number of each group (to continue a numbering).
    ///   - continuing: the timeline of the segmenter this one follows (after a codec change): the first segment of
    ///     every group is marked `discontinuity` and the earliest sample decodes where that one's reference track
    ///     ended, whatever the input's timestamps do.
    public init(tracks: [TrackFormat], segmentDuration: MediaTime, fragmentDuration: MediaTime? = nil,
                groups: [[Int]]? = nil, firstSequences: [UInt64]? = nil, continuing: Timeline? = nil,
                anchor: TimelineAnchor = .startsAtZero) throws {
        guard !tracks.isEmpty else { throw SegmenterError.noTracks }
        let groups = groups ?? [Array(tracks.indices)]
        guard groups.allSatisfy({ !$0.isEmpty }), groups.flatMap({ $0 }).sorted() == Array(tracks.indices) else {
            throw SegmenterError.invalidGroups
        }
        self.tracks = tracks
        self.groups = groups
        self.segmentDuration = segmentDuration
        self.fragmentDuration = fragmentDuration
        self.referenceTrack = tracks.firstIndex { $0.kind == .video } ?? 0
        self.groupReference = groups.map { g in g.first { tracks[$0].kind == .video } ?? g[0] }
        self.states = tracks.map { TrackState(timescale: $0.timescale) }
        self.initSegments = try groups.map { g in try InitSegment.make(tracks: g.map { tracks[$0] }) }
        self.continuing = continuing
        self.anchor = anchor
        self.numberedFromGrid = firstSequences == nil
        self.groupStates = groups.indices.map { i in
            GroupState(nextSequence: firstSequences?[i] ?? 0, discontinuity: continuing != nil)
        }
    }

    /// Where this segmenter's output timeline stands: what a segmenter continuing it needs.
    public struct Timeline: Sendable, Equatable {
        /// Output time = input time + shift.
        public var shift: MediaTime
        /// End of the last sample written on the reference track (output time).
        public var end: MediaTime
        /// Per track: the end of its last sample written (output time), `nil` for a track with none.
        public var trackEnds: [MediaTime?]

        public init(shift: MediaTime, end: MediaTime, trackEnds: [MediaTime?] = []) {
            self.shift = shift
            self.end = end
            self.trackEnds = trackEnds
        }
    }

    /// Output time − input time, once chosen (when every track has shown its first timestamp).
    public var timelineShift: MediaTime? { shift }

    /// `nil` until a sample was written.
    public var timeline: Timeline? {
        guard let shift, let end = endTime else { return nil }
        return Timeline(shift: shift, end: end,
                        trackEnds: states.map { s in s.end.map { MediaTime(value: $0, timescale: s.timescale) } })
    }

    /// How far a track's own end may lie from where the common shift puts its first sample for the continued
    /// timeline to follow that end instead (tracks never end at exactly the same time: a frame or two apart).
    static let trackContinuityTolerance = MediaTime(value: 1, timescale: 10)

    /// The end of the last sample written on the reference track (where a continuing timeline starts).
    public var endTime: MediaTime? {
        referenceEnd.map { MediaTime(value: $0, timescale: states[referenceTrack].timescale) }
    }

    /// The sequence number the next segment of each group will get.
    public var nextSequences: [UInt64] { groupStates.map(\.nextSequence) }

    var referenceIsVideo: Bool { tracks[referenceTrack].kind == .video }

    /// Feeds one sample (in DTS order within its track) and returns the segments it completed.
    public mutating func append(_ sample: Sample, track: Int, wallClock: WallClock? = nil) throws -> [Segment] {
        try appendEvents(sample, track: track, wallClock: wallClock).compactMap(\.segment)
    }

    /// Feeds one sample and returns the parts and segments it completed, in publishing order.
    public mutating func appendEvents(_ sample: Sample, track: Int, wallClock: WallClock? = nil) throws -> [SegmenterEvent] {
        guard states.indices.contains(track) else { throw SegmenterError.unknownTrack(track) }
        guard sample.dts.magnitude <= Self.timestampLimit, sample.pts.magnitude <= Self.timestampLimit else {
            throw SegmenterError.timestampOutOfRange(track: track, dts: sample.dts, pts: sample.pts)
        }
        if !offsetChosen {
            preroll.append((track, sample, wallClock))
            states[track].seenFirst = true
            // Wait until every track has a first timestamp, but not forever: a silent track must not stall output.
            if !states.allSatisfy(\.seenFirst) && preroll.count < 256 { return [] }
            if anchor.isEpoch && numberedFromGrid && continuing == nil {
                // Epoch-locked from a fresh start, the segment in progress when this process joined the input lacks
                // what was sent before (a redundant origin started earlier has it whole): output begins at the next
                // cell's first sync sample instead, the first segment every origin receives complete.
                guard let join = epochJoinPoint() ?? (preroll.count >= Self.maxEpochPreroll ? Int64.min : nil) else { return [] }
                epochJoin = join
            }
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
        } else if groupStates.contains(where: { !$0.parts.isEmpty }) {
            out += try closeSegment(nextWallClock: nil)
        }
        return out
    }

    // MARK: - Internals

    private mutating func releasePreroll() throws -> [SegmenterEvent] {
        chooseOffset()
        let held = preroll
        preroll = []
        // Where the reference track will start (its first keyframe held here, after the offset): other tracks'
        // samples held before it (a decoder's delay puts audio first) are judged against it, not dropped for
        // arriving early.
        if let epochJoin, epochJoin != Int64.min {
            prerollReferenceStart = epochJoin
        } else if referenceIsVideo, let first = held.first(where: { $0.track == referenceTrack && $0.sample.isSync }) {
            prerollReferenceStart = first.sample.dts + states[referenceTrack].offset
        }
        var out: [SegmenterEvent] = []
        for item in held { out += try accept(item.sample, track: item.track, wallClock: item.wallClock) }
        return out
    }

    private mutating func chooseOffset() {
        offsetChosen = true
        let (firstByTrack, earliest) = prerollFirsts()
        guard let earliest else { return }
        let shift = shift(forEarliest: earliest)
        self.shift = shift
        for t in states.indices {
            // Rounded up: no track's first DTS lands before its place (never negative from the start).
            states[t].offset = MediaTime.rescale(shift.value, from: shift.timescale, to: states[t].timescale, rounding: .up)
            // Continuing a timeline, each track starts exactly where its own last sample ended when that is within a
            // frame or two of the common placement: every track's tfdt then runs on without a gap or an overlap
            // (players that ignore EXT-X-DISCONTINUITY play through), and A/V sync moves by less than a frame.
            guard case .startsAtZero = anchor, let continuing, continuing.trackEnds.indices.contains(t), let end = continuing.trackEnds[t],
                  let first = firstByTrack[t] else { continue }
            let own = end.converted(to: states[t].timescale, rounding: .up).value - first
            let gap = MediaTime(value: abs(own - states[t].offset), timescale: states[t].timescale)
            if gap <= Self.trackContinuityTolerance { states[t].offset = own }
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
        if t == referenceTrack, segmentStart == nil, let epochJoin, sample.dts < epochJoin {
            // Epoch-locked: the segment this process joined in the middle of is not published.
            droppedLeadingSamples += 1
            return []
        }
        if t == referenceTrack && referenceIsVideo && segmentStart == nil && !sample.isSync {
            // A video stream must start with a keyframe: drop what comes before the first one.
            droppedLeadingSamples += 1
            return []
        }
        if t != referenceTrack && (referenceIsVideo || epochJoin != nil) && continuing == nil
            && droppedLeadingSamples < (epochJoin == nil ? 4096 : 4096 + Self.maxEpochPreroll) {
            // Other tracks begin with the first video keyframe, so the first segment starts in sync. (Not on a
            // continued timeline: there the audio that precedes the new keyframe is the tail of the old encode,
            // late in the interleaving, and dropping it would leave a hole.)
            let refStart = (segmentStart ?? prerollReferenceStart).map { MediaTime(value: $0, timescale: states[referenceTrack].timescale) }
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
}
