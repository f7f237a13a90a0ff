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
        /// The entry's options (its `input` is set); the flags' options go under them (`merged(over:)`).
        public var options: StreamOptions

        public init(name: String, options: StreamOptions) {
            self.name = name
            self.options = options
        }
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
        } catch let e as ConfigError where !e.isAboutAValue {
            throw ConfigError("\(path): \(e.message)")
        }
    }

    /// The streams of a config file's text. Unknown keys are errors (typos), listed against `StreamOptions.CodingKeys`;
    /// a value its type refuses is one line naming the stream and the key ("streams.a: segment_duration ...").
    public static func parse(_ text: String, format: Format) throws -> ServeConfig {
        let keys = try decode(Keys.self, text, format)
        // Unknown keys are typos: say so rather than ignore them.
        for (name, entry) in keys.streams.sorted(by: { $0.key < $1.key }) {
            try StreamOptions.checkKnown(entry.keys, stream: name, showAny: true)
        }
        let file = try decode(File.self, text, format)
        for (name, entry) in file.streams.sorted(by: { $0.key < $1.key }) where entry.input == nil {
            throw ConfigError("streams.\(name).input: missing")
        }
        guard !file.streams.isEmpty else { throw ConfigError("no streams: give at least one [streams.NAME] with an input") }
        return ServeConfig(streams: file.streams.map { Stream(name: $0.key, options: $0.value) }.sorted { $0.name < $1.name })
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ text: String, _ format: Format) throws -> T {
        do {
            switch format {
            case .toml: return try TOMLDecoder().decode(T.self, from: text)
            case .yaml: return try YAMLDecoder().decode(T.self, from: text)
            }
        } catch let e as InvalidValue {
            throw e.configError
        } catch let e as DecodingError {
            // Yams wraps what a type's init(from:) throws.
            if case .dataCorrupted(let context) = e, let invalid = context.underlyingError as? InvalidValue { throw invalid.configError }
            throw ConfigError(Self.describe(e))
        } catch {
            throw ConfigError("\(error)".split(separator: "\n").first.map(String.init) ?? "cannot parse")
        }
    }

    private struct File: Decodable {
        var streams: [String: StreamOptions]
    }

    private struct Keys: Decodable {
        var streams: [String: [String: Ignored]]
    }

    struct Ignored: Decodable {
        init(from decoder: Decoder) throws {}
    }

    static func describe(_ e: DecodingError) -> String {
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

/// One line for a person: a bad option (flag or key), a rule between options, or a config file that cannot be used.
public struct ConfigError: Error, CustomStringConvertible, Equatable {
    public let message: String
    /// The option (config key) the message is about, when there is one: the control API's `field`.
    public var field: String?
    /// A value a stream's key was given (`streams.a: segment_duration ...`): named as the rules on the merged options
    /// are, without the file's path.
    let isAboutAValue: Bool

    public init(_ message: String, field: String? = nil) {
        self.message = message
        self.field = field
        isAboutAValue = false
    }

    init(value message: String, field: String? = nil) {
        self.message = message
        self.field = field
        isAboutAValue = true
    }

    public var description: String { message }

    public static func == (a: ConfigError, b: ConfigError) -> Bool { a.message == b.message }
}

extension InvalidValue {
    /// Named like the rules on merged options (`StreamOptions.validate`): "streams.a: segment_duration ...".
    var configError: ConfigError {
        let key = codingPath.last?.stringValue ?? ""
        let stream = codingPath.dropLast().map(\.stringValue).joined(separator: ".")
        return ConfigError(value: "\(stream): \(error.message(option: key))", field: key)
    }
}
