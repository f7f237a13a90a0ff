import Logging
import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import Testing
@testable import Origin

/// `H2FrameFastPath` on an `EmbeddedChannel`: which `HEADERS` it answers with frames of its own (and what frames),
/// what it hands on to the stream multiplexer, and `--send-timeout` for what it wrote. Over a real TLS connection
/// with h2load, curl and hls.js: `Tests/e2e/test_tls.py`, `test_h2_attacks.py`, `scripts/bench --only serving`.
@Suite struct H2FrameFastPathTests {
    static func headers(_ path: String, method: String = "GET", _ extra: [(String, String)] = [],
                        endStream: Bool = true) -> HTTP2Frame.FramePayload {
        var h = HPACKHeaders([(":method", method), (":scheme", "https"), (":authority", "a"), (":path", path)])
        for (n, v) in extra { h.add(name: n, value: v) }
        return .headers(.init(headers: h, endStream: endStream))
    }

    /// A connection whose fast path serves a live stream with one 1-s segment (2,000 bytes of media) and a playlist.
    static func connection(sendTimeout: TimeAmount = .seconds(3), zeroWindow: Bool = false) throws -> (EmbeddedChannel, TestStream) {
        let stream = TestStream(windowSize: 6, targetDuration: 1)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        stream.publish(Fixture.liveSegment(payload: 200_000))
        let server = stream.server(configuration: .init(port: 0), logger: Logger(label: "test"))
        let fastPath = FastPath(responder: server.responder, logLevel: .info)
        let channel = EmbeddedChannel(handler: H2FrameFastPath(fastPath, sendTimeout: sendTimeout))
        if zeroWindow { try channel.pipeline.syncOperations.addHandler(ZeroWindow(), position: .first) }
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, stream)
    }

    static func outbound(_ channel: EmbeddedChannel) throws -> [HTTP2Frame] {
        var frames: [HTTP2Frame] = []
        while let f = try channel.readOutbound(as: HTTP2Frame.self) { frames.append(f) }
        return frames
    }

    @Test func aSegmentInMemoryIsAnsweredWithFramesOfItsOwn() throws {
        let (channel, stream) = try Self.connection()
        try channel.writeInbound(HTTP2Frame(streamID: 1, payload: Self.headers("/seg0.m4s")))
        channel.pipeline.fireChannelReadComplete()
        #expect(try channel.readInbound(as: HTTP2Frame.self) == nil, "not handed on")
        let frames = try Self.outbound(channel)
        guard case .headers(let head) = frames.first?.payload else { Issue.record("no HEADERS: \(frames)"); return }
        #expect(head.headers.first(name: ":status") == "200" && !head.endStream)
        #expect(head.headers.first(name: "content-type") == "video/iso.segment")
        #expect(head.headers["date"].count == 1)
        #expect(!head.headers.contains { $0.name.utf8.contains { (65...90).contains($0) } }, "names lower-case")
        var body = ByteBuffer()
        var ends: [Bool] = []
        for f in frames.dropFirst() {
            guard case .data(let d) = f.payload, case .byteBuffer(var b) = d.data, f.streamID == 1 else {
                Issue.record("not DATA: \(f)")
                return
            }
            #expect(b.readableBytes <= H2FrameFastPath.sliceBytes)
            body.writeBuffer(&b)
            ends.append(d.endStream)
        }
        #expect(body == stream.segmentBytes(0))
        #expect(ends.count > 1 && ends.last == true && !ends.dropLast().contains(true), "END_STREAM on the last only")
        #expect(head.headers.first(name: "content-length") == "\(body.readableBytes)")
    }

    @Test func headGetsTheHeadersAloneAndEndsTheStream() throws {
        let (channel, _) = try Self.connection()
        try channel.writeInbound(HTTP2Frame(streamID: 3, payload: Self.headers("/stream.m3u8", method: "HEAD")))
        channel.pipeline.fireChannelReadComplete()
        let frames = try Self.outbound(channel)
        #expect(frames.count == 1)
        guard case .headers(let head) = frames.first?.payload else { Issue.record("\(frames)"); return }
        #expect(head.endStream && head.headers.first(name: "content-type") == "application/vnd.apple.mpegurl")
    }

    @Test func everythingElseGoesOnToTheMultiplexer() throws {
        let (channel, _) = try Self.connection()
        let handedOn: [HTTP2Frame.FramePayload] = [
            Self.headers("/stream.m3u8?_HLS_msn=9"),  // a delivery directive: may wait
            Self.headers("/seg%30.m4s"),
            Self.headers("/seg0.m4s", [("if-none-match", "\"x\"")]),
            Self.headers("/seg0.m4s", [("range", "bytes=0-9")]),
            Self.headers("/seg0.m4s", endStream: false),  // a body follows
            Self.headers("/seg0.m4s", method: "POST"),
            Self.headers("/seg99.m4s"),  // not in memory (yet)
            Self.headers("/nope/index.m3u8"),
        ]
        for (k, payload) in handedOn.enumerated() {
            let id = HTTP2StreamID(2 * k + 1)
            try channel.writeInbound(HTTP2Frame(streamID: id, payload: payload))
            let passed = try channel.readInbound(as: HTTP2Frame.self)
            #expect(passed?.streamID == id, "\(payload)")
        }
        #expect(try Self.outbound(channel).isEmpty)
        // A stream the fast path answered: its later frames are its own too (the multiplexer knows no such stream).
        try channel.writeInbound(HTTP2Frame(streamID: 101, payload: Self.headers("/seg0.m4s")))
        try channel.writeInbound(HTTP2Frame(streamID: 101, payload: .windowUpdate(windowSizeIncrement: 10)))
        #expect(try channel.readInbound(as: HTTP2Frame.self) == nil)
        channel.pipeline.fireUserInboundEventTriggered(StreamClosedEvent(streamID: 101, reason: nil))
        try channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: 1), ack: false)))
        #expect(try channel.readInbound(as: HTTP2Frame.self)?.streamID == .rootStream)
    }

    @Test func whileTheConnectionCannotTakeMoreTheFullPathWaitsInstead() throws {
        let (channel, _) = try Self.connection()
        channel.isWritable = false
        try channel.writeInbound(HTTP2Frame(streamID: 1, payload: Self.headers("/seg0.m4s")))
        #expect(try channel.readInbound(as: HTTP2Frame.self)?.streamID == 1)
    }

    @Test func responsesThatCannotMoveForTheSendTimeoutCloseTheConnection() throws {
        let (channel, _) = try Self.connection(zeroWindow: true)
        try channel.writeInbound(HTTP2Frame(streamID: 1, payload: Self.headers("/seg0.m4s")))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(2900))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        let frames = try Self.outbound(channel)
        let goAway = frames.last { if case .goAway = $0.payload { true } else { false } }
        guard case .goAway(_, let code, _) = goAway?.payload else { Issue.record("no GOAWAY: \(frames.count)"); return }
        #expect(code == .enhanceYourCalm)
        #expect(!channel.isActive)
    }

    @Test func responsesThatMoveKeepTheConnection() throws {
        let (channel, _) = try Self.connection()
        for k in 0..<5 {
            try channel.writeInbound(HTTP2Frame(streamID: HTTP2StreamID(2 * k + 1), payload: Self.headers("/seg0.m4s")))
            channel.pipeline.fireChannelReadComplete()  // flushed: every write completes
            channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        }
        #expect(channel.isActive)
        #expect(try Self.outbound(channel).allSatisfy { if case .goAway = $0.payload { false } else { true } })
    }

    @Test func aMalformedRequestIsResetAndGoesNoFurther() throws {
        let (channel, _) = try Self.connection()
        // Stream 1: an upper-case field name (RFC 9113 §8.2.1). Stream 3: a valid request with a body, whose trailers
        // carry a pseudo-header field (§8.1). Stream 5: a valid request, answered.
        try channel.writeInbound(HTTP2Frame(streamID: 1, payload: Self.headers("/seg0.m4s", [("X-Upper", "1")])))
        try channel.writeInbound(HTTP2Frame(streamID: 3, payload: Self.headers("/upload", method: "POST", endStream: false)))
        #expect(try channel.readInbound(as: HTTP2Frame.self)?.streamID == 3, "the request with a body is handed on")
        try channel.writeInbound(HTTP2Frame(streamID: 3, payload: .headers(.init(headers: HPACKHeaders([(":path", "/")]),
                                                                                  endStream: true))))
        try channel.writeInbound(HTTP2Frame(streamID: 1, payload: .windowUpdate(windowSizeIncrement: 1)))
        #expect(try channel.readInbound(as: HTTP2Frame.self) == nil, "neither the malformed blocks nor what follows")
        try channel.writeInbound(HTTP2Frame(streamID: 5, payload: Self.headers("/seg0.m4s")))
        channel.pipeline.fireChannelReadComplete()
        let frames = try Self.outbound(channel)
        let resets = frames.compactMap { f -> HTTP2StreamID? in
            if case .rstStream(let code) = f.payload, code == .protocolError { return f.streamID }
            return nil
        }
        #expect(resets == [1, 3])
        #expect(frames.contains { if case .headers = $0.payload { return $0.streamID == 5 } else { return false } })
    }

    @Test func manyMalformedRequestsCloseTheConnection() throws {
        let (channel, _) = try Self.connection()
        for i in 0...H2FrameFastPath.maxMalformed {
            try channel.writeInbound(HTTP2Frame(streamID: HTTP2StreamID(2 * i + 1), payload: Self.headers("/x", [("connection", "close")])))
        }
        let frames = try Self.outbound(channel)
        let goAway = frames.compactMap { f -> HTTP2ErrorCode? in
            if case .goAway(_, let code, _) = f.payload { return code }
            return nil
        }
        #expect(goAway == [.enhanceYourCalm])
        #expect(frames.filter { if case .rstStream = $0.payload { return true } else { return false } }.count == H2FrameFastPath.maxMalformed)
    }

    @Test func plainRequestRules() {
        func plain(_ fields: [(String, String)]) -> H2FrameFastPath.PlainRequest? {
            H2FrameFastPath.plainRequest(HPACKHeaders(fields))
        }
        let base = [(":method", "GET"), (":scheme", "https"), (":authority", "a"), (":path", "/s/seg1.m4s")]
        #expect(plain(base) == .init(path: "/s/seg1.m4s", headOnly: false))
        #expect(plain(base + [("user-agent", "x"), ("accept", "*/*")]) != nil)
        #expect(plain([(":method", "HEAD"), (":path", "/a.m3u8")])?.headOnly == true)
        #expect(plain([(":method", "GET")]) == nil)  // no :path
        #expect(plain([(":method", "GET"), (":path", "*")]) == nil)
        #expect(plain([(":method", "CONNECT"), (":protocol", "websocket"), (":path", "/a")]) == nil)
        for field in ["if-modified-since", "if-none-match", "range", "content-length", "expect"] {
            #expect(plain(base + [(field, "1")]) == nil, "\(field)")
        }
    }
}

/// What swift-nio-http2's flow control does with a stream's frames while the client's window is zero: holds them
/// (their writes do not complete); frames of the connection itself (GOAWAY) go out.
final class ZeroWindow: ChannelOutboundHandler {
    typealias OutboundIn = HTTP2Frame
    private var held: [EventLoopPromise<Void>?] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if unwrapOutboundIn(data).streamID == .rootStream {
            context.write(data, promise: promise)
        } else {
            held.append(promise)
        }
    }
}
