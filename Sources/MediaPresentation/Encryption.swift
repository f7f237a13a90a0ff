import HLS
import MediaCore

/// How a segment's bytes are protected. Only whole-segment AES-128 for now (RFC 8216 §5.2); the CENC schemes
/// (`cbcs`, `cenc`, ISO/IEC 23001-7) and `SAMPLE-AES` become further cases, with their own `EXT-X-KEY` methods.
public enum EncryptionMethod: String, Sendable, Equatable, CaseIterable {
    /// RFC 8216 §5.2: "An encryption method of AES-128 signals that Media Segments are completely encrypted using
    /// the Advanced Encryption Standard (AES) with a 128-bit key, Cipher Block Chaining (CBC), and Public-Key
    /// Cryptography Standards #7 (PKCS7) padding. CBC is restarted on each segment boundary, using either the IV
    /// attribute value or the Media Sequence Number as the IV."
    case aes128 = "AES-128"
}

/// A content key: its number (the key period it serves, and its URI: `URIScheme.keyURI`) and its 16 bytes.
/// `description` never shows the bytes: a key that reaches a log line, an error or a test failure stays secret.
public struct ContentKey: Sendable, Equatable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
                          CustomReflectable {
    /// The key period's number (0 without rotation).
    public let id: UInt64
    /// The key itself (16 bytes for AES-128).
    public let bytes: [UInt8]

    public init(id: UInt64, bytes: [UInt8]) {
        precondition(bytes.count == 16, "an AES-128 key is 16 bytes")
        self.id = id
        self.bytes = bytes
    }

    public var description: String { "content key \(id)" }
    public var debugDescription: String { description }
    /// `dump` and the like see the number only.
    public var customMirror: Mirror { Mirror(self, children: ["id": id]) }
}

/// How one segment (and each of its parts) was encrypted: the facts its `EXT-X-KEY` tag states, carried forward in
/// `SegmentInfo` / `PartInfo` from the stage that encrypted it (nothing downstream re-derives them).
public struct SegmentEncryption: Sendable, Equatable, CustomStringConvertible {
    public var method: EncryptionMethod
    public var key: ContentKey
    /// The 16-byte initialization vector, stated in the playlist as `IV=0x…` (RFC 8216 §4.3.2.4).
    public var iv: [UInt8]

    public init(method: EncryptionMethod = .aes128, key: ContentKey, iv: [UInt8]) {
        precondition(iv.count == 16, "an AES-128 IV is 16 bytes")
        self.method = method
        self.key = key
        self.iv = iv
    }

    public var description: String { "\(method.rawValue) with \(key)" }

    /// The `EXT-X-KEY` that states it: the key's URI (`URIScheme.keyURI`, plus `suffix`, e.g. a signature query with
    /// its `?`) and the IV, stated explicitly.
    public func playlistKey(uriSuffix suffix: String = "") -> PlaylistKey {
        switch method {
        case .aes128: PlaylistKey(method: .aes128, uri: URIScheme.keyURI(key.id) + suffix, iv: iv)
        }
    }
}

extension WindowSnapshot {
    /// The content key numbered `id`, if a segment or part this window lists (or retains) uses it: a key is given out
    /// exactly while something encrypted with it can be fetched (not before its period starts, not long after).
    public func contentKey(_ id: UInt64) -> ContentKey? {
        if let k = partial.lazy.compactMap(\.info.encryption?.key).first(where: { $0.id == id }) { return k }
        // The segment in progress, hinted before its first part exists (`SegmentInfo.nextEncryption`).
        if partial.isEmpty, let k = window.last?.info.nextEncryption?.key, k.id == id { return k }
        for s in window.reversed() {
            if let k = s.info.encryption?.key, k.id == id { return k }
        }
        return retained.lazy.compactMap(\.info.encryption?.key).first { $0.id == id }
    }

    /// Whether the window's segments are encrypted (the newest one says; `nil` before the first segment or part).
    public var encryption: EncryptionMethod? {
        (partial.last?.info.encryption ?? window.last?.info.encryption)?.method
    }
}
