// The `--ladder` value as written: rungs, their errors and their parser. Pure values, shared by the options
// (ServeConfig checks a stream's ladder when it is read) and the pipeline (which plans it against the source).

/// One rung as written on the command line, before it meets the source.
public enum LadderRequest: Sendable, Equatable {
    /// Copy the input video untouched.
    case source
    /// Encode at this height (rounded down to even by `Ladder.plan`); `bitRate` nil: `Ladder.defaultBitRate(height:)`;
    /// `codec` nil: the stream's `--video-codec`.
    case height(Int, bitRate: Int?, codec: VideoCodecName? = nil)
}

/// A `--ladder` value that cannot be used; `description` is one line for a person.
public enum LadderError: Error, Sendable, Equatable, CustomStringConvertible {
    case empty
    case emptyRung(String)
    case notAHeight(String)
    case heightOutOfRange(String)
    case notABitRate(entry: String, rate: String)
    case tooManyFields(String)
    case bitRateOutOfRange(entry: String, rate: String)
    case duplicateHeight(Int)
    case duplicateSource
    case sourceNotCopyable
    case nothingLeft(dropped: [String], sourceWidth: Int, sourceHeight: Int)
    case invalidSource(width: Int, height: Int)

    public var description: String {
        let p = "--ladder: "
        switch self {
        case .empty: return p + "no rungs given (use e.g. 720,480,360 or source,480:1200k)"
        case .emptyRung(let v): return p + "empty rung in '\(v)' (use e.g. 720,480,360)"
        case .notAHeight(let s): return p + "'\(s)' is not a height (use e.g. 720,480,360 or 720:3000k)"
        case .heightOutOfRange(let s): return p + "'\(s)' is out of range (heights go from \(Ladder.heights.lowerBound) to \(Ladder.heights.upperBound))"
        case .notABitRate(let e, let r): return p + "'\(r)' in '\(e)' is not a bit rate or a codec (use e.g. 3000k, 1.2M, hevc)"
        case .tooManyFields(let e): return p + "'\(e)' has more than a height, a rate and a codec (use e.g. 1080:5M:hevc)"
        case .bitRateOutOfRange(let e, let r):
            return p + "'\(r)' in '\(e)' is out of range (from \(Ladder.formatRate(Ladder.bitRates.lowerBound)) to \(Ladder.formatRate(Ladder.bitRates.upperBound)))"
        case .duplicateHeight(let h): return p + "\(h)p is given twice"
        case .duplicateSource: return p + "'source' is given twice"
        case .sourceNotCopyable: return p + "'source' copies the input video, which needs H.264, H.265 or AV1 input; this input's video is none of them (list heights only)"
        case .nothingLeft(let dropped, let w, let h):
            return p + "every rung (\(dropped.joined(separator: ", "))) is taller than the \(w)x\(h) source; add one of at most \(h) lines, or 'source'"
        case .invalidSource(let w, let h): return p + "the input video has no usable picture size (\(w)x\(h))"
        }
    }
}

/// Parsing of `--ladder` (the planning against a source, `Ladder.plan`, is the Pipeline's).
///
/// Value: comma-separated rungs, each `HEIGHT`, `HEIGHTp`, `HEIGHT:RATE`, `HEIGHT:CODEC`, `HEIGHT:RATE:CODEC` or
/// `source`, e.g. `source,1080:hevc,720,480:1.2M,360p`. RATE is bits per second with an optional `k` (×1000) or `M`
/// (×1 000 000) suffix, decimals allowed (`1.2M`); CODEC is `h264`, `hevc` or `av1` (`VideoCodecName`).
public enum Ladder {
    /// Heights a rung may ask for.
    public static let heights = 16...4320
    /// Bit rates a rung may ask for, bits per second.
    public static let bitRates = 16_000...200_000_000
    /// Parses the `--ladder` value (see the type's documentation).
    public static func parse(_ value: String) throws(LadderError) -> [LadderRequest] {
        let entries = value.split(separator: ",", omittingEmptySubsequences: false).map(trimmed)
        if entries.allSatisfy(\.isEmpty) { throw .empty }
        var out: [LadderRequest] = []
        for entry in entries {
            guard !entry.isEmpty else { throw .emptyRung(value) }
            if entry.lowercased() == "source" {
                out.append(.source)
                continue
            }
            var parts = entry.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            var codec: VideoCodecName?
            if parts.count >= 2, let c = VideoCodecName(name: parts[parts.count - 1]) {
                codec = c
                parts.removeLast()
            }
            guard parts.count <= 2 else { throw .tooManyFields(entry) }
            var h = parts[0]
            if h.hasSuffix("p") || h.hasSuffix("P") { h.removeLast() }
            guard !h.isEmpty, h.count <= 6, h.allSatisfy({ $0.isASCII && $0.isNumber }), let height = Int(h) else {
                throw .notAHeight(parts[0])
            }
            guard heights.contains(height) else { throw .heightOutOfRange(parts[0]) }
            var rate: Int?
            if parts.count == 2 {
                guard let r = parseBitRate(parts[1]) else { throw .notABitRate(entry: entry, rate: parts[1]) }
                guard bitRates.contains(r) else { throw .bitRateOutOfRange(entry: entry, rate: parts[1]) }
                rate = r
            }
            out.append(.height(height, bitRate: rate, codec: codec))
        }
        return out
    }

    private static func trimmed(_ s: Substring) -> String {
        String(s.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    /// `3000k`, `1.2M`, `800000` -> bits per second; nil if malformed. Exact decimal arithmetic (no `Double`).
    public static func parseBitRate(_ text: String) -> Int? {
        var s = Substring(text)
        var multiplier = 1
        switch s.last {
        case "k", "K": multiplier = 1000; s = s.dropLast()
        case "m", "M": multiplier = 1_000_000; s = s.dropLast()
        default: break
        }
        let halves = s.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = halves[0], fraction = halves.count == 2 ? halves[1] : ""
        guard !whole.isEmpty || !fraction.isEmpty, whole.count <= 9, fraction.count <= 6,
              (whole + fraction).allSatisfy({ $0.isASCII && $0.isNumber }),
              halves.count == 1 || !fraction.isEmpty else { return nil }
        var scale = 1
        for _ in 0..<fraction.count { scale *= 10 }
        let numerator = (Int(whole) ?? 0) * scale + (Int(fraction) ?? 0)
        // At most 10^15 × 10^6: checked, not trapped.
        let (bits, overflow) = numerator.multipliedReportingOverflow(by: multiplier)
        guard !overflow, bits % scale == 0 else { return nil }  // fractions of a bit
        return bits / scale
    }

    /// `2800000` -> "2800k", `1200000` -> "1200k", `16000` -> "16k", `12345` -> "12345 bit/s".
    public static func formatRate(_ bits: Int) -> String {
        bits % 1000 == 0 ? "\(bits / 1000)k" : "\(bits) bit/s"
    }
}
