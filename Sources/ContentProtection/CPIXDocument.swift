import ISOBMFF
import MediaCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The parts of a DASH-IF CPIX 2.3 document (Content Protection Information Exchange Format) a `cbcs`/`cenc` stream
/// uses: its one content key (`ContentKeyList/ContentKey@kid` and the clear key in `Data/pskc:Secret/pskc:PlainValue`,
/// base64) and the DRM systems it names (`DRMSystemList/DRMSystem@systemId`).
///
/// ```xml
/// <cpix:CPIX xmlns:cpix="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc">
///   <cpix:ContentKeyList>
///     <cpix:ContentKey kid="01234567-89ab-cdef-0123-456789abcdef" commonEncryptionScheme="cbcs">
///       <cpix:Data><pskc:Secret><pskc:PlainValue>ABEiM0RVZneImaq7zN3u/w==</pskc:PlainValue></pskc:Secret></cpix:Data>
///     </cpix:ContentKey>
///   </cpix:ContentKeyList>
///   <cpix:DRMSystemList>
///     <cpix:DRMSystem kid="01234567-89ab-cdef-0123-456789abcdef" systemId="edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"/>
///   </cpix:DRMSystemList>
/// </cpix:CPIX>
/// ```
///
/// Several content keys are per-track keys: each key's `ContentKeyUsageRule`s (`ContentKeyUsageRuleList`) say which
/// tracks it protects, by their `VideoFilter` (`minPixels`, `maxPixels`) and `AudioFilter` (`minChannels`,
/// `maxChannels`) (`KeyUsage`), as SPEKE v2's encryption contract writes them (SD, HD, UHD, AUDIO):
///
/// ```xml
///   <cpix:ContentKeyUsageRuleList>
///     <cpix:ContentKeyUsageRule kid="…" intendedTrackType="SD"><cpix:VideoFilter maxPixels="442368"/></cpix:ContentKeyUsageRule>
///     <cpix:ContentKeyUsageRule kid="…" intendedTrackType="HD"><cpix:VideoFilter minPixels="442369"/></cpix:ContentKeyUsageRule>
///     <cpix:ContentKeyUsageRule kid="…" intendedTrackType="AUDIO"><cpix:AudioFilter/></cpix:ContentKeyUsageRule>
///   </cpix:ContentKeyUsageRuleList>
/// ```
///
/// Element names are matched by local name (any namespace prefix). A content key encrypted for a recipient (a
/// `DeliveryData` with its `DocumentKey`, and `pskc:EncryptedValue`) is read with that recipient's private key
/// (`CPIXDelivery`).
///
/// Key periods: a `ContentKeyPeriodList` of periods by `index` (the stream's key period *n*, `--key-period` long), and
/// each key's usage rule naming its period (`KeyPeriodFilter periodId`), with or without track filters: keys for a
/// rotation made ahead (a VOD package, a live stream whose keys were issued for its first periods).
///
/// Not read, and refused (one line) rather than half used: periods by time (`@start`/`@end` without `@index`), filters
/// by bitrate, label, HDR, colour gamut or frame rate.
public struct CPIXDocument: Sendable, Equatable {
    /// One content key and the tracks it protects.
    public struct Key: Sendable, Equatable {
        public var keyID: [UInt8]
        public var key: [UInt8]
        public var usage: KeyUsage
        /// The key period it is for (`KeyPeriodFilter`'s period's `index`); `nil`: every period.
        public var period: UInt64?
    }
    /// In document order.
    public var keys: [Key]
    /// `commonEncryptionScheme` of the content keys, when stated.
    public var scheme: ProtectionScheme?
    /// The systems of `DRMSystemList` this origin can signal, in document order.
    public var systems: [DRMSystem]

    /// The first key's KID (the one key of most documents).
    public var keyID: [UInt8] { keys[0].keyID }
    /// The first key.
    public var key: [UInt8] { keys[0].key }
    /// Whether its keys are for key periods.
    public var hasPeriods: Bool { keys.contains { $0.period != nil } }
    /// Its keys by the tracks they protect (the same filters), in document order; each group's keys by period (one key
    /// without key periods).
    public var tracks: [(usage: KeyUsage, keys: [Key])] {
        var groups: [(usage: KeyUsage, keys: [Key])] = []
        for k in keys {
            if let i = groups.firstIndex(where: { $0.usage.video == k.usage.video && $0.usage.audio == k.usage.audio }) {
                groups[i].keys.append(k)
            } else {
                groups.append((k.usage, [k]))
            }
        }
        return groups
    }

    /// - Parameter privateKeyPEM: the recipient's RSA private key, for a document whose content key is encrypted
    ///   (`CPIXDelivery`); without it such a document is refused, one line.
    public static func parse(_ text: String, privateKeyPEM: String? = nil) throws(CPIXError) -> CPIXDocument {
        guard !elements("CPIX", in: text).isEmpty else { throw CPIXError("not a CPIX document (no CPIX element)") }
        let contentKeys = elements("ContentKey", in: text)
        guard !contentKeys.isEmpty else { throw CPIXError("no ContentKey in its ContentKeyList") }
        var periodIndex: [String: UInt64] = [:]
        for p in elements("ContentKeyPeriod", in: text) {
            guard let id = p.attributes["id"] else { throw CPIXError("a ContentKeyPeriod has no id") }
            guard let text = p.attributes["index"] else {
                throw CPIXError("ContentKeyPeriod \(id.prefix(32)) has no index (periods by start and end time are not read)")
            }
            guard let n = UInt64(text) else { throw CPIXError("ContentKeyPeriod \(id.prefix(32)): index '\(text.prefix(12))' is not a whole number") }
            periodIndex[id] = n
        }
        var keys: [(kid: String, bytes: [UInt8], key: [UInt8])] = []
        var scheme: ProtectionScheme?
        for k in contentKeys {
            guard let kidText = k.attributes["kid"], let kid = uuidBytes(kidText) else {
                throw CPIXError("a ContentKey has no kid UUID")
            }
            guard !keys.contains(where: { $0.bytes == kid }) else { throw CPIXError("ContentKey \(kidText) is listed twice") }
            keys.append((kidText, kid, try contentKey(k.body, kid: kidText, document: text, privateKeyPEM: privateKeyPEM)))
            if let s = k.attributes["commonEncryptionScheme"] {
                guard let known = ProtectionScheme(rawValue: s) else { throw CPIXError("commonEncryptionScheme '\(s.prefix(8))' is not cenc or cbcs") }
                guard scheme == nil || scheme == known else { throw CPIXError("its content keys are for both cenc and cbcs") }
                scheme = known
            }
        }
        var usages: [[UInt8]: KeyUsage] = [:]
        var periods: [[UInt8]: UInt64] = [:]
        for rule in elements("ContentKeyUsageRule", in: text) {
            guard let kidText = rule.attributes["kid"], let kid = uuidBytes(kidText), keys.contains(where: { $0.bytes == kid }) else {
                throw CPIXError("a ContentKeyUsageRule names no ContentKey of the document (kid \(rule.attributes["kid"] ?? "missing"))")
            }
            for f in elements("KeyPeriodFilter", in: rule.body) {
                guard let id = f.attributes["periodId"], let n = periodIndex[id] else {
                    throw CPIXError("the usage rule of ContentKey \(kidText) names no ContentKeyPeriod of the document")
                }
                guard periods[kid] == nil || periods[kid] == n else {
                    throw CPIXError("ContentKey \(kidText) is for two key periods: one key per period")
                }
                periods[kid] = n
            }
            let label = rule.attributes["intendedTrackType"] ?? kidText
            let usage = try usage(rule.body, label: label)
            if var u = usages[kid] {
                u.video += usage.video
                u.audio += usage.audio
                u.label += "+" + label
                usages[kid] = u
            } else {
                usages[kid] = usage
            }
        }
        if keys.count > 1, let bare = keys.first(where: { usages[$0.bytes] == nil }) {
            throw CPIXError("ContentKey \(bare.kid) has no ContentKeyUsageRule: with several content keys, each one's rules say which tracks it protects")
        }
        if !periods.isEmpty, let bare = keys.first(where: { periods[$0.bytes] == nil }) {
            throw CPIXError("ContentKey \(bare.kid) has no KeyPeriodFilter: with key periods, each key is for one")
        }
        let document = CPIXDocument(keys: keys.map { Key(keyID: $0.bytes, key: $0.key, usage: usages[$0.bytes] ?? .all, period: periods[$0.bytes]) },
                                    scheme: scheme, systems: systems(in: text))
        for group in document.tracks {
            // Per track type: one key a period, and a key where the stream begins.
            let indices = group.keys.map { $0.period ?? 0 }
            if let twice = indices.first(where: { n in indices.filter { $0 == n }.count > 1 }) {
                throw CPIXError("two content keys are for the same tracks\(periods.isEmpty ? "" : " in key period \(twice)") (\(group.usage.label))")
            }
            guard indices.contains(0) else {
                throw CPIXError("no key is for key period 0, where the stream begins (the \(group.usage.label) tracks' periods start at index \(indices.min()!))")
            }
        }
        return document
    }

    /// A content key's 16 bytes: its `PlainValue`, or its `EncryptedValue` read with the recipient's private key.
    static func contentKey(_ body: String, kid: String, document: String, privateKeyPEM: String?) throws(CPIXError) -> [UInt8] {
        if !elements("EncryptedValue", in: body).isEmpty {
            guard let privateKeyPEM else {
                throw CPIXError("the content key is encrypted for a recipient (DeliveryData): give its private key (--cpix-key)")
            }
            return try CPIXDelivery(document: document, privateKeyPEM: privateKeyPEM).contentKey(body, kid: kid)
        }
        guard let plain = elements("PlainValue", in: body).first,
              let clear = Data(base64Encoded: plain.body.filter { !$0.isWhitespace }), clear.count == 16 else {
            throw CPIXError("the ContentKey \(kid) has no 16-byte PlainValue (base64)")
        }
        return Array(clear)
    }

    /// The tracks one `ContentKeyUsageRule` takes, from its filters (none: every track).
    static func usage(_ body: String, label: String) throws(CPIXError) -> KeyUsage {
        for other in ["BitrateFilter", "LabelFilter"] where !elements(other, in: body).isEmpty {
            throw CPIXError("usage rule \(label): its \(other) is not read (video by pixels and audio by channels are)")
        }
        func range(_ a: [String: String], _ low: String, _ high: String, filter: String) throws(CPIXError) -> ClosedRange<Int> {
            if let extra = a.keys.sorted().first(where: { $0 != low && $0 != high }) {
                throw CPIXError("usage rule \(label): \(filter)@\(extra) is not read (\(low) and \(high) are)")
            }
            var bounds = (0, Int.max)
            for (name, slot) in [(low, 0), (high, 1)] {
                guard let text = a[name] else { continue }
                guard let v = Int(text), v >= 0 else { throw CPIXError("usage rule \(label): \(filter)@\(name) '\(text.prefix(12))' is not a whole number") }
                if slot == 0 { bounds.0 = v } else { bounds.1 = v }
            }
            guard bounds.0 <= bounds.1 else { throw CPIXError("usage rule \(label): \(filter)'s \(low) is above its \(high)") }
            return bounds.0...bounds.1
        }
        var video: [ClosedRange<Int>] = []
        for f in elements("VideoFilter", in: body) { video.append(try range(f.attributes, "minPixels", "maxPixels", filter: "VideoFilter")) }
        var audio: [ClosedRange<Int>] = []
        for f in elements("AudioFilter", in: body) { audio.append(try range(f.attributes, "minChannels", "maxChannels", filter: "AudioFilter")) }
        if video.isEmpty && audio.isEmpty { return KeyUsage(label: label, video: KeyUsage.all.video, audio: KeyUsage.all.audio) }
        return KeyUsage(label: label, video: video, audio: audio)
    }

    /// The systems of a document's `DRMSystemList` this origin can signal, in document order.
    static func systems(in text: String) -> [DRMSystem] {
        var systems: [DRMSystem] = []
        for d in elements("DRMSystem", in: text) {
            guard let id = d.attributes["systemId"].flatMap(uuidBytes) else { continue }
            if let s = DRMSystem.allCases.first(where: { $0.systemID == id }), !systems.contains(s) { systems.append(s) }
        }
        return systems
    }

    /// Each element with local name `name` in `text`: its attributes (by local name) and its content.
    static func elements(_ name: String, in text: String) -> [(attributes: [String: String], body: String)] {
        var out: [(attributes: [String: String], body: String)] = []
        var rest = text[...]
        while let open = rest.firstIndex(of: "<") {
            rest = rest[rest.index(after: open)...]
            guard let end = rest.firstIndex(of: ">") else { break }
            let tag = rest[..<end]
            let tagName = tag.prefix { !$0.isWhitespace && $0 != "/" && $0 != ">" }
            guard tagName.split(separator: ":").last.map(String.init) == name else { continue }
            let attributes = Self.attributes(tag.dropFirst(tagName.count))
            rest = rest[rest.index(after: end)...]
            if tag.hasSuffix("/") { out.append((attributes, "")); continue }
            let close = "</" + tagName + ">"
            guard let closing = rest.firstRange(of: close) else { out.append((attributes, String(rest))); break }
            out.append((attributes, String(rest[..<closing.lowerBound])))
            rest = rest[closing.upperBound...]
        }
        return out
    }

    static func attributes(_ text: Substring) -> [String: String] {
        var out: [String: String] = [:]
        var rest = text
        while let eq = rest.firstIndex(of: "=") {
            let name = String(rest[..<eq].filter { !$0.isWhitespace })
            var after = rest[rest.index(after: eq)...].drop { $0.isWhitespace }
            guard let quote = after.first, quote == "\"" || quote == "'" else { break }
            after = after.dropFirst()
            guard let close = after.firstIndex(of: quote) else { break }
            out[String(name.split(separator: ":").last ?? Substring(name))] = String(after[..<close])
            rest = after[after.index(after: close)...]
        }
        return out
    }

    /// 16 bytes of an `8-4-4-4-12` UUID (or 32 bare hex digits).
    static func uuidBytes(_ text: String) -> [UInt8]? {
        guard let bytes = HexBytes.decode(text), bytes.count == 16 else { return nil }
        return bytes
    }
}

/// A CPIX document that cannot be used: one line, never the key.
public struct CPIXError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
