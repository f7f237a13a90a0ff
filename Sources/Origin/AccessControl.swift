import Foundation
import Hummingbird

/// Who may fetch what (issue 12 §4). Off by default: every request is served, as before.
///
/// With a `signer`, a request passes with a valid signature in its query (`URLSigner`), or with
/// `Authorization: Bearer <secret>` (the same secret); with `basicCredential`, with `Authorization: Basic` of that
/// `user:password`. Secrets are compared in constant time. Unsigned, expired or tampered requests get 403 (401 with
/// `WWW-Authenticate` when Basic is on and the request has no signature and no right credentials), with the usual CORS headers so a page
/// sees the status. OPTIONS preflights are not checked (they carry no credentials).
///
/// A request that passed by signature has its canonical signature query (`hls_prefix=…&hls_exp=…&hls_sig=…`) put on
/// every URI of the playlists and manifest it gets, so players need no change. Responses to checked requests are
/// `Cache-Control: private` (a shared cache would hand them to anyone) unless `edgeChecks` says an edge in front
/// checks the signatures itself.
public struct AccessControl: Sendable {
    public var signer: URLSigner?
    /// The secret a `Bearer` token must equal (the `--auth-token` secret).
    public var bearerToken: String?
    /// `user:password` for HTTP Basic authentication.
    public var basicCredential: String?
    /// An edge (CDN) checks the signatures: keep the objects' own `Cache-Control` so it may cache them.
    public var edgeChecks = false
    /// The `realm` of `WWW-Authenticate: Basic`.
    public var realm = "hls-origin"
    /// `--cors-origin`: answer `Access-Control-Allow-Origin` only to these origins (echoing the one that asked,
    /// with `Vary: Origin`); `nil`: `*` to everyone.
    public var corsOrigins: Set<String>?
    /// Unix seconds, for expiry (tests set it).
    public var now: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }

    public init() {}

    /// Any check is on.
    public var isEnabled: Bool { signer != nil || bearerToken != nil || basicCredential != nil }

    enum Decision {
        /// Serve; `uriQuery` is the signature query to carry on to listed URIs (`""` when none).
        case allowed(uriQuery: String)
        case denied(PreparedResponse)
    }

    static let forbidden = PreparedResponse.text(.forbidden, "Forbidden: a valid signature (or credentials) is needed\n")
    static let expired = PreparedResponse.text(.forbidden, "Forbidden: the signature has expired\n")

    func unauthorized() -> PreparedResponse {
        PreparedResponse.text(.unauthorized, "Unauthorized\n",
                              extra: [.wwwAuthenticate: "Basic realm=\"\(realm)\", charset=\"UTF-8\""])
    }

    /// Checks one request for `path` (the full request path: signatures name what the client sees).
    func check(_ request: Request, path: Substring) -> Decision {
        if let authorization = request.headers[.authorization] {
            if credentialsMatch(authorization) { return .allowed(uriQuery: "") }
        }
        var verdict = URLSigner.Verdict.missing
        if let signer {
            let q = request.uri.queryParameters
            verdict = signer.verify(path: path, prefix: q[values: URLSigner.prefixName[...]],
                                    expires: q[values: URLSigner.expiresName[...]],
                                    signature: q[values: URLSigner.signatureName[...]], now: now())
        }
        switch verdict {
        case .valid(let query): return .allowed(uriQuery: query)
        case .expired: return .denied(Self.expired)
        case .invalid: return .denied(Self.forbidden)
        case .missing:
            // RFC 9110 §11.6.1: Basic asks again (401) for missing or wrong credentials.
            return .denied(basicCredential != nil ? unauthorized() : Self.forbidden)
        }
    }

    /// `Bearer <token>` or `Basic <base64 user:password>` (scheme names are case-insensitive, RFC 9110 §11.1).
    func credentialsMatch(_ authorization: String) -> Bool {
        guard let (scheme, value) = Self.credentials(authorization) else { return false }
        if scheme == "bearer", let bearerToken {
            return ConstantTime.equal(value.utf8, bearerToken.utf8)
        }
        if scheme == "basic", let basicCredential, let decoded = Data(base64Encoded: String(value)) {
            return ConstantTime.equal(decoded, basicCredential.utf8)
        }
        return false
    }

    /// `Bearer <token>` equal to `token`, compared in constant time (the control API's credential).
    static func bearerMatches(_ authorization: String?, _ token: String) -> Bool {
        guard let authorization, let (scheme, value) = credentials(authorization), scheme == "bearer" else { return false }
        return ConstantTime.equal(value.utf8, token.utf8)
    }

    /// An `Authorization` value's scheme (lower-cased) and credentials.
    private static func credentials(_ authorization: String) -> (scheme: String, value: Substring)? {
        guard let space = authorization.firstIndex(of: " ") else { return nil }
        return (authorization[..<space].lowercased(), authorization[authorization.index(after: space)...].drop { $0 == " " })
    }

    /// The `Cache-Control` of a protected response: `public` becomes `private`; anything else cacheable gains
    /// `private`; `no-store` stays as it is.
    static func privateCacheControl(_ value: String?) -> String {
        guard let value, !value.isEmpty else { return "private" }
        if value.contains("no-store") || value.hasPrefix("private") { return value }
        if value.hasPrefix("public") { return "private" + value.dropFirst("public".count) }
        return "private, " + value
    }
}
