import ArgumentParser
import Foundation
import Origin
import ServeConfig

/// Access-control flags of `serve` (issue 12 §4): signed URLs, Bearer and Basic credentials, the CORS allow-list.
struct AccessOptions: ParsableArguments {
    static let tokenVariable = "HLS_ORIGIN_AUTH_TOKEN"
    static let basicVariable = "HLS_ORIGIN_AUTH_BASIC"
    static let apiTokenVariable = "HLS_ORIGIN_API_TOKEN"

    @Option(name: .customLong("auth-token"), help: ArgumentHelp("Protect the page, playlists and media with signed URLs (HMAC-SHA256 of this secret; 'hls-origin sign' makes them) or 'Authorization: Bearer SECRET'. Unsigned, expired or tampered requests get 403. Also from $\(tokenVariable), which keeps it out of 'ps'.", valueName: "secret"))
    var authToken: String?

    @Option(name: .customLong("auth-expires"), help: ArgumentHelp("How long the signed page URL printed at start stays valid (60s, 30m, 24h, 7d).", valueName: "duration"))
    var authExpires = "24h"

    @Flag(name: .customLong("auth-cdn"), help: "An edge in front checks the signatures: keep the objects' public Cache-Control instead of 'private'.")
    var authCDN = false

    @Option(name: .customLong("auth-basic"), help: ArgumentHelp("Require HTTP Basic authentication with this user:password (401 with WWW-Authenticate without it); with --auth-token, either one is enough. Also from $\(basicVariable).", valueName: "user:pass"))
    var authBasic: String?

    @Option(name: .customLong("cors-origin"), help: ArgumentHelp("Allow this origin (e.g. https://example.com) to read responses from a page; repeatable. Default: any origin ('*').", valueName: "origin"))
    var corsOrigins: [String] = []

    @Option(name: .customLong("api-token"), help: ArgumentHelp("Turn on the control API (/api/v1/streams: list, add, change, end streams while serving; POST /NAME/events: SCTE-35 ad markers, docs/events.md; POST /NAME/subtitles: live subtitle cues, docs/subtitles.md) for requests with 'Authorization: Bearer SECRET'. Without it the API does not exist (404). Its own secret, not --auth-token's. Also from $\(apiTokenVariable), which keeps it out of 'ps'.", valueName: "secret"))
    var apiToken: String?

    func validate() throws {
        if apiSecret == "" { throw ValidationError("--api-token must not be empty") }
        if let apiSecret, apiSecret == secret { throw ValidationError("--api-token must differ from --auth-token (viewers hold that one)") }
        _ = try parseExpiry(authExpires, flag: "--auth-expires")
        if let basic = basicCredential, !basic.contains(":") || basic.hasPrefix(":") {
            throw ValidationError("--auth-basic takes user:password")
        }
        if secret == "" { throw ValidationError("--auth-token must not be empty") }
        for o in corsOrigins where (o != "*" && !(o.hasPrefix("http://") || o.hasPrefix("https://"))) || o.hasSuffix("/") {
            throw ValidationError("--cors-origin takes an origin like https://example.com (scheme and host, no path), or '*' (got '\(o)')")
        }
    }

    /// The `--auth-token` secret (or its environment variable).
    var secret: String? { authToken ?? ProcessInfo.processInfo.environment[Self.tokenVariable] }
    /// The `--api-token` secret (or its environment variable); `nil`: no control API.
    var apiSecret: String? { apiToken ?? ProcessInfo.processInfo.environment[Self.apiTokenVariable] }
    var basicCredential: String? { authBasic ?? ProcessInfo.processInfo.environment[Self.basicVariable] }

    func accessControl() -> AccessControl {
        var access = AccessControl()
        if let secret, !secret.isEmpty {
            access.signer = URLSigner(secret: secret)
            access.bearerToken = secret
        }
        access.basicCredential = basicCredential
        access.edgeChecks = authCDN
        if !corsOrigins.isEmpty && !corsOrigins.contains("*") { access.corsOrigins = Set(corsOrigins) }
        return access
    }

    /// The page's path with a signature over `/` valid for `--auth-expires`, and the expiry; `nil` without a secret.
    func signedPage() throws -> (path: String, expires: Int64)? {
        guard let secret, !secret.isEmpty else { return nil }
        let expires = Int64(Date().timeIntervalSince1970) + (try parseExpiry(authExpires, flag: "--auth-expires"))
        return (try URLSigner(secret: secret).signedPath("/", prefix: "/", expires: expires), expires)
    }

    /// One line saying what a listener on a non-loopback `host` exposes; `nil` on loopback.
    /// The line (without `hls-origin: `) that says what a non-loopback listener exposes to whom; nil on loopback.
    func exposure(host: String, scheme: String, port: Int) -> String? {
        let loopback = host == "localhost" || host == "::1" || host.hasPrefix("127.")
        guard !loopback else { return nil }
        let what = "the player page, /hls.mjs, the playlists, init segments, segments, parts and the DASH manifest"
        let guardText: String
        switch (secret.map { !$0.isEmpty } ?? false, basicCredential != nil) {
        case (true, true): guardText = "to holders of a signed URL, the Bearer token or the Basic credentials"
        case (true, false): guardText = "to holders of a signed URL or the Bearer token"
        case (false, true): guardText = "to holders of the Basic credentials"
        case (false, false): guardText = "to anyone who can reach it, WITHOUT authentication (see --auth-token)"
        }
        let cors = access(corsOrigins)
        return "listening on \(host) port \(port) (\(scheme)): \(what) are open \(guardText); \(cors)"
    }

    private func access(_ origins: [String]) -> String {
        origins.isEmpty || origins.contains("*") ? "pages of any origin may read them (CORS *)"
            : "pages of \(origins.joined(separator: ", ")) may read them (CORS)"
    }
}

/// `60s`, `30m`, `24h`, `7d` or plain seconds, as seconds: 1 second to 10 years.
func parseExpiry(_ s: String, flag: String) throws -> Int64 {
    guard let d = LongDuration.parse(s), d.seconds <= 3_650 * 86_400 else {
        throw ValidationError("\(flag) takes a duration from 1s to 3650d, like 60s, 30m, 24h or 7d (got '\(s)')")
    }
    return d.seconds
}

/// `hls-origin sign`: a signed path for `serve --auth-token`.
struct SignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Print a signed path (or URL) for a server started with --auth-token.",
        discussion: """
            The signature covers every path under --prefix (default '/': the whole origin) until the expiry, so a signed page or playlist URL is all a player needs: the origin puts the same signature on every URI its playlists list.

            Signature: base64url (no padding) of HMAC-SHA256(secret, PREFIX + "\\n" + EXPIRES), EXPIRES in Unix seconds; the query is hls_prefix=PREFIX&hls_exp=EXPIRES&hls_sig=SIGNATURE.

            Examples:
              hls-origin sign --auth-token SECRET --expires 60s /index.m3u8
              HLS_ORIGIN_AUTH_TOKEN=SECRET hls-origin sign --expires 7d --prefix /cam1/ /cam1/index.m3u8
              hls-origin sign --auth-token SECRET --expires 1h --base-url http://192.168.1.5:8080 /
            """)

    @Option(name: .customLong("auth-token"), help: ArgumentHelp("The secret of 'serve --auth-token' (or $\(AccessOptions.tokenVariable)).", valueName: "secret"))
    var authToken: String?

    @Option(help: ArgumentHelp("How long the signature is valid (60s, 30m, 24h, 7d).", valueName: "duration"))
    var expires = "24h"

    @Option(help: ArgumentHelp("What the signature covers: a directory ending in '/' (every path under it) or one exact path.", valueName: "path"))
    var prefix = "/"

    @Option(name: .customLong("base-url"), help: ArgumentHelp("Print a full URL: this scheme://host:port before the path.", valueName: "url"))
    var baseURL: String?

    @Argument(help: ArgumentHelp("Paths to sign (each under --prefix), e.g. /index.m3u8 or / for the player page.", valueName: "path"))
    var paths: [String]

    func validate() throws {
        guard !paths.isEmpty else { throw ValidationError("name at least one path to sign, e.g. /index.m3u8") }
        _ = try parseExpiry(expires, flag: "--expires")
        guard URLSigner.isValidPrefix(prefix) else { throw ValidationError(URLSigner.SigningError.invalidPrefix(prefix).description) }
    }

    func run() throws {
        guard let secret = authToken ?? ProcessInfo.processInfo.environment[AccessOptions.tokenVariable], !secret.isEmpty else {
            throw ValidationError("no secret: pass --auth-token or set $\(AccessOptions.tokenVariable)")
        }
        let signer = URLSigner(secret: secret)
        let until = Int64(Date().timeIntervalSince1970) + (try parseExpiry(expires, flag: "--expires"))
        let base = baseURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? ""
        for path in paths {
            do {
                print(base + (try signer.signedPath(path, prefix: prefix, expires: until)))
            } catch {
                throw ValidationError(error.description)
            }
        }
    }
}
