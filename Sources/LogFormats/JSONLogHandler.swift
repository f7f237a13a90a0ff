import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A swift-log handler that writes each event as one JSON line (`JSONLogLine`): `--log-format json`. Metadata is a
/// value, as `LogHandler` asks: the handler's own, then its metadata provider's, then the event's (later wins).
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let write: @Sendable (String) -> Void
    private let clock: @Sendable () -> Timestamp

    /// `write` gets one complete line (with its `\n`) per event; the default writes it to standard error.
    public init(level: Logger.Level, metadataProvider: Logger.MetadataProvider? = nil,
                clock: @escaping @Sendable () -> Timestamp = { Timestamp.now() },
                write: @escaping @Sendable (String) -> Void = { StandardErrorLines.write($0) }) {
        self.logLevel = level
        self.metadataProvider = metadataProvider
        self.clock = clock
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let own = event.metadata { merged.merge(own) { $1 } }
        write(JSONLogLine.render(time: clock(), level: event.level, message: event.message.description,
                                 metadata: merged, error: event.error))
    }
}

/// Whole lines to standard error: one `write(2)` per line where the kernel takes it, lines from several threads never
/// interleaved (a lock), short writes and EINTR retried. Shared by the JSON handler and the lines the commands
/// write themselves, so neither splits the other's line.
public enum StandardErrorLines {
    private static let lock = Mutex(())

    public static func write(_ line: String) {
        let bytes = Array(line.utf8)
        lock.withLock { _ in
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let n = systemWrite(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                    if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
                }
            }
        }
    }
}

private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(fd, bytes, count)
    #else
    Darwin.write(fd, bytes, count)
    #endif
}
