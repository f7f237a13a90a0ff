import FFmpegBridge
import ISOBMFF
import Foundation
import Logging
import MediaCore
import MediaPresentation
import Producer
import Synchronization

public struct PipelineOptions: Sendable {
    public var input: InputSpec
    /// Force the input format (`--input-format`).
    public var inputFormat: String?
    /// Demuxer options (`video_size`, `pixel_format`, `framerate`, `sample_rate`, `ch_layout`...).
    public var demuxerOptions: [String: String] = [:]
    public var loop = false
    /// Pace reading at real time. nil: pace files, not pipes or live URLs.
    public var realtime: Bool?
    public var segmentDuration = MediaTime.seconds(1)
    /// Split segments into fragments of this duration (low-latency parts).
    public var partDuration: MediaTime?
    public var transcode = TranscodeMode.auto
    public var video = VideoSettings()
    public var audioBitRate = 128_000
    /// What encoded audio becomes (`--audio-codec`).
    public var audioCodec = AudioCodecName.aac
    /// DASH trick-mode AdaptationSets in the MPD (`--dash-trick-mode`): off by default, as packagers offer trick play
    /// on request (FFmpeg 5.1's DASH demuxer reads such sets as ordinary streams).
    public var dashTrickMode = false
    /// Legacy cue tags and interstitials for the stream's events (`--cue-tags legacy`, `--interstitial URL`, `--interstitial-list URL`).
    public var eventSignalling = EventSignalling()
    /// Which audio tracks become renditions and their labels (`--audio-tracks`, `--audio-name`, `--audio-language`,
    /// `--default-audio`).
    public var audioTracks = AudioTrackOptions()
    /// Which closed captions the video's pictures carry are signalled, and in which language (`--captions`).
    public var captions = CaptionPlan.auto
    /// Sidecar subtitle files (`--subtitles LANG=PATH`): a subtitle rendition each, after the input's own text tracks.
    public var subtitles: [SubtitleSidecar] = []
    /// Ignore input timestamps; stamp packets with their arrival time.
    public var wallclockTimestamps = false
    /// An ABR ladder (`--ladder 720,480,360`): one rendition per rung plus an audio rendition. `nil`: one muxed
    /// rendition.
    public var ladder: String?
    /// Take a network input up again when its publisher goes away (`InputKind.reconnect`); `false`: its end is the
    /// end of the stream.
    public var reconnect = true
    /// Epoch locking (`--epoch-from-input`): the timeline, segment numbers and program date-time come from the
    /// input's timestamps read as a UTC clock (see `TimelineAnchor.inputClock`), so origins fed the same input serve
    /// the same bytes whenever they started.
    public var epochFromInput = false
    /// Thumbnail tiles (`--thumbnails`): the fan-out's `ThumbnailTiler`; `nil`: none.
    public var thumbnails: ThumbnailSettings?

    public init(input: InputSpec) { self.input = input }
}

extension Pipeline {
    /// FFmpeg's own log lines go to stderr only when asked for (`--log-level debug` or `trace`): our errors
    /// already say what went wrong, in one line.
    public static func configureLibraryLogging(_ level: Logger.Level) {
        switch level {
        case .trace: FFmpegLibrary.setLogLevel(.debug)
        case .debug: FFmpegLibrary.setLogLevel(.warning)
        default: FFmpegLibrary.setLogLevel(.quiet)
        }
    }
}

/// Input → samples → segments → `PresentationEvent`s for the output: one run loop over a `MediaSource` (a demuxed
/// input, the test pattern) feeding the producer chain. Runs on the calling thread (blocking reads), so run it on a
/// dedicated thread; `stop()` may be called from anywhere.
public final class Pipeline: @unchecked Sendable {
    // @unchecked: `interrupt` and `stopFlag` are Sendable; everything else is used by the run thread only.
    public let options: PipelineOptions
    public let stats: PipelineStats
    /// The newest keyframe of each output video track (for thumbnails).
    public let keyframes = LatestKeyframes()
    let output: any PresentationConsumer
    let logger: Logger
    /// Timed events posted from outside (the events API), fed to the chain between reads.
    let inbox: EventInbox?
    private let stopFlag = Atomic<Bool>(false)
    private let interrupt = Mutex<InterruptFlag?>(nil)
    /// A local file opened and probed by `open()`, taken by `run()`.
    private var opened: Demuxer?
    /// Whether `holdBack()` has said once that it waits.
    private var heldBack = false
    /// The sidecar subtitle files read by `open()` (or `run()`).
    private var sidecars: [SidecarSubtitles]?

    /// `stats`: where the pipeline reports progress (give one to read it before the pipeline exists).
    public init(options: PipelineOptions, output: any PresentationConsumer, logger: Logger, stats: PipelineStats = PipelineStats(),
                events: EventInbox? = nil) {
        self.inbox = events
        self.stats = stats
        self.options = options
        self.output = FanOut([output, stats.tap])
        self.logger = logger
    }

    public func stop() {
        stopFlag.store(true, ordering: .relaxed)
        interrupt.withLock { $0?.interrupt() }
    }

    var stopped: Bool { stopFlag.load(ordering: .relaxed) }

    /// Opens and probes a local file now, so an input that cannot be opened or is not media fails before anything is
    /// served. Pipes and network inputs are opened by `run()`: they may wait for data or a publisher.
    public func open() throws {
        sidecars = try SidecarSubtitles.load(options.subtitles, logger: logger)
        guard case .url(let url) = options.input, options.input.kind == .file else { return }
        opened = try openDemuxer(url)
    }

    /// Runs to the end of input (or `stop()`), then sends `end`. Throws the input's error after flushing what it had.
    public func run() throws {
        stats.update { $0.startedAt = .now }
        let source: any MediaSource
        switch options.input {
        case .testPattern(let w, let h, let fr):
            source = try TestPatternSource(width: w, height: h, frameRate: fr, options: options, logger: logger)
        case .url(let url):
            let demuxer = try opened ?? openDemuxer(url)
            opened = nil
            let s = try DemuxedSource(demuxer: demuxer, url: url, options: options, logger: logger, open: openDemuxer,
                                      stopped: { [unowned self] in stopped })
            if !s.isLive, !options.loop, let d = demuxer.duration { stats.update { $0.inputDurationMicros = d } }
            source = s
        }
        try run(source)
    }

    /// The one run loop: read, pace, hand to the chain; on a publisher that goes away, flush and take the input up
    /// again (`MediaSource.reconnect`); at the end, flush the processors and the chain, whatever ended the input, so
    /// nothing already read is lost, unless the chain or an output is what failed (an output that refused is not fed
    /// again).
    func run(_ source: any MediaSource) throws {
        let sidecars = try self.sidecars ?? SidecarSubtitles.load(options.subtitles, logger: logger)
        var run = RunState(pipeline: self, source: source, sidecars: sidecars)
        var failure: Error?
        // The sidecars' cues, in the input's timeline (their time 0 is the input's), `shift` later on a looped pass.
        func sidecarCues(shift: MediaTime?) -> [SourceEvent] {
            let first = source.plan.subtitles.count
            return sidecars.enumerated().map { k, s in
                .cues(subtitle: first + k, shift.map { shift in s.cues.map { $0.shifted(by: shift) } } ?? s.cues)
            }
        }
        do {
            // The sidecars' cues come first.
            try run.feed(sidecarCues(shift: nil))
        } catch {
            failure = error
        }
        readLoop: while !stopped && failure == nil {
            do {
                guard let batch = try run.read() else { break readLoop }
                if let position = batch.position, run.chain.started {
                    // Paced once the stream has started: what is held before it (the first GOP being measured) is read
                    // at once, and the stream starts as soon as it can.
                    run.pace.wait(untilMediaMicros: position, stop: { self.stopped })
                }
                stats.update {
                    if let position = batch.position { $0.mediaMicros = max($0.mediaMicros, position) }
                    $0.videoFrames += Int64(batch.videoFrames)
                }
                if let posted = inbox?.take(), !posted.isEmpty { try run.feed(posted.map { .event(source.resolve($0)) }) }
                if let cues = inbox?.takeCues(), !cues.isEmpty { try run.feed(cues.compactMap { run.chain.resolve($0) }) }
                if let shift = batch.loopedBy, !sidecars.isEmpty {
                    // A looped input plays its sidecars again, on the new pass's timestamps.
                    try run.feed(sidecarCues(shift: shift))
                }
                try run.feed(batch.events)
                holdBack()
            } catch {
                failure = error
                break readLoop
            }
        }
        if !run.outputFailed {
            do {
                try run.feed(try source.flush())
                try run.chain.finish()
            } catch {
                if failure == nil { failure = error }
            }
        }
        if let failure, !stopped { throw failure }
        if !run.chain.started && !stopped {
            throw PipelineError.missingCodecConfiguration("the input ended before any playable media was found")
        }
    }

    /// Waits while an output asks for it (`PresentationConsumer.holdBackMillis`: a live window's retention is full
    /// because the input is read much faster than real time), in steps of at most 50 ms so `stop()` is prompt.
    private func holdBack() {
        var wait = output.holdBackMillis
        guard wait > 0 else { return }
        if !heldBack {
            heldBack = true
            logger.notice("the input is read faster than the live window can let segments go (RFC 8216 §6.2.2 keeps each one available for its duration plus the playlist's after it leaves): reading waits for them")
        }
        while wait > 0 && !stopped {
            Thread.sleep(forTimeInterval: Double(min(wait, 50)) / 1000)
            wait = output.holdBackMillis
        }
    }

    /// What one run keeps: its source, the producer chain, the pacer, the tracks' formats (for thumbnails), and whether
    /// the chain or an output failed.
    private struct RunState {
        let pipeline: Pipeline
        let source: any MediaSource
        var chain: ProducerChain
        var pace: Pacer
        var formats: [TrackFormat?]
        var outputFailed = false

        init(pipeline p: Pipeline, source: any MediaSource, sidecars: [SidecarSubtitles]) {
            pipeline = p
            self.source = source
            var plan = source.plan
            for s in sidecars {
                plan.subtitles.append(.subtitles(s.label, position: plan.subtitles.count, taken: plan.subtitles.map(\.name)))
            }
            chain = ProducerChain(plan: plan, kinds: source.kinds,
                                  settings: .init(segmentDuration: p.options.segmentDuration, partDuration: p.options.partDuration,
                                                  keyframes: source.keyframes, epochLocked: p.options.epochFromInput,
                                                  scte35Inband: p.options.eventSignalling.scte35Inband,
                                                  arrivalFollowsMedia: !(p.options.realtime == false && source.pacedByDefault)),
                                  output: p.output, logger: p.logger)
            pace = Pacer(enabled: p.options.realtime ?? source.pacedByDefault)
            formats = Array(repeating: nil, count: source.kinds.count)
        }

        /// The source's next read; at its end or failure, the input taken up again when its policy says so (`nil`: the
        /// end of the stream).
        mutating func read() throws -> SourceBatch? {
            while true {
                do {
                    if let batch = try source.next() { return batch }
                    guard source.endIsDisconnect, try takeUp(after: "end of stream") else { return nil }
                } catch where !outputFailed && !(error is PipelineError) && !(error is MP4Error) {
                    guard try takeUp(after: "\(error)") else { throw error }
                }
            }
        }

        mutating func feed(_ events: [SourceEvent]) throws {
            var bytes = 0
            defer { pipeline.stats.update { $0.bytesIn += Int64(bytes) } }
            for e in events {
                switch e {
                case .format(let t, let f): formats[t] = f
                case .samples(let t, let samples, _):
                    for s in samples { bytes += s.data.count }
                    if let key = samples.last(where: \.isSync) { pipeline.keyframes.record(key, track: t, format: formats[t]) }
                case .event, .cues: break
                }
                do {
                    try chain.accept(e)
                } catch {
                    outputFailed = true
                    throw error
                }
            }
        }

        /// The publisher went away (`why`): flush what it sent, end the segment in progress, and wait for the next one.
        /// `false` when the stream ends instead.
        mutating func takeUp(after why: String) throws -> Bool {
            guard let policy = source.reconnect, !pipeline.stopped else { return false }
            pipeline.logger.notice("publisher disconnected from \(DemuxedSource.redacted(pipeline.sourceName)) (\(why)); \(policy == .listen ? "waiting for the next one" : "the stream goes on when it is back"); viewers keep the current window")
            try feed(try source.flush())
            try chain.reconnect()
            guard source.reopen() else { return false }
            formats = Array(repeating: nil, count: source.kinds.count)
            pipeline.stats.update { $0.reconnects += 1 }
            return true
        }
    }

    fileprivate var sourceName: String {
        if case .url(let url) = options.input { return url }
        return "the test pattern"
    }

    // MARK: - Demuxed input (files, pipes, URLs)

    func openDemuxer(_ url: String) throws -> Demuxer {
        let kind = InputKind(url)
        var o = InputOptions(isLive: kind.isLive)
        o.format = options.inputFormat
        let input = InputKind.demuxerInput(url)
        o.options = input.options.merging(options.demuxerOptions) { $1 }
        if kind.isLive {
            // Pipes and network streams: start quickly, but look far enough to find both streams.
            o.probeSize = 2_000_000
            o.analyzeDuration = 2_000_000
        }
        // The flag exists before the (possibly blocking) open, so stop() also ends a probe that waits on a pipe or an
        // accept that waits for a publisher.
        let flag = InterruptFlag()
        interrupt.withLock { $0 = flag }
        if stopped { flag.interrupt() }
        return try Demuxer(url: input.url, options: o, interruptFlag: flag)
    }
}
