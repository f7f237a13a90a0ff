import Foundation
import TOMLKit
import Yams

/// `serve --config FILE`: the streams one process serves, with options per stream, in TOML or YAML (by the file's
/// extension). Flags given on the command line are the defaults every stream starts from; a stream's entry
/// overrides them.
///
/// ```toml
/// [streams.cam1]
/// input = "srt://0.0.0.0:9000?mode=listener"
/// ladder = "720,480,360"
///
/// [streams.movie]
/// input = "movie.mp4"
/// loop = true
/// segment_duration = 2
/// ```
///
/// ```yaml
/// streams:
///   cam1: { input: "srt://0.0.0.0:9000?mode=listener", ladder: "720,480,360" }
///   movie: { input: movie.mp4, loop: true, segment_duration: 2 }
/// ```
public struct ServeConfig: Equatable, Sendable {
    public struct Stream: Equatable, Sendable {
        public var name: String
        public var entry: StreamEntry
    }
    /// Sorted by name.
    public var streams: [Stream]

    public enum Format: Sendable { case toml, yaml }

    public static func load(path: String) throws -> ServeConfig {
        let lower = path.lowercased()
        let format: Format
        if lower.hasSuffix(".toml") {
            format = .toml
        } else if lower.hasSuffix(".yaml") || lower.hasSuffix(".yml") {
            format = .yaml
        } else {
            throw ConfigError("\(path): the config file must end in .toml, .yaml or .yml")
        }
        guard FileManager.default.fileExists(atPath: path) else { throw ConfigError("cannot read \(path): No such file or directory") }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigError("cannot read \(path): \((error as NSError).localizedDescription)")
        }
        do {
            return try parse(text, format: format)
        } catch let e as ConfigError {
            throw ConfigError("\(path): \(e.message)")
        }
    }

    public static func parse(_ text: String, format: Format) throws -> ServeConfig {
        let file: File
        let keys: Keys
        do {
            switch format {
            case .toml:
                file = try TOMLDecoder().decode(File.self, from: text)
                keys = try TOMLDecoder().decode(Keys.self, from: text)
            case .yaml:
                file = try YAMLDecoder().decode(File.self, from: text)
                keys = try YAMLDecoder().decode(Keys.self, from: text)
            }
        } catch let e as DecodingError {
            throw ConfigError(Self.describe(e))
        } catch {
            throw ConfigError("\(error)".split(separator: "\n").first.map(String.init) ?? "cannot parse")
        }
        // Unknown keys are typos: say so rather than ignore them.
        for (name, entry) in keys.streams.sorted(by: { $0.key < $1.key }) {
            if let unknown = entry.keys.sorted().first(where: { !StreamEntry.CodingKeys.allNames.contains($0) }) {
                throw ConfigError("streams.\(name): unknown key '\(unknown)' (known: \(StreamEntry.CodingKeys.allNames.joined(separator: ", ")))")
            }
        }
        guard !file.streams.isEmpty else { throw ConfigError("no streams: give at least one [streams.NAME] with an input") }
        return ServeConfig(streams: file.streams.map { Stream(name: $0.key, entry: $0.value) }.sorted { $0.name < $1.name })
    }

    private struct File: Decodable {
        var streams: [String: StreamEntry]
    }

    private struct Keys: Decodable {
        var streams: [String: [String: Ignored]]
    }

    private struct Ignored: Decodable {
        init(from decoder: Decoder) throws {}
    }

    private static func describe(_ e: DecodingError) -> String {
        func path(_ c: [CodingKey]) -> String { c.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".") }
        switch e {
        case .keyNotFound(let key, let ctx):
            // Some decoders put the missing key at the end of the path already.
            let p = ctx.codingPath.last?.stringValue == key.stringValue ? ctx.codingPath : ctx.codingPath + [key]
            return "\(path(p)): missing"
        case .typeMismatch(let type, let ctx): return "\(path(ctx.codingPath)): expected \(Self.typeName(type))"
        case .valueNotFound(let type, let ctx): return "\(path(ctx.codingPath)): expected \(Self.typeName(type))"
        case .dataCorrupted(let ctx): return ctx.codingPath.isEmpty ? ctx.debugDescription : "\(path(ctx.codingPath)): \(ctx.debugDescription)"
        @unknown default: return "\(e)"
        }
    }

    private static func typeName(_ t: Any.Type) -> String {
        switch t {
        case is Bool.Type: return "true or false"
        case is Int.Type: return "an integer"
        case is String.Type: return "a string"
        default: return "\(t)"
        }
    }
}

/// One stream's options; `nil`: the command line's value.
public struct StreamEntry: Decodable, Equatable, Sendable {
    /// A file, a URL, `-`, or `testpattern:`.
    public var input: String
    public var loop: Bool?
    public var realtime: Bool?
    public var reconnect: Bool?
    /// `--epoch-from-input`: the timeline and numbering from the input's clock (redundant origins).
    public var epochFromInput: Bool?
    public var ladder: String?
    /// Seconds, as `--segment-duration` (a number or a string).
    public var segmentDuration: String?
    public var partDuration: String?
    public var window: Int?
    public var transcode: String?
    public var videoBitrate: String?
    public var audioBitrate: String?
    public var crf: Int?
    public var preset: String?
    public var size: String?
    public var inputFormat: String?
    /// libavformat options, as `--input-option KEY=VALUE`.
    public var inputOptions: [String: String]?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case input, loop, realtime, reconnect, ladder, window, transcode, crf, preset, size
        case segmentDuration = "segment_duration", partDuration = "part_duration", videoBitrate = "video_bitrate"
        case audioBitrate = "audio_bitrate", inputFormat = "input_format", inputOptions = "input_options"
        case epochFromInput = "epoch_from_input"
        static var allNames: [String] { allCases.map(\.rawValue) }
    }

    public init(input: String) { self.input = input }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        input = try c.decode(String.self, forKey: .input)
        loop = try c.decodeIfPresent(Bool.self, forKey: .loop)
        realtime = try c.decodeIfPresent(Bool.self, forKey: .realtime)
        reconnect = try c.decodeIfPresent(Bool.self, forKey: .reconnect)
        epochFromInput = try c.decodeIfPresent(Bool.self, forKey: .epochFromInput)
        ladder = try Self.text(c, .ladder)
        segmentDuration = try Self.text(c, .segmentDuration)
        partDuration = try Self.text(c, .partDuration)
        window = try c.decodeIfPresent(Int.self, forKey: .window)
        transcode = try c.decodeIfPresent(String.self, forKey: .transcode)
        videoBitrate = try Self.text(c, .videoBitrate)
        audioBitrate = try Self.text(c, .audioBitrate)
        crf = try c.decodeIfPresent(Int.self, forKey: .crf)
        preset = try c.decodeIfPresent(String.self, forKey: .preset)
        size = try c.decodeIfPresent(String.self, forKey: .size)
        inputFormat = try c.decodeIfPresent(String.self, forKey: .inputFormat)
        inputOptions = try c.decodeIfPresent([String: String].self, forKey: .inputOptions)
    }

    /// A value written as a string or a number (`segment_duration = 2` or `"2"`, `ladder = 720`), kept as the text
    /// the command line's parser takes: no floating-point value is stored.
    private static func text(_ c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> String? {
        guard c.contains(key) else { return nil }
        if let s = try? c.decode(String.self, forKey: key) { return s }
        if let i = try? c.decode(Int.self, forKey: key) { return String(i) }
        if let d = try? c.decode(Double.self, forKey: key), d.isFinite { return String(d) }
        throw DecodingError.typeMismatch(String.self, .init(codingPath: c.codingPath + [key], debugDescription: "expected a string or a number"))
    }
}

public struct ConfigError: Error, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
