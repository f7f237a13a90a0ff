import Foundation
import MediaCore

/// Where the media comes from.
public enum InputSpec: Sendable, Equatable {
    /// The built-in test pattern (colour bars, counter, clock, tone with a beep each second).
    case testPattern(width: Int, height: Int, frameRate: Rational)
    /// A path, a URL, or `-` for standard input.
    case url(String)

    /// What kind of input this is: decided here, once (`InputKind`).
    public var kind: InputKind {
        switch self {
        case .testPattern: .testPattern
        case .url(let url): InputKind(url)
        }
    }

    /// A one-line error for an input that is a local path which does not exist (checked before anything starts);
    /// `nil` for URLs, pipes and existing files.
    public static func missingFileError(_ url: String) -> String? { InputKind(url).missingFileError(url) }

    /// Whether the input is a path on disk: not a URL, standard input (`-`) or a pipe.
    public static func isLocalPath(_ url: String) -> Bool { InputKind(url) == .file }
}

/// The kind of an input, decided once from how it is named, and everything that follows from it: whether it arrives
/// as it is produced (not paced, not rewound, probed small, its GOP measured as it comes), and how it is taken up
/// again when its publisher goes away.
public enum InputKind: Sendable, Equatable {
    case testPattern
    /// A path on disk.
    case file
    /// Standard input (`-`) or `pipe:N`.
    case pipe
    /// A device node (`/dev/video0`).
    case device
    /// We listen for a publisher: SRT `mode=listener`, RTMP or TCP `?listen`, UDP, RTP.
    case listener
    /// We call out: SRT caller, RTMP or RTSP pull, TCP caller, RIST.
    case caller
    /// HTTP(S): a file on a web server, or an upstream live playlist (live when it has no duration once open).
    case http
    /// Any other URL libavformat opens (ftp, …): read like a file.
    case otherURL

    public init(_ url: String) {
        let lower = url.lowercased()
        if url == "-" || lower.hasPrefix("pipe:") { self = .pipe; return }
        if url.hasPrefix("/dev/") { self = .device; return }
        // Anything else without a scheme (`scheme://`) is a path on disk, whatever characters its name holds.
        guard let separator = lower.range(of: "://") else {
            self = .file
            return
        }
        let scheme = String(lower[..<separator.lowerBound])
        let query = lower.split(separator: "?", maxSplits: 1).dropFirst().first.map { $0.split(separator: "&").map(String.init) } ?? []
        let listens = query.contains { $0 == "listen" || $0 == "listen=1" }
        switch scheme {
        case "srt": self = query.contains("mode=listener") ? .listener : .caller
        case "rtmp", "rtmps", "tcp": self = listens ? .listener : .caller
        case "udp", "rtp": self = .listener
        case "rtsp", "rtsps", "rist", "zmq", "unix": self = .caller
        case "http", "https": self = .http
        case "file": self = .file
        default: self = .otherURL
        }
    }

    /// Arrives as it is produced: not paced, cannot be rewound, probed small, GOP measured from the first keyframes.
    /// (An HTTP input is live when it has no duration once open: `DemuxedSource`.)
    public var isLive: Bool {
        switch self {
        case .pipe, .device, .listener, .caller: true
        case .testPattern, .file, .http, .otherURL: false
        }
    }

    /// How the input is taken up again when its publisher goes away; `nil`: its end is the end of the stream.
    public var reconnect: ReconnectPolicy? {
        switch self {
        case .listener: .listen
        case .caller, .http: .call
        case .testPattern, .file, .pipe, .device, .otherURL: nil
        }
    }

    /// A one-line error for a local path that does not exist; `nil` otherwise.
    public func missingFileError(_ url: String) -> String? {
        guard self == .file, !FileManager.default.fileExists(atPath: url) else { return nil }
        return "cannot open '\(url)': No such file or directory"
    }

    /// The URL and protocol options libavformat is given: RTMP takes listen mode as an option, not in its URL (where a
    /// query would become part of the stream key), so `rtmp://0.0.0.0:1935/live/key?listen` listens on 1935.
    public static func demuxerInput(_ url: String) -> (url: String, options: [String: String]) {
        let lower = url.lowercased()
        guard lower.hasPrefix("rtmp://") || lower.hasPrefix("rtmps://"), let q = url.firstIndex(of: "?") else { return (url, [:]) }
        let items = url[url.index(after: q)...].split(separator: "&").map(String.init)
        guard items.contains(where: { $0.lowercased() == "listen" || $0.lowercased() == "listen=1" }) else { return (url, [:]) }
        let rest = items.filter { $0.lowercased() != "listen" && $0.lowercased() != "listen=1" }
        return (String(url[..<q]) + (rest.isEmpty ? "" : "?" + rest.joined(separator: "&")), ["listen": "1"])
    }
}

/// How a network input is taken up again when its publisher goes away.
public enum ReconnectPolicy: Sendable, Equatable {
    /// We listen: open again at once and wait for the next publisher.
    case listen
    /// We call out: try again after 1, 2, 4 … 10 s. An HTTP input that ends cleanly (an upstream playlist with
    /// `EXT-X-ENDLIST`) ends the stream; one that fails is retried.
    case call

    /// The wait before attempt `n` (0-based): none for a listener; 1, 2, 4, 8, 10, 10 … s for a caller.
    public func delay(attempt n: Int) -> Duration {
        guard self == .call else { return .zero }
        return .seconds(min(10, 1 << min(n, 4)))
    }
}
