import Logging
import ISOBMFF
import MediaCore
import MediaPresentation
import Segmenter

/// A producer's samples to its consumers' events: format gate → timeline supervisor (segmenters) → segment publisher
/// (STYLE.md §10; shaka-packager's handler graph). Each stage is a value tested on its own; this only passes each
/// stage's output to the next and the last one's to `output` (one producer → a fan-out of consumers).
public struct ProducerChain {
    public struct Settings: Sendable {
        public var segmentDuration: MediaTime
        /// LL-HLS part duration; `nil`: one fragment per segment.
        public var partDuration: MediaTime?
        /// What is known of the keyframes before the stream starts (`nil`: measure the first GOP, for copied live
        /// video; `.onGrid` when encoded here).
        public var keyframes: TimingPlanner.Keyframes?
        /// `--epoch-from-input` (see `TimelineAnchor.inputClock`).
        public var epochLocked: Bool
        /// `--events inband`: every SCTE-35 event is also an `emsg` in the segments (`TimedEvent.scte35InbandScheme`).
        public var scte35Inband: Bool
        /// Whether the samples' arrival follows the media's time (a live input, or a file paced at real time): the
        /// program date-time is re-anchored when arrival drifts from it (a stalled input). `false` for a file read as
        /// fast as it goes (`package`, `--no-realtime`): its dates follow the media from the first segment's.
        public var arrivalFollowsMedia: Bool

        public init(segmentDuration: MediaTime, partDuration: MediaTime?, keyframes: TimingPlanner.Keyframes? = .onGrid,
                    epochLocked: Bool = false, scte35Inband: Bool = false, arrivalFollowsMedia: Bool = true) {
            self.segmentDuration = segmentDuration
            self.partDuration = partDuration
            self.keyframes = keyframes
            self.epochLocked = epochLocked
            self.scte35Inband = scte35Inband
            self.arrivalFollowsMedia = arrivalFollowsMedia
        }
    }

    public let plan: RenditionPlan
    public let settings: Settings
    let output: any PresentationConsumer
    let logger: Logger
    private var gate: FormatGate
    private var supervisor: TimelineSupervisor
    private var publisher: SegmentPublisher
    /// The layout was announced (the stream started).
    public private(set) var started = false
    /// Timed events taken and not yet placed (their segment is not finished), in the input's timeline.
    private var pendingEvents: [(event: TimedEvent, at: MediaTime)] = []
    /// The newest presentation time taken (any track), where the events API's "now" is.
    private var inputEdge: MediaTime?
    /// Per track, its timescale once its format is known (0 before).
    private var timescales: [Int32] = []
    /// Per subtitle rendition, the cues taken (in the input's timeline) that may still show in a segment to come.
    private var cues: [[SubtitleCue]]
    /// The first rendition's init segment the subtitle segments follow: a new one (a new timeline) starts a
    /// discontinuity in theirs too.
    private var referenceInit: [UInt8]?
    private var subtitleDiscontinuity = false
    /// The first rendition's reference track's timescale: the subtitle segments' (their `tfdt` is the video's).
    private var subtitleTimescale: Int32 = 90_000

    public init(plan: RenditionPlan, kinds: [TrackFormat.Kind], settings: Settings, output: any PresentationConsumer,
                logger: Logger) {
        self.plan = plan
        self.settings = settings
        self.output = output
        self.logger = logger
        cues = Array(repeating: [], count: plan.subtitles.count)
        gate = FormatGate(kinds: kinds, measureGOP: settings.keyframes == nil)
        supervisor = TimelineSupervisor(groups: plan.groups, trackCount: kinds.count, segmentDuration: settings.segmentDuration,
                                        partDuration: settings.partDuration, epochLocked: settings.epochLocked, logger: logger)
        publisher = SegmentPublisher(targetDuration: TimingPlanner.targetDuration(segmentDuration: settings.segmentDuration,
                                                                                  keyframes: .onGrid),
                                     epochLocked: settings.epochLocked, reanchorsOnDrift: settings.arrivalFollowsMedia,
                                     logger: logger)
    }

    public mutating func accept(_ event: SourceEvent) throws {
        switch event {
        case .event(let e):
            return try take(e)
        case .cues(let subtitle, let list):
            guard cues.indices.contains(subtitle) else { return }
            // In order of their start (WebVTT §4.1), a file's, a track's and posted cues alike; equal starts keep
            // their order.
            cues[subtitle] = (cues[subtitle] + list).enumerated()
                .sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
            return
        case .format(let track, let f):
            if track >= 0 {
                if timescales.count <= track { timescales += Array(repeating: 0, count: track + 1 - timescales.count) }
                timescales[track] = f.timescale
            }
        case .samples(let track, let samples, _):
            // The newest presentation time (no array made: this runs for every sample).
            if track >= 0, track < timescales.count, timescales[track] > 0, var pts = samples.first?.pts {
                for s in samples where s.pts > pts { pts = s.pts }
                let t = MediaTime(value: pts, timescale: timescales[track])
                if inputEdge.map({ t > $0 }) ?? true { inputEdge = t }
            }
        }
        if case .samples(let track, let samples, let wallClock) = event {
            publisher.arrival = wallClock
            // The open gate passes samples through: straight to the supervisor, without an array of its outputs.
            if gate.isOpen {
                for s in samples { try emit(try supervisor.accept(s, track: track, wallClock: wallClock)) }
                return
            }
        }
        for g in try gate.accept(event) { try pass(g) }
    }

    /// The input is being opened again (see `TimelineSupervisor.reconnect`, `FormatGate.reconnect`).
    public mutating func reconnect() throws {
        gate.reconnect(resume: started)
        try emit(try supervisor.reconnect())
        publisher.reconnected()
    }

    /// The end of input: the last segments, then `end` (when the stream started).
    public mutating func finish() throws {
        for g in gate.finish() { try pass(g) }
        guard started else { return }
        try emit(try supervisor.finish())
        try output.consume(.end)
    }

    private mutating func pass(_ g: FormatGate.Output) throws {
        switch g {
        case .start(let formats, let frameDurations, let gop, _):
            if !started {
                let keyframes = settings.keyframes ?? gop.map { .measuredGOP($0) } ?? .unknown
                let policy = TimingPlanner.policy(segmentDuration: settings.segmentDuration, partDuration: settings.partDuration,
                                                  formats: formats, groups: plan.groups, keyframes: keyframes,
                                                  frameDurations: frameDurations)
                try output.consume(.layout(plan.layout, policy))
                publisher.targetDuration = policy.targetDuration
                started = true
            } else if gate.droppedBeforeKeyframe > 0 {
                logger.info("the new connection starts at its first keyframe: \(gate.droppedBeforeKeyframe) earlier frames dropped")
            }
            try emit(try supervisor.start(formats))
        case .sample(let track, let sample, let wallClock):
            try emit(try supervisor.accept(sample, track: track, wallClock: wallClock))
        case .formatChange(let track, let formats):
            supervisor.formatChange(track: track, formats)
        }
    }

    private mutating func emit(_ outputs: [TimelineSupervisor.Output]) throws {
        for o in outputs {
            let events = publisher.events(o, epochSlips: supervisor.epochSlips)
            if case .segment(let s) = o, s.group == 0, !pendingEvents.isEmpty,
               case .segment(_, let info, _) = events.first, let pdt = info.programDateTime {
                for e in place(before: info.startTime + info.duration, segmentStart: info.startTime, date: pdt) {
                    try output.consume(.event(e))
                }
            }
            for e in events { try output.consume(e) }
            if cues.isEmpty { continue }
            switch o {
            case .inits(let inits):
                // A subtitle rendition's init is empty (WebVTT segments need none): it says the rendition started.
                if let first = inits.first {
                    if let previous = referenceInit, previous != first.bytes { subtitleDiscontinuity = true }
                    referenceInit = first.bytes
                    if let t = first.tracks.first(where: { $0.kind == .video }) ?? first.tracks.first { subtitleTimescale = t.timescale }
                }
                for k in cues.indices {
                    try output.consume(.initSegment(rendition: plan.renditions.count + k, bytes: [], tracks: []))
                    // Its wvtt form for DASH (ISO/IEC 14496-30): a text track in the video's timescale.
                    let language = plan.subtitles[k].subtitleLabel?.language?.iso639T ?? "und"
                    try output.consume(.initSegment(rendition: plan.renditions.count + cues.count + k,
                                                    bytes: try WebVTTTrack.initSegment(timescale: UInt32(subtitleTimescale),
                                                                                       language: language),
                                                    tracks: []))
                }
            case .segment(let s) where s.group == 0:
                guard case .segment(_, let info, _)? = events.first else { break }
                try publishSubtitles(like: info)
            default:
                break
            }
        }
    }

    // MARK: - Subtitles

    /// A cue posted to the stream (the live cue API) as the source event of its subtitle rendition: its times, counted
    /// from the live edge (the newest media taken), on the input's clock (or already on it: `onInputClock`). `nil`
    /// (logged) before any media, or for a language the stream has no subtitle rendition in.
    public func resolve(_ posted: PostedCue) -> SourceEvent? {
        guard let k = plan.subtitles.firstIndex(where: { $0.language == posted.language }) else {
            logger.warning("posted subtitle cue in \(posted.language): the stream has no subtitle rendition in it: dropped")
            return nil
        }
        if posted.onInputClock {
            // Placed by an `X-TIMESTAMP-MAP` MPEGTS value, 33 bits of 90 kHz, where the demuxer's clock runs on past a
            // wrap (26.5 h): the turn nearest the media. (A cue taken before any media stays where it says.)
            guard let edge = inputEdge else { return .cues(subtitle: k, [posted.cue]) }
            var cue = posted.cue
            let start = TimelineAnchor.nearestTurn(of: cue.start, to: edge)
            let moved = start - cue.start.converted(to: start.timescale, rounding: .nearest)
            guard moved.value != 0 else { return .cues(subtitle: k, [cue]) }
            cue.start = start
            cue.end = cue.end.converted(to: start.timescale, rounding: .nearest) + moved
            return .cues(subtitle: k, [cue])
        }
        guard let edge = inputEdge else {
            logger.warning("posted subtitle cue before any media: dropped")
            return nil
        }
        var cue = posted.cue
        cue.start = edge + cue.start.converted(to: edge.timescale, rounding: .nearest)
        cue.end = edge + cue.end.converted(to: edge.timescale, rounding: .nearest)
        return .cues(subtitle: k, [cue])
    }

    /// One WebVTT segment per subtitle rendition on the first rendition's segment `info`: the same sequence number,
    /// start, duration, program date-time and discontinuity, with every cue that shows in it (RFC 8216 §3.5); and the
    /// same span as a `wvtt` fragment for its DASH form.
    private mutating func publishSubtitles(like info: SegmentInfo) throws {
        guard let shift = supervisor.timelineShift else { return }
        let start = info.startTime, end = info.startTime + info.duration
        for k in cues.indices {
            let placed = cues[k].map { $0.placed(shift: shift, timescale: start.timescale) }
            let bytes = WebVTTSegment.make(placed, from: start, to: end)
            var segment = SegmentInfo(sequence: info.sequence, startTime: start, duration: info.duration, byteCount: bytes.count,
                                      programDateTime: info.programDateTime,
                                      discontinuity: info.discontinuity || subtitleDiscontinuity)
            segment.format = .webVTT
            try output.consume(.segment(rendition: plan.renditions.count + k, segment, bytes: bytes))
            let fragment = try WebVTTTrack.segment(placed, from: start, to: end,
                                                   sequenceNumber: UInt32(truncatingIfNeeded: info.sequence &+ 1))
            var mp4 = segment
            mp4.format = .fragmentedMP4
            mp4.byteCount = fragment.count
            try output.consume(.segment(rendition: plan.renditions.count + cues.count + k, mp4, bytes: fragment))
            // A cue that ended by this segment's end shows in no later one.
            cues[k] = zip(cues[k], placed).filter { $0.1.end > end }.map(\.0)
        }
        subtitleDiscontinuity = false
    }

    // MARK: - Timed events

    /// An event from the source: its time resolved on the input's clock now (the API's "now" is the newest sample
    /// taken), then held until a finished segment dates it (`place`).
    private mutating func take(_ e: TimedEvent) throws {
        var at: MediaTime
        switch e.time {
        case .input(let t): at = t
        case .liveEdge(let after):
            guard let edge = inputEdge else {
                logger.warning("timed event '\(e.id)' before any media: dropped")
                return
            }
            at = edge + after
        }
        // An SCTE-35 time is 33 bits of 90 kHz; the demuxer's timestamps run on past a wrap: the turn nearest the media.
        if at.timescale == TimedEvent.ticks, let edge = inputEdge { at = TimelineAnchor.nearestTurn(of: at, to: edge) }
        if let edge = inputEdge, edge - at > MediaTime.seconds(1) {
            logger.notice("timed event '\(e.id)' (\(e.kind.rawValue)) is \(Self.millis(edge - at)) ms behind the media: placed where it was due")
        }
        if e.kind == .id3 {
            // In the next segment of every rendition, at its time on the output timeline (or that segment's start).
            guard let shift = supervisor.timelineShift else {
                logger.warning("ID3 event '\(e.id)' before the stream started: dropped")
                return
            }
            let t = at.converted(to: shift.timescale, rounding: .nearest) + shift
            try supervisor.addEventMessage(EventMessage(schemeIdUri: EventMessage.id3Scheme, timescale: UInt32(t.timescale),
                                                        presentationTime: UInt64(max(0, t.value)), id: Self.messageID(e.id),
                                                        data: e.section))
            // Placed with the segment it falls in, as a splice is: the presentation learns that its segments carry
            // ID3 (the MPD declares the scheme), and HLS lists its text frames on the program date-time clock.
            pendingEvents.append((e, at))
            return
        }
        // A break starts or ends here: a segment starts here too (at the first keyframe at or after it).
        if e.kind.isSplice { supervisor.requestCut(atInput: at) }
        if settings.scte35Inband {
            // In the next segment to start, in every rendition: ahead of the splice when the cue came ahead of it.
            // An out and its in share the event's id, not the emsg's (a client drops a repeated scheme, value and id).
            if let shift = supervisor.timelineShift {
                let t = at.converted(to: shift.timescale, rounding: .nearest) + shift
                let length = e.plannedDuration.map { UInt32(clamping: $0.converted(to: t.timescale, rounding: .nearest).value) }
                try supervisor.addEventMessage(EventMessage(schemeIdUri: TimedEvent.scte35InbandScheme,
                                                            timescale: UInt32(t.timescale), presentationTime: UInt64(max(0, t.value)),
                                                            duration: length, id: Self.messageID(e.id + "/" + e.kind.rawValue),
                                                            data: e.section))
            } else {
                logger.warning("SCTE-35 event '\(e.id)' before the stream started: listed, not carried in the segments")
            }
        }
        pendingEvents.append((e, at))
    }

    /// The events held that can be listed now that a segment of the first rendition (which started at `segmentStart`
    /// on `date` and ends at `end`) is finished, placed on the output timeline and the program date-time clock. An
    /// SCTE-35 event is listed up to `listAhead` before its start (when the segments' dates are projected), so that a
    /// player learns of a break before its playhead reaches it. (Listed only with the segment it starts in, a break
    /// posted 8 s ahead reached hls.js about a second before its start, and hls.js skipped the interstitial in some
    /// runs.) Its `START-DATE` is the program date-time clock projected from this segment (`date` + the time from
    /// `segmentStart`), and the publisher keeps that projection through the break's end, so the segment that starts at
    /// the splice is dated alike. An ID3 event waits for the segment it falls in (its `emsg` is in that segment).
    private mutating func place(before end: MediaTime, segmentStart: MediaTime, date: WallClock) -> [EventInfo] {
        guard let shift = supervisor.timelineShift else { return [] }
        var placed: [EventInfo] = []
        let logger = logger
        var held = pendingEvents
        var keepClock = publisher.keepsClockThrough
        let projects = publisher.projectsClock
        defer { pendingEvents = held; publisher.keepsClockThrough = keepClock }
        held.removeAll { held in
            let t = held.at.converted(to: end.timescale, rounding: .nearest) + shift
            if held.event.kind == .id3 {
                guard t < end else { return false }
            } else {
                let ahead = projects ? Self.listAhead.converted(to: end.timescale, rounding: .nearest) : .zero(end.timescale)
                guard t < end + ahead else { return false }
                if t >= end {
                    let through = t + (held.event.plannedDuration ?? .seconds(0)).converted(to: t.timescale, rounding: .up)
                        + MediaTime.seconds(5).converted(to: t.timescale, rounding: .up)
                    keepClock = max(keepClock ?? through, through)
                }
            }
            let startDate = WallClock(millisecondsSince1970: date.millisecondsSince1970 + Self.millis(t - segmentStart))
            placed.append(EventInfo(id: held.event.id, kind: held.event.kind, startDate: startDate, mediaTime: t,
                                    plannedDuration: held.event.plannedDuration, section: held.event.section,
                                    inband: held.event.kind != .id3 && settings.scte35Inband))
            logger.info("timed event '\(held.event.id)' (\(held.event.kind.rawValue)) at \(Self.millis(t)) ms on the timeline")
            return true
        }
        return placed
    }

    /// How long before its start an SCTE-35 event is listed (one posted or cued further ahead waits until then).
    static let listAhead = MediaTime.seconds(30)

    /// An `emsg` id for an event id (FNV-1a): the same event, the same id in every rendition.
    static func messageID(_ id: String) -> UInt32 {
        var h: UInt32 = 0x811C_9DC5
        for b in id.utf8 { h = (h ^ UInt32(b)) &* 0x0100_0193 }
        return h
    }

    private static func millis(_ t: MediaTime) -> Int64 { MediaTime.rescale(t.value, from: t.timescale, to: 1000) }
}
