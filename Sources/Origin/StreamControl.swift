/// The streams an origin serves, as the one who runs them sees them: which are configured now, and adding, changing and
/// ending them while serving (the control API, `/readyz`). Origin knows no pipeline: the executable implements this
/// over what it runs; the origin reads requests, checks the API's credential and writes the answers.
public protocol StreamControl: Sendable {
    /// The streams configured now, sorted (`""`: the root stream). A stream ended by `remove` is no longer
    /// configured, though it is still served (ended) until it is removed again.
    func configured() -> [String]

    /// Adds the stream a `POST /api/v1/streams` body describes (a JSON object of the config file's keys and `name`),
    /// opening its input off the event loops; returns its name once it is registered.
    func add(json: [UInt8]) async throws(StreamControlError) -> String

    /// Changes what can change while the stream `name` runs, from a JSON object of config keys; returns the keys
    /// that changed (none: the values were the current ones).
    func patch(name: String, json: [UInt8]) async throws(StreamControlError) -> [String]

    /// Ends the stream `name` (its input stops; its playlists end with `EXT-X-ENDLIST`; a recording becomes VOD): it
    /// stays served, ended. A stream already ended by a `remove` is unregistered instead (its paths answer 404).
    func remove(name: String) async throws(StreamControlError) -> StreamRemoval
}

public enum StreamRemoval: Sendable, Equatable {
    /// Ended, still served.
    case ended
    /// No longer served.
    case unregistered
}

/// A refusal of the control API: its status and a one-line message, with the body's key it is about.
public struct StreamControlError: Error, Equatable, Sendable {
    public enum Kind: Sendable, Equatable {
        /// 400: a body or a value the rules refuse.
        case invalid
        /// 404: no such stream.
        case notFound
        /// 409: the name is taken.
        case conflict
        /// 422: valid, but it cannot be done to a running stream.
        case unprocessable
    }
    public var kind: Kind
    public var message: String
    /// The body's key the message is about (`segment_duration`).
    public var field: String?
    /// The keys a `PATCH` cannot change live (they need the stream added again).
    public var fields: [String]?

    public init(_ kind: Kind, _ message: String, field: String? = nil, fields: [String]? = nil) {
        self.kind = kind
        self.message = message
        self.field = field
        self.fields = fields
    }
}
