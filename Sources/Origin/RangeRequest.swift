/// How this origin answers a `Range` request header (RFC 9110 §14.2) for a representation of `length` bytes.
/// A pure function of the header text and the length, so every rule is unit-tested without HTTP.
///
/// Rules (RFC 9110 §14.1.1, §14.1.2, §14.2):
/// - `bytes=a-b`, `bytes=a-`, `bytes=-n`: one range → `partial` (206). A `last-pos` at or beyond the end is
///   clamped to the last byte; a suffix longer than the representation selects all of it.
/// - "An int-range is satisfiable if the first-pos is less than the selected representation's length; a
///   suffix-range is satisfiable if the suffix-length is non-zero" — a single range that is not → `unsatisfiable`
///   (416 with `Content-Range: bytes */length`).
/// - Several ranges (`bytes=0-1,5-6`) → `whole`: §14.2 "A server MAY ignore the Range header field", and
///   answering with one 200 is simpler for every cache than a `multipart/byteranges` body.
/// - Syntactically invalid (`bytes=5-1`, `bytes=x-`, `bytes=`), or another unit than `bytes` → `whole`: §14.2 "An
///   origin server MUST ignore a Range header field that contains a range unit it does not understand" and "A
///   server that supports range requests MAY ignore or reject a Range header field that contains an invalid
///   ranges-specifier".
/// - A zero-length representation has no byte to address: `whole`.
///
/// `If-Range` is answered in `OriginResponder`: this origin sends no validator (`ETag`, `Last-Modified`), so no
/// `If-Range` value can match one, and §13.1.5 then says "the server MUST ignore the Range header field".
enum RangeRequest: Equatable, Sendable {
    /// 200 with the whole representation.
    case whole
    /// 206 with these bytes (never empty, within `0..<length`).
    case partial(Range<Int>)
    /// 416.
    case unsatisfiable

    static func parse(_ header: String, length: Int) -> RangeRequest {
        guard length > 0 else { return .whole }
        var utf8 = Substring(header).utf8[...]
        // range-unit "=" range-set; units are case-insensitive (§14.1).
        guard utf8.count > 6, let eq = utf8.firstIndex(of: UInt8(ascii: "=")),
              utf8.distance(from: utf8.startIndex, to: eq) == 5,
              zip(utf8[..<eq], "bytes".utf8).allSatisfy({ $0 | 0x20 == $1 }) else { return .whole }
        utf8 = utf8[utf8.index(after: eq)...]
        // 1#range-spec: commas with optional whitespace; empty list elements are ignored (§5.6.1.2).
        var spec: Substring.UTF8View.SubSequence?
        for element in utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            let trimmed = trimOWS(element)
            if trimmed.isEmpty { continue }
            guard spec == nil else { return .whole }  // several ranges: refused, whole body
            spec = trimmed
        }
        guard let spec, let dash = spec.firstIndex(of: UInt8(ascii: "-")) else { return .whole }
        let firstText = spec[..<dash], lastText = spec[spec.index(after: dash)...]
        if firstText.isEmpty {
            // suffix-range = "-" suffix-length
            guard let n = digits(lastText) else { return .whole }
            guard n > 0 else { return .unsatisfiable }
            return .partial(max(0, length - n)..<length)
        }
        guard let first = digits(firstText) else { return .whole }
        var last = Int.max
        if !lastText.isEmpty {
            guard let l = digits(lastText) else { return .whole }
            last = l
        }
        guard last >= first else { return .whole }  // invalid int-range (§14.1.1)
        guard first < length else { return .unsatisfiable }
        return .partial(first..<(min(last, length - 1) + 1))
    }

    /// `1*DIGIT`, saturating at `Int.max` (a position beyond any representation); `nil` if empty or not digits.
    private static func digits(_ s: Substring.UTF8View.SubSequence) -> Int? {
        guard !s.isEmpty else { return nil }
        var v = 0
        for c in s {
            guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(Int(c - UInt8(ascii: "0")))
            v = (o1 || o2) ? Int.max : a
        }
        return v
    }

    private static func trimOWS(_ s: Substring.UTF8View.SubSequence) -> Substring.UTF8View.SubSequence {
        var s = s
        while let c = s.first, c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") { s = s.dropFirst() }
        while let c = s.last, c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") { s = s.dropLast() }
        return s
    }

    /// `Content-Range` of a 206 (§14.4): `bytes first-last/complete-length`.
    static func contentRange(_ r: Range<Int>, length: Int) -> String {
        "bytes \(r.lowerBound)-\(r.upperBound - 1)/\(length)"
    }

    /// `Content-Range` of a 416: `bytes */complete-length`.
    static func unsatisfiedRange(length: Int) -> String { "bytes */\(length)" }
}
