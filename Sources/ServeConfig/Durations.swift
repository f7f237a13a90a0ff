import MediaCore

/// Seconds written as a decimal ("1", "0.5", "2.002", or a config file's number), kept as exact milliseconds
/// (digits past the third are dropped). Under 1000 s; each option checks its own range with `check(within:)`.
public struct Seconds: OptionValue, Hashable, Comparable {
    /// Milliseconds (timescale 1000).
    public let time: MediaTime

    public init(milliseconds: Int64) {
        time = MediaTime(value: milliseconds, timescale: 1000)
    }

    public var milliseconds: Int64 { time.value }
    public var isZero: Bool { time.value == 0 }

    public init(parsing s: String) throws(OptionError) {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = Int64(parts[0].isEmpty ? "0" : parts[0]), whole >= 0, whole < 1000 else {
            throw OptionError(" takes seconds, e.g. 1 or 0.5 (got '\(s)')")
        }
        var ms = whole * 1000
        if parts.count == 2 {
            let digits = parts[1]
            guard digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { throw OptionError(": bad number '\(s)'") }
            ms += Int64(String(digits.prefix(3)).padding(toLength: 3, withPad: "0", startingAt: 0))!
        }
        self.init(milliseconds: ms)
    }

    /// `range` in milliseconds; " must be between 0.1 and 60.0 seconds" outside it.
    public func check(within range: ClosedRange<Int64>) throws(OptionError) {
        guard range.contains(milliseconds) else {
            throw OptionError(" must be between \(Self.decimal(range.lowerBound)) and \(Self.decimal(range.upperBound)) seconds")
        }
    }

    /// "1", "0.5", "2.002".
    public var description: String {
        let fraction = String(String(1000 + milliseconds % 1000).dropFirst()).reversed().drop { $0 == "0" }.reversed()
        return "\(milliseconds / 1000)" + (fraction.isEmpty ? "" : "." + String(fraction))
    }

    /// A limit as the messages have always written it: 100 -> "0.1", 60000 -> "60.0".
    private static func decimal(_ ms: Int64) -> String {
        let text = Seconds(milliseconds: ms).description
        return text.contains(".") ? text : text + ".0"
    }

    public static func < (a: Seconds, b: Seconds) -> Bool { a.milliseconds < b.milliseconds }
}

/// A long span: "90s", "10m", "2h", "7d" or plain seconds, as exact milliseconds (`--dvr-window`, `--auth-expires`).
/// At least 1 second; each use checks its own upper limit.
public struct LongDuration: OptionValue, Hashable, Comparable {
    /// Milliseconds (timescale 1000).
    public let time: MediaTime

    public var milliseconds: Int64 { time.value }
    public var seconds: Int64 { time.value / 1000 }

    private static let units: [(suffix: Character, ms: Int64)] = [("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000)]

    public init(seconds: Int64) {
        time = MediaTime(value: seconds * 1000, timescale: 1000)
    }

    public init(parsing s: String) throws(OptionError) {
        guard let value = Self.parse(s) else { throw OptionError(" takes a duration like 90s, 10m or 2h (got '\(s)')") }
        self = value
    }

    /// `nil` unless `s` is 1 to 9 digits with an optional unit (s, m, h, d).
    public static func parse(_ s: String) -> LongDuration? {
        var digits = Substring(s)
        var unit: Int64 = 1_000
        if let last = s.last, let u = units.first(where: { $0.suffix == last }) {
            unit = u.ms
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy(\.isASCII), let n = Int64(digits), n > 0 else { return nil }
        return LongDuration(milliseconds: n * unit)
    }

    private init(milliseconds: Int64) {
        time = MediaTime(value: milliseconds, timescale: 1000)
    }

    /// The largest unit that divides it: "90s", "10m", "2h", "7d".
    public var description: String {
        let unit = Self.units.first { milliseconds % $0.ms == 0 } ?? (suffix: "s", ms: 1_000)
        return "\(milliseconds / unit.ms)\(unit.suffix)"
    }

    public static func < (a: LongDuration, b: LongDuration) -> Bool { a.milliseconds < b.milliseconds }
}
