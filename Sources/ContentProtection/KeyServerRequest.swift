import CryptoPrimitives
import ISOBMFF
import MediaCore
import MediaPresentation
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a `cbcs`/`cenc` stream asks a CPIX key server for (`--key-server`): the DASH-IF CPIX 2.3 request document
/// of some key periods (the shape SPEKE v2 uses), and the keys read from the answer. Pure: the HTTP is the caller's.
///
/// ```xml
/// <cpix:CPIX xmlns:cpix="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc" contentId="live" version="2.3">
///   <cpix:ContentKeyList>
///     <cpix:ContentKey kid="…" commonEncryptionScheme="cbcs"/>                      (one per period)
///   </cpix:ContentKeyList>
///   <cpix:DRMSystemList>                                                           (with --drm only)
///     <cpix:DRMSystem kid="…" systemId="edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"/>
///   </cpix:DRMSystemList>
///   <cpix:ContentKeyPeriodList>                                                    (with --key-period only)
///     <cpix:ContentKeyPeriod id="period-7" index="7"/>
///   </cpix:ContentKeyPeriodList>
///   <cpix:ContentKeyUsageRuleList>
///     <cpix:ContentKeyUsageRule kid="…" intendedTrackType="ALL"><cpix:KeyPeriodFilter periodId="period-7"/><cpix:VideoFilter/><cpix:AudioFilter/></cpix:ContentKeyUsageRule>
///   </cpix:ContentKeyUsageRuleList>
/// </cpix:CPIX>
/// ```
///
/// With per-track keys (`tracks`, `--track-keys`), one key per track type and period, each with its usage rule
/// (SPEKE v2's encryption contract): `<cpix:ContentKeyUsageRule kid="…" intendedTrackType="HD"><cpix:KeyPeriodFilter
/// periodId="period-7"/><cpix:VideoFilter minPixels="442369" maxPixels="2073600"/></cpix:ContentKeyUsageRule>`.
///
/// KIDs are the origin's, so redundant origins asking the same server for the same stream get the same keys: period
/// *n*'s KID is the first 16 bytes of SHA-256(`"hls-origin key-server kid "` ‖ contentId ‖ 0x00 ‖ *n* as 8 big-endian
/// bytes) (without key periods, *n* = 0); a track type's, SHA-256(`"hls-origin key-server kid "` ‖ contentId ‖ 0x00 ‖
/// its label ‖ 0x00 ‖ *n*). The answer gives each KID's key as a clear `pskc:PlainValue`, or encrypted for
/// the `recipient` the request named in its `DeliveryDataList` (`CPIXDelivery`).
public struct KeyServerRequest: Sendable, Equatable {
    /// The stream's name (`contentId`).
    public var contentID: String
    /// The CENC scheme the keys are for; `nil`: whole-segment AES-128 (RFC 8216 §5.2), no `commonEncryptionScheme`.
    public var scheme: ProtectionScheme?
    /// Whether the stream rotates keys (`--key-period`): the document then lists the periods, and each usage rule its period.
    public var rotating: Bool
    /// The systems asked for (`--drm`); none: the server's choice, read from the answer's `DRMSystemList`.
    public var systems: [DRMSystem]
    /// The recipient the keys are to be encrypted for (`--cpix-cert`, `--cpix-key`): its X.509 certificate (DER,
    /// base64) goes in the request's `DeliveryDataList` (CPIX 2.3 §5.3.4), and its RSA private key (PEM) reads the
    /// answer's encrypted keys (`CPIXDelivery`). `nil`: the keys come as clear `PlainValue`s.
    public var recipient: Recipient?
    /// The track types each asked a key of their own (per-track keys); `[.all]`: one key for every track.
    public var tracks: [KeyUsage]

    public struct Recipient: Sendable, Equatable {
        public var certificate: String
        public var privateKeyPEM: String
        public init(certificate: String, privateKeyPEM: String) {
            self.certificate = certificate
            self.privateKeyPEM = privateKeyPEM
        }
    }

    public init(contentID: String, scheme: ProtectionScheme?, rotating: Bool, systems: [DRMSystem] = [],
                recipient: Recipient? = nil, tracks: [KeyUsage] = [.all]) {
        precondition(!tracks.isEmpty, "at least one track type")
        self.tracks = tracks
        self.contentID = contentID
        self.scheme = scheme
        self.rotating = rotating
        self.systems = systems
        self.recipient = recipient
    }

    /// Period `n`'s KID (of track type `track`, an index of `tracks`).
    public func keyID(period n: UInt64, track: Int = 0) -> [UInt8] {
        var message = Array("hls-origin key-server kid ".utf8) + Array(contentID.utf8) + [0]
        if tracks[track] != .all { message += Array(tracks[track].label.utf8) + [0] }
        withUnsafeBytes(of: n.bigEndian) { message.append(contentsOf: $0) }
        return Array(SHA2.sha256.hash(message).prefix(16))
    }



    /// The request document for `periods` (just period 0 when not rotating).
    public func document(periods: [UInt64]) -> String {
        let periods = rotating ? periods : [0]
        // Per track type, then per period.
        let asked = tracks.indices.flatMap { t in periods.map { n in (track: t, period: n, kid: Self.uuid(keyID(period: n, track: t))) } }
        let kids = asked.map(\.kid)
        var x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        x += "<cpix:CPIX xmlns:cpix=\"urn:dashif:org:cpix\" xmlns:pskc=\"urn:ietf:params:xml:ns:keyprov:pskc\""
        if recipient != nil { x += " xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\"" }
        x += " contentId=\"\(Self.escaped(contentID))\" version=\"2.3\">\n"
        if let recipient {
            x += "  <cpix:DeliveryDataList>\n    <cpix:DeliveryData><cpix:DeliveryKey><ds:X509Data><ds:X509Certificate>"
            x += recipient.certificate
            x += "</ds:X509Certificate></ds:X509Data></cpix:DeliveryKey></cpix:DeliveryData>\n  </cpix:DeliveryDataList>\n"
        }
        x += "  <cpix:ContentKeyList>\n"
        for kid in kids {
            x += "    <cpix:ContentKey kid=\"\(kid)\"" + (scheme.map { " commonEncryptionScheme=\"\($0.rawValue)\"" } ?? "") + "/>\n"
        }
        x += "  </cpix:ContentKeyList>\n"
        if !systems.isEmpty {
            x += "  <cpix:DRMSystemList>\n"
            for kid in kids {
                for s in systems { x += "    <cpix:DRMSystem kid=\"\(kid)\" systemId=\"\(Self.uuid(s.systemID))\"/>\n" }
            }
            x += "  </cpix:DRMSystemList>\n"
        }
        if rotating {
            x += "  <cpix:ContentKeyPeriodList>\n"
            for n in periods { x += "    <cpix:ContentKeyPeriod id=\"period-\(n)\" index=\"\(n)\"/>\n" }
            x += "  </cpix:ContentKeyPeriodList>\n"
        }
        // Every key its usage rule (SPEKE v2's encryption contract: "each content key defined in the
        // <cpix:ContentKeyList> section corresponds to a specific <cpix:ContentKeyUsageRule> element"), its children in
        // the order of CPIX 2.3's ContentKeyUsageRuleType: KeyPeriodFilter, then VideoFilter, then AudioFilter.
        x += "  <cpix:ContentKeyUsageRuleList>\n"
        for a in asked {
            x += "    <cpix:ContentKeyUsageRule kid=\"\(a.kid)\" intendedTrackType=\"\(Self.escaped(tracks[a.track].label))\">"
            if rotating { x += "<cpix:KeyPeriodFilter periodId=\"period-\(a.period)\"/>" }
            x += tracks[a.track].filterElements
            x += "</cpix:ContentKeyUsageRule>\n"
        }
        x += "  </cpix:ContentKeyUsageRuleList>\n"
        return x + "</cpix:CPIX>\n"
    }

    /// The keys of `periods` in a server's answer (each `ContentKey` of a requested KID, its clear `PlainValue`), as
    /// period keys (`id` the period), per track type (`tracks`' order), and the systems of its `DRMSystemList`; or one
    /// line saying what is missing or wrong (never a key).
    public func keys(periods: [UInt64], answer text: String) throws(CPIXError) -> (keys: [[ContentKey]], systems: [DRMSystem]) {
        let periods = rotating ? periods : [0]
        guard !CPIXDocument.elements("CPIX", in: text).isEmpty else { throw CPIXError("the answer is not a CPIX document") }
        var byKID: [[UInt8]: [UInt8]] = [:]
        var delivery: CPIXDelivery?
        for k in CPIXDocument.elements("ContentKey", in: text) {
            guard let kid = k.attributes["kid"].flatMap(CPIXDocument.uuidBytes) else { continue }
            if let s = k.attributes["commonEncryptionScheme"], let scheme, s != scheme.rawValue {
                throw CPIXError("the key of KID \(Self.uuid(kid)) is for \(s.prefix(8)), not \(scheme.rawValue)")
            }
            if !CPIXDocument.elements("EncryptedValue", in: k.body).isEmpty {
                guard let recipient else {
                    throw CPIXError("the key of KID \(Self.uuid(kid)) is encrypted (DeliveryData): give --cpix-cert and --cpix-key")
                }
                if delivery == nil { delivery = try CPIXDelivery(document: text, privateKeyPEM: recipient.privateKeyPEM) }
                byKID[kid] = try delivery!.contentKey(k.body, kid: Self.uuid(kid))
                continue
            }
            guard let plain = CPIXDocument.elements("PlainValue", in: k.body).first else { continue }
            guard let key = Data(base64Encoded: plain.body.filter { !$0.isWhitespace }), key.count == 16 else {
                throw CPIXError("the key of KID \(Self.uuid(kid)) is not 16 bytes of base64")
            }
            byKID[kid] = Array(key)
        }
        var keys: [[ContentKey]] = []
        for t in tracks.indices {
            var track: [ContentKey] = []
            for n in periods {
                let kid = keyID(period: n, track: t)
                guard let key = byKID[kid] else {
                    let whose = tracks[t] == .all ? "" : " of the \(tracks[t].label) tracks"
                    throw CPIXError("no key\(whose) for \(rotating ? "period \(n)" : "the stream") (KID \(Self.uuid(kid)))")
                }
                track.append(ContentKey(id: n, bytes: key, keyID: kid))
            }
            keys.append(track)
        }
        return (keys, CPIXDocument.systems(in: text))
    }

    /// `8-4-4-4-12` lowercase hexadecimal.
    public static func uuid(_ bytes: [UInt8]) -> String {
        let hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        var out = ""
        for (i, c) in hex.enumerated() {
            if [8, 12, 16, 20].contains(i) { out += "-" }
            out.append(c)
        }
        return out
    }

    static func escaped(_ text: String) -> String { XMLEscaping.escape(text) }
}
