import ArgumentParser
import Dispatch
import Foundation
import Logging
import Pipeline
import Push

/// Push flags of `serve` (issue 10 §4): feed an HTTP ingest, optionally without the local server.
struct PushOptions: ParsableArguments {
    @Option(name: .customLong("push"), help: ArgumentHelp("Push every init segment, segment, playlist (and LL-HLS part) to this HTTP ingest as it is published, each to URL + its path (URL/index.m3u8, URL/stream.m3u8, URL/seg7.m4s), over persistent connections, retried with back-off while the ingest is unreachable. A player pointed at URL/index.m3u8 sees what it would see at the origin.", valueName: "url"))
    var push: String?

    @Option(name: .customLong("push-method"), help: ArgumentHelp("HTTP method of --push: PUT or POST.", valueName: "method"))
    var pushMethod = "PUT"

    @Flag(name: .customLong("push-delete"), help: "With --push: DELETE a segment and its parts from the ingest once it has been out of the playlist for longer than the segment plus the playlist (RFC 8216 §6.2.2).")
    var pushDelete = false

    @Flag(name: .customLong("no-serve"), help: "With --push: no local HTTP server; run the input and push only. At the end of input (or Ctrl-C) the ended playlists are pushed and the process exits.")
    var noServe = false

    func validate() throws {
        if let push {
            let lower = push.lowercased()
            guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), push.count > 8 else {
                throw ValidationError("--push takes an http:// or https:// URL (got '\(push)')")
            }
            guard method != nil else { throw ValidationError("--push-method must be PUT or POST (got '\(pushMethod)')") }
        } else {
            if noServe { throw ValidationError("--no-serve needs --push URL (otherwise nothing would read the stream)") }
            if pushDelete { throw ValidationError("--push-delete needs --push URL") }
        }
    }

    var method: PushMethod? { PushMethod(rawValue: pushMethod.uppercased()) }

    /// Where `--push` sends, `nil` without it.
    var target: PushTarget? { push.map { PushTarget(url: $0, method: method ?? .put, deleteExpired: pushDelete) } }
}

/// `--push URL` with its method and deletions: makes each stream's pusher.
struct PushTarget: Sendable {
    var url: String
    var method: PushMethod
    var deleteExpired: Bool

    /// A named stream (`cam1=...`) goes under URL/cam1/.
    func makePusher(windowSize: Int, stream: String = "", logger: Logger) -> Pusher {
        let streamURL = stream.isEmpty ? url : (url.hasSuffix("/") ? url : url + "/") + stream + "/"
        var c = Pusher.Configuration(url: streamURL)
        c.method = method
        c.deleteExpired = deleteExpired
        c.windowSize = windowSize
        return Pusher(configuration: c, transport: HTTPPushTransport(), logger: logger)
    }
}

extension ServeCommand {
    /// `--no-serve`: the pipelines feed the pushers (and recorders), no listener. Ends when every input has ended
    /// (after the final playlists are pushed) or on Ctrl-C.
    func pushOnly(_ streams: [ServedStream], signals: SignalWatcher) async {
        for stream in streams {
            guard let pusher = stream.pusher else { continue }
            let method = pusher.configuration.method
            Console.say("pushing to \(pusher.configuration.url) (\(method.rawValue)\(pusher.configuration.deleteExpired ? ", DELETE of expired segments" : ""); playlist \(pusher.configuration.url)index.m3u8), no local server", stream: stream.name)
        }
        let interrupted = PipelineOutcome()
        signals.onShutdown { interrupted.set(.finished) }
        streams.forEach { $0.start() }
        while interrupted.isRunning && streams.contains(where: \.isRunning) {
            try? await Task.sleep(for: .milliseconds(100))
        }
        streams.forEach { $0.pipeline.stop() }
        streams.forEach { $0.stop() }
        for stream in streams { if let pusher = stream.pusher { await finishPush(pusher, stream: stream.name) } }
        var failure: String?
        for stream in streams {
            if case .failed(let message) = stream.outcome.get() { failure = failure ?? "\(stream.label)input failed: \(message)" }
        }
        if let failure { fail(failure) }
        if interrupted.isRunning {
            Console.say("end of input; pushed the ended playlists")
        } else {
            Console.say("stopped")
        }
    }

    func finishPush(_ pusher: Pusher, stream: String = "") async { await finishPushing(pusher, stream: stream) }
}

/// Waits (at most 10 s) for the pusher's queue to drain, then closes its connections.
func finishPushing(_ pusher: Pusher, stream: String = "") async {
    let drained = await pusher.drain(timeout: .seconds(10))
    await pusher.shutdown()
    let s = pusher.stats
    let note = drained ? "" : "; gave up on what was left after 10 s"
    Console.say("push: \(s.pushed) objects pushed, \(s.deleted) deleted, \(s.refused) refused, \(s.dropped + s.abandoned) dropped\(note)", stream: stream)
}
