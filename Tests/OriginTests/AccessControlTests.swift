import Foundation
import HLS
import Hummingbird
import HummingbirdTesting
import Logging
import MediaCore
import Testing
@testable import Origin

/// The HTTP side of access control through the router: signatures, credentials, `Cache-Control: private`, the
/// signature carried on to the playlists' URIs, the CORS allow-list, and the mounted middleware.
@Suite struct AccessControlTests {
    static let secret = "s3cret"
    static let now: Int64 = 1_800_000_000

    static func makeServer(_ configure: (inout AccessControl) -> Void) -> (TestStream, OriginServer) {
        let stream = TestStream(windowSize: 3, targetDuration: 1)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        for i in 0..<2 { stream.publish(Fixture.liveSegment(payload: 1000 + i)) }
        var logger = Logger(label: "origin-test")
        logger.logLevel = .warning
        var config = OriginConfiguration(port: 0, firstSegmentWait: .milliseconds(100))
        var access = AccessControl()
        access.signer = URLSigner(secret: secret)
        access.bearerToken = secret
        access.now = { now }
        configure(&access)
        config.access = access
        return (stream, stream.server(configuration: config, logger: logger))
    }

    static var query: String { URLSigner(secret: secret).query(prefix: "/", expires: now + 60) }

    @Test func unsignedIsForbiddenSignedIsServedPrivately() async throws {
        let (stream, server) = Self.makeServer { _ in }
        try await server.makeApplication().test(.router) { client in
            for uri in ["/", "/index.m3u8", "/stream.m3u8", "/init.mp4", "/seg1.m4s", "/manifest.mpd", "/nope"] {
                let r = try await client.execute(uri: uri, method: .get)
                #expect(r.status == .forbidden, "\(uri)")
                #expect(r.headers[.accessControlAllowOrigin] == "*")
                let signed = try await client.execute(uri: uri + "?" + Self.query, method: .get)
                #expect(signed.status == (uri == "/nope" ? .notFound : .ok), "\(uri)")
            }
            let seg = try await client.execute(uri: "/seg1.m4s?" + Self.query, method: .get)
            #expect(seg.headers[.cacheControl] == "private, max-age=31536000, immutable")
            #expect(seg.body == stream.segmentBytes(1))
            let media = try await client.execute(uri: "/stream.m3u8?" + Self.query, method: .get)
            #expect(media.headers[.cacheControl] == "private, no-cache")
            let parsed = try MediaPlaylist.parse(String(buffer: media.body))
            #expect(parsed.segments.map(\.uri) == ["seg0.m4s?" + Self.query, "seg1.m4s?" + Self.query])
            #expect(parsed.mapURI == "init.mp4?" + Self.query)
            let mv = try MultivariantPlaylist.parse(String(buffer: try await client.execute(
                uri: "/index.m3u8?" + Self.query, method: .get).body))
            #expect(mv.variants.map(\.uri) == ["stream.m3u8?" + Self.query])
            // A HEAD and a preflight: the preflight needs nothing.
            #expect(try await client.execute(uri: "/seg1.m4s", method: .head).status == .forbidden)
            #expect(try await client.execute(uri: "/seg1.m4s", method: .options).status == .noContent)
        }
    }

    @Test func expiredTamperedAndOtherPlaylistsDoNotMix() async throws {
        let (_, server) = Self.makeServer { _ in }
        let signer = URLSigner(secret: Self.secret)
        try await server.makeApplication().test(.router) { client in
            let expired = try await client.execute(uri: "/stream.m3u8?" + signer.query(prefix: "/", expires: Self.now - 1),
                                                   method: .get)
            #expect(expired.status == .forbidden && String(buffer: expired.body).contains("expired"))
            let tampered = Self.query.replacingOccurrences(of: "hls_exp=\(Self.now + 60)", with: "hls_exp=\(Self.now + 99)")
            #expect(try await client.execute(uri: "/stream.m3u8?" + tampered, method: .get).status == .forbidden)
            // Two signatures in use: each gets a playlist with its own (the cache keys on it).
            let other = signer.query(prefix: "/", expires: Self.now + 120)
            for q in [Self.query, other, Self.query] {
                let r = try await client.execute(uri: "/stream.m3u8?" + q, method: .get)
                let uris = try MediaPlaylist.parse(String(buffer: r.body)).segments.map(\.uri)
                #expect(uris.allSatisfy { $0.hasSuffix("?" + q) })
            }
            // A blocking reload keeps the signature (hls.js appends _HLS_msn to the signed URL).
            let r = try await client.execute(uri: "/stream.m3u8?" + Self.query + "&_HLS_msn=1", method: .get)
            #expect(r.status == .ok)
        }
    }

    @Test func bearerAndBasic() async throws {
        let (_, server) = Self.makeServer { $0.basicCredential = "user:pa:ss" }
        try await server.makeApplication().test(.router) { client in
            let none = try await client.execute(uri: "/stream.m3u8", method: .get)
            #expect(none.status == .unauthorized)
            #expect(none.headers[.wwwAuthenticate] == "Basic realm=\"hls-origin\", charset=\"UTF-8\"")
            let basic = "Basic " + Data("user:pa:ss".utf8).base64EncodedString()
            let ok = try await client.execute(uri: "/stream.m3u8", method: .get, headers: [.authorization: basic])
            #expect(ok.status == .ok)
            #expect(!String(buffer: ok.body).contains("hls_sig"))
            for wrong in ["Basic " + Data("user:pa:s".utf8).base64EncodedString(), "Basic !!", "Bearer nope", "basic"] {
                let r = try await client.execute(uri: "/stream.m3u8", method: .get, headers: [.authorization: wrong])
                #expect(r.status == .unauthorized, "\(wrong)")
            }
            for bearer in ["Bearer s3cret", "bearer s3cret"] {
                #expect(try await client.execute(uri: "/stream.m3u8", method: .get,
                                                 headers: [.authorization: bearer]).status == .ok)
            }
        }
    }

    @Test func edgeChecksKeepsPublicCacheControl() async throws {
        let (_, server) = Self.makeServer { $0.edgeChecks = true }
        try await server.makeApplication().test(.router) { client in
            let seg = try await client.execute(uri: "/seg1.m4s?" + Self.query, method: .get)
            #expect(seg.headers[.cacheControl] == "public, max-age=31536000, immutable")
            #expect(try await client.execute(uri: "/seg1.m4s", method: .get).status == .forbidden)
        }
    }

    @Test func corsAllowList() async throws {
        let (_, server) = Self.makeServer { $0.corsOrigins = ["https://a.example"] }
        try await server.makeApplication().test(.router) { client in
            let listed = try await client.execute(uri: "/stream.m3u8?" + Self.query, method: .get,
                                                  headers: [.origin: "https://a.example"])
            #expect(listed.headers[.accessControlAllowOrigin] == "https://a.example")
            #expect(listed.headers[.vary] == "Origin")
            #expect(listed.headers[.accessControlExposeHeaders] != nil)
            let other = try await client.execute(uri: "/stream.m3u8?" + Self.query, method: .get,
                                                 headers: [.origin: "https://b.example"])
            #expect(other.status == .ok && other.headers[.accessControlAllowOrigin] == nil)
            #expect(other.headers[.accessControlExposeHeaders] == nil && other.headers[.vary] == "Origin")
            let pre = try await client.execute(uri: "/stream.m3u8", method: .options,
                                               headers: [.origin: "https://a.example", .accessControlRequestMethod: "GET"])
            #expect(pre.status == .noContent && pre.headers[.accessControlAllowOrigin] == "https://a.example")
            let preOther = try await client.execute(uri: "/stream.m3u8", method: .options,
                                                    headers: [.origin: "https://b.example", .accessControlRequestMethod: "GET"])
            #expect(preOther.headers[.accessControlAllowOrigin] == nil && preOther.headers[.accessControlAllowMethods] == nil)
        }
    }

    /// Mounted at `/live`, signatures name the full path the client asked for.
    @Test func mountedMiddlewareChecksTheFullPath() async throws {
        let (stream, _) = Self.makeServer { _ in }
        var config = OriginConfiguration()
        config.access.signer = URLSigner(secret: Self.secret)
        config.access.now = { Self.now }
        let router = Router()
        router.add(middleware: OriginMiddleware(registry: PresentationRegistry(root: stream.presentation), mountedAt: "/live",
                                                configuration: config))
        let live = URLSigner(secret: Self.secret).query(prefix: "/live/", expires: Self.now + 60)
        let elsewhere = URLSigner(secret: Self.secret).query(prefix: "/other/", expires: Self.now + 60)
        try await Application(router: router).test(.router) { client in
            #expect(try await client.execute(uri: "/live/stream.m3u8", method: .get).status == .forbidden)
            let r = try await client.execute(uri: "/live/stream.m3u8?" + live, method: .get)
            #expect(r.status == .ok)
            #expect(try MediaPlaylist.parse(String(buffer: r.body)).segments.first?.uri == "seg0.m4s?" + live)
            #expect(try await client.execute(uri: "/live/stream.m3u8?" + elsewhere, method: .get).status == .forbidden)
        }
    }

    @Test func privateCacheControl() {
        #expect(AccessControl.privateCacheControl("public, max-age=31536000, immutable") == "private, max-age=31536000, immutable")
        #expect(AccessControl.privateCacheControl("no-cache") == "private, no-cache")
        #expect(AccessControl.privateCacheControl("no-store") == "no-store")
        #expect(AccessControl.privateCacheControl(nil) == "private")
    }
}
