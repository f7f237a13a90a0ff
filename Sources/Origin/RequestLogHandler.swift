import Logging

/// Wraps the server's log handler so that per-request metadata (Hummingbird sets `hb.request.id` on every
/// request) is stored as a plain dictionary and merged only when something is actually logged. Some
/// handlers (`StreamLogHandler`) re-render all their metadata on every set, a measurable per-request cost.
struct RequestLogHandler: LogHandler {
    var base: any LogHandler
    var metadata: Logger.Metadata = [:]

    init(base: any LogHandler) { self.base = base }

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] ?? base[metadataKey: key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            event.metadata = metadata.merging(event.metadata ?? [:]) { $1 }
        }
        base.log(event: event)
    }

    static func wrap(_ logger: Logger) -> Logger {
        var wrapped = logger
        wrapped.handler = RequestLogHandler(base: logger.handler)
        return wrapped
    }
}
