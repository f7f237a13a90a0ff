import MediaCore

/// One rendition of a presentation: a name, what it carries, and where its objects live.
///
/// A ladder has one video rendition per rung (video only, one track, CMAF style) and one audio rendition;
/// a single-rendition stream has one muxed rendition (video and audio in one track set).
public struct Rendition: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case video
        case audio
        /// Video and audio in the same fragments.
        case muxed
    }

    public var name: String
    public var kind: Kind
    public var scheme: URIScheme
    /// Audio renditions: the `GROUP-ID` they belong to. Video renditions: the audio group they play with.
    public var audioGroup: String?
    /// ISO 639 language of an audio rendition (`LANGUAGE`), when known.
    public var language: String?
    /// The bit rate the rendition is encoded at (bits/s), used for `BANDWIDTH` until segments can be measured.
    public var declaredBitRate: Int?
    /// The frame rate the rendition is encoded at, used for `FRAME-RATE` until it can be measured.
    public var declaredFrameRate: Double?

    public init(name: String, kind: Kind, scheme: URIScheme, audioGroup: String? = nil, language: String? = nil,
                declaredBitRate: Int? = nil, declaredFrameRate: Double? = nil) {
        precondition(Self.isValidName(name), "a rendition name is 1-32 of [A-Za-z0-9_-]")
        self.name = name
        self.kind = kind
        self.scheme = scheme
        self.audioGroup = audioGroup
        self.language = language
        self.declaredBitRate = declaredBitRate
        self.declaredFrameRate = declaredFrameRate
    }

    /// The single muxed rendition at the root: `stream.m3u8`, `init.mp4`, `seg<N>.m4s`.
    public static func muxed(name: String = "stream") -> Rendition {
        Rendition(name: name, kind: .muxed, scheme: .root(name))
    }

    /// Names become URI path segments: keep them to a safe alphabet.
    public static func isValidName(_ name: String) -> Bool {
        let u = name.utf8
        return (1...32).contains(u.count) && u.allSatisfy { c in
            (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "-") || c == UInt8(ascii: "_")
        }
    }
}
