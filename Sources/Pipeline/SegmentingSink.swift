import HLS
import Logging
import MediaCore
import MediaPresentation
import Segmenter

/// The renditions a pipeline produces and which output tracks each one carries.
struct RenditionPlan {
    var renditions: [Rendition]
    /// Output track indices per rendition.
    var groups: [[Int]]

    /// Today's default: one muxed rendition at the root with every track.
    static func muxed(trackCount: Int) -> RenditionPlan {
        RenditionPlan(renditions: [.muxed()], groups: [Array(0..<trackCount)])
    }
}

/// Holds samples until every track's format is known, then feeds the segmenter and publishes its parts and
/// segments as `PresentationEvent`s to the output (one producer → a fan-out of consumers).
///
/// - A track whose codec parameters change mid-stream (new SPS/PPS, new resolution) ends the segment in progress;
///   the segmenter is re-created with the new formats, continuing the sequence numbers and the timeline, so the
///   renditions get a new init segment and `EXT-X-DISCONTINUITY`.
/// - A track whose timestamps jump (forward by more than `maxTimestampGap`, backward by more than
///   `maxTimestampStepBack`: a splice, an encoder restart, a shifted concatenation) does the same without a new init
///   segment: RFC 8216 §4.3.2.3 requires `EXT-X-DISCONTINUITY` for a "change in ... timestamp sequence". The new
///   timeline continues where the old one ended, so no segment spans the jump, `EXT-X-TARGETDURATION` never grows
///   and nothing is dropped.
/// - `EXT-X-PROGRAM-DATE-TIME` = anchor wall clock + (segment start − anchor media time): it advances exactly with
///   the media, whatever the arrival jitter. Re-anchored only when arrival drifts from the projection by more than
///   `maxClockDriftMillis` (a stalled input).
struct SegmentingSink {
    let output: any PresentationConsumer
    let stats: PipelineStats
    let segmentDuration: MediaTime
    let partDuration: MediaTime?
    var targetDuration: Int
    /// Live copied video: measure the first GOP before announcing the target duration.
    let waitForSecondKeyframe: Bool
    let plan: RenditionPlan
    let logger: Logger
    /// Where each video track's newest keyframe is kept (thumbnails); `nil`: nowhere.
    let keyframes: LatestKeyframes?
    /// Epoch locking (`--epoch-from-input`): the timeline, the numbering and `EXT-X-PROGRAM-DATE-TIME` come from the
    /// input's clock, not from when this process started (redundant origins write the same bytes).
    let epochLocked: Bool
    private var warnedEpochSlip = false
    var loops = 0
    private(set) var started = false
    private var segmenter: Segmenter?
    private var held: [(track: Int, sample: Sample, wallClock: WallClock?)] = []
    /// When the samples being accepted now arrived: a part they close was closed then (`PartInfo.closedAt`).
    private var arrival: WallClock?
    private var kinds: [TrackFormat.Kind]
    private var warnedLongSegment = false
    private var clockAnchor: (wall: Int64, media: MediaTime)?
    /// A codec change or timestamp jump in progress (see `beginHandover`).
    private var handover: Handover?
    /// Per output track: the decode time of its latest sample (its own ticks), to see a jump.
    private var lastDTS: [Int64?]
    /// After `reconnect()`: what the next connection's segmenter continues (numbering and timeline), once its
    /// formats are known.
    private var resume: (sequences: [UInt64], timeline: Segmenter.Timeline?)?

    /// After a codec change or a timestamp jump, the old segmenter still takes the other tracks' samples that come
    /// before it (an MPEG-TS mux delivers audio late: the old encode's audio tail arrives after the new keyframe), so
    /// the last segment before the discontinuity ends with all its tracks; the new segmenter takes the rest, and its
    /// events wait until the old one has published its last segment.
    private struct Handover {
        enum Cause {
            /// New codec parameters; `at` is the input presentation time of the first sample in the new format (its
            /// keyframe): where the old segment's other tracks end.
            case format(at: MediaTime)
            /// The timestamps jumped (from the changed track's previous decode time): each other track crosses
            /// over at its own jump.
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
    /// A forward step between two samples of a track beyond this is a jump, not a gap to play through (a segment
    /// would last that long). An encoder's frame spacing, even at 1 fps or with dropped frames, stays far below it.
    static let maxTimestampGap = MediaTime.seconds(5)
    /// A backward step beyond this is a jump; smaller ones (a muxer's jitter) are smoothed by the segmenter.
    static let maxTimestampStepBack = MediaTime.seconds(1)
    static let maxClockDriftMillis: Int64 = 5_000
    /// The first video track (the reference that segments are cut on), if any.
    private var video: Int? { kinds.firstIndex(of: .video) }

    init(output: any PresentationConsumer, stats: PipelineStats, segmentDuration: MediaTime, partDuration: MediaTime?,
         targetDuration: Int, waitForSecondKeyframe: Bool, plan: RenditionPlan, kinds: [TrackFormat.Kind], logger: Logger,
         keyframes: LatestKeyframes? = nil, epochLocked: Bool = false) {
        self.keyframes = keyframes
        self.epochLocked = epochLocked
        self.output = output
        self.stats = stats
        self.segmentDuration = segmentDuration
        self.partDuration = partDuration
        self.targetDuration = targetDuration
        self.waitForSecondKeyframe = waitForSecondKeyframe
        self.plan = plan
        self.kinds = kinds
        self.logger = logger
        lastDTS = Array(repeating: nil, count: kinds.count)
    }

    mutating func accept(_ samples: [Sample], track: Int, formats: [TrackFormat?], wallClock: WallClock?) throws {
        guard !samples.isEmpty else { return }
        arrival = wallClock
        let bytes = samples.reduce(0) { $0 + $1.data.count }
        stats.update { $0.bytesIn += Int64(bytes) }
        if let keyframes, track < formats.count, let key = samples.last(where: \.isSync) {
            keyframes.record(key, track: track, format: formats[track])
        }
        guard let current = segmenter else {
            held += samples.map { (track, $0, wallClock) }
            guard formats.allSatisfy({ $0 != nil }) else {
                if held.count > 2000 {
                    throw PipelineError.missingCodecConfiguration(
                        "no codec configuration found in the first \(held.count) frames (H.264 without SPS/PPS?)")
                }
                return
            }
            if let resume {
                guard startsAtKeyframe(formats: formats.compactMap { $0 }) else { return }
                try continueAfterReconnect(formats: formats.compactMap { $0 }, resume)
                return
            }
            if waitForSecondKeyframe && !gopMeasured(formats: formats.compactMap { $0 }) { return }
            try start(formats: formats.compactMap { $0 })
            return
        }
        if handover == nil, let f = formats[track], f != current.tracks[track], let first = samples.first {
            beginHandover(formats: formats.enumerated().map { $1 ?? current.tracks[$0] }, changed: track,
                          cause: .format(at: MediaTime(value: first.pts, timescale: f.timescale)),
                          start: MediaTime(value: first.dts, timescale: f.timescale))
        }
        let timescale = (handover?.formats ?? current.tracks)[track].timescale
        for s in samples {
            let previous = lastDTS[track]
            let jumped = timestampJumped(s, track: track, timescale: timescale)
            if handover == nil && jumped, let previous {
                beginHandover(formats: formats.enumerated().map { $1 ?? current.tracks[$0] }, changed: track,
                              cause: .timestampJump(from: MediaTime(value: previous, timescale: timescale)),
                              start: MediaTime(value: s.dts, timescale: timescale))
            }
            guard var h = handover else {
                try emit(try segmenter!.appendEvents(s, track: track, wallClock: wallClock))
                continue
            }
            let crossed: Bool
            switch h.cause {
            case _ where h.drained.contains(track): crossed = true
            case .format(let at) where track == video && h.changed != video:
                // Another track's format changed: the video crosses at its next keyframe (the new segment must start
                // with one), and the new format's samples that came before it are dropped when the handover ends.
                crossed = s.isSync && MediaTime(value: s.pts, timescale: timescale) >= at
                if crossed { h.videoCrossing = MediaTime(value: s.pts, timescale: timescale) }
            case .format(let at): crossed = MediaTime(value: s.pts, timescale: timescale) >= at
            case .timestampJump: crossed = jumped
            }
            if crossed {
                h.drained.insert(track)
                h.pending.append((track, s, wallClock))
            } else {
                try emit(try segmenter!.appendEvents(s, track: track, wallClock: wallClock))
            }
            handover = h
            if h.drained.count == h.formats.count
                || (track == h.changed && MediaTime(value: s.dts, timescale: timescale) - h.start > Handover.limit) {
                try completeHandover()
            }
        }
    }

    /// Whether `s` jumped from the track's previous sample (and remembers it).
    private mutating func timestampJumped(_ s: Sample, track: Int, timescale: Int32) -> Bool {
        defer { lastDTS[track] = s.dts }
        guard let last = lastDTS[track] else { return false }
        let step = MediaTime(value: s.dts - last, timescale: timescale)
        return step > Self.maxTimestampGap || step < .zero(timescale) - Self.maxTimestampStepBack
    }

    /// For copied live video: the first two keyframes tell the GOP length (or 10 s pass without a second one).
    private mutating func gopMeasured(formats: [TrackFormat]) -> Bool {
        guard let v = kinds.firstIndex(of: .video) else { return true }
        let keys = held.filter { $0.track == v && $0.sample.isSync }.map(\.sample.dts)
        let all = held.filter { $0.track == v }.map(\.sample.dts)
        let ts = formats[v].timescale
        guard let first = keys.first ?? all.first else { return false }
        if keys.count >= 2 {
            // Segments follow keyframes: one GOP per segment when the GOP is longer than the segment duration.
            var gop = keys[1] - keys[0]
            let seg = segmentDuration.converted(to: ts, rounding: .up).value
            if gop < seg { gop = ((seg + gop - 1) / gop) * gop }
            targetDuration = max(targetDuration, MediaPlaylist.targetDuration(for: [MediaTime(value: gop, timescale: ts)]))
            return true
        }
        return (all.last ?? first) - first > Int64(ts) * 10
    }

    /// `PART-TARGET` for the life of the stream (RFC 8216bis §4.4.4.9: every part's duration MUST be at most the
    /// Part Target Duration; Apple's player stops when it changes). Parts are cut on the reference track's frames, so
    /// a 0.333 s part of 30 fps video lasts 10 frames = 1/3 s; a rendition whose reference is another track (a
    /// separate audio rendition, cut at the video's boundaries on its own frames) can run one of its frames longer.
    /// Rounded up to whole milliseconds, so the playlist shows a short exact number (`0.334`).
    private func partTarget(formats: [TrackFormat]) -> MediaTime? {
        guard let partDuration else { return nil }
        let ref = formats.firstIndex { $0.kind == .video } ?? 0
        var target = partDuration
        if let frame = frameDuration(track: ref) {
            let ts = formats[ref].timescale
            let ticks = partDuration.converted(to: ts, rounding: .up).value
            target = MediaTime(value: (ticks + frame - 1) / frame * frame, timescale: ts)
        }
        var longest = target
        for group in plan.groups where !group.contains(ref) {
            let own = group.first { formats[$0].kind == .video } ?? group[0]
            // AAC frames are 1024 samples when none has been seen yet.
            if let frame = frameDuration(track: own) ?? (formats[own].kind == .audio ? 1024 : nil) {
                longest = max(longest, target + MediaTime(value: frame, timescale: formats[own].timescale))
            }
        }
        return MediaTime(value: MediaTime.rescale(longest.value, from: longest.timescale, to: 1000, rounding: .up), timescale: 1000)
    }

    /// A track's frame duration in its ticks: the spacing of its first held samples, else the encoder's or
    /// demuxer's duration of a sample.
    private func frameDuration(track: Int) -> Int64? {
        let samples = held.filter { $0.track == track }.map(\.sample)
        let dts = samples.map(\.dts).sorted()
        let spacings = zip(dts, dts.dropFirst()).map { $1 - $0 } + samples.compactMap(\.durationHint)
        return spacings.filter { $0 > 0 }.min()
    }

    /// The timeline a new segmenter starts: the input's clock when epoch-locked (re-resolved after a discontinuity:
    /// a new encoder session stamps its own clock), else from zero.
    private var anchor: TimelineAnchor { epochLocked ? .epochLocked() : .startsAtZero }

    private mutating func start(formats: [TrackFormat]) throws {
        let seg = try Segmenter(tracks: formats, segmentDuration: segmentDuration, fragmentDuration: partDuration,
                                groups: plan.groups, anchor: anchor)
        try output.consume(.layout(plan.renditions, TimingPolicy(targetDuration: targetDuration,
                                                                 partTarget: partTarget(formats: formats),
                                                                 segmentDuration: segmentDuration)))
        try announceInits(seg)
        started = true
        try replay(into: seg)
    }

    private mutating func replay(into seg: Segmenter) throws {
        var seg = seg
        let pending = held
        held = []
        var out: [SegmenterEvent] = []
        for h in pending { out += try seg.appendEvents(h.sample, track: h.track, wallClock: h.wallClock) }
        segmenter = seg
        try emit(out)
    }

    private func announceInits(_ seg: Segmenter) throws {
        for (g, bytes) in seg.initSegments.enumerated() {
            try output.consume(.initSegment(rendition: g, bytes: bytes, tracks: seg.groups[g].map { seg.tracks[$0] }))
        }
    }

    /// New codec parameters or a timestamp jump on `changed`: a new segmenter continues the numbering and the
    /// timeline (a discontinuity in every rendition, and a new init segment for new parameters); the old one drains
    /// the other tracks.
    private mutating func beginHandover(formats: [TrackFormat], changed: Int, cause: Handover.Cause, start: MediaTime) {
        switch cause {
        case .format:
            logger.notice("the input's \(formats[changed].kind.rawValue) format changed (\(describe(formats[changed]))): new init segment, EXT-X-DISCONTINUITY")
        case .timestampJump(let from):
            logger.notice("the input's \(formats[changed].kind.rawValue) timestamps jumped from \(Self.seconds(from.seconds)) s to \(Self.seconds(start.seconds)) s: EXT-X-DISCONTINUITY, the timeline continues")
        }
        handover = Handover(formats: formats, changed: changed, cause: cause, start: start, drained: [changed])
    }

    /// Seconds to the millisecond, for the log.
    private static func seconds(_ s: Double) -> String { "\(Double((s * 1000).rounded()) / 1000)" }

    /// The old segmenter's last segment, then the new init segments, then what the new segmenter produced meanwhile.
    private mutating func completeHandover() throws {
        guard var h = handover, var old = segmenter else { return }
        handover = nil
        if let crossing = h.videoCrossing {
            // The new segment starts at the video's keyframe: the changed track's samples before it have no place
            // (the old init segment cannot carry them, and the new segment cannot start before its keyframe).
            let before = h.pending.count
            h.pending.removeAll { $0.track != video && MediaTime(value: $0.sample.pts, timescale: h.formats[$0.track].timescale) < crossing }
            if h.pending.count < before {
                logger.warning("dropped \(before - h.pending.count) \(h.formats[h.changed].kind.rawValue) frames between the format change and the next video keyframe")
            }
        }
        try emit(try old.finishEvents())
        var seg = try Segmenter(tracks: h.formats, segmentDuration: segmentDuration, fragmentDuration: partDuration,
                                groups: plan.groups, firstSequences: old.nextSequences, continuing: old.timeline,
                                anchor: anchor)
        try announceInits(seg)
        var events: [SegmenterEvent] = []
        for p in h.pending { events += try seg.appendEvents(p.sample, track: p.track, wallClock: p.wallClock) }
        segmenter = seg
        try emit(events)
    }

    private func describe(_ f: TrackFormat) -> String {
        f.kind == .video ? "\(f.codecString) \(f.width)x\(f.height)" : "\(f.codecString) \(f.sampleRate) Hz \(f.channelCount) ch"
    }

    mutating func finish(formats: [TrackFormat?]) throws {
        if segmenter == nil {
            let known = formats.compactMap { $0 }
            if known.count == formats.count, !held.isEmpty {
                if let resume { try continueAfterReconnect(formats: known, resume) } else { try start(formats: known) }
            }
        }
        guard started else { return }
        if segmenter != nil {
            try completeHandover()
            try emit(try segmenter!.finishEvents())
        }
        try output.consume(.end)
    }

    /// The input is being opened again (a publisher dropped and a new connection will follow, or a puller retries):
    /// the segment in progress ends now, so viewers get every complete frame; the next connection's samples
    /// continue the numbering and the timeline after `EXT-X-DISCONTINUITY` (RFC 8216 §4.3.2.3: a new encoder
    /// session is a "change in ... timestamp sequence" whatever its timestamps), with a new init segment only if
    /// its codec parameters differ. Until it sends something, the window keeps what it has.
    mutating func reconnect() throws {
        lastDTS = Array(repeating: nil, count: kinds.count)
        // The next connection's program date-time is anchored afresh (after the old segment's is projected).
        defer { clockAnchor = nil }
        guard segmenter != nil else {
            // Nothing segmented yet from this connection: what it sent before its formats were known is dropped.
            held = []
            return
        }
        try completeHandover()
        var old = segmenter!
        try emit(try old.finishEvents())
        resume = (old.nextSequences, old.timeline)
        segmenter = nil
    }

    /// After a reconnect: whether the held samples reach the new connection's first video keyframe, where it
    /// starts. What came before cannot be decoded (a pull joins mid-GOP), and other tracks' samples before it would
    /// start the continued timeline early, leaving the video a gap after the discontinuity; both are dropped. Gives
    /// up waiting after 10 s of video without a keyframe.
    private mutating func startsAtKeyframe(formats: [TrackFormat]) -> Bool {
        guard let v = video else { return true }
        guard let k = held.firstIndex(where: { $0.track == v && $0.sample.isSync }) else {
            let dts = held.filter { $0.track == v }.map(\.sample.dts)
            guard let first = dts.first, let last = dts.last else { return false }
            return last - first > Int64(formats[v].timescale) * 10
        }
        let key = MediaTime(value: held[k].sample.pts, timescale: formats[v].timescale)
        let before = held.count
        held = held.enumerated().filter { i, h in
            h.track == v ? i >= k : MediaTime(value: h.sample.pts, timescale: formats[h.track].timescale) >= key
        }.map(\.element)
        if held.count < before { logger.info("the new connection starts at its first keyframe: \(before - held.count) earlier frames dropped") }
        return true
    }

    private mutating func continueAfterReconnect(formats: [TrackFormat], _ resume: (sequences: [UInt64], timeline: Segmenter.Timeline?)) throws {
        self.resume = nil
        let seg = try Segmenter(tracks: formats, segmentDuration: segmentDuration, fragmentDuration: partDuration,
                                groups: plan.groups, firstSequences: resume.sequences, continuing: resume.timeline,
                                anchor: anchor)
        try announceInits(seg)
        try replay(into: seg)
    }

    private mutating func emit(_ events: [SegmenterEvent]) throws {
        for e in events {
            switch e {
            case .part(let p):
                try output.consume(.part(rendition: p.group, PartInfo(segmentSequence: p.segmentSequence, index: p.index,
                                                                      duration: p.duration, byteCount: p.bytes.count,
                                                                      independent: p.independent, endsSegment: p.endsSegment,
                                                                      closedAt: arrival, offset: p.offset),
                                                 bytes: p.bytes))
            case .segment(let s):
                try publish(s)
            }
        }
    }

    private mutating func publish(_ s: Segment) throws {
        var pdt = s.programDateTime
        if epochLocked {
            // The segment's start on the input clock is its date: the same on every origin fed this input.
            pdt = WallClock(millisecondsSince1970: MediaTime.rescale(s.startTime.value, from: s.startTime.timescale, to: 1000))
            if let slips = segmenter?.epochSlips, slips > 0, !warnedEpochSlip {
                warnedEpochSlip = true
                logger.warning("epoch locking: segment \(s.sequence) is not numbered by its place on the input clock's grid (keyframes further apart than the segment duration, or a timeline that moved): an origin that joined at another moment may number it differently")
            }
        } else if let arrival = pdt?.millisecondsSince1970 {
            let projected = clockAnchor.map { $0.wall + MediaTime.rescale((s.startTime - $0.media).value, from: s.startTime.timescale, to: 1000) }
            if let projected, abs(arrival - projected) <= Self.maxClockDriftMillis {
                pdt = WallClock(millisecondsSince1970: projected)
            } else {
                if projected != nil { logger.info("input clock drifted from the wall clock; re-anchoring program date-time") }
                clockAnchor = (arrival, s.startTime)
            }
        }
        if s.group == 0 {
            let rounded = MediaPlaylist.targetDuration(for: [s.duration])
            if rounded > targetDuration && !warnedLongSegment {
                warnedLongSegment = true
                logger.warning("segment \(s.sequence) lasts \(s.duration.seconds) s, longer than EXT-X-TARGETDURATION \(targetDuration) (the input's keyframes are irregular)")
            }
        }
        stats.update {
            if s.group == 0 { $0.segments += 1 }
            $0.bytesOut += Int64(s.bytes.count)
            if s.group == 0 { $0.mediaOutMicros += MediaTime.rescale(s.duration.value, from: s.duration.timescale, to: 1_000_000) }
        }
        let info = SegmentInfo(sequence: s.sequence, startTime: s.startTime, duration: s.duration, byteCount: s.bytes.count,
                               programDateTime: pdt ?? .now, discontinuity: s.discontinuity,
                               videoSampleCount: s.videoSampleCount, startsWithSyncSample: s.startsWithSyncSample,
                               earliestPresentationTime: s.earliestPresentationTime, partRanges: s.partRanges)
        try output.consume(.segment(rendition: s.group, info, bytes: s.bytes))
    }
}
