import CryptoPrimitives
import ISOBMFF
import MediaCore
import MediaPresentation
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A DRM system a sample-encrypted stream is signalled for: its system ID (the `pssh` SystemID, DASH-IF's registry)
/// and how HLS names it.
public enum DRMSystem: String, Sendable, Hashable, CaseIterable {
    case widevine, playready, fairplay, clearkey

    /// The 16-byte SystemID (`pssh`, DASH `ContentProtection@schemeIdUri="urn:uuid:…"`).
    public var systemID: [UInt8] {
        switch self {
        case .widevine: UUIDText.bytes("edef8ba9-79d6-4ace-a3c8-27dcd51d21ed")
        case .playready: UUIDText.bytes("9a04f079-9840-4286-ab92-e65be0885f95")
        case .fairplay: UUIDText.bytes("94ce86fb-07ff-4f43-adb8-93d2fa968ca2")
        // The W3C "common" system of the Common PSSH Box Format (EME's `cenc` initialization data): KIDs only.
        case .clearkey: UUIDText.bytes("1077efec-c0b2-4d02-ace3-3c1e52e2fb4b")
        }
    }
}

/// `8-4-4-4-12` hexadecimal UUIDs.
enum UUIDText {
    static func bytes(_ text: StaticString) -> [UInt8] {
        guard let bytes = HexBytes.decode("\(text)"), bytes.count == 16 else { preconditionFailure("not a UUID: \(text)") }
        return bytes
    }
}

/// Everything a sample-encrypted stream states about its one key: the scheme, the key and its KID, `cbcs`'s constant
/// IV, and per DRM system its `pssh` (init segment, DASH) and its `EXT-X-KEY` (HLS). Made once per stream.
///
/// - KID: given (`--key KID:KEY`), else the first 16 bytes of SHA-256("hls-origin kid " ‖ key): every origin given
///   the same key names it the same way, and the KID says nothing about the key.
/// - Constant IV (`cbcs`): the first 16 bytes of HMAC-SHA256(key, "hls-origin cbcs iv"): the same on every origin.
/// - Key periods (`--key-period`): period *n*'s key is the first 16 bytes of HMAC-SHA256(K, "hls-origin cenc key " ‖
///   *n* as 8 big-endian bytes) and its KID those of HMAC-SHA256(K, "hls-origin cenc kid " ‖ *n*), *K* the given key
///   (`period(_:)`); without a period the stream has the one key above.
/// - From a key server (`--key-server`): each period's KID and key are the source's (`PeriodKeySource`).
public struct SampleProtection: Sendable, CustomStringConvertible, CustomReflectable {
    public let scheme: ProtectionScheme
    public let key: ContentKey
    public let keyID: [UInt8]
    public let constantIV: [UInt8]
    /// In the order given; ClearKey (the common `pssh`) always among them.
    public let systems: [DRMSystem]
    /// A new key every this much media; `nil`: one key.
    public let keyPeriod: MediaTime?
    private let master: [UInt8]
    /// Where the periods' keys come from when they are not derived (`--key-server`).
    private let keys: (any PeriodKeySource)?

    /// Keys from a source (a key server's), period 0's now; each period's from `keys` (`period(_:)`).
    public init(scheme: ProtectionScheme, systems: [DRMSystem], keyPeriod: MediaTime?, keys: any PeriodKeySource) throws {
        if scheme == .cenc && systems.contains(.fairplay) {
            throw SampleProtectionError.fairPlayNeedsCBCS
        }
        let first = keys.key(period: 0)
        self.init(scheme: scheme, key: first, systems: systems.contains(.clearkey) ? systems : systems + [.clearkey],
                  keyPeriod: keyPeriod, master: first.bytes, keys: keys)
    }

    public init(scheme: ProtectionScheme, key: [UInt8], keyID: [UInt8]? = nil, systems: [DRMSystem] = [],
                keyPeriod: MediaTime? = nil) throws {
        precondition(key.count == 16, "an AES-128 key is 16 bytes")
        if scheme == .cenc && systems.contains(.fairplay) {
            throw SampleProtectionError.fairPlayNeedsCBCS
        }
        let kid = keyID ?? Array(SHA2.sha256.hash(Array("hls-origin kid ".utf8) + key).prefix(16))
        self.init(scheme: scheme, key: ContentKey(id: 0, bytes: key, keyID: kid),
                  systems: systems.contains(.clearkey) ? systems : systems + [.clearkey], keyPeriod: keyPeriod, master: key, keys: nil)
    }

    private init(scheme: ProtectionScheme, key: ContentKey, systems: [DRMSystem], keyPeriod: MediaTime?, master: [UInt8],
                 keys: (any PeriodKeySource)?) {
        self.scheme = scheme
        self.key = key
        self.keyID = key.keyID!
        constantIV = Array(SHA2.sha256.authenticationCode(for: Array("hls-origin cbcs iv".utf8), key: key.bytes).prefix(16))
        self.systems = systems
        self.keyPeriod = keyPeriod
        self.master = master
        self.keys = keys
    }

    /// Per-track keys from one key `K` (`--track-keys` with `--key`): a track type's key is the first 16 bytes of
    /// HMAC-SHA256(K, "hls-origin track key " ‖ its label), so a licence server given K derives each.
    public static func trackKey(_ key: [UInt8], label: String) -> [UInt8] {
        Array(SHA2.sha256.authenticationCode(for: Array("hls-origin track key \(label)".utf8), key: key).prefix(16))
    }

    /// Never the key: a protection that reaches a log line or a failure message stays secret.
    public var description: String { "\(scheme.rawValue) with \(key)" }
    /// `dump` and the like see the scheme and the key's number only.
    public var customMirror: Mirror { Mirror(self, children: ["scheme": scheme, "key": key]) }

    /// Key period `n`'s protection (itself without key periods).
    public func period(_ n: UInt64) -> SampleProtection {
        guard keyPeriod != nil else { return self }
        if let keys {
            return SampleProtection(scheme: scheme, key: keys.key(period: n), systems: systems, keyPeriod: keyPeriod,
                                    master: master, keys: keys)
        }
        func derive(_ label: String) -> [UInt8] {
            var message = Array(label.utf8)
            withUnsafeBytes(of: n.bigEndian) { message.append(contentsOf: $0) }
            return Array(SHA2.sha256.authenticationCode(for: message, key: master).prefix(16))
        }
        return SampleProtection(scheme: scheme, key: ContentKey(id: n, bytes: derive("hls-origin cenc key "), keyID: derive("hls-origin cenc kid ")),
                                systems: systems, keyPeriod: keyPeriod, master: master, keys: nil)
    }

    /// The stream ended: a key source stops fetching.
    public func finish() { keys?.finish() }

    /// The `pssh` boxes of the init segment, one per system that has one (FairPlay has none: its key comes by `skd://`).
    public var systemHeaders: [ProtectionSystemHeader] {
        systems.compactMap { s in
            switch s {
            case .clearkey: ProtectionSystemHeader(systemID: s.systemID, keyIDs: [keyID])
            case .widevine: ProtectionSystemHeader(systemID: s.systemID, data: widevineData)
            case .playready: ProtectionSystemHeader(systemID: s.systemID, keyIDs: [keyID], data: playReadyObject)
            case .fairplay: nil
            }
        }
    }

    /// The `EXT-X-KEY`s of the segments, one per system (its KEYFORMAT and URI).
    public var keySystems: [KeySystemKey] {
        let boxes = Dictionary(uniqueKeysWithValues: systemHeaders.map { ($0.systemID, (try? $0.box()) ?? []) })
        return systems.map { s in
            let pssh = boxes[s.systemID]
            switch s {
            case .clearkey:
                // hls.js reads the KID from the first 16 bytes of the data URI (docs/encryption.md).
                return KeySystemKey(keyFormat: "org.w3.clearkey", uri: "data:text/plain;base64," + Data(keyID).base64EncodedString(),
                                    systemID: s.systemID, pssh: pssh)
            case .widevine:
                return KeySystemKey(keyFormat: "urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed",
                                    uri: "data:text/plain;base64," + Data(pssh ?? []).base64EncodedString(),
                                    systemID: s.systemID, pssh: pssh)
            case .playready:
                return KeySystemKey(keyFormat: "com.microsoft.playready",
                                    uri: "data:text/plain;charset=UTF-16;base64," + Data(playReadyObject).base64EncodedString(),
                                    systemID: s.systemID, pssh: pssh)
            case .fairplay:
                return KeySystemKey(keyFormat: "com.apple.streamingkeydelivery", uri: "skd://" + keyID.map { b in
                    (b < 16 ? "0" : "") + String(b, radix: 16) }.joined(), systemID: s.systemID)
            }
        }
    }

    /// What each segment's info carries (`SegmentInfo.encryption`).
    public var segmentEncryption: SegmentEncryption {
        SegmentEncryption(method: scheme == .cbcs ? .sampleAES : .sampleAESCTR, key: key,
                          iv: scheme == .cbcs ? constantIV : [UInt8](repeating: 0, count: 16), keySystems: keySystems)
    }

    /// The Widevine `pssh` data: a WidevinePsshData protobuf with `key_ids` (field 2) and `protection_scheme`
    /// (field 9, the scheme's FourCC as a varint).
    var widevineData: [UInt8] {
        var out: [UInt8] = [0x12, 0x10] + keyID
        out.append(0x48)
        var v = UInt64(scheme.fourCC.rawValue)
        repeat {
            let byte = UInt8(v & 0x7F)
            v >>= 7
            out.append(v == 0 ? byte : byte | 0x80)
        } while v != 0
        return out
    }

    /// A PlayReady Object (PlayReady Header Specification §2): little-endian length, one record of type 1 holding the
    /// WRM header in UTF-16LE. The KID is the GUID's little-endian bytes, base64; version 4.0.0.0 for AESCTR,
    /// 4.3.0.0 (KIDS with ALGID) for AESCBC.
    var playReadyObject: [UInt8] {
        let guid = Array(keyID[0..<4].reversed()) + Array(keyID[4..<6].reversed()) + Array(keyID[6..<8].reversed()) + Array(keyID[8...])
        let kid = Data(guid).base64EncodedString()
        let ns = "http://schemas.microsoft.com/DRM/2007/03/PlayReadyHeader"
        let xml = scheme == .cenc
            ? "<WRMHEADER xmlns=\"\(ns)\" version=\"4.0.0.0\"><DATA><PROTECTINFO><KEYLEN>16</KEYLEN><ALGID>AESCTR</ALGID></PROTECTINFO><KID>\(kid)</KID></DATA></WRMHEADER>"
            : "<WRMHEADER xmlns=\"\(ns)\" version=\"4.3.0.0\"><DATA><PROTECTINFO><KIDS><KID ALGID=\"AESCBC\" VALUE=\"\(kid)\"></KID></KIDS></PROTECTINFO></DATA></WRMHEADER>"
        var record: [UInt8] = []
        for unit in xml.utf16 { record.append(UInt8(unit & 0xFF)); record.append(UInt8(unit >> 8)) }
        var out: [UInt8] = []
        func le32(_ v: Int) { for s in [0, 8, 16, 24] { out.append(UInt8(truncatingIfNeeded: v >> s)) } }
        func le16(_ v: Int) { for s in [0, 8] { out.append(UInt8(truncatingIfNeeded: v >> s)) } }
        le32(4 + 2 + 4 + record.count)
        le16(1)
        le16(1)
        le16(record.count)
        return out + record
    }
}

public enum SampleProtectionError: Error, Equatable, CustomStringConvertible {
    case fairPlayNeedsCBCS

    public var description: String {
        switch self {
        case .fairPlayNeedsCBCS: "FairPlay decrypts cbcs only: use --encrypt cbcs with --drm fairplay"
        }
    }
}
