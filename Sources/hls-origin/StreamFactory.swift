import Foundation
import Logging
import MediaCore
import Pipeline
import ServeConfig

/// What `serve` gives every stream it runs, at its start or later (the control API, a reload): makes a planned
/// stream's `ServedStream` (pipeline, presentation, recording, push) from the flags that are not per stream.
struct StreamFactory: Sendable {
    var testPattern: (width: Int, height: Int)
    /// `--dvr-window`.
    var history: MediaTime?
    /// `--record DIR`.
    var record: String?
    /// `false` with `--no-serve`.
    var serve: Bool
    var push: PushTarget?
    var logger: Logger

    /// The stream, its input not opened yet. `later`: added while serving, so its recording goes to the first of
    /// `DIR/NAME`, `DIR/NAME.2`, … that is empty (a stream ended and added again keeps its earlier recording).
    func make(_ planned: ServePlan.Stream, later: Bool = false) throws -> ServedStream {
        let name = planned.name
        let streamLogger = logger.forStream(name)
        return try ServedStream(name: name, options: PipelineOptions(planned.options, testPattern: testPattern),
                                window: planned.window, history: history,
                                recordDirectory: recordDirectory(name, later: later), serve: serve,
                                pusher: push?.makePusher(windowSize: planned.window, stream: name, logger: streamLogger),
                                encryption: try EncryptionSetup(planned.options, contentID: name.isEmpty ? "stream" : name,
                                                                logger: streamLogger), logger: streamLogger)
    }

    /// Makes the stream and opens a local file now (blocking: probing reads it), so one that cannot be opened fails
    /// here. A stream added while serving does this off the event loops (`StreamManager`).
    func open(_ planned: ServePlan.Stream, later: Bool = false) throws -> ServedStream {
        let stream = try make(planned, later: later)
        try stream.open()
        return stream
    }

    func recordDirectory(_ name: String, later: Bool) -> String? {
        guard let record else { return nil }
        guard !name.isEmpty else { return record }
        let base = URL(fileURLWithPath: record).appendingPathComponent(name).path
        guard later else { return base }
        for n in 1...1000 {
            let path = n == 1 ? base : "\(base).\(n)"
            let contents = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            if contents.isEmpty { return path }
        }
        return base  // the recorder says why it cannot record there
    }
}

extension Logger {
    /// This logger with the stream's name as `stream` metadata (none for the root stream, `""`).
    func forStream(_ name: String) -> Logger {
        var l = self
        if !name.isEmpty { l[metadataKey: "stream"] = "\(name)" }
        return l
    }
}
