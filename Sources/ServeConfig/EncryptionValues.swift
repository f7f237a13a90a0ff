import ArgumentParser
import MediaCore

/// `--encrypt` / `encrypt`: how segments are protected: `aes-128` (whole-segment AES-128-CBC, RFC 8216 §5.2), or
/// sample encryption (ISO/IEC 23001-7) as `cbcs` (AES-CBC 1:9 pattern, `SAMPLE-AES`) or `cenc` (AES-CTR,
/// `SAMPLE-AES-CTR`) (docs/encryption.md).
public enum EncryptionScheme: OptionValue, CaseIterable, Hashable {
    case aes128, cbcs, cenc

    public init(parsing text: String) throws(OptionError) {
        switch text.lowercased() {
        case "aes-128", "aes128": self = .aes128
        case "cbcs": self = .cbcs
        case "cenc": self = .cenc
        default: throw OptionError(" is aes-128, cbcs or cenc (got '\(text.prefix(32))')")
        }
    }

    public var description: String {
        switch self {
        case .aes128: "aes-128"
        case .cbcs: "cbcs"
        case .cenc: "cenc"
        }
    }

    /// Sample encryption (the init segment says how; a DRM system hands out the key).
    public var isSampleEncryption: Bool { self != .aes128 }
}

/// `--drm` / `drm`: the DRM systems a sample-encrypted stream is signalled for, comma-separated
/// (`widevine,playready,fairplay,clearkey`). ClearKey (W3C, the common `pssh`) is always signalled.
public struct DRMSystemList: OptionValue, Hashable {
    public enum System: String, Sendable, Hashable, CaseIterable {
        case widevine, playready, fairplay, clearkey
    }
    public let systems: [System]

    public init(parsing text: String) throws(OptionError) {
        var out: [System] = []
        for name in text.lowercased().split(separator: ",").map({ String($0.filter { $0 != " " }) }) where !name.isEmpty {
            guard let s = System(rawValue: name) else {
                throw OptionError(" lists widevine, playready, fairplay, clearkey (got '\(name.prefix(32))')")
            }
            if !out.contains(s) { out.append(s) }
        }
        guard !out.isEmpty else { throw OptionError(" lists at least one of widevine, playready, fairplay, clearkey") }
        systems = out
    }

    public var description: String { systems.map(\.rawValue).joined(separator: ",") }
}

/// `--track-keys` / `track_keys`: the track types of a `cbcs`/`cenc` stream that each get a key of their own
/// (per-track keys), comma-separated: `sd`, `hd`, `uhd` (video up to 768 × 576, up to 1920 × 1080, above), `video`
/// (all video), `audio`. `video` and `sd`/`hd`/`uhd` exclude each other.
public struct TrackKeyClasses: OptionValue, Hashable {
    public enum TrackClass: String, Sendable, Hashable, CaseIterable {
        case sd, hd, uhd, video, audio
    }
    public let classes: [TrackClass]

    public init(parsing text: String) throws(OptionError) {
        var out: [TrackClass] = []
        for name in text.lowercased().split(separator: ",").map({ String($0.filter { $0 != " " }) }) where !name.isEmpty {
            guard let c = TrackClass(rawValue: name) else {
                throw OptionError(" lists sd, hd, uhd, video, audio (got '\(name.prefix(32))')")
            }
            if !out.contains(c) { out.append(c) }
        }
        guard !out.isEmpty else { throw OptionError(" lists at least one of sd, hd, uhd, video, audio") }
        if out.contains(.video), out.contains(where: { [.sd, .hd, .uhd].contains($0) }) {
            throw OptionError(" lists video (every picture) or sd/hd/uhd (by size), not both")
        }
        classes = out
    }

    public var description: String { classes.map(\.rawValue).joined(separator: ",") }
}

/// `--key` / `key`: a 16-byte AES-128 key as 32 hexadecimal digits (`0x` allowed), or `KID:KEY` (two such values:
/// the key ID of sample encryption, then the key). Its text never appears anywhere once read: not in an error (which
/// says only what is wrong with it), not in `description`, not when the options are encoded (the control API's view
/// of a stream).
public struct ContentKeyText: OptionValue, Hashable {
    public let bytes: [UInt8]
    /// The key ID given before the key (`KID:KEY`), if any.
    public let keyID: [UInt8]?

    public init(parsing text: String) throws(OptionError) {
        let pieces = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        if pieces.count == 2 {
            do {
                keyID = try Self.hex16(pieces[0])
                bytes = try Self.hex16(pieces[1])
            } catch {
                throw OptionError(" takes KID:KEY, each 32 hexadecimal digits (16 bytes); the value given is not")
            }
        } else {
            keyID = nil
            bytes = try Self.hex16(Substring(text))
        }
    }

    static func hex16(_ text: Substring) throws(OptionError) -> [UInt8] {
        var digits = text
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        guard digits.utf8.allSatisfy({ UInt8(ascii: "0")...UInt8(ascii: "9") ~= $0 || UInt8(ascii: "a")...UInt8(ascii: "f") ~= $0 | 0x20 }) else {
            throw OptionError(" takes 32 hexadecimal digits (16 bytes); the value given has other characters")
        }
        guard digits.utf8.count == 32, let bytes = HexBytes.decode(digits) else {
            throw OptionError(" takes 32 hexadecimal digits (16 bytes); the value given has \(digits.utf8.count)")
        }
        return bytes
    }

    /// Never the key.
    public var description: String { "(secret)" }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// `--key-server` / `key_server`: a CPIX key server's http:// or https:// URL (no spaces or control characters).
public struct KeyServerURL: OptionValue, Hashable {
    public let text: String

    public init(parsing text: String) throws(OptionError) {
        let lower = text.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), text.utf8.count <= 2048,
              text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw OptionError(" is an http:// or https:// URL without spaces (got '\(text.prefix(32))')")
        }
        self.text = text
    }

    /// The URL without any `user:password@` (what messages show).
    public var description: String {
        guard let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].firstIndex(of: "@"),
              !text[scheme.upperBound..<at].contains("/") else { return text }
        return String(text[..<scheme.upperBound]) + String(text[text.index(after: at)...])
    }
    public var optionText: String { text }

    /// As shown (the control API's view of a stream): without credentials.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// `--key-server-header` / `key_server_header`: one request header, `Name: value` (a token name, a value without
/// control characters). The value may be a credential: `description` and the encoding show the name only.
public struct HeaderLine: OptionValue, Hashable {
    public let name: String
    public let value: String

    public init(parsing text: String) throws(OptionError) {
        let pieces = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let tokenBytes = Set("!#$%&'*+-.^_`|~".utf8)
        guard pieces.count == 2, !pieces[0].isEmpty,
              pieces[0].utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0 & 0xDF) || tokenBytes.contains($0) }),
              pieces[1].utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else {
            throw OptionError(" takes 'Name: value' (a header name, a colon, a value without control characters)")
        }
        name = String(pieces[0])
        value = String(pieces[1].drop { $0 == " " || $0 == "\t" })
    }

    /// The name only: the value may be a secret.
    public var description: String { "\(name): (secret)" }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
