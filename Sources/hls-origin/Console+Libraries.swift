import Foundation
import Logging

// Libraries that write their own lines to standard error, bypassing FFmpeg's av_log: in JSON mode each is given a
// log handler that turns its lines into log events, so standard error stays one JSON object per line.

extension Console {
    /// libsrt (behind libavformat's `srt://`) prints its errors itself, e.g. "SRT.ea: EID:1 no sockets to check, this
    /// would deadlock" when a listener closes at shutdown. Looked up at run time: libsrt is a dependency of
    /// libavformat, not ours, and may be absent.
    static func routeLibraryLogs() {
        typealias SetHandler = @convention(c) (UnsafeMutableRawPointer?, SRTLogHandler?) -> Void
        typealias SetFlags = @convention(c) (Int32) -> Void
        guard let setHandler = dlsym(nil, "srt_setloghandler"),
              let setFlags = dlsym(nil, "srt_setlogflags") else { return }
        // SRT_LOGF_DISABLE_TIME | _THREADNAME | _SEVERITY | _EOL: the message alone; time and level are the event's.
        unsafeBitCast(setFlags, to: SetFlags.self)(1 | 2 | 4 | 8)
        unsafeBitCast(setHandler, to: SetHandler.self)(nil, srtLogLine)
    }
}

typealias SRTLogHandler = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, Int32,
                                          UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Void

/// libsrt's `SRT_LOG_HANDLER_FN(opaque, level, file, line, area, message)`; `level` is a syslog level. libsrt calls
/// routine events errors (a listener closing), and the origin says itself when an input fails, so its errors are
/// warnings here.
private let separators = CharacterSet.whitespacesAndNewlines.union(CharacterSet(charactersIn: ":"))

private let srtLogLine: SRTLogHandler = { _, level, _, _, area, message in
    guard let message else { return }
    // Without its time, thread and severity prefixes libsrt still starts with the ":" that separated them.
    let text = String(cString: message).trimmingCharacters(in: separators)
    let mapped: Logger.Level = switch level {
    case ...2: .error
    case 3, 4: .warning
    case 5: .notice
    case 6: .info
    default: .debug
    }
    var metadata: Logger.Metadata = ["source": "libsrt"]
    if let area { metadata["area"] = .string(String(cString: area)) }
    Logger(label: "libsrt").log(level: mapped, "\(text)", metadata: metadata)
}
