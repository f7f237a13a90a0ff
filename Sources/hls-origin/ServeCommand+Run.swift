import Foundation
import Logging
import MediaCore
import Origin
import Pipeline
import ServeConfig

// What `serve` runs once the plan is made: a pipeline per planned stream, the metrics that watch them, the line that
// says where they are served, and the status line.
extension ServeCommand {
    /// Each planned stream's pipeline, presentation (and recording, push). A file that cannot be opened or probed
    /// fails here, before the server says it is serving.
    func openStreams(_ plan: ServePlan, history: MediaTime?, logger: Logger) throws -> [ServedStream] {
        let testPattern = try testPatternFrame()
        var opened: [ServedStream] = []
        for planned in plan.streams {
            let name = planned.name
            var streamLogger = logger
            if !name.isEmpty { streamLogger[metadataKey: "stream"] = "\(name)" }
            let directory = record.map { name.isEmpty ? $0 : URL(fileURLWithPath: $0).appendingPathComponent(name).path }
            do {
                let stream = try ServedStream(name: name, options: PipelineOptions(planned.options, testPattern: testPattern),
                                              window: planned.window, history: history,
                                              recordDirectory: directory, serve: !pushing.noServe,
                                              pusher: pushing.makePusher(windowSize: planned.window, stream: name, logger: streamLogger),
                                              logger: streamLogger)
                try stream.open()
                opened.append(stream)
            } catch {
                fail(planned.label + describe(error))
            }
        }
        return opened
    }

    /// GET /metrics (Prometheus text format): publications counted as they happen, input figures read per scrape.
    func observe(_ streams: [ServedStream]) -> OriginMetrics {
        let metrics = OriginMetrics()
        for stream in streams { metrics.observe(stream.presentation, named: stream.name) }
        metrics.addScrapeHook {
            for stream in streams {
                let s = stream.pipeline.stats.snapshot()
                metrics.updateInput(stream: stream.name, videoFrames: s.videoFrames, inputBytes: s.inputBytes,
                                    mediaSeconds: s.mediaSeconds, wallSeconds: s.wallSeconds, reconnects: s.reconnects)
            }
        }
        return metrics
    }

    /// The lines that say what is served where, once the listener is bound.
    func announce(_ streams: [ServedStream], scheme: String, port boundPort: Int, signedPage: (path: String, expires: Int64)?) {
        let url = "\(scheme)://\(host == "0.0.0.0" ? "127.0.0.1" : host):\(boundPort)/"
        if let exposure = access.exposure(host: host, scheme: scheme, port: boundPort) {
            Console.say(exposure)
        }
        if let (path, expires) = signedPage {
            let until = Date(timeIntervalSince1970: TimeInterval(expires)).formatted(.iso8601)
            let query = path.drop { $0 != "?" }
            if Console.format == .json {
                // A signed URL is a credential until it expires: not in a log a collector keeps.
                Console.say("serving \(url)  (signed URLs only; the signed page URL is not logged in JSON: make one with 'hls-origin sign')",
                            fields: ["signed_until": .string(until)])
            } else {
                Console.say("serving \(url.dropLast())\(path)  (signed page URL, valid until \(until); playlist \(url)index.m3u8\(query))")
            }
        } else if streams.count == 1 && streams[0].name.isEmpty {
            Console.say("serving \(url)  (playlist \(url)index.m3u8)")
        } else {
            let names = streams.map { "\(url)\($0.name)/index.m3u8" }.joined(separator: ", ")
            Console.say("serving \(streams.count) streams at \(url)  (\(names))")
        }
    }

    /// Until cancelled: each input's end or failure once (a single stream that failed before publishing anything
    /// exits with its error), and the status line twice a second.
    func reportStatus(_ streams: [ServedStream], server: OriginServer, on status: StatusLine) async {
        let single = streams.count == 1
        var reported = Set<String>()
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(500))
            for stream in streams where !reported.contains(stream.name) {
                switch stream.outcome.get() {
                case .failed(let message):
                    reported.insert(stream.name)
                    status.clear()
                    if single && stream.publishedNothing {
                        // Nothing was ever served: this is a startup error. Exit with it.
                        fail(message)
                    }
                    Console.say("input failed: \(message); the playlist is ended, still serving (Ctrl-C to stop)", level: .error, stream: stream.name)
                case .finished:
                    reported.insert(stream.name)
                    status.clear()
                    Console.say("end of input; the playlist is ended, still serving (Ctrl-C to stop)", stream: stream.name)
                case .running:
                    break
                }
            }
            let snaps = streams.map { $0.pipeline.stats.snapshot() }
            let rate = snaps.reduce(0) { $0 + $1.bitRate }
            if single, let s = snaps.first {
                let fps = s.wallSeconds > 0 ? Double(s.videoFrames) / s.wallSeconds : 0
                status.show(String(format: "in %.1f fps | speed %.2fx | out %@ | segments %d | viewers %d",
                                   fps, s.speed, formatRate(rate), s.segments, server.stats.activeViewers))
            } else {
                let live = streams.filter { if case .running = $0.outcome.get() { true } else { false } }.count
                status.show(String(format: "streams %d (%d running) | out %@ | segments %d | viewers %d",
                                   streams.count, live, formatRate(rate), snaps.reduce(0) { $0 + $1.segments },
                                   server.stats.activeViewers))
            }
        }
    }
}
