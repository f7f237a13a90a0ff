internal import COpenSSL

/// SHA-2 digests (FIPS 180-4) and HMAC (RFC 2104) over them, through OpenSSL's libcrypto.
public enum SHA2: Sendable {
    case sha256, sha512

    /// The digest's length in bytes.
    public var byteCount: Int { self == .sha256 ? 32 : 64 }

    fileprivate var md: OpaquePointer? { self == .sha256 ? EVP_sha256() : EVP_sha512() }

    /// The digest of `bytes`.
    public func hash(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: byteCount)
        var written: UInt32 = 0
        let ok = bytes.withNonNilBytes { p, n in
            out.withUnsafeMutableBufferPointer { o in EVP_Digest(p, n, o.baseAddress, &written, md, nil) }
        }
        precondition(ok == 1 && Int(written) == byteCount, "EVP_Digest failed on a built-in digest")
        return out
    }

    /// HMAC of `message` under `key` with this digest.
    public func authenticationCode(for message: [UInt8], key: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: byteCount)
        var written: UInt32 = 0
        let result = key.withNonNilBytes { k, kn in
            message.withNonNilBytes { m, mn in
                out.withUnsafeMutableBufferPointer { o in HMAC(md, k, Int32(kn), m, mn, o.baseAddress, &written) }
            }
        }
        precondition(result != nil && Int(written) == byteCount, "HMAC failed on a built-in digest")
        return out
    }

    /// Whether `code` is the HMAC of `message` under `key`, compared in constant time.
    public func isValidAuthenticationCode(_ code: [UInt8], for message: [UInt8], key: [UInt8]) -> Bool {
        constantTimeEqual(code, authenticationCode(for: message, key: key))
    }
}

/// Whether `a` and `b` hold the same bytes, in a time that depends on their length only (`CRYPTO_memcmp`).
public func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    guard !a.isEmpty else { return true }
    return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, a.count) == 0 } }
}

extension Array where Element == UInt8 {
    /// The bytes' address and count, with an address even when empty (libcrypto reads no byte of a zero-length input,
    /// but some of its calls take a null one for "none given").
    func withNonNilBytes<R>(_ body: (UnsafePointer<UInt8>, Int) -> R) -> R {
        if isEmpty {
            var zero: UInt8 = 0
            return withUnsafePointer(to: &zero) { body($0, 0) }
        }
        return withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
    }
}
