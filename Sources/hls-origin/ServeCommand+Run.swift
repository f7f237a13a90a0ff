import Foundation
import Logging
import MediaCore
import Origin
import Pipeline
import ServeConfig

// What `serve` runs once the plan is made: a pipeline per planned stream, the metrics that watch them, the line that
// says where they are served, and the status line.
extension ServeCommand {
    /// What every stream gets from the flags that are not per stream.
    func streamFactory(logger: Logger) throws -> StreamFactory {
        StreamFactory(testPattern: try testPatternFrame(), history: try timeShift(), record: record,
                      serve: !pushing.noServe, push: pushing.target, logger: logger)
    }

    /// Each planned stream's pipeline, presentation (and recording, push). A file that cannot be opened or probed
    /// fails here, before the server says it is serving.
    func openStreams(_ plan: ServePlan, factory: StreamFactory) -> [ServedStream] {
        plan.streams.map { planned in
            do {
                return try factory.open(planned)
            } catch {
                fail(planned.label + describe(error))
            }
        }
    }

    /// GET /metrics (Prometheus text format): publications counted as they happen (`StreamManager` observes each
    /// stream it registers), input figures read per scrape from the streams running then.
    func observeInputs(of manager: StreamManager) {
        let metrics = manager.metrics
        metrics.addScrapeHook { [manager] in
            for stream in manager.running() {
                let s = stream.pipeline.stats.snapshot()
                metrics.updateInput(stream: stream.name, videoFrames: s.videoFrames, inputBytes: s.inputBytes,
                                    mediaSeconds: s.mediaSeconds, wallSeconds: s.wallSeconds, reconnects: s.reconnects)
            }
        }
    }

    /// The lines that say what is served where, once the listener is bound.
    func announce(_ streams: [ServedStream], scheme: String, port boundPort: Int, signedPage: (path: String, expires: Int64)?) {
        let url = "\(scheme)://\(host == "0.0.0.0" ? "127.0.0.1" : host):\(boundPort)/"
        if let exposure = access.exposure(host: host, scheme: scheme, port: boundPort) {
            Console.say(exposure)
        }
        if access.apiSecret != nil {
            Console.say("control API at \(url)api/v1/streams (Authorization: Bearer and the --api-token secret)")
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

    /// Until cancelled: each input's end or failure once (a single stream of the command line that failed before
    /// publishing anything exits with its error), and the status line twice a second, over the streams running then.
    func reportStatus(_ manager: StreamManager, initial: [ServedStream], server: OriginServer, on status: StatusLine) async {
        let first = initial.count == 1 ? initial.first.map { ObjectIdentifier($0) } : nil
        var reported = Set<ObjectIdentifier>()
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(500))
            let streams = manager.running()
            let single = streams.count == 1
            for stream in streams where !reported.contains(ObjectIdentifier(stream)) && !stream.wasRemoved {
                switch stream.outcome.get() {
                case .failed(let message):
                    reported.insert(ObjectIdentifier(stream))
                    status.clear()
                    if single && ObjectIdentifier(stream) == first && stream.publishedNothing {
                        // Nothing was ever served: this is a startup error. Exit with it.
                        fail(message)
                    }
                    Console.say("input failed: \(message); the playlist is ended, still serving (Ctrl-C to stop)", level: .error, stream: stream.name)
                case .finished:
                    reported.insert(ObjectIdentifier(stream))
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
