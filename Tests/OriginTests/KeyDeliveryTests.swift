import Foundation
import HLS
import Hummingbird
import HummingbirdTesting
import Logging
import MediaCore
import MediaPresentation
import Testing
@testable import Origin

/// `/keys/<N>.key`: the route, the 16 bytes with `private, no-store`, access control like any object of the stream,
/// the key URI in the playlist with the request's signature, and nothing for a key no listed segment uses.
@Suite struct KeyDeliveryTests {
    static let key = ContentKey(id: 0, bytes: [UInt8](200..<216))

    static func makeServer(access: Bool) -> OriginServer {
        let stream = TestStream(windowSize: 3, targetDuration: 1)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        for n in 0..<2 {
            var info = SegmentInfo(sequence: UInt64(n), startTime: .seconds(Int64(n)), duration: .seconds(1), byteCount: 32)
            info.encryption = SegmentEncryption(key: key, iv: [UInt8](repeating: 0, count: 15) + [UInt8(n)])
            try! stream.presentation.consume(.segment(rendition: 0, info, bytes: [UInt8](repeating: 7, count: 32)))
        }
        var logger = Logger(label: "origin-test")
        logger.logLevel = .warning
        var config = OriginConfiguration(port: 0, firstSegmentWait: .milliseconds(100))
        if access {
            var a = AccessControl()
            a.signer = URLSigner(secret: AccessControlTests.secret)
            a.bearerToken = AccessControlTests.secret
            a.now = { AccessControlTests.now }
            config.access = a
        }
        return stream.server(configuration: config, logger: logger)
    }

    @Test func route() {
        let registry = PresentationRegistry(root: TestStream().presentation)
        guard case .stream(_, _, .key(7)) = Route.resolve("/keys/7.key", in: registry) else {
            Issue.record("keys/7.key is no key route")
            return
        }
        for other in ["/keys/07.key", "/keys/7.bin", "/keys/.key", "/key/7.key"] {
            if case .stream(_, _, .key) = Route.resolve(Substring(other), in: registry) { Issue.record("\(other)") }
        }
        #expect(Route.resolve("/keys/7.key", in: registry).labels.kind == "key")
    }

    @Test func servedOnlyToRequestsThatPassAccessControl() async throws {
        let query = AccessControlTests.query
        try await Self.makeServer(access: true).makeApplication().test(.router) { client in
            #expect(try await client.execute(uri: "/keys/0.key", method: .get).status == .forbidden)
            let signed = try await client.execute(uri: "/keys/0.key?" + query, method: .get)
            #expect(signed.status == .ok)
            #expect(Array(buffer: signed.body) == Self.key.bytes)
            #expect(signed.headers[.contentType] == "application/octet-stream")
            #expect(signed.headers[.cacheControl] == "private, no-store")
            let bearer = try await client.execute(uri: "/keys/0.key", method: .get,
                                                  headers: [.authorization: "Bearer " + AccessControlTests.secret])
            #expect(bearer.status == .ok)
            // The playlist lists the key with the request's signature, before each segment.
            let media = try await client.execute(uri: "/stream.m3u8?" + query, method: .get)
            let parsed = try MediaPlaylist.parse(String(buffer: media.body))
            #expect(parsed.segments.map { $0.key?.uri } == ["keys/0.key?" + query, "keys/0.key?" + query])
            #expect(parsed.segments.map { $0.key?.iv?.last } == [0, 1])
            // No listed segment uses key 1: nothing to give.
            #expect(try await client.execute(uri: "/keys/1.key?" + query, method: .get).status == .notFound)
            // An encrypted stream has no DASH manifest.
            #expect(try await client.execute(uri: "/manifest.mpd?" + query, method: .get).status == .notFound)
        }
    }

    @Test func openWithoutAccessControl() async throws {
        try await Self.makeServer(access: false).makeApplication().test(.router) { client in
            let r = try await client.execute(uri: "/keys/0.key", method: .get)
            #expect(r.status == .ok && Array(buffer: r.body) == Self.key.bytes)
            #expect(r.headers[.cacheControl] == "private, no-store")
        }
    }
}
