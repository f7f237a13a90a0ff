import Foundation

/// A stream as the control API gives it (`POST /api/v1/streams`, `PATCH /api/v1/streams/NAME`): a JSON object of the
/// config file's keys (`{"name": "cam4", "input": "movie.mp4", "loop": true}`), read into the same `StreamOptions`
/// through its `CodingKeys` and checked by the same rules, with the same one-line messages. Pure: the disk is asked
/// through `ServePlan.Environment`. Every refusal is a `ConfigError` whose `field` names the key when there is one.
public enum StreamRequest {
    /// The largest body the API reads (64 KiB); a larger one is refused before it is parsed.
    public static let maxBody = 64 * 1024

    /// The stream a `POST` body asks for: its options over `flags` (the command line's), checked as a config file's
    /// stream is, and its input as the command line's are (a file that exists; no standard input at run time).
    public static func add(_ body: [UInt8], flags: StreamOptions,
                           environment: ServePlan.Environment) throws(ConfigError) -> ServePlan.Stream {
        let keys = try objectKeys(body)
        guard keys.contains("name") else {
            throw ConfigError("name: missing (1-32 of A-Z a-z 0-9 _ -)", field: "name")
        }
        let name = try decode(Named.self, body, stream: nil).name
        // Checked before it is written into any message.
        guard ServePlan.isValidStreamName(name) else {
            throw ConfigError("name: \(ServePlan.nameRule)", field: "name")
        }
        try checkKeys(keys.subtracting(["name"]), stream: name)
        let entry = try decode(StreamOptions.self, body, stream: name)
        guard entry.input != nil else { throw ConfigError("streams.\(name).input: missing", field: "input") }
        let planned = try ServePlan.stream(name, entry: entry, flags: flags)
        try checkInput(planned, environment)
        return planned
    }

    /// The options a `PATCH` body would change on the running stream `current` (config keys, sorted; keys whose value
    /// is the current one are not listed), with the options the stream would have: the body's over `current`'s,
    /// checked as in `add`.
    public static func patch(_ body: [UInt8],
                             current: ServePlan.Stream) throws(ConfigError) -> (changed: [String], options: StreamOptions) {
        let keys = try objectKeys(body)
        if keys.contains("name") { throw ConfigError("name: a stream is renamed by adding it under the new name", field: "name") }
        try checkKeys(keys, stream: current.name)
        let patch = try decode(StreamOptions.self, body, stream: current.name)
        let merged = patch.merged(over: current.options)
        try merged.validate(naming: .stream(current.name))
        let before = encoded(current.options), after = encoded(merged)
        return (StreamOptions.CodingKeys.allNames.filter { before[$0] != after[$0] }, merged)
    }

    /// What the inputs themselves allow at run time: a file that exists, a clock for `epoch_from_input`, and no
    /// standard input (it belongs to the process, given at its start).
    static func checkInput(_ s: ServePlan.Stream, _ environment: ServePlan.Environment) throws(ConfigError) {
        guard case .url(let url) = s.input else { return }
        if url == "-" {
            throw ConfigError("streams.\(s.name): input '-' (standard input) can only be given when the process starts", field: "input")
        }
        if let error = environment.missingFileError(url) { throw ConfigError(s.label + error, field: "input") }
        if s.options.epochFromInput == true, environment.isLocalPath(url) {
            throw ConfigError("streams.\(s.name): epoch_from_input takes the timeline from a live input's clock; a file has none",
                              field: StreamOptions.CodingKeys.epochFromInput.rawValue)
        }
    }

    /// The keys of a JSON object body, or the one-line refusal of anything else.
    static func objectKeys(_ body: [UInt8]) throws(ConfigError) -> Set<String> {
        guard !body.isEmpty else { throw ConfigError("the body is empty: send a JSON object") }
        guard body.count <= maxBody else { throw ConfigError("the body is over \(maxBody) bytes") }
        do {
            return Set(try JSONDecoder().decode([String: ServeConfig.Ignored].self, from: Data(body)).keys)
        } catch {
            throw ConfigError("the body is not a JSON object")
        }
    }

    /// Unknown keys are refused as the config file refuses them; the key is the client's text, shown only when it
    /// is short and plain.
    static func checkKeys(_ keys: Set<String>, stream name: String) throws(ConfigError) {
        try StreamOptions.checkKnown(keys, stream: name, showAny: false)
    }

    private struct Named: Decodable { var name: String }

    /// `T` from the body; a refused value is one line naming the stream and the key (`streams.cam4: window ...`).
    static func decode<T: Decodable>(_ type: T.Type, _ body: [UInt8], stream name: String?) throws(ConfigError) -> T {
        let prefix = name.map { "streams.\($0)" } ?? ""
        func invalid(_ v: InvalidValue) -> ConfigError {
            let key = v.codingPath.first?.stringValue ?? ""
            return ConfigError(prefix.isEmpty ? v.error.message(option: key) : "\(prefix): \(v.error.message(option: key))",
                               field: key)
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch let e as InvalidValue {
            throw invalid(e)
        } catch let e as DecodingError {
            if case .dataCorrupted(let context) = e, let v = context.underlyingError as? InvalidValue { throw invalid(v) }
            let field = codingPath(of: e).first?.stringValue
            let text = ServeConfig.describe(e)
            throw ConfigError(prefix.isEmpty ? text : "\(prefix).\(text)", field: field)
        } catch {
            throw ConfigError("the body is not a JSON object")
        }
    }

    private static func codingPath(of e: DecodingError) -> [CodingKey] {
        switch e {
        case .keyNotFound(let key, let c): return c.codingPath.isEmpty ? [key] : c.codingPath
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): return c.codingPath
        @unknown default: return []
        }
    }

    /// Each option's canonical JSON text (`nil`: not set).
    private static func encoded(_ o: StreamOptions) -> [String: String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(o),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
        var out: [String: String] = [:]
        for (key, value) in object {
            let text = try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys])
            out[key] = text.map { String(decoding: $0, as: UTF8.self) } ?? "?"
        }
        return out
    }
}
