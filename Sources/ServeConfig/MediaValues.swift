import ArgumentParser
import MediaCore

/// Bits per second: "128k", "3M", "1.2M", "2500000" (exact decimals, `Ladder.parseBitRate`).
public struct BitRate: OptionValue, Hashable, Comparable {
    public let bitsPerSecond: Int

    public init(bitsPerSecond: Int) {
        precondition(bitsPerSecond > 0, "a bit rate is positive")
        self.bitsPerSecond = bitsPerSecond
    }

    public init(parsing s: String) throws(OptionError) {
        guard let bits = Ladder.parseBitRate(s), bits > 0 else { throw OptionError(" takes a rate like 128k or 3M (got '\(s)')") }
        bitsPerSecond = bits
    }

    /// "3M", "128k", "2500001".
    public var description: String {
        bitsPerSecond % 1_000_000 == 0 ? "\(bitsPerSecond / 1_000_000)M"
            : bitsPerSecond % 1000 == 0 ? "\(bitsPerSecond / 1000)k" : "\(bitsPerSecond)"
    }

    public static func < (a: BitRate, b: BitRate) -> Bool { a.bitsPerSecond < b.bitsPerSecond }
}

/// A picture size, "1280x720"; one side may be -1 ("1280x-1": that side follows the aspect ratio, `nil`).
public struct PictureSize: OptionValue, Hashable {
    /// Sides go up to 16384.
    public static let sides = 1...16384
    public let width: Int?
    public let height: Int?

    public init(width: Int?, height: Int?) {
        precondition(width != nil || height != nil, "a size has at least one side")
        self.width = width
        self.height = height
    }

    public init(parsing s: String) throws(OptionError) {
        let parts = s.lowercased().split(separator: "x")
        guard parts.count == 2 else { throw OptionError(" takes WIDTHxHEIGHT, e.g. 1280x720 (got '\(s)')") }
        func side(_ p: Substring) throws(OptionError) -> Int? {
            if p == "-1" { return nil }
            guard let v = Int(p), Self.sides.contains(v) else { throw OptionError(": bad size '\(s)'") }
            return v
        }
        let w = try side(parts[0]), h = try side(parts[1])
        if w == nil && h == nil { throw OptionError(": give at least one of width and height") }
        self.init(width: w, height: h)
    }

    /// Both sides (a raw frame's size, the test pattern's), or ": bad size '1280x-1'".
    public func exact() throws(OptionError) -> (width: Int, height: Int) {
        guard let width, let height else { throw OptionError(": bad size '\(self)'") }
        return (width, height)
    }

    public var description: String { "\(width ?? -1)x\(height ?? -1)" }
}

/// Frames per second: "30" (1 to 240) or "30000/1001".
public struct FrameRate: OptionValue, Hashable {
    public let rate: Rational

    public init(parsing s: String) throws(OptionError) {
        let parts = s.split(separator: "/")
        if parts.count == 2, let n = Int32(parts[0]), let d = Int32(parts[1]), n > 0, d > 0 {
            rate = Rational(n, d)
        } else if parts.count == 1, let n = Int32(s), n > 0, n <= 240 {
            rate = Rational(n, 1)
        } else {
            throw OptionError(" takes a positive rate like 30 or 30000/1001 (got '\(s)')")
        }
    }

    /// "30", "30000/1001".
    public var description: String { rate.denominator == 1 ? "\(rate.numerator)" : "\(rate.numerator)/\(rate.denominator)" }
}

/// A `--ladder` value that parses (`Ladder.parse`); the pipeline plans it against the source. Kept as written.
public struct LadderSpec: OptionValue, Hashable {
    public let text: String
    public let rungs: [LadderRequest]

    public init(parsing s: String) throws(OptionError) {
        do {
            rungs = try Ladder.parse(s)
        } catch {
            throw OptionError(line: error.description)
        }
        text = s
    }

    public var description: String { text }

    public static func == (a: LadderSpec, b: LadderSpec) -> Bool { a.text == b.text }
    public func hash(into hasher: inout Hasher) { hasher.combine(text) }
}

/// `--transcode`: auto (copy H.264 and AAC/Opus/AC-3/E-AC-3/FLAC, encode anything else), always, never.
public enum Transcode: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    case auto, always, never

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        let text = try c.decode(String.self)
        guard let mode = Transcode(rawValue: text) else {
            throw InvalidValue(codingPath: decoder.codingPath, error: OptionError(" is auto, always or never (got '\(text)')"))
        }
        self = mode
    }
}

/// `--video-codec` / `video_codec`: what encoded video is encoded to (h264, hevc, av1; also h265, x265, avc …).
extension VideoCodecName: OptionValue {
    public init(parsing text: String) throws(OptionError) {
        guard let codec = VideoCodecName(name: text) else { throw OptionError(" is h264, hevc or av1 (got '\(text)')") }
        self = codec
    }

    public var optionText: String { rawValue }
    // The witnesses `RawRepresentable` would otherwise offer too: OptionValue's.
    public init?(argument: String) { self.init(name: argument) }
    public init(from decoder: Decoder) throws { self = try Self.decoded(from: decoder) }
    public func encode(to encoder: Encoder) throws { try encodeOption(to: encoder) }
}

/// `--captions` / `captions`: `auto`, `none`, or services named `CC1=en,CC3=es,SERVICE1=en` (a bare language names
/// the next service found).
extension CaptionPlan: OptionValue {
    public init(parsing text: String) throws(OptionError) {
        guard let plan = CaptionPlan(text) else {
            throw OptionError(" is auto, none or a list of CC1-CC4/SERVICE1-63=LANGUAGE or LANGUAGE entries, each service once, e.g. CC1=en,CC3=es (got '\(text)')")
        }
        self = plan
    }
}

/// `--audio-codec` / `audio_codec`: what encoded audio is encoded to (aac, opus, ac3).
extension AudioCodecName: OptionValue {
    public init(parsing text: String) throws(OptionError) {
        guard let codec = AudioCodecName(name: text) else { throw OptionError(" is aac, opus or ac3 (got '\(text)')") }
        self = codec
    }

    public var optionText: String { rawValue }
    // The witnesses `RawRepresentable` would otherwise offer too: OptionValue's.
    public init?(argument: String) { self.init(name: argument) }
    public init(from decoder: Decoder) throws { self = try Self.decoded(from: decoder) }
    public func encode(to encoder: Encoder) throws { try encodeOption(to: encoder) }
}

/// `--subtitles LANG=PATH` (repeatable) / `subtitles = ["en=movie.en.srt", …]`: a sidecar WebVTT or SubRip file.
extension SubtitleSidecar: OptionValue {
    public init(parsing text: String) throws(OptionError) {
        switch SubtitleSidecar.parse(text) {
        case .success(let s): self = s
        case .failure(let e): throw OptionError(": \(e.description) (got '\(text)')")
        }
    }
}
