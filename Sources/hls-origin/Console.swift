import ArgumentParser
import Foundation
import LogFormats
import Logging
import Pipeline
import Synchronization

/// `--log-format`: how standard error reads. `text` (the default) is for people: swift-log's lines and the commands'
/// own `hls-origin: ...` lines, plus a status line on a terminal. `json` is for log collectors: every line on standard
/// error is one JSON object (`JSONLogLine`), the commands' own lines included, and there is no status line.
enum LogFormat: String, CaseIterable, ExpressibleByArgument, Sendable {
    case text, json
}

/// The lines the commands write themselves (not through a `Logger`): where the server listens, the end of an input,
/// errors before exit. Text: `hls-origin: [error: |warning: ][NAME: ]MESSAGE`, as always; JSON: the same fields as a
/// log event's (`stream` is the stream's name).
enum Console {
    private static let current = Mutex(LogFormat.text)

    static var format: LogFormat { current.withLock { $0 } }

    static func say(_ message: String, level: Logger.Level = .notice, stream: String = "",
                    fields: Logger.Metadata = [:]) {
        switch format {
        case .text:
            let prefix = level == .error ? "error: " : level == .warning ? "warning: " : ""
            let label = stream.isEmpty ? "" : "\(stream): "
            StandardErrorLines.write("hls-origin: \(prefix)\(label)\(message)\n")
        case .json:
            var metadata = fields
            if !stream.isEmpty { metadata["stream"] = .string(stream) }
            StandardErrorLines.write(JSONLogLine.render(time: .now(), level: level, message: message, metadata: metadata))
        }
    }

    /// Sets the format and bootstraps swift-log with the matching handler (once per process).
    static func bootstrap(_ format: LogFormat, level: Logger.Level) {
        current.withLock { $0 = format }
        // FFmpeg's own lines (--log-level debug, trace) are plain text written by libav itself: not in JSON.
        Pipeline.configureLibraryLogging(format == .json ? max(level, .info) : level)
        LoggingSystem.bootstrap { label in
            switch format {
            case .text:
                var h = StreamLogHandler.standardError(label: label)
                h.logLevel = level
                return h
            case .json:
                return JSONLogHandler(level: level)
            }
        }
        if format == .json { routeLibraryLogs() }
    }
}
