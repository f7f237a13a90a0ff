internal import CFFmpeg

/// A failure reported by FFmpeg (or by this bridge while driving it).
///
/// `description` is one line meant for a person: what we were doing, then why it failed, e.g.
/// `cannot open 'x.mp4': No such file or directory`.
public struct FFmpegError: Error, CustomStringConvertible, Sendable {
    /// The negative `AVERROR` code (`-errno` for system errors).
    public let code: Int32
    /// The FFmpeg function that failed, e.g. `avformat_open_input`.
    public let call: String
    /// `av_strerror` text for `code`.
    public let message: String
    /// What we were doing, e.g. `cannot open 'x.mp4'`.
    public let context: String
    /// A more precise explanation than `message`, when we know one (it replaces `message` in `description`).
    public let explanation: String?

    public init(code: Int32, call: String, context: String, explanation: String? = nil) {
        self.code = code
        self.call = call
        self.message = FFmpegError.string(for: code)
        self.context = context
        self.explanation = explanation
    }

    public var description: String {
        let why = explanation ?? message
        return context.isEmpty ? "\(call): \(why)" : "\(context): \(why)"
    }

    /// The read was aborted through an `InterruptFlag`.
    public var isInterrupted: Bool { code == cff_averror_exit() }
    /// The input contained data FFmpeg could not parse.
    public var isInvalidData: Bool { code == cff_averror_invaliddata() }

    /// `av_strerror` into a Swift string.
    static func string(for code: Int32) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buf in
            _ = cff_strerror(code, buf.baseAddress, buf.count)
            return String(cString: buf.baseAddress!)
        }
    }

    /// An argument error raised by the bridge itself (`AVERROR(EINVAL)`).
    static func invalid(_ context: String, _ explanation: String, call: String = "FFmpegBridge") -> FFmpegError {
        FFmpegError(code: cff_averror_einval(), call: call, context: context, explanation: explanation)
    }
}

/// Throws for a negative FFmpeg return value, passes others through.
@discardableResult
@inline(__always)
func check(_ result: Int32, _ call: String, _ context: @autoclosure () -> String) throws(FFmpegError) -> Int32 {
    if result < 0 { throw FFmpegError(code: result, call: call, context: context()) }
    return result
}

/// FFmpeg's numeric constants that Swift cannot import as macros (see shim.h).
enum AV {
    static let eof: Int32 = cff_averror_eof()
    static let eagain: Int32 = cff_averror_eagain()
    static let invalidData: Int32 = cff_averror_invaliddata()
    static let exit: Int32 = cff_averror_exit()
    static let einval: Int32 = cff_averror_einval()
    static let enomem: Int32 = cff_averror_enomem()
    static let protocolNotFound: Int32 = cff_averror_protocol_not_found()
    static let noPTS: Int64 = cff_nopts_value()
    static let timeBase: Int32 = cff_time_base()
}

/// Library-wide facts and settings.
public enum FFmpegLibrary {
    /// `"libavformat 59.27.100, libavcodec 59.37.100, libavutil 57.28.100, libswscale 6.7.100, libswresample 4.7.100"`.
    public static var versions: String {
        func v(_ name: String, _ n: UInt32) -> String { "\(name) \(n >> 16).\((n >> 8) & 0xFF).\(n & 0xFF)" }
        return [v("libavformat", avformat_version()), v("libavcodec", avcodec_version()),
                v("libavutil", avutil_version()), v("libswscale", swscale_version()),
                v("libswresample", swresample_version())].joined(separator: ", ")
    }

    public enum LogLevel: Sendable {
        case quiet, panic, fatal, error, warning, info, verbose, debug
    }

    /// How much FFmpeg itself writes to standard error (process-wide; FFmpeg's default is `.info`).
    /// Every failure is also reported through `FFmpegError`, so `.error` or `.quiet` lose nothing essential.
    public static func setLogLevel(_ level: LogLevel) {
        let value: Int32
        switch level {
        case .quiet: value = AV_LOG_QUIET
        case .panic: value = AV_LOG_PANIC
        case .fatal: value = AV_LOG_FATAL
        case .error: value = AV_LOG_ERROR
        case .warning: value = AV_LOG_WARNING
        case .info: value = AV_LOG_INFO
        case .verbose: value = AV_LOG_VERBOSE
        case .debug: value = AV_LOG_DEBUG
        }
        av_log_set_level(value)
    }
}

// Test hooks: the shim's values, so a test can compare them with the documented constants.
enum ShimConstants {
    static var averrorEOF: Int32 { cff_averror_eof() }
    static var averrorEAGAIN: Int32 { cff_averror_eagain() }
    static var averrorInvalidData: Int32 { cff_averror_invaliddata() }
    static var averrorExit: Int32 { cff_averror_exit() }
    static var noPTS: Int64 { cff_nopts_value() }
    static func errorString(_ code: Int32) -> String { FFmpegError.string(for: code) }
}
