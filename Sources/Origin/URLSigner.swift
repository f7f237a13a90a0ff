import CryptoPrimitives
import Foundation
import MediaPresentation

/// Signed URLs, in the manner of nginx `secure_link`: a signature over a path prefix and an expiry lets its holder
/// fetch every object under that prefix (the page, playlists, init segments, segments, parts, `/hls.mjs`, the DASH
/// manifest of a stream) until the expiry.
///
/// Format (so an edge or another tool can make or check the same signatures):
///
/// ```
/// message   = prefix + "\n" + expires          (UTF-8; expires: decimal Unix seconds, no sign, no leading zero)
/// signature = base64url(HMAC-SHA256(key: UTF-8 secret, message)), without '=' padding (43 characters)
/// query     = hls_prefix=<prefix>&hls_exp=<expires>&hls_sig=<signature>
/// ```
///
/// `openssl` gives the same signature:
/// `printf '%s\n%s' / 1767225600 | openssl dgst -sha256 -hmac "$SECRET" -binary | basenc --base64url | tr -d =`.
///
/// A prefix starts with `/` and is either a directory (ends with `/`: it covers every path that starts with it) or
/// one exact path. Its characters are limited to `A-Z a-z 0-9 / . _ ~ -`, so it appears in the query as it is.
public struct URLSigner: Sendable {
    public static let prefixName = "hls_prefix"
    public static let expiresName = "hls_exp"
    public static let signatureName = "hls_sig"
    /// The three query item names, in the order `query` writes them.
    public static let queryNames = [prefixName, expiresName, signatureName]

    private let key: [UInt8]

    /// - Parameter secret: the shared secret (`--auth-token`); must not be empty.
    public init(secret: String) {
        precondition(!secret.isEmpty, "an empty secret signs nothing")
        key = Array(secret.utf8)
    }

    /// The base64url signature of `prefix` until `expires` (Unix seconds).
    public func signature(prefix: String, expires: Int64) -> String {
        Base64URL.encode(SHA2.sha256.authenticationCode(for: Array(Self.message(prefix: prefix, expires: expires).utf8), key: key))
    }

    /// `hls_prefix=…&hls_exp=…&hls_sig=…` (no leading `?`). `prefix` must be valid (`isValidPrefix`).
    public func query(prefix: String, expires: Int64) -> String {
        precondition(Self.isValidPrefix(prefix), "invalid prefix \(prefix)")
        return Self.query(prefix: prefix, expires: expires, signature: signature(prefix: prefix, expires: expires))
    }

    /// `path?hls_prefix=…` for `path` (which must lie under `prefix`).
    public func signedPath(_ path: String, prefix: String = "/", expires: Int64) throws(SigningError) -> String {
        guard Self.isValidPrefix(prefix) else { throw .invalidPrefix(prefix) }
        guard Self.covers(prefix: prefix, path: Substring(path)) else { throw .outsidePrefix(path: path, prefix: prefix) }
        return path + "?" + query(prefix: prefix, expires: expires)
    }

    /// What a request's signature says.
    public enum Verdict: Equatable, Sendable {
        /// Good until `expires`; `query` is the canonical signature query to carry on to the URIs a playlist lists.
        case valid(query: String)
        /// None of the three query items.
        case missing
        /// A correct signature whose time has passed.
        case expired
        /// Anything else: partial, repeated or malformed items, a wrong signature, a path outside the prefix.
        case invalid
    }

    /// Checks the signature items of a request for `path`. Each item is the list of values the query has for that
    /// name (a repeated item is invalid). `now`: Unix seconds; the signature is good while `now <= expires`.
    public func verify(path: Substring, prefix: [Substring], expires: [Substring], signature: [Substring],
                       now: Int64) -> Verdict {
        if prefix.isEmpty && expires.isEmpty && signature.isEmpty { return .missing }
        guard prefix.count == 1, expires.count == 1, signature.count == 1 else { return .invalid }
        let p = String(prefix[0])
        guard Self.isValidPrefix(p), let exp = Self.strictDecimal(expires[0]),
              let mac = Base64URL.decode(signature[0]), mac.count == SHA2.sha256.byteCount else { return .invalid }
        guard SHA2.sha256.isValidAuthenticationCode(mac, for: Array(Self.message(prefix: p, expires: exp).utf8), key: key) else {
            return .invalid
        }
        guard Self.covers(prefix: p, path: path) else { return .invalid }
        guard now <= exp else { return .expired }
        return .valid(query: Self.query(prefix: p, expires: exp, signature: String(signature[0])))
    }

    /// `prefix + "\n" + expires`: what the HMAC is computed over.
    public static func message(prefix: String, expires: Int64) -> String { prefix + "\n" + String(expires) }

    static func query(prefix: String, expires: Int64, signature: String) -> String {
        prefixName + "=" + prefix + "&" + expiresName + "=" + String(expires) + "&" + signatureName + "=" + signature
    }

    /// Starts with `/`, at most 256 bytes of `A-Z a-z 0-9 / . _ ~ -`, no `..`.
    public static func isValidPrefix(_ prefix: String) -> Bool {
        let u = prefix.utf8
        guard u.first == UInt8(ascii: "/"), u.count <= 256, !prefix.contains("..") else { return false }
        return u.allSatisfy { c in
            (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "/") || c == UInt8(ascii: ".")
                || c == UInt8(ascii: "_") || c == UInt8(ascii: "~") || c == UInt8(ascii: "-")
        }
    }

    /// A directory prefix (ending `/`) covers the paths that start with it; any other prefix only itself.
    public static func covers(prefix: String, path: Substring) -> Bool {
        prefix.hasSuffix("/") ? path.hasPrefix(prefix) : path == prefix[...]
    }

    /// Unsigned decimal, 1–18 digits (fits `Int64`), no sign, no leading zero.
    static func strictDecimal(_ s: Substring) -> Int64? {
        guard s.utf8.count <= 18, let v = URIScheme.strictDecimal(s) else { return nil }
        return Int64(v)
    }

    public enum SigningError: Error, Equatable, CustomStringConvertible {
        case invalidPrefix(String)
        case outsidePrefix(path: String, prefix: String)
        public var description: String {
            switch self {
            case .invalidPrefix(let p):
                "invalid prefix '\(p)': it starts with '/' and uses only A-Z a-z 0-9 / . _ ~ - (no '..')"
            case .outsidePrefix(let path, let prefix):
                "'\(path)' is not under the prefix '\(prefix)' (a prefix ending in '/' covers the paths below it, any other only itself)"
            }
        }
    }
}

/// Byte-string comparison whose time does not depend on where the inputs differ (for secrets: Bearer tokens and
/// Basic credentials). Both sides are hashed first, so the time does not depend on their lengths either.
public enum ConstantTime {
    /// `a == b`, looking at every byte of both.
    public static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        let da = SHA2.sha256.hash(Array(a)), db = SHA2.sha256.hash(Array(b))
        return equalBytes(da, db) && a.count == b.count
    }

    /// `a == b` for two arrays of the same length, in time that depends only on that length (libcrypto's
    /// `CRYPTO_memcmp`).
    static func equalBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool { constantTimeEqual(a, b) }
}

/// RFC 4648 §5 base64url without padding.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        var s = Data(bytes).base64EncodedString()
        s = s.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while s.hasSuffix("=") { s.removeLast() }
        return s
    }

    /// `nil` for anything but unpadded base64url.
    static func decode(_ s: Substring) -> [UInt8]? {
        guard s.utf8.allSatisfy({ c in
            (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "-") || c == UInt8(ascii: "_")
        }), s.utf8.count % 4 != 1 else { return nil }
        var b64 = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.utf8.count % 4 != 0 { b64 += "=" }
        guard let data = Data(base64Encoded: b64) else { return nil }
        let bytes = [UInt8](data)
        // Canonical only: the same bytes encode back to the same text (no stray low bits in the last character).
        return encode(bytes) == s ? bytes : nil
    }
}
