import Foundation
import Hummingbird
import HummingbirdTesting
import MediaPresentation
import Synchronization
import Testing
@testable import Origin

/// `/NAME/thumbnail.jpg` and the stream list's thumbnails and viewer counts.
@Suite struct ThumbnailRouteTests {
    /// A source whose picture the test sets (or makes fail).
    final class Source: ThumbnailSource {
        enum State { case none, jpeg([UInt8]), failing }
        let state = Mutex(State.none)
        struct Broken: Error {}
        func jpeg() throws -> [UInt8]? {
            switch state.withLock({ $0 }) {
            case .none: return nil
            case .jpeg(let b): return b
            case .failing: throw Broken()
            }
        }
    }

    @Test func servesTheSourcesPictureWithValidators() async throws {
        let registry = PresentationRegistry()
        let cam = TestStream(), lobby = TestStream()
        registry.register(cam.presentation, at: "cam1")
        registry.register(lobby.presentation, at: "lobby")
        let source = Source()
        registry.setThumbnails(source, for: "cam1")
        cam.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        cam.publish(Fixture.liveSegment())
        let server = MetricsTests.server(registry: registry, metrics: OriginMetrics())
        try await server.makeApplication().test(.live) { client in
            // No keyframe yet: 503 with Retry-After (a list page retries), not an error page forever.
            var r = try await client.execute(uri: "/cam1/thumbnail.jpg", method: .get)
            #expect(r.status == .serviceUnavailable && r.headers[.retryAfter] == "1")
            let picture: [UInt8] = [0xFF, 0xD8, 1, 2, 3, 0xFF, 0xD9]
            source.state.withLock { $0 = .jpeg(picture) }
            r = try await client.execute(uri: "/cam1/thumbnail.jpg", method: .get)
            #expect(r.status == .ok && Array(buffer: r.body) == picture)
            #expect(r.headers[.contentType] == "image/jpeg" && r.headers[.cacheControl] == "max-age=2")
            let tag = try #require(r.headers[.eTag])
            r = try await client.execute(uri: "/cam1/thumbnail.jpg", method: .get, headers: [.ifNoneMatch: tag])
            #expect(r.status == .notModified && r.body.readableBytes == 0)
            // A query (the list page's cache buster) changes nothing.
            r = try await client.execute(uri: "/cam1/thumbnail.jpg?v=7", method: .get)
            #expect(r.status == .ok && Array(buffer: r.body) == picture)
            // A stream without a source, and one that does not exist: 404. A failing source: 503, and the origin goes on.
            #expect(try await client.execute(uri: "/lobby/thumbnail.jpg", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/nope/thumbnail.jpg", method: .get).status == .notFound)
            source.state.withLock { $0 = .failing }
            #expect(try await client.execute(uri: "/cam1/thumbnail.jpg", method: .get).status == .serviceUnavailable)
            #expect(try await client.execute(uri: "/cam1/stream.m3u8", method: .get).status == .ok)
            // The list and streams.json name each stream's thumbnail and count its viewers (the playlist fetch above).
            let json = try JSONSerialization.jsonObject(with: Data(buffer: try await client.execute(uri: "/streams.json", method: .get).body))
            let streams = try #require((json as? [String: Any])?["streams"] as? [[String: Any]])
            let byName = Dictionary(uniqueKeysWithValues: streams.map { ($0["name"] as? String ?? "", $0) })
            #expect(byName["cam1"]?["thumbnail"] as? String == "/cam1/thumbnail.jpg")
            #expect(byName["cam1"]?["viewers"] as? Int == 1 && byName["lobby"]?["viewers"] as? Int == 0)
            let page = String(buffer: try await client.execute(uri: "/", method: .get).body)
            #expect(page.contains(#"<img class="thumb" alt="" src="/cam1/thumbnail.jpg?v=1">"#))
        }
    }
}
