import Logging
import ISOBMFF
import MediaCore
import Segmenter

/// The second stage of the producer chain, and the one place a `Segmenter` is made: it keeps one timeline through
/// everything that breaks it, each break an `EXT-X-DISCONTINUITY` in every rendition with the numbering and the
/// timeline continued (RFC 8216 §4.3.2.3: the tag "MUST be present if there is a change in ... encoding parameters
/// ... timestamp sequence"):
///
/// - **A codec change** (new SPS/PPS, a new resolution): a new segmenter with the new formats (a new init segment).
/// - **A timestamp jump** (forward by more than `maxTimestampGap`, backward by more than `maxTimestampStepBack`: a
///   splice, an encoder restart, a shifted concatenation): a new segmenter on the same formats. No segment spans the
///   jump, `EXT-X-TARGETDURATION` never grows, nothing is dropped.
/// - **A reconnect** (a publisher went away): the segment in progress ends; the next connection's segmenter
///   continues the numbering and the timeline once its formats are known, with a new init segment only if they differ.
///
/// In the first two cases the old segmenter still takes the other tracks' samples that come before the break (an
/// MPEG-TS mux delivers audio late: the old encode's audio tail arrives after the new keyframe), so the last segment
/// before the discontinuity ends with all its tracks; the new segmenter takes the rest, and its output waits until
/// the old one has published its last segment.
public struct TimelineSupervisor {
    public enum Output: Sendable {
        /// A segmenter was made: each rendition's init segment (and the tracks it holds).
        case inits([(bytes: [UInt8], tracks: [TrackFormat])])
        case part(Part)
        case segment(Segment)
    }

    public let groups: [[Int]]
    public let segmentDuration: MediaTime
    public let partDuration: MediaTime?
    /// `--epoch-from-input`: the timeline and numbering come from the input's clock (`TimelineAnchor.inputClock`).
    public let epochLocked: Bool
    let logger: Logger
    /// A forward step between two samples of a track beyond this is a jump, not a gap to play through (a segment
    /// would last that long). An encoder's frame spacing, even at 1 fps or with dropped frames, stays far below it.
    public static let maxTimestampGap = MediaTime.seconds(5)
    /// A backward step beyond this is a jump; smaller ones (a muxer's jitter) are smoothed by the segmenter.
    public static let maxTimestampStepBack = MediaTime.seconds(1)

    private var segmenter: Segmenter?
    private var handover: Handover?
    /// A format change announced and not yet applied: it takes effect with the track's next sample.
    private var pendingChange: (track: Int, formats: [TrackFormat])?
    /// Per output track: the decode time of its latest sample (its own ticks), to see a jump.
    private var lastDTS: [Int64?]
    /// Splices asked for before the timeline was chosen (input times).
    private var pendingCuts: [MediaTime] = []
    /// After `reconnect()`: what the next connection's segmenter continues.
    private var resume: (sequences: [UInt64], timeline: Segmenter.Timeline?)?

    private struct Handover {
        enum Cause {
            /// New codec parameters; `at` is the input presentation time of the first sample in the new format (its
            /// keyframe): where the old segment's other tracks end.
            case format(at: MediaTime)
            /// The timestamps jumped (from the changed track's previous decode time): each other track crosses over at
            /// its own jump.
            case timestampJump(from: MediaTime)
        }
        let formats: [TrackFormat]
        let changed: Int
        let cause: Cause
        /// Decode time of the changed track's first sample on the new side.
        let start: MediaTime
        /// Tracks whose samples now go to the new segmenter.
        var drained: Set<Int>
        /// Samples for the new segmenter, made once the old one has finished (its numbering is final then).
        var pending: [(track: Int, sample: Sample, wallClock: WallClock?)] = []
        /// Where the video crossed, after another track's format change (its first keyframe past the change).
        var videoCrossing: MediaTime?
        /// The longest the other tracks are waited for (a stalled or ended track must not hold the stream).
        static let limit = MediaTime.seconds(2)
    }

    public init(groups: [[Int]], trackCount: Int, segmentDuration: MediaTime, partDuration: MediaTime?,
                epochLocked: Bool = false, logger: Logger) {
        self.groups = groups
        self.segmentDuration = segmentDuration
        self.partDuration = partDuration
        self.epochLocked = epochLocked
        self.logger = logger
        lastDTS = Array(repeating: nil, count: trackCount)
    }

    /// Whether a segmenter runs (the stream started, and no reconnect is waiting for its next connection).
    public var isRunning: Bool { segmenter != nil }
    /// Output time − input time of the running segmenter, once it chose it (`Segmenter.Timeline.shift`).
    public var timelineShift: MediaTime? { segmenter?.timelineShift }
    /// Epoch-locked segments not numbered by their cell on the input clock's grid (`Segmenter.epochSlips`).
    public var epochSlips: Int { segmenter?.epochSlips ?? 0 }

    private var anchor: TimelineAnchor { epochLocked ? .epochLocked() : .startsAtZero }

    /// The formats are known: the first segmenter, or after a reconnect one that continues the numbering and timeline.
    public mutating func start(_ formats: [TrackFormat]) throws -> [Output] {
        let r = resume
        resume = nil
        let seg = try Segmenter(tracks: formats, segmentDuration: segmentDuration, fragmentDuration: partDuration,
                                groups: groups, firstSequences: r?.sequences, continuing: r?.timeline, anchor: anchor)
        segmenter = seg
        return [Self.inits(seg)]
    }

    /// A splice at input time `t`: a segment boundary at the first reference keyframe at or after it (`Segmenter.
    /// requestCut`). `false` when no timeline is chosen yet (the stream has not started).
    /// Before the timeline is chosen, the cut waits for it.
    public mutating func requestCut(atInput t: MediaTime) {
        guard let shift = segmenter?.timelineShift else { pendingCuts.append(t); return }
        segmenter!.requestCut(at: t.converted(to: shift.timescale, rounding: .nearest) + shift)
    }

    /// An `emsg` in the next segment of every rendition (`Segmenter.addEventMessage`); `false` before the stream
    /// started.
    @discardableResult
    public mutating func addEventMessage(_ m: EventMessage) throws -> Bool {
        guard segmenter != nil else { return false }
        try segmenter!.addEventMessage(m)
        return true
    }

    /// New codec parameters on `track`: applied from its next sample.
    public mutating func formatChange(track: Int, _ formats: [TrackFormat]) {
        pendingChange = (track, formats)
    }

    public mutating func accept(_ s: Sample, track: Int, wallClock: WallClock?) throws -> [Output] {
        // The segmenter is mutated in place (`segmenter!`): a copy would duplicate its sample buffers on every sample.
        guard let tracks = segmenter?.tracks else { return [] }
        if handover == nil, let change = pendingChange, change.track == track {
            pendingChange = nil
            if change.formats != tracks {
                let f = change.formats[track]
                beginHandover(formats: change.formats, changed: track, cause: .format(at: MediaTime(value: s.pts, timescale: f.timescale)),
                              start: MediaTime(value: s.dts, timescale: f.timescale))
            }
        }
        let timescale = (handover?.formats ?? tracks)[track].timescale
        let previous = lastDTS[track]
        let jumped = timestampJumped(s, track: track, timescale: timescale)
        if handover == nil && jumped, let previous {
            beginHandover(formats: tracks, changed: track,
                          cause: .timestampJump(from: MediaTime(value: previous, timescale: timescale)),
                          start: MediaTime(value: s.dts, timescale: timescale))
        }
        guard var h = handover else {
            let out = try segmenter!.appendEvents(s, track: track, wallClock: wallClock).map(Self.output)
            if !segmenter!.spliceCutsMade.isEmpty { logSpliceCuts() }
            if !pendingCuts.isEmpty, segmenter!.timelineShift != nil {
                let cuts = pendingCuts
                pendingCuts = []
                for t in cuts { requestCut(atInput: t) }
            }
            return out
        }
        let crossed: Bool
        switch h.cause {
        case _ where h.drained.contains(track): crossed = true
        case .format(let at) where track == video(tracks) && h.changed != video(tracks):
            // Another track's format changed: the video crosses at its next keyframe (the new segment must start with
            // one), and the new format's samples that came before it are dropped when the handover ends.
            crossed = s.isSync && MediaTime(value: s.pts, timescale: timescale) >= at
            if crossed { h.videoCrossing = MediaTime(value: s.pts, timescale: timescale) }
        case .format(let at): crossed = MediaTime(value: s.pts, timescale: timescale) >= at
        case .timestampJump: crossed = jumped
        }
        var out: [Output] = []
        if crossed {
            h.drained.insert(track)
            h.pending.append((track, s, wallClock))
        } else {
            out = try segmenter!.appendEvents(s, track: track, wallClock: wallClock).map(Self.output)
        }
        handover = h
        if h.drained.count == h.formats.count
            || (track == h.changed && MediaTime(value: s.dts, timescale: timescale) - h.start > Handover.limit) {
            out += try completeHandover()
        }
        return out
    }

    /// The input is being opened again: the segment in progress ends now, so viewers get every complete frame; the
    /// next connection continues the numbering and the timeline (`start`). Until it sends something, the window keeps
    /// what it has.
    public mutating func reconnect() throws -> [Output] {
        lastDTS = Array(repeating: nil, count: lastDTS.count)
        pendingChange = nil
        guard segmenter != nil else { return [] }
        var out = try completeHandover()
        out += try segmenter!.finishEvents().map(Self.output)
        resume = (segmenter!.nextSequences, segmenter!.timeline)
        segmenter = nil
        return out
    }

    /// The end of input: the last parts and segments.
    public mutating func finish() throws -> [Output] {
        guard segmenter != nil else { return [] }
        var out = try completeHandover()
        out += try segmenter!.finishEvents().map(Self.output)
        return out
    }

    // MARK: - Internals

    /// How far each splice cut fell from its splice (a copied input cuts at its next keyframe).
    private mutating func logSpliceCuts() {
        guard let ts = segmenter.map({ $0.tracks[$0.referenceTrack].timescale }) else { return }
        for c in segmenter!.takeSpliceCuts() {
            let late = MediaTime(value: c.at - c.requested, timescale: ts)
            if late.value <= 0 {
                logger.info("splice at \(Self.seconds(MediaTime(value: c.requested, timescale: ts))) s: a segment starts on the keyframe there")
            } else {
                logger.notice("splice at \(Self.seconds(MediaTime(value: c.requested, timescale: ts))) s: the segment starts at the first keyframe after it, \(Self.seconds(late)) s later (the input's keyframes are copied)")
            }
        }
    }

    private func video(_ tracks: [TrackFormat]) -> Int? { tracks.firstIndex { $0.kind == .video } }

    /// Whether `s` jumped from the track's previous sample (and remembers it).
    private mutating func timestampJumped(_ s: Sample, track: Int, timescale: Int32) -> Bool {
        defer { lastDTS[track] = s.dts }
        guard let last = lastDTS[track] else { return false }
        let step = MediaTime(value: s.dts - last, timescale: timescale)
        return step > Self.maxTimestampGap || step < .zero(timescale) - Self.maxTimestampStepBack
    }

    private mutating func beginHandover(formats: [TrackFormat], changed: Int, cause: Handover.Cause, start: MediaTime) {
        switch cause {
        case .format:
            logger.notice("the input's \(formats[changed].kind.rawValue) format changed (\(Self.describe(formats[changed]))): new init segment, EXT-X-DISCONTINUITY")
        case .timestampJump(let from):
            logger.notice("the input's \(formats[changed].kind.rawValue) timestamps jumped from \(Self.seconds(from)) s to \(Self.seconds(start)) s: EXT-X-DISCONTINUITY, the timeline continues")
        }
        handover = Handover(formats: formats, changed: changed, cause: cause, start: start, drained: [changed])
    }

    /// The old segmenter's last segment, then the new init segments, then what the new segmenter produced meanwhile.
    private mutating func completeHandover() throws -> [Output] {
        guard var h = handover, var old = segmenter.take() else { return [] }
        handover = nil
        let v = video(h.formats)
        if let crossing = h.videoCrossing {
            // The new segment starts at the video's keyframe: the changed track's samples before it have no place (the
            // old init segment cannot carry them, and the new segment cannot start before its keyframe).
            let before = h.pending.count
            h.pending.removeAll { $0.track != v && MediaTime(value: $0.sample.pts, timescale: h.formats[$0.track].timescale) < crossing }
            if h.pending.count < before {
                logger.warning("dropped \(before - h.pending.count) \(h.formats[h.changed].kind.rawValue) frames between the format change and the next video keyframe")
            }
        }
        var out = try old.finishEvents().map(Self.output)
        var seg = try Segmenter(tracks: h.formats, segmentDuration: segmentDuration, fragmentDuration: partDuration,
                                groups: groups, firstSequences: old.nextSequences, continuing: old.timeline, anchor: anchor)
        out.append(Self.inits(seg))
        for p in h.pending { out += try seg.appendEvents(p.sample, track: p.track, wallClock: p.wallClock).map(Self.output) }
        segmenter = seg
        return out
    }

    private static func inits(_ seg: Segmenter) -> Output {
        .inits(seg.initSegments.enumerated().map { g, bytes in (bytes, seg.groups[g].map { seg.tracks[$0] }) })
    }

    private static func output(_ e: SegmenterEvent) -> Output {
        switch e {
        case .part(let p): .part(p)
        case .segment(let s): .segment(s)
        }
    }

    static func describe(_ f: TrackFormat) -> String {
        f.kind == .video ? "\(f.codecString) \(f.width)x\(f.height)" : "\(f.codecString) \(f.sampleRate) Hz \(f.channelCount) ch"
    }

    /// Seconds to the millisecond, for the log.
    private static func seconds(_ t: MediaTime) -> String {
        "\(Double(MediaTime.rescale(t.value, from: t.timescale, to: 1000)) / 1000)"
    }
}
