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
/// Element names are matched by local name (any namespace prefix). A content key encrypted for a recipient (a
/// `DeliveryData` with its `DocumentKey`, and `pskc:EncryptedValue`) is read with that recipient's private key
/// (`CPIXDelivery`). Not read: key periods and usage rules (one key serves every track here): a document that needs
/// them is refused, one line, rather than half used.
public struct CPIXDocument: Sendable, Equatable {
    public var keyID: [UInt8]
    public var key: [UInt8]
    /// `commonEncryptionScheme` of the content key, when stated.
    public var scheme: ProtectionScheme?
    /// The systems of `DRMSystemList` this origin can signal, in document order.
    public var systems: [DRMSystem]

    /// - Parameter privateKeyPEM: the recipient's RSA private key, for a document whose content key is encrypted
    ///   (`CPIXDelivery`); without it such a document is refused, one line.
    public static func parse(_ text: String, privateKeyPEM: String? = nil) throws(CPIXError) -> CPIXDocument {
        guard !elements("CPIX", in: text).isEmpty else { throw CPIXError("not a CPIX document (no CPIX element)") }
        let keys = elements("ContentKey", in: text)
        guard let first = keys.first else { throw CPIXError("no ContentKey in its ContentKeyList") }
        guard keys.count == 1 else {
            throw CPIXError("\(keys.count) content keys: one key for every track is supported (key periods and per-track keys are not yet)")
        }
        guard let kidText = first.attributes["kid"], let kid = uuidBytes(kidText) else {
            throw CPIXError("the ContentKey has no kid UUID")
        }
        let key: [UInt8]
        if !elements("EncryptedValue", in: first.body).isEmpty {
            guard let privateKeyPEM else {
                throw CPIXError("the content key is encrypted for a recipient (DeliveryData): give its private key (--cpix-key)")
            }
            key = try CPIXDelivery(document: text, privateKeyPEM: privateKeyPEM).contentKey(first.body, kid: kidText)
        } else {
            guard let plain = elements("PlainValue", in: first.body).first,
                  let clear = Data(base64Encoded: plain.body.filter { !$0.isWhitespace }), clear.count == 16 else {
                throw CPIXError("the ContentKey has no 16-byte PlainValue (base64)")
            }
            key = Array(clear)
        }
        var scheme: ProtectionScheme?
        if let s = first.attributes["commonEncryptionScheme"] {
            guard let known = ProtectionScheme(rawValue: s) else { throw CPIXError("commonEncryptionScheme '\(s.prefix(8))' is not cenc or cbcs") }
            scheme = known
        }
        return CPIXDocument(keyID: kid, key: key, scheme: scheme, systems: systems(in: text))
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
