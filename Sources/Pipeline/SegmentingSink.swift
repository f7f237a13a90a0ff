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
    var loops = 0
    private(set) var started = false
    private var segmenter: Segmenter?
    private var held: [(track: Int, sample: Sample, wallClock: WallClock?)] = []
    private var kinds: [TrackFormat.Kind]
    private var warnedLongSegment = false
    private var clockAnchor: (wall: Int64, media: MediaTime)?
    /// A codec change in progress (see `beginHandover`).
    private var handover: Handover?

    /// After a codec change, the old segmenter still takes the other tracks' samples that come before the change
    /// (an MPEG-TS mux delivers audio late: the old encode's audio tail arrives after the new keyframe), so the
    /// last segment before the discontinuity ends with all its tracks; the new segmenter takes the rest, and its
    /// events wait until the old one has published its last segment.
    private struct Handover {
        let formats: [TrackFormat]
        let changed: Int
        /// Input presentation time of the first sample in the new format (its keyframe): where the old
        /// segment's other tracks end.
        let at: MediaTime
        var drained: Set<Int>
        /// Samples for the new segmenter, made once the old one has finished (its numbering is final then).
        var pending: [(track: Int, sample: Sample, wallClock: WallClock?)] = []
        /// The longest the other tracks are waited for (a stalled or ended track must not hold the stream).
        static let limit = MediaTime.seconds(2)
    }
    static let maxClockDriftMillis: Int64 = 5_000

    init(output: any PresentationConsumer, stats: PipelineStats, segmentDuration: MediaTime, partDuration: MediaTime?,
         targetDuration: Int, waitForSecondKeyframe: Bool, plan: RenditionPlan, kinds: [TrackFormat.Kind], logger: Logger) {
        self.output = output
        self.stats = stats
        self.segmentDuration = segmentDuration
        self.partDuration = partDuration
        self.targetDuration = targetDuration
        self.waitForSecondKeyframe = waitForSecondKeyframe
        self.plan = plan
        self.kinds = kinds
        self.logger = logger
    }

    mutating func accept(_ samples: [Sample], track: Int, formats: [TrackFormat?], wallClock: WallClock?) throws {
        guard !samples.isEmpty else { return }
        guard let current = segmenter else {
            held += samples.map { (track, $0, wallClock) }
            guard formats.allSatisfy({ $0 != nil }) else {
                if held.count > 2000 {
                    throw PipelineError.missingCodecConfiguration(
                        "no codec configuration found in the first \(held.count) frames (H.264 without SPS/PPS?)")
                }
                return
            }
            if waitForSecondKeyframe && !gopMeasured(formats: formats.compactMap { $0 }) { return }
            try start(formats: formats.compactMap { $0 })
            return
        }
        if handover == nil, let f = formats[track], f != current.tracks[track], let first = samples.first {
            try beginHandover(formats: formats.enumerated().map { $1 ?? current.tracks[$0] }, changed: track,
                              at: MediaTime(value: first.pts, timescale: f.timescale))
        }
        for s in samples {
            guard var h = handover else {
                try emit(try segmenter!.appendEvents(s, track: track, wallClock: wallClock))
                continue
            }
            let time = MediaTime(value: track == h.changed ? s.dts : s.pts, timescale: h.formats[track].timescale)
            if track != h.changed && time < h.at {
                try emit(try segmenter!.appendEvents(s, track: track, wallClock: wallClock))
            } else {
                h.drained.insert(track)
                h.pending.append((track, s, wallClock))
            }
            handover = h
            if h.drained.count == h.formats.count || (track == h.changed && time - h.at > Handover.limit) {
                try completeHandover()
            }
        }
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

    private mutating func start(formats: [TrackFormat]) throws {
        let seg = try Segmenter(tracks: formats, segmentDuration: segmentDuration, fragmentDuration: partDuration,
                                groups: plan.groups)
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

    /// New codec parameters on `changed` at input time `at`: a new segmenter continues the numbering and the
    /// timeline (a new init segment; a discontinuity in every rendition); the old one drains the other tracks.
    private mutating func beginHandover(formats: [TrackFormat], changed: Int, at: MediaTime) throws {
        logger.notice("the input's \(formats[changed].kind.rawValue) format changed (\(describe(formats[changed]))): new init segment, EXT-X-DISCONTINUITY")
        handover = Handover(formats: formats, changed: changed, at: at, drained: [changed])
    }

    /// The old segmenter's last segment, then the new init segments, then what the new segmenter produced meanwhile.
    private mutating func completeHandover() throws {
        guard let h = handover, var old = segmenter else { return }
        handover = nil
        try emit(try old.finishEvents())
        var seg = try Segmenter(tracks: h.formats, segmentDuration: segmentDuration, fragmentDuration: partDuration,
                                groups: plan.groups, firstSequences: old.nextSequences, continuing: old.timeline)
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
            guard known.count == formats.count, !held.isEmpty else { return }
            try start(formats: known)
        }
        try completeHandover()
        try emit(try segmenter!.finishEvents())
        try output.consume(.end)
    }

    private mutating func emit(_ events: [SegmenterEvent]) throws {
        for e in events {
            switch e {
            case .part(let p):
                try output.consume(.part(rendition: p.group, PartInfo(segmentSequence: p.segmentSequence, index: p.index,
                                                                      duration: p.duration, byteCount: p.bytes.count,
                                                                      independent: p.independent), bytes: p.bytes))
            case .segment(let s):
                try publish(s)
            }
        }
    }

    private mutating func publish(_ s: Segment) throws {
        var pdt = s.programDateTime
        if let arrival = pdt?.millisecondsSince1970 {
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
                               earliestPresentationTime: s.earliestPresentationTime)
        try output.consume(.segment(rendition: s.group, info, bytes: s.bytes))
    }
}
