import CryptoPrimitives
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The document secrets of a CPIX 2.3 document whose content keys are encrypted for a recipient (DASH-IF CPIX 2.3
/// §5.3.4–5.3.6, `DeliveryDataList`): a 256-bit document key and a MAC key, each encrypted with the recipient's RSA
/// public key (RSA-OAEP, `http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p`: SHA-1 and MGF1-SHA-1), read here with the
/// recipient's private key.
///
/// ```xml
/// <cpix:DeliveryData>
///   <cpix:DeliveryKey><ds:X509Data><ds:X509Certificate>…</ds:X509Certificate></ds:X509Data></cpix:DeliveryKey>
///   <cpix:DocumentKey Algorithm="http://www.w3.org/2001/04/xmlenc#aes256-cbc"><cpix:Data><pskc:Secret>
///     <pskc:EncryptedValue><enc:EncryptionMethod Algorithm="…#rsa-oaep-mgf1p"/>
///       <enc:CipherData><enc:CipherValue>…</enc:CipherValue></enc:CipherData></pskc:EncryptedValue>
///   </pskc:Secret></cpix:Data></cpix:DocumentKey>
///   <cpix:MACMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#hmac-sha512">
///     <cpix:Key><enc:EncryptionMethod Algorithm="…#rsa-oaep-mgf1p"/><enc:CipherData><enc:CipherValue>…</enc:CipherValue>
///     </enc:CipherData></cpix:Key>
///   </cpix:MACMethod>
/// </cpix:DeliveryData>
/// ```
///
/// A content key's `pskc:EncryptedValue` is then `IV (16 bytes) ‖ AES-256-CBC(document key, PKCS#7(key))` and its
/// `pskc:ValueMAC` HMAC-SHA512(MAC key, that whole value), checked before anything is decrypted (§5.3.6). The first
/// `DeliveryData` whose secrets the private key opens is used; a document for another recipient is one line.
public struct CPIXDelivery: Sendable {
    static let rsaOAEP = "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"
    static let aes256CBC = "http://www.w3.org/2001/04/xmlenc#aes256-cbc"
    static let hmacSHA512 = "http://www.w3.org/2001/04/xmldsig-more#hmac-sha512"

    private let documentKey: [UInt8]
    private let macKey: [UInt8]

    /// The secrets of `document`'s `DeliveryData` for the holder of `privateKeyPEM` (PKCS#1 or PKCS#8 PEM, RSA).
    public init(document: String, privateKeyPEM: String) throws(CPIXError) {
        let privateKey: RSAPrivateKey
        do {
            privateKey = try RSAPrivateKey(pem: privateKeyPEM)
        } catch {
            throw CPIXError("the recipient's private key is not an RSA private key in PEM")
        }
        let deliveries = CPIXDocument.elements("DeliveryData", in: document)
        guard !deliveries.isEmpty else { throw CPIXError("its content keys are encrypted but it has no DeliveryData") }
        for d in deliveries {
            guard let documentKey = CPIXDocument.elements("DocumentKey", in: d.body).first,
                  let mac = CPIXDocument.elements("MACMethod", in: d.body).first else {
                throw CPIXError("a DeliveryData without its DocumentKey and MACMethod")
            }
            guard documentKey.attributes["Algorithm"] == Self.aes256CBC else {
                throw CPIXError("DocumentKey algorithm '\(documentKey.attributes["Algorithm"]?.prefix(60) ?? "")' is not aes256-cbc")
            }
            guard mac.attributes["Algorithm"] == Self.hmacSHA512 else {
                throw CPIXError("MACMethod algorithm '\(mac.attributes["Algorithm"]?.prefix(60) ?? "")' is not hmac-sha512")
            }
            let sealedDocumentKey = try Self.cipherValue(documentKey.body, algorithm: Self.rsaOAEP, what: "DocumentKey")
            let sealedMACKey = try Self.cipherValue(CPIXDocument.elements("Key", in: mac.body).first?.body ?? "",
                                                    algorithm: Self.rsaOAEP, what: "MACMethod key")
            // Another recipient's secrets do not open with this key (OAEP's check fails): try the next.
            guard let key = try? privateKey.decryptOAEP(sealedDocumentKey),
                  let macKey = try? privateKey.decryptOAEP(sealedMACKey) else { continue }
            guard key.count == 32 else { throw CPIXError("its document key is \(key.count) bytes, not 32 (AES-256)") }
            guard !macKey.isEmpty else { throw CPIXError("its MAC key is empty") }
            self.documentKey = key
            self.macKey = macKey
            return
        }
        throw CPIXError("its content keys are encrypted for another recipient: the private key opens none of its \(deliveries.count) DeliveryData")
    }

    /// The clear content key of a `ContentKey`'s body holding an `EncryptedValue` and its `ValueMAC`.
    public func contentKey(_ body: String, kid: String) throws(CPIXError) -> [UInt8] {
        let sealed = try Self.cipherValue(body, algorithm: Self.aes256CBC, what: "the key of KID \(kid)")
        guard let macText = CPIXDocument.elements("ValueMAC", in: body).first?.body,
              let mac = Data(base64Encoded: macText.filter { !$0.isWhitespace }).map({ [UInt8]($0) }) else {
            throw CPIXError("the key of KID \(kid) has no ValueMAC")
        }
        guard SHA2.sha512.isValidAuthenticationCode(mac, for: sealed, key: macKey) else {
            throw CPIXError("the key of KID \(kid) fails its MAC (altered, or sealed with another document key)")
        }
        guard sealed.count >= 32, sealed.count % 16 == 0 else {
            throw CPIXError("the key of KID \(kid) is \(sealed.count) bytes: not an IV and whole AES blocks")
        }
        let key: [UInt8]
        do {
            key = try AES.cbcDecryptPadded(Array(sealed.dropFirst(16)), key: documentKey, iv: Array(sealed.prefix(16)))
        } catch {
            throw CPIXError("the key of KID \(kid) does not decrypt (bad padding)")
        }
        guard key.count == 16 else { throw CPIXError("the key of KID \(kid) is \(key.count) bytes once decrypted, not 16") }
        return key
    }

    /// The bytes of `body`'s `CipherValue` (base64), its `EncryptionMethod` being `algorithm`.
    static func cipherValue(_ body: String, algorithm: String, what: String) throws(CPIXError) -> [UInt8] {
        guard let method = CPIXDocument.elements("EncryptionMethod", in: body).first?.attributes["Algorithm"],
              method == algorithm else {
            throw CPIXError("\(what): its EncryptionMethod is not \(algorithm.split(separator: "#").last ?? "")")
        }
        guard let text = CPIXDocument.elements("CipherValue", in: body).first?.body,
              let bytes = Data(base64Encoded: text.filter { !$0.isWhitespace }), !bytes.isEmpty else {
            throw CPIXError("\(what): no CipherValue (base64)")
        }
        return [UInt8](bytes)
    }
}
