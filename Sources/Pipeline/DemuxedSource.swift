import FFmpegBridge
import ISOBMFF
import Foundation
import Logging
import MediaCore
import MediaPresentation
import Producer
import Segmenter

/// A demuxed input (a file, a pipe, a network stream): libavformat's packets through the processors `OutputSetup`
/// chose (copy, transcode, a ladder), as the producer chain's events. It loops a file (`--loop`, timestamps running
/// on), stamps packets with their arrival (`--wallclock-timestamps`), and opens a network input again when asked.
final class DemuxedSource: MediaSource {
    let url: String
    let inputKind: InputKind
    let options: PipelineOptions
    let logger: Logger
    private(set) var demuxer: Demuxer
    private(set) var setup: OutputSetup
    /// Arrives as it is produced: the input kind says so, or an HTTP input without a duration (a live pull).
    let isLive: Bool
    let reconnect: ReconnectPolicy?
    let keyframes: TimingPlanner.Keyframes?
    /// Opens the input (the pipeline registers its interrupt flag, so `stop()` ends a blocking open).
    private let open: (String) throws -> Demuxer
    private let stopped: () -> Bool

    /// What each of the input's streams is read for, by stream index (decided once per demuxer, in `adopt`).
    private var routes: [StreamRoute] = []
    /// The newest video packet's presentation time (90 kHz, loops included): the live edge of a posted event.
    private(set) var videoEdge: MediaTime?
    /// A subtitle rendition per text subtitle stream, in stream order.
    private var subtitleRenditions: [Rendition] = []
    /// Per processor: the `formatVersion` last announced (`nil`: none yet).
    private var announced: [Int?] = []
    // Loop bookkeeping: the span of the first pass (raw timestamps), in microseconds.
    private(set) var loopOffsetMicros: Int64 = 0
    private var passStartMicros: Int64?
    private var passEndMicros: Int64 = 0
    private var passes = 1
    /// The input started again since the last batch returned (`SourceBatch.loopedBy`).
    private var looped = false
    private let wallStart = ContinuousClock.now

    var plan: RenditionPlan {
        var p = setup.plan
        p.subtitles = subtitleRenditions
        return p
    }
    var kinds: [TrackFormat.Kind] { setup.kinds }
    var pacedByDefault: Bool { !isLive }

    /// A ladder's rungs run up to 2 pictures apart (`RungLanes`) only when a file is read as fast as it goes
    /// (`package`, `--no-realtime`); a paced or live input keeps them together (no added latency).
    static func rungLaneDepth(_ options: PipelineOptions, _ isLive: Bool) -> Int {
        RungLanes<[Sample]>.depth(readAsFastAsItGoes: options.realtime == false && !isLive)
    }
    var endIsDisconnect: Bool {
        switch reconnect {
        case .listen: true
        case .call: inputKind != .http || isLive
        case nil: false
        }
    }

    init(demuxer: Demuxer, url: String, options: PipelineOptions, logger: Logger, open: @escaping (String) throws -> Demuxer,
         stopped: @escaping () -> Bool) throws {
        self.demuxer = demuxer
        self.url = url
        self.options = options
        self.logger = logger
        self.open = open
        self.stopped = stopped
        inputKind = InputKind(url)
        isLive = inputKind.isLive || (inputKind == .http && demuxer.duration == nil)
        reconnect = options.reconnect ? inputKind.reconnect : nil
        setup = try OutputSetup.make(demuxer: demuxer, url: url, options: options, rungLaneDepth: Self.rungLaneDepth(options, isLive),
                                     logger: logger)
        keyframes = Self.keyframes(setup, demuxer, live: isLive)
        adopt(demuxer, setup)
    }

    /// `.onGrid` when the reference video is encoded here (or there is none); the container's index of a copied
    /// video's keyframes when it has one; else measured from the first GOP (`nil`).
    private static func keyframes(_ setup: OutputSetup, _ demuxer: Demuxer, live: Bool) -> TimingPlanner.Keyframes? {
        guard setup.copiesVideo, let v = setup.videoStream else { return .onGrid }
        guard !live, let times = demuxer.keyframeTimes(stream: v.index) else { return nil }
        return .indexed(times.map { MediaTime.rescale($0, timeBase: v.timeBase, to: 90_000) }, timescale: 90_000)
    }

    private func adopt(_ d: Demuxer, _ s: OutputSetup) {
        demuxer = d
        setup = s
        announced = s.processors.map { _ in nil }
        let targets = Dictionary(grouping: s.processors.indices, by: { s.processors[$0].streamIndex })
        let subtitles = adoptSubtitles(d)
        routes = Array(repeating: .ignored, count: (d.streams.map(\.index).max() ?? -1) + 1)
        for stream in d.streams {
            let i = stream.index, tb = stream.timeBase
            if stream.kind == .data && stream.codecName == "scte_35" {
                routes[i] = .scte35(tb)
                logger.info("SCTE-35 cues from stream \(i) become timed events")
            } else if stream.kind == .data && stream.codecName == "timed_id3" {
                routes[i] = .id3(tb)
                logger.info("ID3 timed metadata from stream \(i) goes into every rendition's segments")
            } else if let (k, decoder) = subtitles[i] {
                routes[i] = .subtitles(k, decoder)
            } else if let processors = targets[i] {
                routes[i] = .media(processors, tb)
            }
        }
    }

    /// A subtitle rendition per text subtitle stream (its language, `DEFAULT` and `FORCED` from the container's
    /// disposition); bitmap subtitles are skipped with a notice. After a reopen the same streams keep their renditions.
    /// Returns the text subtitle streams: stream index → (its place in `plan.subtitles`, its decoder).
    private func adoptSubtitles(_ d: Demuxer) -> [Int: (subtitle: Int, decoder: SubtitleDecoder)] {
        let first = subtitleRenditions.isEmpty
        var textSubtitles: [Int: (subtitle: Int, decoder: SubtitleDecoder)] = [:]
        var k = 0
        for s in d.streams where s.kind == .subtitle {
            guard s.isTextSubtitle else {
                if first { logger.notice("subtitle stream \(s.index) (\(s.codecName)) is bitmap subtitles, which are not carried: skipped") }
                continue
            }
            do {
                textSubtitles[s.index] = (k, try d.makeSubtitleDecoder(stream: s.index))
            } catch {
                if first { logger.warning("subtitle stream \(s.index) (\(s.codecName)): \(error): skipped") }
                continue
            }
            if first {
                let language = s.language.flatMap(LanguageTag.init)
                var name = language.flatMap { $0.nativeName } ?? language?.bcp47 ?? "Subtitles \(k + 1)"
                if subtitleRenditions.contains(where: { $0.subtitleLabel?.name == name }) { name += " (\(k + 1))" }
                let label = SubtitleLabel(language: language, name: name, isDefault: s.disposition.contains(.default),
                                          forced: s.disposition.contains(.forced))
                subtitleRenditions.append(.subtitles(label, position: k, taken: subtitleRenditions.map(\.name)))
                logger.info("subtitle stream \(s.index) (\(s.codecName)) becomes the subtitle rendition \(subtitleRenditions[k].name)")
            }
            k += 1
        }
        return textSubtitles
    }

    func next() throws -> SourceBatch? {
        guard var batch = try read() else { return nil }
        if looped {
            batch.loopedBy = MediaTime(value: loopOffsetMicros, timescale: 1_000_000)
            looped = false
        }
        return batch
    }

    private func read() throws -> SourceBatch? {
        while true {
            guard var packet = try demuxer.read() else {
                // End of input: a file with --loop starts again, its timestamps running on.
                guard options.loop, !isLive, let start = passStartMicros else { return nil }
                try demuxer.seekToStart()
                loopOffsetMicros += max(1, passEndMicros - start)
                looped = true
                passEndMicros = 0
                passes += 1
                logger.info("looping input (pass \(passes))")
                continue
            }
            let targets: [Int], tb: Rational
            switch routes.indices.contains(packet.streamIndex) ? routes[packet.streamIndex] : .ignored {
            case .ignored:
                continue
            case .scte35(let timeBase):
                guard let event = cue(packet, timeBase: timeBase) else { continue }
                var batch = SourceBatch()
                batch.events = [.event(event)]
                return batch
            case .id3(let timeBase):
                guard let event = id3(packet, timeBase: timeBase) else { continue }
                var batch = SourceBatch()
                batch.events = [.event(event)]
                return batch
            case .subtitles(let k, let decoder):
                guard let batch = cues(packet, subtitle: k, decoder: decoder) else { continue }
                return batch
            case .media(let processors, let timeBase):
                targets = processors
                tb = timeBase
            }
            if packet.isCorrupt { logger.debug("corrupt packet on stream \(packet.streamIndex)") }
            var batch = SourceBatch()
            if options.wallclockTimestamps {
                let t = micros(ContinuousClock.now - wallStart)
                let ticks = MediaTime.rescale(t, from: 1_000_000, toTimeBase: tb, rounding: .down)
                packet.dts = ticks
                packet.pts = ticks
            }
            // The span of this pass (on raw timestamps), for continuous timestamps across loops.
            if let dts = packet.dts ?? packet.pts {
                let us = MediaTime.rescale(dts, timeBase: tb, to: 1_000_000)
                let end = us + MediaTime.rescale(max(packet.duration, 0), timeBase: tb, to: 1_000_000)
                if loopOffsetMicros == 0 && passStartMicros == nil { passStartMicros = us }
                passEndMicros = max(passEndMicros, end)
                batch.position = us + loopOffsetMicros - (passStartMicros ?? 0)
            }
            if loopOffsetMicros != 0 {
                let shift = MediaTime.rescale(loopOffsetMicros, from: 1_000_000, toTimeBase: tb, rounding: .down)
                packet.dts = packet.dts.map { $0 + shift }
                packet.pts = packet.pts.map { $0 + shift }
            }
            if packet.streamIndex == setup.videoStream?.index, let pts = packet.pts {
                let t = MediaTime(value: MediaTime.rescale(pts, timeBase: tb, to: TimedEvent.ticks), timescale: TimedEvent.ticks)
                if videoEdge.map({ t > $0 }) ?? true { videoEdge = t }
            }
            for p in targets {
                let outputs: [[Sample]]
                do {
                    outputs = try setup.processors[p].processor.process(packet)
                } catch where error is PipelineError || error is MP4Error {
                    throw error  // no codec configuration, a record that cannot be written: the stream cannot go on
                } catch {
                    // A decoder hiccup on one packet (corrupt data) must not end the stream.
                    logger.warning("skipping a packet on stream \(packet.streamIndex): \(error)")
                    continue
                }
                if p == setup.statsProcessor { batch.videoFrames += 1 }
                append(outputs, of: p, to: &batch.events)
            }
            return batch
        }
    }

    /// The processor's formats when they changed (or are first known), then its samples, per output track.
    private func append(_ outputs: [[Sample]], of p: Int, to events: inout [SourceEvent]) {
        let slot = setup.processors[p]
        if announced[p] != slot.processor.formatVersion {
            let formats = slot.processor.outputFormats
            if formats.allSatisfy({ $0 != nil }) || announced[p] == nil {
                for (k, f) in formats.enumerated() {
                    guard var f else { continue }
                    if let language = setup.trackLanguages[slot.firstTrack + k] { f.language = language }
                    if f.kind == .video { f = f.carrying(setup.captions.services(found: f.captions)) }
                    events.append(.format(track: slot.firstTrack + k, f))
                }
                if formats.allSatisfy({ $0 != nil }) { announced[p] = slot.processor.formatVersion }
            }
        }
        let now = WallClock.now
        for (k, samples) in outputs.enumerated() where !samples.isEmpty {
            events.append(.samples(track: slot.firstTrack + k, samples, wallClock: now))
        }
    }

    func flush() throws -> [SourceEvent] {
        var events: [SourceEvent] = []
        for p in setup.processors.indices { append(try setup.processors[p].processor.flush(), of: p, to: &events) }
        return events
    }

    /// Opens the input again after its publisher went away: at once for a listener (the open waits for the next
    /// publisher), after a back-off (1, 2, 4 … 10 s) for a caller. A connection whose tracks do not match the stream's
    /// renditions is refused with a log line, and the next one awaited. `false` once stopped, or when an HTTP input now
    /// has a duration (the upstream playlist ended).
    func reopen() -> Bool {
        guard let reconnect else { return false }
        demuxer.close()
        var attempt = 0
        while !stopped() {
            let delay = reconnect.delay(attempt: attempt)
            attempt += 1
            if delay > .zero {
                logger.notice("reconnecting to \(Self.redacted(url)) in \(delay.components.seconds) s")
                let until = ContinuousClock.now + delay
                while !stopped() && ContinuousClock.now < until { Thread.sleep(forTimeInterval: 0.1) }
                if stopped() { return false }
            }
            do {
                let d = try open(url)
                if inputKind == .http, d.duration != nil {
                    logger.notice("\(Self.redacted(url)) has ended (it now has a duration: EXT-X-ENDLIST upstream); so does this stream")
                    d.close()
                    return false
                }
                let s = try OutputSetup.make(demuxer: d, url: url, options: options,
                                             rungLaneDepth: Self.rungLaneDepth(options, isLive), logger: logger)
                guard s.kinds == setup.kinds, s.plan.groups == setup.plan.groups else {
                    d.close()
                    logger.warning("a new publisher on \(Self.redacted(url)) sends \(s.kinds.map(\.rawValue).joined(separator: "+")), not the stream's \(setup.kinds.map(\.rawValue).joined(separator: "+")): refused; waiting for another")
                    continue
                }
                logger.notice("publisher connected on \(Self.redacted(url)): the stream continues after EXT-X-DISCONTINUITY")
                adopt(d, s)
                return true
            } catch {
                if stopped() { return false }
                logger.warning("\(Self.redacted(url)): \(error)")
                if reconnect == .listen {
                    // A listener that cannot listen (the port is taken): do not spin.
                    let until = ContinuousClock.now + .seconds(1)
                    while !stopped() && ContinuousClock.now < until { Thread.sleep(forTimeInterval: 0.1) }
                }
            }
        }
        return false
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
}
