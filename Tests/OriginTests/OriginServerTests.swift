import Foundation
import HLS
import Hummingbird
import HummingbirdTesting
import Logging
import MediaCore
import Synchronization
import Testing
import MediaPresentation
@testable import Origin

@Suite struct OriginServerTests {
    static func makeServer(windowSize: Int = 3, segments: Int = 2, hlsJSPath: String? = nil,
                           wait: Duration = .milliseconds(100)) -> (TestStream, OriginServer) {
        let stream = TestStream(windowSize: windowSize, targetDuration: 1)
        if segments > 0 { stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks) }
        for i in 0..<segments { stream.publish(Fixture.liveSegment(payload: 1000 + i)) }
        var logger = Logger(label: "origin-test")
        logger.logLevel = .warning
        let server = stream.server(configuration: .init(port: 0, hlsJSPath: hlsJSPath, firstSegmentWait: wait),
                                  logger: logger)
        return (stream, server)
    }

    static func expectCORS(_ r: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r.headers[.accessControlAllowOrigin] == "*", sourceLocation: sourceLocation)
        #expect(r.headers[.accessControlExposeHeaders]?.contains("Content-Length") == true, sourceLocation: sourceLocation)
    }

    @Test func playlistsHaveTypeCacheAndCORS() async throws {
        let (stream, server) = Self.makeServer()
        try await server.makeApplication().test(.router) { client in
            for uri in ["/stream.m3u8", "/index.m3u8"] {
                let r = try await client.execute(uri: uri, method: .get)
                #expect(r.status == .ok)
                #expect(r.headers[.contentType] == "application/vnd.apple.mpegurl")
                #expect(r.headers[.cacheControl] == "no-cache")
                #expect(r.headers[.contentLength] == String(r.body.readableBytes))
                Self.expectCORS(r)
            }
            let media = try await client.execute(uri: "/stream.m3u8", method: .get)
            #expect(String(buffer: media.body) == stream.mediaPlaylistText)
            let parsed = try MediaPlaylist.parse(String(buffer: media.body))
            #expect(parsed.segments.map(\.uri) == ["seg0.m4s", "seg1.m4s"])
        }
    }

    @Test func multivariantAttributes() async throws {
        let (stream, server) = Self.makeServer()
        try await server.makeApplication().test(.router) { client in
            let r = try await client.execute(uri: "/index.m3u8", method: .get)
            let mv = try MultivariantPlaylist.parse(String(buffer: r.body))
            let v = try #require(mv.variants.first)
            #expect(mv.variants.count == 1 && mv.independentSegments)
            #expect(v.codecs == "avc1.64001f,mp4a.40.2")
            #expect(v.resolution == .init(width: 1280, height: 720))
            #expect(v.frameRate == 30)
            let sizes = try [0, 1].map { try #require(stream.segmentBytes($0)).readableBytes }
            #expect(v.bandwidth == sizes.max()! * 8)
            #expect(v.averageBandwidth == (sizes[0] + sizes[1]) * 8 / 2)
            #expect(v.uri == "stream.m3u8")
        }
    }

    @Test func segmentsAndInit() async throws {
        let (stream, server) = Self.makeServer()
        try await server.makeApplication().test(.router) { client in
            let seg = try await client.execute(uri: "/seg1.m4s", method: .get)
            #expect(seg.status == .ok)
            #expect(seg.headers[.contentType] == "video/iso.segment")
            #expect(seg.headers[.cacheControl] == "public, max-age=31536000, immutable")
            #expect(seg.headers[.contentLength] == String(seg.body.readableBytes))
            #expect(seg.body == stream.segmentBytes(1))
            Self.expectCORS(seg)

            let ini = try await client.execute(uri: "/init.mp4", method: .get)
            #expect(ini.status == .ok)
            #expect(ini.headers[.contentType] == "video/mp4")
            #expect(ini.headers[.cacheControl] == "public, max-age=31536000, immutable")
            #expect(Array(ini.body.readableBytesView) == Fixture.initBytes)
            Self.expectCORS(ini)

            for uri in ["/seg2.m4s", "/seg01.m4s", "/seg-1.m4s", "/seg.m4s", "/seg99999999999999999999.m4s",
                        "/init1.mp4", "/init0.mp4", "/nope", "/hls.mjs", "/seg1.m4s.bak"] {
                let r = try await client.execute(uri: uri, method: .get)
                #expect(r.status == .notFound, "\(uri)")
                Self.expectCORS(r)
            }
        }
    }

    @Test func headReturnsHeadersOnly() async throws {
        let (_, server) = Self.makeServer()
        try await server.makeApplication().test(.router) { client in
            for uri in ["/seg0.m4s", "/stream.m3u8", "/", "/init.mp4"] {
                let get = try await client.execute(uri: uri, method: .get)
                let head = try await client.execute(uri: uri, method: .head)
                #expect(head.status == .ok)
                #expect(head.body.readableBytes == 0)
                #expect(head.headers[.contentLength] == String(get.body.readableBytes))
                #expect(head.headers[.contentType] == get.headers[.contentType])
                Self.expectCORS(head)
            }
        }
    }

    @Test func optionsPreflightIs204WithCORSEverywhere() async throws {
        let (_, server) = Self.makeServer()
        try await server.makeApplication().test(.router) { client in
            for uri in ["/seg0.m4s", "/stream.m3u8", "/does-not-exist"] {
                let r = try await client.execute(uri: uri, method: .options,
                                                 headers: [.origin: "http://127.0.0.1:9999",
                                                           .accessControlRequestMethod: "GET",
                                                           .accessControlRequestHeaders: "range"])
                #expect(r.status == .noContent)
                Self.expectCORS(r)
                #expect(r.headers[.accessControlAllowMethods] == "GET, HEAD, OPTIONS")
                #expect(r.headers[.accessControlAllowHeaders] == "range")
            }
        }
    }

    /// An evicted segment answers 200 for its duration plus the playlist's (RFC 8216 §6.2.2), then 404 (with CORS).
    @Test func segmentsExpireAfterRetention() async throws {
        let now = Atomic<Int64>(0)
        let stream = TestStream(windowSize: 2, clock: { now.load(ordering: .relaxed) })
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        for i in 0..<3 { stream.publish(Fixture.liveSegment(payload: 1000 + i)) }
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let server = stream.server(configuration: .init(port: 0), logger: logger)
        try await server.makeApplication().test(.router) { client in
            // seg0 was evicted but is still retained.
            #expect(try await client.execute(uri: "/seg0.m4s", method: .get).status == .ok)
            let playlist = try MediaPlaylist.parse(String(buffer: try await client.execute(uri: "/stream.m3u8", method: .get).body))
            #expect(playlist.mediaSequence == 1)
            now.store(3_000, ordering: .relaxed)       // 1 s segment + 2 s playlist: must still be there
            stream.publish(Fixture.liveSegment())
            #expect(try await client.execute(uri: "/seg0.m4s", method: .get).status == .ok)
            now.store(60_000, ordering: .relaxed)
            for _ in 0..<2 { stream.publish(Fixture.liveSegment()) }
            let r = try await client.execute(uri: "/seg0.m4s", method: .get)
            #expect(r.status == .notFound)
            Self.expectCORS(r)
            #expect(try await client.execute(uri: "/seg5.m4s", method: .get).status == .ok)
        }
    }

    @Test func playlistBeforeFirstSegmentIs503WithRetryAfter() async throws {
        let (stream, server) = Self.makeServer(segments: 0, wait: .milliseconds(100))
        try await server.makeApplication().test(.router) { client in
            for uri in ["/stream.m3u8", "/index.m3u8"] {
                let start = ContinuousClock.now
                let r = try await client.execute(uri: uri, method: .get)
                #expect(r.status == .serviceUnavailable)
                #expect(r.headers[.retryAfter] == "1")
                #expect(ContinuousClock.now - start >= .milliseconds(90))
                Self.expectCORS(r)
            }
            #expect(try await client.execute(uri: "/init.mp4", method: .get).status == .notFound)
            // A request that is waiting is answered as soon as the first segment arrives.
            async let waiting = client.execute(uri: "/stream.m3u8", method: .get)
            stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
            stream.publish(Fixture.liveSegment())
            #expect(try await waiting.status == .ok)
        }
    }

    @Test func hostileRequestsGet4xx() async throws {
        let (_, server) = Self.makeServer()
        try await server.makeApplication().test(.router) { client in
            let long = "/" + String(repeating: "a", count: 10_000)
            let cases: [(String, HTTPRequest.Method, HTTPResponse.Status)] = [
                (long, .get, .uriTooLong),
                ("/../etc/passwd", .get, .badRequest),
                ("/seg0.m4s/..", .get, .badRequest),
                ("/seg0.m4s", .post, .methodNotAllowed),
                ("/stream.m3u8", .delete, .methodNotAllowed),
                ("/stream.m3u8", .put, .methodNotAllowed),
            ]
            for (uri, method, status) in cases {
                let r = try await client.execute(uri: uri, method: method, body: ByteBuffer(string: "x"))
                #expect(r.status == status, "\(method) \(uri.prefix(40))")
                Self.expectCORS(r)
            }
            let r = try await client.execute(uri: "/seg0.m4s", method: .post)
            #expect(r.headers[.allow] == "GET, HEAD, OPTIONS")
        }
    }

    @Test func playerPageUsesLocalHlsJSWhenConfigured() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("origin-test-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let js = dir.appendingPathComponent("hls.mjs")
        try Data("export default class Hls {}\n".utf8).write(to: js)

        let (_, local) = Self.makeServer(hlsJSPath: js.path)
        try await local.makeApplication().test(.router) { client in
            let page = try await client.execute(uri: "/?lowLatency=1", method: .get)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            let html = String(buffer: page.body)
            #expect(html.contains("<script type=\"module\">"))
            #expect(html.contains("const HLS_JS_URL = \"./hls.mjs\";"))
            #expect(html.contains("Hls.isSupported()"))
            let hlsCheck = try #require(html.range(of: "Hls.isSupported()"))
            let nativeCheck = try #require(html.range(of: "canPlayType('application/vnd.apple.mpegurl')"))
            #expect(hlsCheck.lowerBound < nativeCheck.lowerBound)
            #expect(html.contains("window.hls = hls"))
            #expect(html.contains("lowLatencyMode: lowLatency"))
            Self.expectCORS(page)
            let mjs = try await client.execute(uri: "/hls.mjs", method: .get)
            #expect(mjs.status == .ok)
            #expect(mjs.headers[.contentType]?.hasPrefix("text/javascript") == true)
            #expect(String(buffer: mjs.body) == "export default class Hls {}\n")
        }
        let (_, cdn) = Self.makeServer(hlsJSPath: dir.appendingPathComponent("missing.mjs").path)
        try await cdn.makeApplication().test(.router) { client in
            let html = String(buffer: try await client.execute(uri: "/", method: .get).body)
            #expect(html.contains("const HLS_JS_URL = \"https://cdn.jsdelivr.net/npm/hls.js@1.6.15/dist/hls.mjs\";"))
            #expect(try await client.execute(uri: "/hls.mjs", method: .get).status == .notFound)
        }
    }

    @Test func statsCountRequestsAndBytes() async throws {
        let (stream, server) = Self.makeServer()
        try await server.makeApplication().test(.router) { client in
            _ = try await client.execute(uri: "/seg0.m4s", method: .get)
            _ = try await client.execute(uri: "/seg0.m4s", method: .head)
            _ = try await client.execute(uri: "/nope", method: .get)
        }
        #expect(server.stats.requests == 3)
        let seg = try #require(stream.segmentBytes(0)).readableBytes
        #expect(server.stats.bytesSent == seg + "Not Found\n".utf8.count)
    }

    @Test func liveServerServesAndStopsOnCancel() async throws {
        let (_, server) = Self.makeServer()
        // Over a real socket (HummingbirdTesting .live): Date header, Content-Length, viewer counting.
        try await server.makeApplication().test(.live) { client in
            let r = try await client.execute(uri: "/seg0.m4s", method: .get)
            #expect(r.status == .ok)
            #expect(r.headers[.date] != nil)
            #expect(r.headers[.contentLength] == String(r.body.readableBytes))
            let head = try await client.execute(uri: "/seg0.m4s", method: .head)
            #expect(head.headers[.contentLength] == String(r.body.readableBytes))
            #expect(head.body.readableBytes == 0)
        }
        #expect(server.stats.activeViewers == 1)

        // run() binds, reports the port, and returns when its task is cancelled.
        let (started, continuation) = AsyncStream<Int>.makeStream()
        let task = Task { try await server.run(onStarted: { port in continuation.yield(port) }) }
        var iterator = started.makeAsyncIterator()
        let port = try #require(await iterator.next())
        #expect(port > 0)
        task.cancel()
        try await task.value
    }
}
