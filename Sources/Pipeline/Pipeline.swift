import FFmpegBridge
import Foundation
import HLS
import ISOBMFF
import Logging
import MediaCore
import MediaPresentation
import Segmenter
import Synchronization
import TestPattern

/// Where the media comes from.
public enum InputSpec: Sendable, Equatable {
    /// The built-in test pattern (colour bars, counter, clock, tone with a beep each second).
    case testPattern(width: Int, height: Int, frameRate: Rational)
    /// A path, a URL, or `-` for standard input.
    case url(String)

    /// An input that arrives as it is produced (a pipe, a device, a network stream): it is not paced, cannot be
    /// rewound, and its GOP is measured from the first keyframes instead of a scan.
    public static func isLive(_ url: String) -> Bool {
        url == "-" || url.hasPrefix("pipe:") || url.hasPrefix("udp:") || url.hasPrefix("rtp:") || url.hasPrefix("srt:")
            || url.hasPrefix("rtmp:") || url.hasPrefix("rtmps:") || url.hasPrefix("rtsp:") || url.hasPrefix("rtsps:")
            || url.hasPrefix("tcp:") || url.hasPrefix("/dev/")
    }

    /// How a network input is taken up again when its publisher goes away.
    public enum Reconnect: Sendable, Equatable {
        /// We listen (SRT `mode=listener`, RTMP or TCP `?listen`, UDP/RTP): open again at once and wait for the next
        /// publisher.
        case listen
        /// We call out (SRT caller, RTMP or RTSP pull, HLS pull over HTTP): try again with back-off. An HTTP input
        /// that ends cleanly (an upstream playlist with `EXT-X-ENDLIST`) ends the stream; one that fails is retried.
        case call
    }

    /// `nil` for files, pipes and devices: their end is the end of the stream.
    public static func reconnect(_ url: String) -> Reconnect? {
        let scheme = url.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() } ?? ""
        let query = url.split(separator: "?", maxSplits: 1).dropFirst().first.map {
            $0.split(separator: "&").map { $0.lowercased() }
        } ?? []
        switch scheme {
        case "srt": return query.contains("mode=listener") ? .listen : .call
        case "rtmp", "rtmps", "tcp":
            return query.contains { $0 == "listen" || $0 == "listen=1" } ? .listen : .call
        case "udp", "rtp": return .listen
        case "rtsp", "rtsps", "http", "https": return .call
        default: return nil
        }
    }

    /// The URL and protocol options libavformat is given: RTMP takes listen mode as an option, not in its URL (where
    /// a query would become part of the stream key), so `rtmp://0.0.0.0:1935/live/key?listen` listens on 1935.
    public static func demuxerInput(_ url: String) -> (url: String, options: [String: String]) {
        let lower = url.lowercased()
        guard lower.hasPrefix("rtmp://") || lower.hasPrefix("rtmps://"), let q = url.firstIndex(of: "?") else { return (url, [:]) }
        let items = url[url.index(after: q)...].split(separator: "&").map(String.init)
        guard items.contains(where: { $0.lowercased() == "listen" || $0.lowercased() == "listen=1" }) else { return (url, [:]) }
        let rest = items.filter { $0.lowercased() != "listen" && $0.lowercased() != "listen=1" }
        return (String(url[..<q]) + (rest.isEmpty ? "" : "?" + rest.joined(separator: "&")), ["listen": "1"])
    }

    /// Whether the input is a path on disk: not a URL, standard input (`-`) or a pipe.
    public static func isLocalPath(_ url: String) -> Bool {
        !(url.contains("://") || url == "-" || url.hasPrefix("pipe:"))
    }

    /// A one-line error for an input that is a local path which does not exist (checked before anything starts);
    /// `nil` for URLs, pipes and existing files.
    public static func missingFileError(_ url: String) -> String? {
        if !isLocalPath(url) || FileManager.default.fileExists(atPath: url) { return nil }
        return "cannot open '\(url)': No such file or directory"
    }
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
    /// An ABR ladder (`--ladder 720,480,360`): one rendition per rung plus an audio rendition. `nil`: one muxed
    /// rendition.
    public var ladder: String?
    /// Take a network input up again when its publisher goes away (`InputSpec.reconnect`); `false`: its end is the
    /// end of the stream.
    public var reconnect = true
    /// Epoch locking (`--epoch-from-input`): the timeline, segment numbers and program date-time come from the
    /// input's timestamps read as a UTC clock (see `TimelineAnchor.inputClock`), so origins fed the same input serve
    /// the same bytes whenever they started.
    public var epochFromInput = false

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


/// Input → samples → segments → `PresentationEvent`s for the output. Runs on the calling thread (blocking
/// reads), so run it on a dedicated thread; `stop()` may be called from anywhere.
public final class Pipeline: @unchecked Sendable {
    // @unchecked: `interrupt` and `stopFlag` are Sendable; everything else is used by the run thread only.
    public let options: PipelineOptions
    public let stats: PipelineStats
    /// The newest keyframe of each output video track (for thumbnails).
    public let keyframes = LatestKeyframes()
    let output: any PresentationConsumer
    let logger: Logger
    private let stopFlag = Atomic<Bool>(false)
    private let interrupt = Mutex<InterruptFlag?>(nil)
    /// A local file opened and probed by `open()`, taken by `run()`.
    private var opened: Demuxer?

    /// `stats`: where the pipeline reports progress (give one to read it before the pipeline exists).
    public init(options: PipelineOptions, output: any PresentationConsumer, logger: Logger, stats: PipelineStats = PipelineStats()) {
        self.stats = stats
        self.options = options
        self.output = output
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
        guard case .url(let url) = options.input, !InputSpec.isLive(url), !url.contains("://") else { return }
        opened = try openDemuxer(url)
    }

    /// Runs to the end of input (or `stop()`), then sends `end`. Throws the input's error after flushing what it had.
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

    func openDemuxer(_ url: String) throws -> Demuxer {
        var o = InputOptions()
        o.format = options.inputFormat
        let input = InputSpec.demuxerInput(url)
        o.options = input.options.merging(options.demuxerOptions) { $1 }
        if InputSpec.isLive(url) {
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

    /// Opens a network input again after its publisher went away, and sets up its processors: at once for a listener
    /// (the open waits for the next publisher), after a back-off (1, 2, 4 … 10 s) for a caller. A connection whose
    /// tracks do not match the stream's renditions is refused with a log line, and the next one awaited. `nil`
    /// once stopped.
    private func reopen(_ url: String, mode: InputSpec.Reconnect, kinds: [TrackFormat.Kind], groups: [[Int]]) -> (Demuxer, OutputSetup)? {
        var delay = 1.0
        while !stopped {
            if mode == .call {
                logger.notice("reconnecting to \(Self.redacted(url)) in \(Int(delay)) s")
                let until = ContinuousClock.now + .milliseconds(Int64(delay * 1000))
                while !stopped && ContinuousClock.now < until { Thread.sleep(forTimeInterval: 0.1) }
                delay = min(delay * 2, 10)
                if stopped { return nil }
            }
            do {
                let d = try openDemuxer(url)
                if url.lowercased().hasPrefix("http"), d.duration != nil {
                    logger.notice("\(Self.redacted(url)) has ended (it now has a duration: EXT-X-ENDLIST upstream); so does this stream")
                    d.close()
                    return nil
                }
                let setup = try OutputSetup.make(demuxer: d, url: url, options: options, logger: logger)
                let newKinds = setup.processors.flatMap(\.processor.outputKinds)
                guard newKinds == kinds, setup.plan.groups == groups else {
                    d.close()
                    logger.warning("a new publisher on \(Self.redacted(url)) sends \(newKinds.map(\.rawValue).joined(separator: "+")), not the stream's \(kinds.map(\.rawValue).joined(separator: "+")): refused; waiting for another")
                    continue
                }
                logger.notice("publisher connected on \(Self.redacted(url)): the stream continues after EXT-X-DISCONTINUITY")
                stats.update { $0.reconnects += 1 }
                return (d, setup)
            } catch {
                if stopped { return nil }
                logger.warning("\(Self.redacted(url)): \(error)")
                if mode == .listen {
                    // A listener that cannot listen (the port is taken): do not spin.
                    let until = ContinuousClock.now + .seconds(1)
                    while !stopped && ContinuousClock.now < until { Thread.sleep(forTimeInterval: 0.1) }
                }
            }
        }
        return nil
    }

    /// A URL for the log: a password or a stream key in the query (`passphrase=`, `streamid=`) is not printed.
    static func redacted(_ url: String) -> String {
        guard let q = url.firstIndex(of: "?") else { return url }
        let items = url[url.index(after: q)...].split(separator: "&").map { item -> String in
            let key = item.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return ["passphrase", "streamid", "password", "pass", "token", "key"].contains(key.lowercased()) ? "\(key)=***" : String(item)
        }
        return String(url[..<q]) + "?" + items.joined(separator: "&")
    }

    private func runDemuxed(url: String) throws {
        var demuxer = try opened ?? openDemuxer(url)
        opened = nil
        let lower = url.lowercased()
        // An upstream HLS stream (or any HTTP input without a duration) arrives as it is produced: not paced, no
        // keyframe scan, and taken up again when it fails; one that has a duration is a file on a web server.
        let pulledLive = (lower.hasPrefix("http://") || lower.hasPrefix("https://")) && demuxer.duration == nil
        let live = InputSpec.isLive(url) || pulledLive
        let reconnect = options.reconnect ? InputSpec.reconnect(url) : nil
        if !live, !options.loop, let d = demuxer.duration { stats.update { $0.inputDurationMicros = d } }
        let realtime = options.realtime ?? !live
        var setup = try OutputSetup.make(demuxer: demuxer, url: url, options: options, logger: logger)
        var processors = setup.processors
        var targetDuration = MediaPlaylist.targetDuration(for: [options.segmentDuration])
        if setup.copiesVideo, !live, options.targetDurationUpFront, let v = setup.videoStream {
            targetDuration = max(targetDuration, scanTargetDuration(url: url, stream: v))
        }
        var sink = SegmentingSink(output: output, stats: stats, segmentDuration: options.segmentDuration,
                                  partDuration: options.partDuration, targetDuration: targetDuration,
                                  waitForSecondKeyframe: setup.copiesVideo && live, plan: setup.plan,
                                  kinds: processors.flatMap(\.processor.outputKinds), logger: logger,
                                  keyframes: keyframes, epochLocked: options.epochFromInput)
        func formats() -> [TrackFormat?] { processors.flatMap(\.processor.outputFormats) }
        func accept(_ outputs: [[Sample]], of p: Int) throws {
            let all = formats()
            for (k, samples) in outputs.enumerated() {
                try sink.accept(samples, track: processors[p].firstTrack + k, formats: all, wallClock: .now)
            }
        }

        // Loop bookkeeping: the span of the first pass, in microseconds, and each stream's time base.
        var timeBases = Dictionary(uniqueKeysWithValues: demuxer.streams.map { ($0.index, $0.timeBase) })
        var byStream = Dictionary(grouping: processors.indices, by: { processors[$0].streamIndex })
        /// The publisher went away (`why`): flush what it sent, end the segment in progress, and wait for the next
        /// one. `false` when the stream ends instead.
        func takeUp(after why: String) throws -> Bool {
            guard let reconnect, !stopped else { return false }
            logger.notice("publisher disconnected from \(Self.redacted(url)) (\(why)); \(reconnect == .listen ? "waiting for the next one" : "the stream goes on when it is back"); viewers keep the current window")
            for p in processors.indices { try accept(try processors[p].processor.flush(), of: p) }
            try sink.reconnect()
            demuxer.close()
            let kinds = processors.flatMap(\.processor.outputKinds)
            guard let (d, s) = reopen(url, mode: reconnect, kinds: kinds, groups: setup.plan.groups) else { return false }
            demuxer = d
            setup = s
            processors = s.processors
            timeBases = Dictionary(uniqueKeysWithValues: d.streams.map { ($0.index, $0.timeBase) })
            byStream = Dictionary(grouping: processors.indices, by: { processors[$0].streamIndex })
            return true
        }
        var loopOffsetMicros: Int64 = 0
        var passStartMicros: Int64?
        var passEndMicros: Int64 = 0
        var pace = Pacer(enabled: realtime)
        let wallStart = ContinuousClock.now
        var failure: Error?
        var outputFailed = false

        readLoop: while !stopped {
            let packet: Packet?
            do {
                packet = try demuxer.read()
            } catch {
                do {
                    if try takeUp(after: "\(error)") { continue }
                } catch let e {
                    failure = e
                    break
                }
                failure = error
                break
            }
            guard var packet else {
                // End of input.
                // An HTTP input ends for good unless it is live (libavformat's HLS demuxer also ends a live stream
                // whose upstream stopped answering: it is taken up again, and ends once the upstream says ENDLIST).
                if reconnect == .listen || (reconnect == .call && (!lower.hasPrefix("http") || pulledLive)) {
                    do {
                        if try takeUp(after: "end of stream") { continue }
                    } catch {
                        failure = error
                    }
                    break
                }
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
            guard let targets = byStream[packet.streamIndex], let tb = timeBases[packet.streamIndex] else { continue }
            if packet.isCorrupt { logger.debug("corrupt packet on stream \(packet.streamIndex)") }

            if options.wallclockTimestamps {
                let t = micros(ContinuousClock.now - wallStart)
                let ticks = MediaTime.rescale(t, from: 1_000_000, toTimeBase: tb, rounding: .down)
                packet.dts = ticks
                packet.pts = ticks
            }
            // Span of this pass (on raw timestamps), for continuous timestamps across loops.
            if let dts = packet.dts ?? packet.pts {
                let us = MediaTime.rescale(dts, timeBase: tb, to: 1_000_000)
                let end = us + MediaTime.rescale(max(packet.duration, 0), timeBase: tb, to: 1_000_000)
                if loopOffsetMicros == 0 && passStartMicros == nil { passStartMicros = us }
                passEndMicros = max(passEndMicros, end)
                if realtime { pace.wait(untilMediaMicros: us + loopOffsetMicros - (passStartMicros ?? 0), stop: { self.stopped }) }
                stats.update { $0.mediaMicros = max($0.mediaMicros, us + loopOffsetMicros - (passStartMicros ?? 0)) }
            }
            if loopOffsetMicros != 0 {
                let shift = MediaTime.rescale(loopOffsetMicros, from: 1_000_000, toTimeBase: tb, rounding: .down)
                packet.dts = packet.dts.map { $0 + shift }
                packet.pts = packet.pts.map { $0 + shift }
            }
            for p in targets {
                let outputs: [[Sample]]
                do {
                    outputs = try processors[p].processor.process(packet)
                } catch where error is PipelineError || error is MP4Error {
                    // Our own errors (no codec configuration, a record that cannot be written): the stream cannot go on.
                    failure = error
                    break readLoop
                } catch {
                    // A decoder hiccup on one packet (corrupt data) must not end the stream.
                    logger.warning("skipping a packet on stream \(packet.streamIndex): \(error)")
                    continue
                }
                if p == setup.statsProcessor { stats.update { $0.videoFrames += 1 } }
                do {
                    try accept(outputs, of: p)
                } catch {
                    // The segmenter or an output refused (a box that cannot be written, a single file that cannot take
                    // a new init segment, a disk that is full): what came before stays published; the stream ends.
                    failure = error
                    outputFailed = true
                    break readLoop
                }
            }
        }

        // Flush encoders and the segmenter, whatever ended the input, so nothing already read is lost; unless the
        // segmenter or an output is what failed: an output that refused is not fed again.
        if !outputFailed {
            do {
                for p in processors.indices { try accept(try processors[p].processor.flush(), of: p) }
                try sink.finish(formats: formats())
            } catch {
                if failure == nil { failure = error }
            }
        }
        if let failure, !stopped { throw failure }
        if !sink.started && !stopped {
            throw PipelineError.missingCodecConfiguration("the input ended before any playable media was found")
        }
    }

    /// Reads the video keyframe times of a file (up to ten minutes of media or two seconds of work) and returns the
    /// `EXT-X-TARGETDURATION` its keyframe-aligned segments will need.
    private func scanTargetDuration(url: String, stream: StreamInfo) -> Int {
        var o = InputOptions()
        o.format = options.inputFormat
        o.options = options.demuxerOptions
        guard let d = try? Demuxer(url: url, options: o) else { return 1 }
        let clock = ContinuousClock.now
        let tb = stream.timeBase
        let seg = options.segmentDuration.ticks(inTimeBase: tb)
        let limit = MediaTime.seconds(600).ticks(inTimeBase: tb)
        var start: Int64?
        var first: Int64?
        var durations: [MediaTime] = []
        while let p = try? d.read() {
            guard p.streamIndex == stream.index, let dts = p.dts ?? p.pts else { continue }
            if first == nil { first = dts }
            if p.isKeyframe {
                if let s = start, dts - s >= seg {
                    durations.append(MediaTime(ticks: dts - s, timeBase: tb, timescale: 90_000, rounding: .up))
                    start = dts
                } else if start == nil { start = dts }
            }
            if dts - (first ?? dts) > limit || ContinuousClock.now - clock > .seconds(2) { break }
        }
        return MediaPlaylist.targetDuration(for: durations.isEmpty ? [options.segmentDuration] : durations)
    }
}
