import HLS
import MediaCore

/// How a segment's bytes are protected: whole-segment AES-128 (RFC 8216 §5.2), or common encryption of the samples
/// (ISO/IEC 23001-7) as `cbcs` (`SAMPLE-AES`) or `cenc` (`SAMPLE-AES-CTR`), each with its `EXT-X-KEY` method.
public enum EncryptionMethod: String, Sendable, Equatable, CaseIterable {
    /// RFC 8216 §5.2: "An encryption method of AES-128 signals that Media Segments are completely encrypted using
    /// the Advanced Encryption Standard (AES) with a 128-bit key, Cipher Block Chaining (CBC), and Public-Key
    /// Cryptography Standards #7 (PKCS7) padding. CBC is restarted on each segment boundary, using either the IV
    /// attribute value or the Media Sequence Number as the IV."
    case aes128 = "AES-128"
    /// ISO/IEC 23001-7 `cbcs` (AES-CBC, 1:9 pattern): `METHOD=SAMPLE-AES` for fMP4 (FairPlay, Widevine, PlayReady).
    case sampleAES = "SAMPLE-AES"
    /// ISO/IEC 23001-7 `cenc` (AES-CTR): `METHOD=SAMPLE-AES-CTR`.
    case sampleAESCTR = "SAMPLE-AES-CTR"

    /// Whether the init segment and the samples' own boxes say how to decrypt (CENC): the origin then serves no key,
    /// a DRM system's licence server does, and DASH can signal it.
    public var isSampleEncryption: Bool { self != .aes128 }
}

/// One DRM system's `EXT-X-KEY` for sample-encrypted segments: its `KEYFORMAT` and the `URI` it reads (a `data:` URI
/// with its initialization data, or FairPlay's `skd://`). Absolute: no access-control suffix is added.
public struct KeySystemKey: Sendable, Equatable {
    public var keyFormat: String
    public var uri: String
    public var keyFormatVersions: String
    /// The DRM system's 16-byte SystemID, and its whole `pssh` box when it has one (DASH `ContentProtection`).
    public var systemID: [UInt8]
    public var pssh: [UInt8]?

    public init(keyFormat: String, uri: String, keyFormatVersions: String = "1", systemID: [UInt8], pssh: [UInt8]? = nil) {
        self.keyFormat = keyFormat
        self.uri = uri
        self.keyFormatVersions = keyFormatVersions
        self.systemID = systemID
        self.pssh = pssh
    }
}

/// A content key: its number (the key period it serves, and its URI: `URIScheme.keyURI`) and its 16 bytes.
/// `description` never shows the bytes: a key that reaches a log line, an error or a test failure stays secret.
public struct ContentKey: Sendable, Equatable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
                          CustomReflectable {
    /// The key period's number (0 without rotation).
    public let id: UInt64
    /// The key itself (16 bytes for AES-128).
    public let bytes: [UInt8]
    /// The 16-byte key ID of common encryption (`default_KID`); `nil` for AES-128.
    public let keyID: [UInt8]?

    public init(id: UInt64, bytes: [UInt8], keyID: [UInt8]? = nil) {
        precondition(bytes.count == 16, "an AES-128 key is 16 bytes")
        precondition(keyID.map { $0.count == 16 } ?? true, "a KID is 16 bytes")
        self.id = id
        self.bytes = bytes
        self.keyID = keyID
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
    /// For CENC: `cbcs`'s constant IV, or 16 zeros for `cenc` (whose IVs are per sample, in `senc`); not stated.
    public var iv: [UInt8]
    /// The DRM systems' keys of a sample-encrypted segment, the first one first (empty for AES-128).
    public var keySystems: [KeySystemKey]
    /// With key periods (CENC): what the rendition's init segment states, the key of the period it was made in: its
    /// `tenc` default_KID and its `pssh` boxes (the DRM systems' keys). DASH's `cenc:default_KID` must be the `tenc`'s
    /// (DASH-IF IOP 4.3 §7.4.1.1); `nil`: this segment's own key is the init segment's.
    public var initKeyID: [UInt8]?
    public var initKeySystems: [KeySystemKey]?

    /// The KID the rendition's init segment names (`tenc` default_KID): the same for every segment of one init, so it
    /// is what tells renditions of different keys apart (per-track keys), whatever period each one's latest segment is in.
    public var defaultKeyID: [UInt8]? { initKeyID ?? key.keyID }

    public init(method: EncryptionMethod = .aes128, key: ContentKey, iv: [UInt8], keySystems: [KeySystemKey] = []) {
        precondition(iv.count == 16, "an AES-128 IV is 16 bytes")
        precondition(method.isSampleEncryption != keySystems.isEmpty, "CENC is signalled by key systems, AES-128 by its key")
        self.method = method
        self.key = key
        self.iv = iv
        self.keySystems = keySystems
    }

    public var description: String { "\(method.rawValue) with \(key)" }

    /// The `EXT-X-KEY` that states it: the key's URI (`URIScheme.keyURI`, plus `suffix`, e.g. a signature query with
    /// its `?`) and the IV, stated explicitly.
    public func playlistKey(uriSuffix suffix: String = "") -> PlaylistKey {
        switch method {
        case .aes128: return PlaylistKey(method: .aes128, uri: URIScheme.keyURI(key.id) + suffix, iv: iv)
        case .sampleAES, .sampleAESCTR:
            let keys = keySystems.map {
                PlaylistKey(method: method == .sampleAES ? .sampleAES : .sampleAESCTR, uri: $0.uri,
                            keyFormat: $0.keyFormat, keyFormatVersions: $0.keyFormatVersions)
            }
            var first = keys[0]
            first.alternatives = Array(keys.dropFirst())
            return first
        }
    }
}

extension WindowSnapshot {
    /// The content key numbered `id`, if a segment or part this window lists (or retains) uses it: a key is given out
    /// exactly while something encrypted with it can be fetched (not before its period starts, not long after).
    public func contentKey(_ id: UInt64) -> ContentKey? {
        // Sample-encrypted keys belong to a licence server, never to the origin's key route.
        guard encryption == .aes128 else { return nil }
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
