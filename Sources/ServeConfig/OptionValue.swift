import ArgumentParser

/// What is wrong with an option's value, said without the option's name: the caller knows whether the value came
/// from a flag or from a key of the config file, and `message(option:)` puts the two together, so that
/// `OptionError(" must be 0-51")` reads "--crf must be 0-51" on the command line and "crf must be 0-51" in a stream.
public struct OptionError: Error, Equatable, Sendable {
    /// What follows the option's name, separator included: " takes seconds, e.g. 1 or 0.5 (got 'x')", ": bad size '0x0'".
    public var detail: String
    /// A message that names its option already (a `LadderError` reads "--ladder: ..." wherever the ladder came from).
    public var line: String?

    public init(_ detail: String) {
        self.detail = detail
    }

    public init(line: String) {
        detail = ""
        self.line = line
    }

    public func message(option: String) -> String { line ?? option + detail }
}

/// An option's value that checks itself where it is read: from a flag's text, or from a config file's string or
/// number (`segment_duration = 2` and `= "2"` alike; a number never becomes the stored value through `Double`: it is
/// read as its decimal text). `optionText` (by default `description`) is the canonical text, which reads back to the
/// same value.
///
/// `ExpressibleByArgument` gives ArgumentParser's generic message on a bad value ("The value 'x' is invalid for
/// '--flag <v>'"); the flags of `serve` and `package` keep their text and read it with `init(flag:_:)` instead, so
/// that their messages stay one line that names the flag.
public protocol OptionValue: Codable, Sendable, Equatable, CustomStringConvertible, ExpressibleByArgument {
    init(parsing text: String) throws(OptionError)
    /// The value as a flag or a config file writes it (a codec's `hevc`, where `description` says "H.265").
    var optionText: String { get }
}

extension OptionValue {
    public var optionText: String { description }

    public init?(argument: String) {
        guard let value = try? Self(parsing: argument) else { return nil }
        self = value
    }

    /// The value of flag `name` (`--dvr-window`), or its one-line error naming the flag.
    public init(flag name: String, _ text: String) throws(ValidationError) {
        do {
            self = try Self(parsing: text)
        } catch {
            throw ValidationError(error.message(option: name))
        }
    }

    public init(from decoder: Decoder) throws { self = try Self.decoded(from: decoder) }

    /// The value a config file gives (a string or a number, read by `init(parsing:)`), or `InvalidValue`. A type whose
    /// `Codable` would otherwise come from elsewhere (a `RawRepresentable` enum) names this and `encodeOption(to:)`
    /// as its witnesses.
    public static func decoded(from decoder: Decoder) throws -> Self {
        let c = try decoder.singleValueContainer()
        let text: String
        if let s = try? c.decode(String.self) {
            text = s
        } else if let i = try? c.decode(Int.self) {
            text = String(i)
        } else if let d = try? c.decode(Double.self), d.isFinite {
            text = String(d)  // the shortest decimal that reads back as d: 0.5 -> "0.5", 2.002 -> "2.002"
        } else {
            throw DecodingError.typeMismatch(String.self, .init(codingPath: decoder.codingPath,
                                                                debugDescription: "expected a string or a number"))
        }
        do {
            return try Self(parsing: text)
        } catch {
            throw InvalidValue(codingPath: decoder.codingPath, error: error)
        }
    }

    public func encode(to encoder: Encoder) throws { try encodeOption(to: encoder) }

    /// `optionText`, the text that reads back to the same value.
    public func encodeOption(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(optionText)
    }
}

/// A config file's value that its type refused, with where it was (`streams.a.segment_duration`): the file's reader
/// names the option by its key.
struct InvalidValue: Error {
    var codingPath: [CodingKey]
    var error: OptionError
}
