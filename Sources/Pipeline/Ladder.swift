import MediaCore
import MediaPresentation
import Producer

/// One rendition of an adaptive-bit-rate ladder: either the input video copied as it is (`source`) or one
/// libx264 encode at `width`×`height` (square pixels, the source's display aspect ratio).
public struct LadderRung: Sendable, Equatable, CustomStringConvertible {
    /// "720p", or "source".
    public var name: String
    public var width: Int
    public var height: Int
    /// Average bits per second: the encoder's target; for `source` the input's rate when known (nil otherwise).
    public var bitRate: Int?
    /// VBV peak in bits per second (`VideoEncoderOptions.maxBitRate`): `bitRate × 1.1`; nil for `source`.
    public var maxBitRate: Int?
    /// VBV buffer in bits (`VideoEncoderOptions.bufferSize`): one segment at `maxBitRate`; nil for `source`.
    public var bufferSize: Int?
    public var isSource: Bool

    public init(name: String, width: Int, height: Int, bitRate: Int?, maxBitRate: Int?, bufferSize: Int?, isSource: Bool) {
        self.name = name
        self.width = width
        self.height = height
        self.bitRate = bitRate
        self.maxBitRate = maxBitRate
        self.bufferSize = bufferSize
        self.isSource = isSource
    }

    public var description: String {
        let rate = bitRate.map { " \(Ladder.formatRate($0))" } ?? ""
        return isSource ? "source \(width)x\(height)\(rate) (copied)" : "\(name) \(width)x\(height)\(rate)"
    }
}

/// One rung as written on the command line, before it meets the source.
public enum LadderRequest: Sendable, Equatable {
    /// Copy the input video untouched.
    case source
    /// Encode at this height (rounded down to even by `Ladder.plan`); `bitRate` nil: `Ladder.defaultBitRate(height:)`.
    case height(Int, bitRate: Int?)
}

/// A `--ladder` value that cannot be used; `description` is one line for a person.
public enum LadderError: Error, Sendable, Equatable, CustomStringConvertible {
    case empty
    case emptyRung(String)
    case notAHeight(String)
    case heightOutOfRange(String)
    case notABitRate(entry: String, rate: String)
    case bitRateOutOfRange(entry: String, rate: String)
    case duplicateHeight(Int)
    case duplicateSource
    case sourceNotH264
    case nothingLeft(dropped: [String], sourceWidth: Int, sourceHeight: Int)
    case invalidSource(width: Int, height: Int)

    public var description: String {
        let p = "--ladder: "
        switch self {
        case .empty: return p + "no rungs given (use e.g. 720,480,360 or source,480:1200k)"
        case .emptyRung(let v): return p + "empty rung in '\(v)' (use e.g. 720,480,360)"
        case .notAHeight(let s): return p + "'\(s)' is not a height (use e.g. 720,480,360 or 720:3000k)"
        case .heightOutOfRange(let s): return p + "'\(s)' is out of range (heights go from \(Ladder.heights.lowerBound) to \(Ladder.heights.upperBound))"
        case .notABitRate(let e, let r): return p + "'\(r)' in '\(e)' is not a bit rate (use e.g. 3000k or 1.2M)"
        case .bitRateOutOfRange(let e, let r):
            return p + "'\(r)' in '\(e)' is out of range (from \(Ladder.formatRate(Ladder.bitRates.lowerBound)) to \(Ladder.formatRate(Ladder.bitRates.upperBound)))"
        case .duplicateHeight(let h): return p + "\(h)p is given twice"
        case .duplicateSource: return p + "'source' is given twice"
        case .sourceNotH264: return p + "'source' copies the input video, which needs H.264 input; this input's video is not H.264 (list heights only)"
        case .nothingLeft(let dropped, let w, let h):
            return p + "every rung (\(dropped.joined(separator: ", "))) is taller than the \(w)x\(h) source; add one of at most \(h) lines, or 'source'"
        case .invalidSource(let w, let h): return p + "the input video has no usable picture size (\(w)x\(h))"
        }
    }
}

/// Parsing and planning of `--ladder` (pure: no FFmpeg types).
///
/// Value: comma-separated rungs, each `HEIGHT`, `HEIGHTp`, `HEIGHT:RATE` or `source`, e.g. `source,720,480:1.2M,360p`.
/// RATE is bits per second with an optional `k` (×1000) or `M` (×1 000 000) suffix, decimals allowed (`1.2M`).
public enum Ladder {
    /// Heights a rung may ask for.
    public static let heights = 16...4320
    /// Bit rates a rung may ask for, bits per second.
    public static let bitRates = 16_000...200_000_000
    /// `maxBitRate = bitRate × 11 / 10`: the peak stays within 10% of the target over a segment.
    public static let peakPercent = 110

    /// Default rates in bits per second, by height, for pictures of any aspect ratio (the values suit 16:9).
    public static let defaultBitRates: [(height: Int, bitRate: Int)] = [
        (2160, 12_000_000), (1440, 8_000_000), (1080, 5_000_000), (720, 2_800_000), (540, 2_000_000),
        (480, 1_400_000), (360, 800_000), (240, 400_000), (144, 200_000),
    ]

    /// The table's rate for a height in it; for any other height, the nearest entry's rate (the lower entry
    /// on a tie) scaled by the pixel count at the same aspect ratio, `(height / entry)²`, rounded to 1 kbit/s.
    /// E.g. 600 → 540's 2000k × (600/540)² = 2469k. (Near the midpoint between two entries this is not
    /// monotonic — 630 → 2722k, 631 → 2150k — because the table gives smaller pictures more bits per pixel.)
    public static func defaultBitRate(height: Int) -> Int {
        precondition(height > 0, "height must be positive")
        let nearest = defaultBitRates.min { a, b in
            let da = abs(a.height - height), db = abs(b.height - height)
            return da != db ? da < db : a.height < b.height
        }!
        if nearest.height == height { return nearest.bitRate }
        // rate × h² / e², rounded to whole kbit/s (Int64 is ample: 12e6 × 4320² ≈ 2.2e14).
        let scaled = Int64(nearest.bitRate) * Int64(height) * Int64(height)
        let e2 = Int64(nearest.height) * Int64(nearest.height) * 1000
        return Int((scaled + e2 / 2) / e2) * 1000
    }

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
            let parts = entry.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
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
            out.append(.height(height, bitRate: rate))
        }
        return out
    }

    private static func trimmed(_ s: Substring) -> String {
        String(s.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    /// `3000k`, `1.2M`, `800000` -> bits per second; nil if malformed. Exact decimal arithmetic (no `Double`).
    static func parseBitRate(_ text: String) -> Int? {
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
        guard numerator * multiplier % scale == 0 else { return nil }  // fractions of a bit
        return numerator * multiplier / scale
    }

    /// `2800000` -> "2800k", `1200000` -> "1200k", `16000` -> "16k", `12345` -> "12345 bit/s".
    static func formatRate(_ bits: Int) -> String {
        bits % 1000 == 0 ? "\(bits / 1000)k" : "\(bits) bit/s"
    }

    /// Parses and plans in one step.
    public static func plan(_ value: String, sourceWidth: Int, sourceHeight: Int, sourceSampleAspectRatio: Rational,
                            sourceIsH264: Bool, sourceBitRate: Int?, segmentDuration: MediaTime = .seconds(1))
        throws(LadderError) -> (rungs: [LadderRung], notices: [String]) {
        try plan(try parse(value), sourceWidth: sourceWidth, sourceHeight: sourceHeight,
                 sourceSampleAspectRatio: sourceSampleAspectRatio, sourceIsH264: sourceIsH264,
                 sourceBitRate: sourceBitRate, segmentDuration: segmentDuration)
    }

    /// The rungs to produce from this source, highest first (`source` before all), and notices for the log.
    ///
    /// - Width: `height × display aspect ratio` (`sourceWidth × SAR / sourceHeight`; SAR 1:1 when invalid),
    ///   rounded to the nearest even number. An odd height is rounded down to even (4:2:0), with a notice.
    /// - A rung taller than the source is dropped (one notice names them all); one as tall as the source is
    ///   encoded. Nothing left, a duplicate height, or `source` without H.264 input is an error.
    /// - Rate control: `maxBitRate = bitRate × 1.1`, `bufferSize = maxBitRate × segmentDuration`, so a
    ///   segment's size stays near the target while a 1-second IDR still gets its bits.
    public static func plan(_ requests: [LadderRequest], sourceWidth: Int, sourceHeight: Int,
                            sourceSampleAspectRatio: Rational, sourceIsH264: Bool, sourceBitRate: Int?,
                            segmentDuration: MediaTime = .seconds(1))
        throws(LadderError) -> (rungs: [LadderRung], notices: [String]) {
        guard !requests.isEmpty else { throw .empty }
        guard sourceWidth > 0, sourceHeight > 0 else { throw .invalidSource(width: sourceWidth, height: sourceHeight) }
        let sar = sourceSampleAspectRatio.isValid ? sourceSampleAspectRatio : Rational(1, 1)
        var source: LadderRung?
        var encoded: [LadderRung] = []
        var seen: Set<Int> = []
        var dropped: [Int] = []
        var notices: [String] = []
        for request in requests {
            switch request {
            case .source:
                guard source == nil else { throw .duplicateSource }
                guard sourceIsH264 else { throw .sourceNotH264 }
                source = LadderRung(name: "source", width: sourceWidth, height: sourceHeight,
                                    bitRate: sourceBitRate.flatMap { $0 > 0 ? $0 : nil },
                                    maxBitRate: nil, bufferSize: nil, isSource: true)
            case .height(let requested, let requestedRate):
                let h = requested & ~1
                if h != requested { notices.append("--ladder: \(requested) rounded down to \(h)p (4:2:0 needs an even height)") }
                guard heights.contains(h) else { throw .heightOutOfRange(String(requested)) }
                guard seen.insert(h).inserted else { throw .duplicateHeight(h) }
                if h > sourceHeight { dropped.append(h); continue }
                // round(h × W × sarN / (sarD × H) / 2) × 2, in integers.
                let num = Int64(h) * Int64(sourceWidth) * Int64(sar.numerator)
                let den = Int64(sar.denominator) * Int64(sourceHeight) * 2
                let width = max(2, Int((num + den / 2) / den) * 2)
                let rate = requestedRate ?? defaultBitRate(height: h)
                let peak = rate * peakPercent / 100
                let buffer = MediaTime.rescale(Int64(peak) * segmentDuration.value, from: segmentDuration.timescale, to: 1)
                encoded.append(LadderRung(name: "\(h)p", width: width, height: h, bitRate: rate, maxBitRate: peak,
                                          bufferSize: Int(max(1, buffer)), isSource: false))
            }
        }
        let droppedNames = dropped.sorted(by: >).map { "\($0)p" }
        if !droppedNames.isEmpty {
            notices.append("--ladder: dropping \(droppedNames.joined(separator: ", ")) (taller than the \(sourceWidth)x\(sourceHeight) source)")
        }
        let rungs = (source.map { [$0] } ?? []) + encoded.sorted { $0.height > $1.height }
        guard !rungs.isEmpty else { throw .nothingLeft(dropped: droppedNames, sourceWidth: sourceWidth, sourceHeight: sourceHeight) }
        return (rungs, notices)
    }
}

extension Ladder {
    /// A ladder's renditions, planned in one place for every producer (a demuxed input, the test pattern): one video
    /// rendition per rung (the copied `source` first, as `plan` orders them), each one track, then the audio as its own
    /// rendition in group `audio` when `audioBitRate` is given (the input has audio).
    static func renditions(_ rungs: [LadderRung], frameRate: Rational?, audioBitRate: Int?) -> RenditionPlan {
        let fps = frameRate.map { Double($0.numerator) / Double($0.denominator) }
        return .ladder(rungs.map { ($0.name, $0.bitRate) }, frameRate: fps,
                       audio: audioBitRate.map { (bitRate: $0, track: rungs.count) })
    }
}

extension LadderRung {
    /// The encoder settings of an encoded rung: `base` (preset, tune) with the rung's rate control (no CRF).
    func settings(_ base: VideoSettings) -> VideoSettings {
        var s = base
        s.crf = nil
        s.bitRate = bitRate
        s.maxBitRate = maxBitRate
        s.bufferSize = bufferSize
        return s
    }
}
