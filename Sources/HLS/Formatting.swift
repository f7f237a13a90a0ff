import MediaCore

/// Text formatting for playlist values without `Double` round-trips or Foundation.
enum HLSFormat {
    static let microsPerSecond: Int64 = 1_000_000

    /// A duration as whole microseconds, rounded toward zero, so the rendered value never exceeds the real one.
    static func micros(_ t: MediaTime) -> Int64 {
        MediaTime.rescale(t.value, from: t.timescale, to: 1_000_000, rounding: .down)
    }

    /// A duration as whole microseconds, rounded up (for `PART-TARGET`, which must not be below any part).
    static func microsUp(_ t: MediaTime) -> Int64 {
        MediaTime.rescale(t.value, from: t.timescale, to: 1_000_000, rounding: .up)
    }

    /// `EXTINF` text: exact decimal seconds truncated to microseconds, trailing zeros trimmed
    /// (at least one fractional digit): `1.0`, `1.001`, `0.966666`.
    static func decimalSeconds(_ t: MediaTime) -> String {
        decimal(micros: micros(t))
    }

    static func decimal(micros: Int64) -> String {
        let negative = micros < 0
        let m = micros.magnitude
        let whole = m / 1_000_000
        var frac = m % 1_000_000
        var digits = 6
        while digits > 1 && frac % 10 == 0 { frac /= 10; digits -= 1 }
        var fracText = String(frac)
        if fracText.count < digits { fracText = String(repeating: "0", count: digits - fracText.count) + fracText }
        return (negative ? "-" : "") + String(whole) + "." + fracText
    }

    /// Parses a decimal-floating-point (no exponent) into microseconds, truncating extra digits.
    static func parseMicros<S: StringProtocol>(_ s: S) -> Int64? {
        var whole: Int64 = 0
        var frac: Int64 = 0
        var fracDigits = 0
        var seenDot = false
        var seenDigit = false
        for c in s.utf8 {
            if c == UInt8(ascii: ".") {
                if seenDot { return nil }
                seenDot = true
            } else if c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") {
                seenDigit = true
                let d = Int64(c - UInt8(ascii: "0"))
                if seenDot {
                    if fracDigits < 6 { frac = frac * 10 + d; fracDigits += 1 }
                } else {
                    let (mul, o1) = whole.multipliedReportingOverflow(by: 10)
                    let (sum, o2) = mul.addingReportingOverflow(d)
                    if o1 || o2 || sum > Int64.max / 1_000_000 - 1 { return nil }
                    whole = sum
                }
            } else {
                return nil
            }
        }
        guard seenDigit else { return nil }
        while fracDigits < 6 { frac *= 10; fracDigits += 1 }
        return whole * 1_000_000 + frac
    }

    /// A positive value with exactly three decimals (for `FRAME-RATE`), rounded to nearest.
    static func threeDecimals(_ x: Double) -> String {
        guard x.isFinite, x >= 0, x < 1e12 else { return "0.000" }
        let thousandths = Int64((x * 1000).rounded())
        let frac = thousandths % 1000
        let fracText = frac < 10 ? "00\(frac)" : frac < 100 ? "0\(frac)" : "\(frac)"
        return "\(thousandths / 1000).\(fracText)"
    }

    // MARK: PROGRAM-DATE-TIME

    /// ISO 8601 UTC with milliseconds: `2026-11-22T04:20:26.123Z`.
    static func programDateTime(_ clock: WallClock) -> String { clock.iso8601 }

    /// Parses `YYYY-MM-DDThh:mm:ss[.fff…](Z|±hh:mm|±hhmm)`; fractional digits beyond milliseconds are truncated.
    static func parseProgramDateTime(_ text: Substring) -> WallClock? {
        let b = Array(text.utf8)
        func num(_ from: Int, _ len: Int) -> Int64? {
            guard from + len <= b.count else { return nil }
            var v: Int64 = 0
            for i in from..<from + len {
                let c = b[i]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int64(c - 48)
            }
            return v
        }
        guard b.count >= 20, let y = num(0, 4), b[4] == UInt8(ascii: "-"), let mo = num(5, 2), b[7] == UInt8(ascii: "-"),
              let d = num(8, 2), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"),
              let h = num(11, 2), b[13] == UInt8(ascii: ":"), let mi = num(14, 2), b[16] == UInt8(ascii: ":"),
              let s = num(17, 2),
              (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61 else { return nil }
        var i = 19
        var ms: Int64 = 0
        if i < b.count && b[i] == UInt8(ascii: ".") {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if digits < 3 { ms = ms * 10 + Int64(b[i] - 48) }
                digits += 1; i += 1
            }
            guard digits > 0 else { return nil }
            for _ in min(digits, 3)..<3 { ms *= 10 }
        }
        guard i < b.count else { return nil }
        var offsetMinutes: Int64 = 0
        switch b[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard i + 1 == b.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign: Int64 = b[i] == UInt8(ascii: "+") ? 1 : -1
            guard let oh = num(i + 1, 2) else { return nil }
            var om: Int64
            if i + 3 < b.count && b[i + 3] == UInt8(ascii: ":") {
                guard let v = num(i + 4, 2), i + 6 == b.count else { return nil }
                om = v
            } else {
                guard let v = num(i + 3, 2), i + 5 == b.count else { return nil }
                om = v
            }
            guard oh < 24, om < 60 else { return nil }
            offsetMinutes = sign * (oh * 60 + om)
        default:
            return nil
        }
        let days = daysFromCivil(y, mo, d)
        let total = ((days * 24 + h) * 60 + mi - offsetMinutes) * 60 + s
        return WallClock(millisecondsSince1970: total * 1000 + ms)
    }

    /// Howard Hinnant's `days_from_civil`.
    static func daysFromCivil(_ y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

/// Playlist lines: CR and surrounding blanks trimmed, blank lines skipped, numbered from 1.
///
/// §4.1: "Lines in a Playlist file are terminated by either a single line feed character or a carriage return
/// character followed by a line feed character." The split is on the LF scalar, not on `Character`s: CR LF is a
/// single `Character` (so a CRLF playlist used to be one line, rejected as `missingHeader`), and so is an LF followed
/// by a combining mark.
func playlistLines(_ text: String) -> [(number: Int, line: Substring)] {
    var result: [(number: Int, line: Substring)] = []
    for (i, scalars) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        var line = Substring(scalars)
        while let last = line.last, last == "\r" || last == " " || last == "\t" { line = line.dropLast() }
        while let first = line.first, first == " " || first == "\t" { line = line.dropFirst() }
        if !line.isEmpty { result.append((i + 1, line)) }
    }
    return result
}

/// Attribute lists (`KEY=value,KEY="quoted, value"`), RFC 8216bis §4.2.
enum AttributeList {
    static func parse(_ text: Substring, line: Int) throws -> [(name: String, value: Substring)] {
        var result: [(String, Substring)] = []
        var i = text.startIndex
        while i < text.endIndex {
            guard let eq = text[i...].firstIndex(of: "=") else { throw HLSError.invalidTag(line: line, tag: String(text)) }
            let name = String(text[i..<eq])
            guard !name.isEmpty, !name.contains(",") else { throw HLSError.invalidTag(line: line, tag: String(text)) }
            var j = text.index(after: eq)
            let value: Substring
            if j < text.endIndex && text[j] == "\"" {
                let start = text.index(after: j)
                guard let close = text[start...].firstIndex(of: "\"") else {
                    throw HLSError.invalidAttribute(line: line, name: name)
                }
                value = text[start..<close]
                j = text.index(after: close)
                if j < text.endIndex {
                    guard text[j] == "," else { throw HLSError.invalidAttribute(line: line, name: name) }
                    j = text.index(after: j)
                }
            } else {
                let end = text[j...].firstIndex(of: ",") ?? text.endIndex
                value = text[j..<end]
                // §4.2: an unquoted value (decimal-integer, decimal-floating-point, enumerated-string, ...) never
                // holds a double quote: "An enumerated-string will never contain double quotes ("), commas (,), or
                // whitespace." Accepting one (`URI=s"`) made a value that render() cannot quote (found by scripts/fuzz).
                guard !value.contains("\"") else { throw HLSError.invalidAttribute(line: line, name: name) }
                j = end < text.endIndex ? text.index(after: end) : end
            }
            result.append((name, value))
            i = j
        }
        return result
    }

    static func quoted(_ s: String) -> String { "\"" + s + "\"" }

    /// A decimal-integer (§4.2: "an unquoted string of characters from the set [0..9]"): no sign, no
    /// blanks; `nil` when empty, not all digits, or out of range for `T`.
    static func decimalInteger<T: FixedWidthInteger, S: StringProtocol>(_ s: S) -> T? {
        guard !s.isEmpty, s.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return T(s, radix: 10)
    }

    /// `YES` / `NO` (an enumerated-string); anything else is `nil`.
    static func yesNo<S: StringProtocol>(_ s: S) -> Bool? {
        s == "YES" ? true : s == "NO" ? false : nil
    }
}
