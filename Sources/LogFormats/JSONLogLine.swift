import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One log event as one line of JSON (JSON Lines): `time` (RFC 3339, UTC, milliseconds), `level`, `stream` when the
/// event carries that metadata key, `message`, `error` when the event has one, then the other metadata keys in
/// sorted order. Metadata keys that would overwrite one of those fields are written as `meta.KEY`.
///
/// Every control character, quote and backslash is escaped, so a message with newlines stays one line. Swift strings
/// are always valid Unicode (bytes that were not UTF-8 became U+FFFD when the string was made), so the line is valid
/// UTF-8; U+2028 and U+2029 are escaped too, for readers that take them as line ends.
public enum JSONLogLine {
    /// The fields every line may have, in the order they are written; metadata cannot overwrite them.
    public static let reserved: Set<String> = ["time", "level", "stream", "message", "error"]

    public static func render(time: Timestamp, level: Logger.Level, message: String,
                              metadata: Logger.Metadata, error: (any Error)? = nil) -> String {
        var out = "{\"time\":\"\(time.rfc3339)\",\"level\":\"\(level.rawValue)\""
        if let stream = metadata["stream"] {
            out += ",\"stream\":"
            append(stream, to: &out)
        }
        out += ",\"message\":"
        appendString(message, to: &out)
        if let error {
            out += ",\"error\":"
            appendString(String(describing: error), to: &out)
        }
        for key in metadata.keys.sorted() where key != "stream" {
            out += ","
            appendString(reserved.contains(key) ? "meta.\(key)" : key, to: &out)
            out += ":"
            append(metadata[key]!, to: &out)
        }
        out += "}\n"
        return out
    }

    static func append(_ value: Logger.MetadataValue, to out: inout String) {
        switch value {
        case .string(let s):
            appendString(s, to: &out)
        case .stringConvertible(let c):
            appendString(c.description, to: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                append(item, to: &out)
            }
            out += "]"
        case .dictionary(let fields):
            out += "{"
            for (i, key) in fields.keys.sorted().enumerated() {
                if i > 0 { out += "," }
                appendString(key, to: &out)
                out += ":"
                append(fields[key]!, to: &out)
            }
            out += "}"
        }
    }

    /// `s` as a JSON string literal (RFC 8259 §7).
    public static func appendString(_ s: String, to out: inout String) {
        out.unicodeScalars.append("\"")
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u00" + hex2(UInt8(scalar.value))
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out.unicodeScalars.append("\"")
    }

    private static func hex2(_ v: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(v >> 4)], digits[Int(v & 0xF)]])
    }
}

/// A wall-clock instant at millisecond resolution, written as RFC 3339 in UTC (`2026-11-26T14:05:09.042Z`).
public struct Timestamp: Sendable, Equatable {
    public var secondsSince1970: Int64
    public var milliseconds: Int

    public init(secondsSince1970: Int64, milliseconds: Int) {
        precondition((0..<1000).contains(milliseconds), "milliseconds are 0-999")
        self.secondsSince1970 = secondsSince1970
        self.milliseconds = milliseconds
    }

    public static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(secondsSince1970: Int64(ts.tv_sec), milliseconds: Int(ts.tv_nsec / 1_000_000))
    }

    public var rfc3339: String {
        var t = time_t(secondsSince1970)
        var utc = tm()
        gmtime_r(&t, &utc)
        return pad(Int(utc.tm_year) + 1900, 4) + "-" + pad(Int(utc.tm_mon) + 1, 2) + "-" + pad(Int(utc.tm_mday), 2)
            + "T" + pad(Int(utc.tm_hour), 2) + ":" + pad(Int(utc.tm_min), 2) + ":" + pad(Int(utc.tm_sec), 2)
            + "." + pad(milliseconds, 3) + "Z"
    }

    private func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
