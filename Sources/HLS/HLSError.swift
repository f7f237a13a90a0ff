/// Errors raised while parsing playlists (rendering never fails).
public enum HLSError: Error, Sendable, Equatable {
    /// The text does not start with `#EXTM3U`.
    case missingHeader
    /// A required tag is absent (e.g. `EXT-X-TARGETDURATION`, `EXT-X-MAP`).
    case missingTag(String)
    /// A tag's value could not be read. `line` is 1-based.
    case invalidTag(line: Int, tag: String)
    /// A tag that needs a URI line after it (`EXTINF`, `EXT-X-STREAM-INF`) had none.
    case missingURI(line: Int)
    /// A URI line without the tag that must precede it.
    case unexpectedURI(line: Int)
    /// A quoted-string or enumerated attribute is malformed.
    case invalidAttribute(line: Int, name: String)
}
