import FFmpegBridge
import Foundation
import HLS
import ISOBMFF
import Logging
import MediaCore
import Segmenter
import Synchronization
import TestPattern

/// Where the media comes from.
public enum InputSpec: Sendable, Equatable {
    /// The built-in test pattern (colour bars, counter, clock, tone with a beep each second).
    case testPattern(width: Int, height: Int, frameRate: Rational)
    /// A path, a URL, or `-` for standard input.
    case url(String)
}

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
    /// Ignore input timestamps; stamp packets with their arrival time.
    public var wallclockTimestamps = false
    /// Whether `EXT-X-TARGETDURATION` must be known before the first segment (live). A VOD writer computes it
    /// from the finished segments instead, which saves a keyframe scan of the file.
    public var targetDurationUpFront = true

    public init(input: InputSpec) { self.input = input }
}

/// Where the segments go: the live origin or a directory on disk.
public struct PipelineOutput: Sendable {
    /// Called once, before the first segment, with the init segment and `EXT-X-TARGETDURATION`.
    public var start: @Sendable (_ initSegment: [UInt8], _ tracks: [TrackFormat], _ targetDuration: Int) throws -> Void
    public var segment: @Sendable (Segment) throws -> Void
    /// Low-latency parts (only with `partDuration`), each before the segment it belongs to.
    public var part: @Sendable (Part) throws -> Void
    public init(start: @escaping @Sendable ([UInt8], [TrackFormat], Int) throws -> Void,
                segment: @escaping @Sendable (Segment) throws -> Void,
                part: @escaping @Sendable (Part) throws -> Void = { _ in }) {
        self.start = start
        self.segment = segment
        self.part = part
    }
}

/// Live figures for the status line. Written by the pipeline thread, read by anyone.
public final class PipelineStats: Sendable {
    struct Values {
        var videoFrames: Int64 = 0
        var mediaMicros: Int64 = 0
        var segments: Int = 0
        var bytesOut: Int64 = 0
        var mediaOutMicros: Int64 = 0
        var startedAt: ContinuousClock.Instant?
    }
    private let values = Mutex(Values())
    public init() {}

    func update(_ f: (inout Values) -> Void) { values.withLock { f(&$0) } }

    public struct Snapshot: Sendable {
        public var videoFrames: Int64
        public var mediaSeconds: Double
        public var wallSeconds: Double
        public var segments: Int
        /// Output bits per second of media.
        public var bitRate: Double
        public var speed: Double { wallSeconds > 0 ? mediaSeconds / wallSeconds : 0 }
    }

    public func snapshot() -> Snapshot {
        values.withLock { v in
            let wall = v.startedAt.map { (ContinuousClock.now - $0) } ?? .zero
            let wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
            return Snapshot(videoFrames: v.videoFrames, mediaSeconds: Double(v.mediaMicros) / 1e6, wallSeconds: wallSeconds,
                            segments: v.segments,
                            bitRate: v.mediaOutMicros > 0 ? Double(v.bytesOut) * 8e6 / Double(v.mediaOutMicros) : 0)
        }
    }
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

/// Input -> samples -> segments. Runs on the calling thread (blocking reads), so run it on a dedicated thread;
/// `stop()` may be called from anywhere.
public final class Pipeline: @unchecked Sendable {
    // @unchecked: `demuxerInterrupt` and `stopFlag` are Sendable; everything else is used by the run thread only.
    public let options: PipelineOptions
    public let stats = PipelineStats()
    private let output: PipelineOutput
    private let logger: Logger
    private let stopFlag = Atomic<Bool>(false)
    private let interrupt = Mutex<InterruptFlag?>(nil)

    public init(options: PipelineOptions, output: PipelineOutput, logger: Logger) {
        self.options = options
        self.output = output
        self.logger = logger
    }

    public func stop() {
        stopFlag.store(true, ordering: .relaxed)
        interrupt.withLock { $0?.interrupt() }
    }

    private var stopped: Bool { stopFlag.load(ordering: .relaxed) }

    /// Runs to the end of input (or `stop()`). Throws the input's error after flushing what it had.
    public func run() throws {
        stats.update { $0.startedAt = .now }
        switch options.input {
        case .testPattern(let w, let h, let fr):
            try runTestPattern(width: w, height: h, frameRate: fr)
        case .url(let url):
            try runDemuxed(url: url)
        }
    }

    // MARK: - Demuxed input (files, pipes, URLs)

    private struct Selected {
        var streamIndex: Int
        var processor: TrackProcessor
    }

    private func openDemuxer(_ url: String) throws -> Demuxer {
        var o = InputOptions()
        o.format = options.inputFormat
        o.options = options.demuxerOptions
        if url == "-" {
            // Pipes: start quickly, but look far enough to find both streams.
            o.probeSize = 2_000_000
            o.analyzeDuration = 2_000_000
        }
        // The flag exists before the (possibly blocking) open, so stop() also ends a probe that waits on a pipe.
        let flag = InterruptFlag()
        interrupt.withLock { $0 = flag }
        if stopped { flag.interrupt() }
        return try Demuxer(url: url, options: o, interruptFlag: flag)
    }

    private func isLive(_ url: String) -> Bool {
        url == "-" || url.hasPrefix("pipe:") || url.hasPrefix("udp:") || url.hasPrefix("rtp:") || url.hasPrefix("srt:")
            || url.hasPrefix("rtmp:") || url.hasPrefix("tcp:") || url.hasPrefix("/dev/")
    }

    private func runDemuxed(url: String) throws {
        let demuxer = try openDemuxer(url)
        let live = isLive(url)
        let realtime = options.realtime ?? !live
        let video = demuxer.streams.first { $0.kind == .video && $0.width > 0 && !isAttachedPicture($0) }
            ?? demuxer.streams.first { $0.kind == .video }
        let audio = demuxer.streams.first { $0.kind == .audio }
        guard video != nil || audio != nil else { throw PipelineError.noMediaStreams(url) }

        var selected: [Selected] = []
        var trackID: UInt32 = 1
        if let v = video {
            let p: TrackProcessor
            if v.isH264 && options.transcode != .always {
                p = try H264CopyProcessor(stream: v, trackID: trackID)
            } else if options.transcode == .never {
                throw PipelineError.cannotCopy(kind: "video", codec: v.codecName)
            } else {
                p = try VideoTranscodeProcessor(demuxer: demuxer, stream: v, settings: options.video,
                                                segmentDuration: options.segmentDuration, trackID: trackID)
            }
            selected.append(Selected(streamIndex: v.index, processor: p))
            trackID += 1
            logger.info("video: \(v.codecName) \(v.width)x\(v.height) \(p is H264CopyProcessor ? "copied" : "encoded to H.264")")
        }
        if let a = audio {
            let p: TrackProcessor
            if a.isAAC && options.transcode != .always {
                p = try AACCopyProcessor(stream: a, trackID: trackID)
            } else if options.transcode == .never {
                throw PipelineError.cannotCopy(kind: "audio", codec: a.codecName)
            } else {
                p = try AudioTranscodeProcessor(demuxer: demuxer, stream: a, bitRate: options.audioBitRate, trackID: trackID)
            }
            selected.append(Selected(streamIndex: a.index, processor: p))
            logger.info("audio: \(a.codecName) \(a.sampleRate) Hz \(a.channelCount) ch \(p is AACCopyProcessor ? "copied" : "encoded to AAC")")
        }
        let trackOf = Dictionary(uniqueKeysWithValues: selected.enumerated().map { ($1.streamIndex, $0) })
        let copiesVideo = selected.first { $0.processor.kind == .video }?.processor is H264CopyProcessor

        // Target duration: exact for encoded video; for copied video from a file, from the keyframes' spacing.
        var targetDuration = MediaPlaylist.targetDuration(for: [options.segmentDuration])
        if copiesVideo, !live, options.targetDurationUpFront, let v = video {
            targetDuration = max(targetDuration, scanTargetDuration(url: url, stream: v))
        }

        var sink = SegmentingSink(output: output, stats: stats, segmentDuration: options.segmentDuration,
                                  partDuration: options.partDuration, targetDuration: targetDuration,
                                  waitForSecondKeyframe: copiesVideo && live, logger: logger)
        sink.setProcessorKinds(selected.map(\.processor.kind))

        // Loop bookkeeping: the span of the first pass, in microseconds, and each stream's time base.
        let timeBases = Dictionary(uniqueKeysWithValues: demuxer.streams.map { ($0.index, $0.timeBase) })
        var loopOffsetMicros: Int64 = 0
        var passStartMicros: Int64?
        var passEndMicros: Int64 = 0
        var pace = Pacer(enabled: realtime)
        let wallStart = ContinuousClock.now
        var failure: Error?

        readLoop: while !stopped {
            let packet: Packet?
            do {
                packet = try demuxer.read()
            } catch {
                failure = error
                break
            }
            guard var packet else {
                // End of input.
                guard options.loop, !live, let start = passStartMicros else { break }
                do {
                    try demuxer.seekToStart()
                } catch {
                    failure = error
                    break
                }
                loopOffsetMicros += max(1, passEndMicros - start)
                passEndMicros = 0
                sink.loops += 1
                logger.info("looping input (pass \(sink.loops + 1))")
                continue
            }
            guard let track = trackOf[packet.streamIndex], let tb = timeBases[packet.streamIndex] else { continue }
            if packet.isCorrupt { logger.debug("corrupt packet on stream \(packet.streamIndex)") }

            if options.wallclockTimestamps {
                let t = micros(ContinuousClock.now - wallStart)
                let ticks = MediaTime.rescale(t, from: 1_000_000, to: tb.denominator) / Int64(max(1, tb.numerator))
                packet.dts = ticks
                packet.pts = ticks
            }
            // Span of this pass (on raw timestamps), for continuous timestamps across loops.
            if let dts = packet.dts ?? packet.pts {
                let us = MediaTime.rescale(dts * Int64(tb.numerator), from: tb.denominator, to: 1_000_000)
                let end = us + MediaTime.rescale(max(packet.duration, 0) * Int64(tb.numerator), from: tb.denominator, to: 1_000_000)
                if loopOffsetMicros == 0 && passStartMicros == nil { passStartMicros = us }
                passEndMicros = max(passEndMicros, end)
                if realtime { pace.wait(untilMediaMicros: us + loopOffsetMicros - (passStartMicros ?? 0), stop: { self.stopped }) }
                stats.update { $0.mediaMicros = max($0.mediaMicros, us + loopOffsetMicros - (passStartMicros ?? 0)) }
            }
            if loopOffsetMicros != 0 {
                let shift = MediaTime.rescale(loopOffsetMicros, from: 1_000_000, to: tb.denominator) / Int64(max(1, tb.numerator))
                packet.dts = packet.dts.map { $0 + shift }
                packet.pts = packet.pts.map { $0 + shift }
            }
            do {
                let samples = try selected[track].processor.process(packet)
                if selected[track].processor.kind == .video { stats.update { $0.videoFrames += 1 } }
                try sink.accept(samples, track: track, processors: selected.map(\.processor))
            } catch let e as PipelineError {
                failure = e
                break readLoop
            } catch let e as MP4Error {
                failure = e
                break readLoop
            } catch {
                // A decoder hiccup on one packet (corrupt data) must not end the stream.
                logger.warning("skipping a packet on stream \(packet.streamIndex): \(error)")
            }
        }

        // Flush encoders and the segmenter, whatever ended the input, so nothing already read is lost.
        do {
            for (i, s) in selected.enumerated() {
                try sink.accept(try s.processor.flush(), track: i, processors: selected.map(\.processor))
            }
            try sink.finish(processors: selected.map(\.processor))
        } catch {
            if failure == nil { failure = error }
        }
        if let failure, !stopped { throw failure }
        if !sink.started && !stopped {
            throw PipelineError.missingCodecConfiguration("the input ended before any playable media was found")
        }
    }

    private func isAttachedPicture(_ s: StreamInfo) -> Bool { s.codecName == "mjpeg" && s.frameRate == nil && s.duration == nil }

    /// Reads the video keyframe times of a file (up to ten minutes of media or two seconds of work) and returns the
    /// `EXT-X-TARGETDURATION` its keyframe-aligned segments will need.
    private func scanTargetDuration(url: String, stream: StreamInfo) -> Int {
        var o = InputOptions()
        o.format = options.inputFormat
        o.options = options.demuxerOptions
        guard let d = try? Demuxer(url: url, options: o) else { return 1 }
        let clock = ContinuousClock.now
        let tb = stream.timeBase
        let seg = options.segmentDuration.converted(to: tb.denominator).value / Int64(max(1, tb.numerator))
        let limit = MediaTime.rescale(600, from: 1, to: tb.denominator) / Int64(max(1, tb.numerator))
        var start: Int64?
        var first: Int64?
        var durations: [MediaTime] = []
        while let p = try? d.read() {
            guard p.streamIndex == stream.index, let dts = p.dts ?? p.pts else { continue }
            if first == nil { first = dts }
            if p.isKeyframe {
                if let s = start, dts - s >= seg {
                    durations.append(MediaTime(value: (dts - s) * Int64(tb.numerator), timescale: tb.denominator))
                    start = dts
                } else if start == nil { start = dts }
            }
            if dts - (first ?? dts) > limit || ContinuousClock.now - clock > .seconds(2) { break }
        }
        return MediaPlaylist.targetDuration(for: durations.isEmpty ? [options.segmentDuration] : durations)
    }

    // MARK: - Test pattern

    private func runTestPattern(width: Int, height: Int, frameRate: Rational) throws {
        let config = TestPatternConfiguration(width: width, height: height, frameRate: frameRate, sampleRate: 48_000, channelCount: 2)
        let generator = TestPatternGenerator(config)
        let videoStage = try VideoEncodeStage(width: width, height: height, frameRate: frameRate, settings: options.video,
                                              segmentDuration: options.segmentDuration, trackID: 1)
        let audioStage = try AudioEncodeStage(sampleRate: 48_000, channelCount: 2, bitRate: options.audioBitRate, trackID: 2)
        var sink = SegmentingSink(output: output, stats: stats, segmentDuration: options.segmentDuration,
                                  partDuration: options.partDuration,
                                  targetDuration: MediaPlaylist.targetDuration(for: [options.segmentDuration]),
                                  waitForSecondKeyframe: false, logger: logger)
        sink.setProcessorKinds([.video, .audio])
        let formats = [videoStage.format, audioStage.format]
        let wallStart = Date()
        var pace = Pacer(enabled: options.realtime ?? true)
        var index: Int64 = 0
        var audioPosition: Int64 = 0
        let tb = generator.videoTimeBase
        while !stopped {
            // Frame `index` is due at index * tb seconds after the start.
            let dueMicros = MediaTime.rescale(index * Int64(tb.numerator), from: tb.denominator, to: 1_000_000)
            pace.wait(untilMediaMicros: dueMicros, stop: { self.stopped })
            let wall = WallClock(millisecondsSince1970: Int64(wallStart.timeIntervalSince1970 * 1000) + dueMicros / 1000)
            var frame = generator.videoFrame(index: index, wallClock: wall)
            frame.pts = MediaTime.rescale(index * Int64(tb.numerator), from: tb.denominator, to: VideoEncodeStage.timescale)
            try sink.accept(try videoStage.encode(frame), track: 0, formats: formats, wallClock: wall)
            // Audio up to the end of this frame's interval.
            let audioEnd = MediaTime.rescale((index + 1) * Int64(tb.numerator), from: tb.denominator, to: 48_000)
            if audioEnd > audioPosition {
                let chunk = generator.audioFrame(start: audioPosition, count: Int(audioEnd - audioPosition))
                audioPosition = audioEnd
                try sink.accept(try audioStage.encode(chunk), track: 1, formats: formats, wallClock: wall)
            }
            index += 1
            stats.update {
                $0.videoFrames = index
                $0.mediaMicros = dueMicros
            }
        }
        try sink.accept(try videoStage.flush(), track: 0, formats: formats, wallClock: nil)
        try sink.accept(try audioStage.flush(), track: 1, formats: formats, wallClock: nil)
        try sink.finish(formats: formats)
    }
}

func micros(_ d: Duration) -> Int64 {
    d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000
}

/// Sleeps so that media time `t` is handed on no earlier than `t` after the first call (like ffmpeg's `-re`).
struct Pacer {
    let enabled: Bool
    private var origin: ContinuousClock.Instant?
    private var originMedia: Int64 = 0

    init(enabled: Bool) { self.enabled = enabled }

    mutating func wait(untilMediaMicros t: Int64, stop: () -> Bool) {
        guard enabled else { return }
        guard let origin else {
            self.origin = .now
            originMedia = t
            return
        }
        let due = origin + .microseconds(t - originMedia)
        while !stop() {
            let now = ContinuousClock.now
            if now >= due { return }
            // Sleep in short steps so stop() is noticed quickly.
            let left = due - now
            Thread.sleep(forTimeInterval: min(0.1, Double(micros(left)) / 1e6))
        }
    }
}

/// Holds samples until every track's format is known, then feeds the segmenter and hands segments on.
struct SegmentingSink {
    let output: PipelineOutput
    let stats: PipelineStats
    let segmentDuration: MediaTime
    let partDuration: MediaTime?
    var targetDuration: Int
    /// Live copied video: measure the first GOP before announcing the target duration.
    let waitForSecondKeyframe: Bool
    let logger: Logger
    var loops = 0
    private(set) var started = false
    private var segmenter: Segmenter?
    private var held: [(track: Int, sample: Sample, wallClock: WallClock?)] = []
    private var kinds: [TrackFormat.Kind] = []
    private var warnedLongSegment = false
    /// `EXT-X-PROGRAM-DATE-TIME` = anchor wall clock + (segment start - anchor media time): it advances exactly
    /// with the media, whatever the arrival jitter of a pipe (bursts after probing, network). Re-anchored only
    /// when arrival drifts from the projection by more than `maxClockDrift` (a stalled input).
    private var clockAnchor: (wall: Int64, media: MediaTime)?
    static let maxClockDriftMillis: Int64 = 5_000

    init(output: PipelineOutput, stats: PipelineStats, segmentDuration: MediaTime, partDuration: MediaTime?,
         targetDuration: Int, waitForSecondKeyframe: Bool, logger: Logger) {
        self.output = output
        self.stats = stats
        self.segmentDuration = segmentDuration
        self.partDuration = partDuration
        self.targetDuration = targetDuration
        self.waitForSecondKeyframe = waitForSecondKeyframe
        self.logger = logger
    }

    mutating func setProcessorKinds(_ k: [TrackFormat.Kind]) { kinds = k }

    mutating func accept(_ samples: [Sample], track: Int, processors: [TrackProcessor]) throws {
        try accept(samples, track: track, formats: processors.map(\.format), wallClock: WallClock.now)
    }

    mutating func accept(_ samples: [Sample], track: Int, formats: [TrackFormat?], wallClock: WallClock?) throws {
        guard !samples.isEmpty else { return }
        if segmenter == nil {
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
        for s in samples { try emit(try segmenter!.appendEvents(s, track: track, wallClock: wallClock)) }
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

    private mutating func start(formats: [TrackFormat]) throws {
        var seg = try Segmenter(tracks: formats, segmentDuration: segmentDuration, fragmentDuration: partDuration)
        try output.start(seg.initSegment, formats, targetDuration)
        started = true
        let pending = held
        held = []
        var out: [SegmenterEvent] = []
        for h in pending { out += try seg.appendEvents(h.sample, track: h.track, wallClock: h.wallClock) }
        segmenter = seg
        try emit(out)
    }

    mutating func finish(processors: [TrackProcessor]) throws {
        try finish(formats: processors.map(\.format))
    }

    mutating func finish(formats: [TrackFormat?]) throws {
        if segmenter == nil {
            let known = formats.compactMap { $0 }
            guard known.count == formats.count, !held.isEmpty else { return }
            try start(formats: known)
        }
        try emit(try segmenter!.finishEvents())
    }

    private mutating func emit(_ events: [SegmenterEvent]) throws {
        for e in events {
            var s: Segment
            switch e {
            case .part(let p):
                try output.part(p)
                continue
            case .segment(let seg):
                s = seg
            }
            if let arrival = s.programDateTime?.millisecondsSince1970 {
                let projected = clockAnchor.map { $0.wall + MediaTime.rescale((s.startTime - $0.media).value, from: s.startTime.timescale, to: 1000) }
                if let projected, abs(arrival - projected) <= Self.maxClockDriftMillis {
                    s.programDateTime = WallClock(millisecondsSince1970: projected)
                } else {
                    if projected != nil { logger.info("input clock drifted from the wall clock; re-anchoring program date-time") }
                    clockAnchor = (arrival, s.startTime)
                }
            }
            let rounded = MediaPlaylist.targetDuration(for: [s.duration])
            if rounded > targetDuration && !warnedLongSegment {
                warnedLongSegment = true
                logger.warning("segment \(s.sequence) lasts \(s.duration.seconds) s, longer than EXT-X-TARGETDURATION \(targetDuration) (the input's keyframes are irregular)")
            }
            stats.update {
                $0.segments += 1
                $0.bytesOut += Int64(s.bytes.count)
                $0.mediaOutMicros += MediaTime.rescale(s.duration.value, from: s.duration.timescale, to: 1_000_000)
            }
            try output.segment(s)
        }
    }
}

extension WallClock {
    public static var now: WallClock { WallClock(millisecondsSince1970: Int64(Date().timeIntervalSince1970 * 1000)) }
}
