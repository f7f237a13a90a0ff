internal import COpenSSL

/// An RSA private key read from PEM (PKCS#1 `RSA PRIVATE KEY` or PKCS#8 `PRIVATE KEY`), for RSA-OAEP decryption
/// (RFC 8017 §7.1.2) with SHA-1 and MGF1-SHA-1 (XML Encryption's `rsa-oaep-mgf1p`), through OpenSSL's libcrypto.
/// A key encrypted with a passphrase is refused (libcrypto's default would ask for it on the terminal).
public final class RSAPrivateKey: @unchecked Sendable {
    // One EVP_PKEY, owned; never changed after init (libcrypto's keys are safe to read from several threads).
    private let key: OpaquePointer

    public init(pem: String) throws(CryptoError) {
        let text = Array(pem.utf8)
        let read: OpaquePointer? = text.withNonNilBytes { p, n in
            guard let bio = BIO_new_mem_buf(p, Int32(n)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)   // no passphrase to give
        }
        guard let read else { throw CryptoError(call: "PEM_read_bio_PrivateKey", reason: "not a private key in PEM") }
        guard EVP_PKEY_get_base_id(read) == copenssl_pkey_rsa() else {
            EVP_PKEY_free(read)
            throw CryptoError(call: "PEM_read_bio_PrivateKey", reason: "not an RSA key")
        }
        key = read
    }

    deinit { EVP_PKEY_free(key) }

    /// The message RSA-OAEP (SHA-1, MGF1-SHA-1, empty label) sealed in `ciphertext`; a ciphertext for another key
    /// fails OAEP's check.
    public func decryptOAEP(_ ciphertext: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let ctx = EVP_PKEY_CTX_new(key, nil) else { throw CryptoError(call: "EVP_PKEY_CTX_new") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_decrypt_init(ctx) == 1,
              EVP_PKEY_CTX_set_rsa_padding(ctx, copenssl_rsa_pkcs1_oaep_padding()) == 1 else {
            throw CryptoError(call: "EVP_PKEY_decrypt_init")
        }
        var length = 0
        let sized = ciphertext.withNonNilBytes { p, n in EVP_PKEY_decrypt(ctx, nil, &length, p, n) }
        guard sized == 1 else { throw CryptoError(call: "EVP_PKEY_decrypt") }
        var out = [UInt8](repeating: 0, count: length)
        let ok = ciphertext.withNonNilBytes { p, n in
            out.withUnsafeMutableBufferPointer { o in EVP_PKEY_decrypt(ctx, o.baseAddress, &length, p, n) }
        }
        guard ok == 1 else { throw CryptoError(call: "EVP_PKEY_decrypt", reason: "OAEP check failed (another key's, or altered)") }
        out.removeLast(out.count - length)
        return out
    }
}
