import Hummingbird
import HummingbirdTesting
import Logging
import MediaCore
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
@testable import Origin

/// The limits against hostile clients: the held-request budget, delivery directives, and `ConnectionGuard` on an
/// `EmbeddedChannel` with the real HTTP/1 parser in front of it. (Timeouts and the connection limit are exercised
/// against the real binary in `Tests/e2e/test_hostile_http.py`.)
@Suite struct HostileClientTests {
    // MARK: Held LL-HLS requests

    @Test func budgetBoundsEachClientAndTheTotal() throws {
        let budget = BlockingBudget(perClient: 2, total: 3)
        let a = try SocketAddress(ipAddress: "10.0.0.1", port: 1000)
        let a2 = try SocketAddress(ipAddress: "10.0.0.1", port: 2000)  // same client, another connection
        let c = try SocketAddress(ipAddress: "2001:db8::1", port: 1000)
        #expect(budget.acquire(a) == .admitted)
        #expect(budget.acquire(a2) == .admitted)
        #expect(budget.acquire(a) == .clientOverLimit)
        #expect(budget.acquire(c) == .admitted)
        #expect(budget.acquire(c) == .serverOverLimit)
        budget.release(a)
        #expect(budget.acquire(c) == .admitted)
        budget.release(a2)
        budget.release(c)
        budget.release(c)
        #expect(budget.held == 0)
        #expect(budget.acquire(a) == .admitted)
    }

    @Test func heldRequestsBeyondTheTotalAre503() async throws {
        let stream = LowLatencyTests.makeStream(segments: 2)  // next msn 2
        var config = OriginConfiguration(port: 0, firstSegmentWait: .milliseconds(100),
                                         blockingReloadTimeout: .seconds(4), partWait: .milliseconds(600))
        config.limits.maxBlocked = 2
        var logger = Logger(label: "hostile-test")
        logger.logLevel = .warning
        let server = stream.server(configuration: config, logger: logger)
        try await server.makeApplication().test(.router) { client in
            async let first = client.execute(uri: "/stream.m3u8?_HLS_msn=3", method: .get)
            async let second = client.execute(uri: "/stream.m3u8?_HLS_msn=3", method: .get)
            // Time for the two to be held (the suite runs tests in parallel on a shared CPU: generous).
            try await Task.sleep(for: .seconds(1))
            let third = try await client.execute(uri: "/stream.m3u8?_HLS_msn=3", method: .get)
            #expect(third.status == .serviceUnavailable)
            #expect(third.headers[.retryAfter] == "1")
            // Refused by the budget, not held: a held request ends, after the reload timeout, with another 503 body.
            #expect(String(buffer: third.body).contains("Too many waiting requests"))
            // the two held ones time out as usual (503 after the reload timeout), which frees their slots
            #expect(try await first.status == .serviceUnavailable)
            #expect(try await second.status == .serviceUnavailable)
            LowLatencyTests.publishSegment(stream)
            LowLatencyTests.publishSegment(stream)
            #expect(try await client.execute(uri: "/stream.m3u8?_HLS_msn=3", method: .get).status == .ok)
        }
    }

    @Test func repeatedAndFarAheadDirectivesAre400() async throws {
        let stream = LowLatencyTests.makeStream(segments: 2)  // last msn 1, next 2, no part of 2 yet
        let server = LowLatencyTests.makeServer(stream, reload: .milliseconds(100))
        try await server.makeApplication().test(.router) { client in
            // Advance Part Limit at PART-TARGET 0.334 s: 3 / 0.334 -> 8 parts; a segment counts 3 parts.
            for q in ["_HLS_msn=1&_HLS_msn=1", "_HLS_msn=2&_HLS_part=0&_HLS_part=0", "_HLS_skip=YES&_HLS_skip=YES",
                      "_HLS_msn=2&_HLS_part=20", "_HLS_msn=3&_HLS_part=9", "_HLS_msn=1&_HLS_part=2147483648"] {
                let r = try await client.execute(uri: "/stream.m3u8?" + q, method: .get)
                #expect(r.status == .badRequest, "\(q)")
                #expect(r.headers[.accessControlAllowOrigin] == "*")
            }
            // within the limit: held, and here timed out (503), not refused
            for q in ["_HLS_msn=3&_HLS_part=1", "_HLS_msn=2&_HLS_part=7"] {
                #expect(try await client.execute(uri: "/stream.m3u8?" + q, method: .get).status == .serviceUnavailable, "\(q)")
            }
        }
    }

    // MARK: ConnectionGuard

    static func channel(_ limits: ConnectionLimits = .init()) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try OriginHTTP1Channel.addGuardedHTTP1(to: channel.pipeline.syncOperations, limits: limits)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    /// Everything the channel wrote, as text.
    static func written(_ channel: EmbeddedChannel) throws -> String {
        var out = ""
        while let data = try channel.readOutbound(as: IOData.self) {
            if case .byteBuffer(let b) = data { out += String(buffer: b) }
        }
        return out
    }

    static func send(_ text: String, _ channel: EmbeddedChannel) throws {
        try channel.writeInbound(ByteBuffer(string: text))
    }

    @Test func aLargeHeaderBlockIs431WithCORS() throws {
        var limits = ConnectionLimits()
        limits.maxHeaderBytes = 4096
        let channel = try Self.channel(limits)
        try Self.send("GET /stream.m3u8 HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "v", count: 5000) + "\r\n\r\n",
                      channel)
        let out = try Self.written(channel)
        #expect(out.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))
        #expect(out.lowercased().contains("access-control-allow-origin: *"))
        #expect(out.lowercased().contains("connection: close"))
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == nil)
        #expect(!channel.isActive)
    }

    @Test func aLongRequestLineIs414() throws {
        var limits = ConnectionLimits()
        limits.maxHeaderBytes = 4096
        // the line arrives in pieces, the last one with the line end: still the request line that is too long
        let channel = try Self.channel(limits)
        let target = "/" + String(repeating: "a", count: 6000)
        try Self.send("GET " + target.prefix(3000), channel)
        try? Self.send(target.dropFirst(3000) + " HTTP/1.1\r\nHost: x\r\n\r\n", channel)
        #expect(try Self.written(channel).hasPrefix("HTTP/1.1 414 URI Too Long\r\n"))
    }

    @Test func parserErrorsAre400AndUnknownMethods501() throws {
        for (request, status) in [("GET / HTXP/1.1\r\n\r\n", "400 Bad Request"),
                                  ("GET / HTTP/1.1\r\nBad Header\r\n\r\n", "400 Bad Request"),
                                  ("GET / HTTP/1.1\r\n\r\n", "400 Bad Request"),  // no Host (RFC 9112 §3.2)
                                  ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "400 Bad Request"),
                                  ("FOO / HTTP/1.1\r\nHost: x\r\n\r\n", "501 Not Implemented")] {
            let channel = try Self.channel()
            try? Self.send(request, channel)
            let out = try Self.written(channel)
            #expect(out.hasPrefix("HTTP/1.1 \(status)\r\n"), "\(request)")
            #expect(out.lowercased().contains("access-control-allow-origin: *"), "\(request)")
            if status.hasPrefix("501") { #expect(out.lowercased().contains("allow: get, head, options")) }
        }
    }

    @Test func pipelinedRequestsWaitForTheResponseBeforeThem() throws {
        let channel = try Self.channel()
        try Self.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\n\r\n",
                      channel)
        func nextURI() throws -> String? {
            while let part = try channel.readInbound(as: HTTPServerRequestPart.self) {
                if case .head(let h) = part { return h.uri }
            }
            return nil
        }
        func respond() throws {
            try channel.writeOutbound(HTTPServerResponsePart.head(.init(version: .http1_1, status: .ok,
                                                                        headers: ["content-length": "0"])))
            try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        }
        #expect(try nextURI() == "/a")
        #expect(try nextURI() == nil, "/b waits for the response to /a")
        try respond()
        #expect(try nextURI() == "/b")
        #expect(try nextURI() == nil)
        try respond()
        #expect(try nextURI() == "/c")
        try respond()
        #expect(try Self.written(channel).components(separatedBy: "HTTP/1.1 200 OK").count == 4)
    }

    @Test func http10WithoutKeepAliveAsksForClose() throws {
        let channel = try Self.channel()
        try Self.send("GET /stream.m3u8 HTTP/1.0\r\n\r\n", channel)
        guard case .head(let head) = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no head")
            return
        }
        #expect(head.headers["connection"] == ["close"])
        let kept = try Self.channel()
        try Self.send("GET /stream.m3u8 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", kept)
        guard case .head(let keptHead) = try kept.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no head")
            return
        }
        #expect(keptHead.headers["connection"] == ["keep-alive"])
    }
}
