import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Synchronization

/// What one client may cost the origin. Defaults are sized for a player audience behind NATs: a player holds one or
/// two connections and at most a couple of blocked requests per rendition; a CDN edge holds more.
public struct ConnectionLimits: Sendable, Equatable {
    /// Open connections at once. One more is answered `503` with `Retry-After` and closed at once; the connections
    /// already open are not disturbed.
    public var maxConnections = 10_000
    /// Request line plus header fields, in bytes. A longer request line is answered `414`, a larger header block
    /// `431` (RFC 9110 §15.5.15, RFC 6585 §5), and the connection is closed.
    public var maxHeaderBytes = 32 * 1024
    /// A request head must be complete this long after its first byte (for a new connection: after it opened);
    /// otherwise `408` and close (slowloris).
    public var headerTimeout: Duration = .seconds(10)
    /// A keep-alive connection with no request for this long is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// A response the client does not read for this long (the socket stays full) is dropped with its connection.
    public var sendTimeout: Duration = .seconds(30)
    /// The kernel's send buffer per connection (`SO_SNDBUF`; Linux doubles it); `nil`: the kernel's autotuning, which
    /// lets one connection whose client does not read take up to `tcp_wmem`'s maximum (4 MiB by default) of kernel
    /// memory, and the CPU to copy it. 256 KiB still fills a 40 Mb/s path at 100 ms RTT.
    public var sendBufferBytes: Int? = 256 * 1024
    /// LL-HLS requests held at once (blocking playlist reloads, parts not yet published) for one client address.
    /// Beyond it: `429` with `Retry-After`.
    public var maxBlockedPerClient = 100
    /// LL-HLS requests held at once for all clients together. Beyond it: `503` with `Retry-After`.
    public var maxBlocked = 10_000
    /// RST_STREAM frames one HTTP/2 connection may send in 30 s; one more closes it with GOAWAY ENHANCE_YOUR_CALM
    /// (CVE-2023-44487, rapid reset: each reset stream was opened, and cost a stream and a task, first). swift-nio-http2's
    /// default. A burst of this many streams costs the event loop about 0.5 ms each in a debug build.
    public var maxStreamResets = 200

    public init() {}
}

/// Open connections, across event loops.
final class ConnectionCounter: Sendable {
    let limit: Int
    private let count = Atomic<Int>(0)
    init(limit: Int) { self.limit = limit }
    /// Counts a new connection; `false` when it is one too many (it still counts until it is closed).
    func open() -> Bool { count.wrappingAdd(1, ordering: .relaxed).newValue <= limit }
    func close() { count.subtract(1, ordering: .relaxed) }
    var current: Int { count.load(ordering: .relaxed) }
}

/// HTTP/1.1 without TLS, as HummingbirdCore's `HTTP1Channel` sets it up, plus what it lacks: a connection limit,
/// header size and time limits, a send timeout, and error answers that carry the CORS headers.
///
/// ```
/// RawFastPathHandler | RequestBytesObserver | HTTPResponseEncoder ByteToMessageHandler(HTTPRequestDecoder) |
/// ConnectionGuard | HTTP1ToHTTPServerCodec | NIOAsyncChannel -> Hummingbird's request loop
/// ```
struct OriginHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    let limits: ConnectionLimits
    let connections: ConnectionCounter
    /// Plain requests for objects in memory, answered on the event loop (`FastPath`).
    var fastPath: FastPath?

    /// Bytes queued in the channel before it reports itself unwritable. NIO's default (64 KiB) is below one segment, so
    /// every segment response made the channel unwritable and writable again, and `ConnectionGuard` re-armed its
    /// send timer each time (measured: 4-9% of the CPU serving segments). Queued responses are references to the
    /// objects' shared buffers and memory files, not copies: 4 MiB costs no memory, and a client that does not read
    /// still makes the channel unwritable after a few segments.
    static let writeBufferWaterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 2 << 20, high: 4 << 20)

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let admitted = connections.open()
            let counter = connections
            channel.closeFuture.whenComplete { _ in counter.close() }
            if let bytes = limits.sendBufferBytes {
                try channel.syncOptions?.setOption(ChannelOptions.socketOption(.so_sndbuf), value: SocketOptionValue(bytes))
            }
            try channel.syncOptions?.setOption(ChannelOptions.writeBufferWaterMark, value: Self.writeBufferWaterMark)
            let pipeline = channel.pipeline.syncOperations
            if !admitted { try pipeline.addHandler(ConnectionRefusal()) }
            let guardian = try Self.addGuardedHTTP1(to: pipeline, limits: limits, observeBytes: admitted)
            if admitted, let fastPath, fastPath.enabled {
                try pipeline.addHandler(RawFastPathHandler(fastPath, guardian: guardian, maxHeadBytes: limits.maxHeaderBytes),
                                        position: .first)
            }
            // No HTTPConnectionStateHandler: ConnectionGuard keeps the idle timeout and the graceful-shutdown close.
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel,
                                       configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    /// The HTTP/1 parser and encoder with the `ConnectionGuard` around them (also used by the unit tests).
    @discardableResult
    static func addGuardedHTTP1(to pipeline: ChannelPipeline.SynchronousOperations, limits: ConnectionLimits,
                                observeBytes: Bool = true) throws -> ConnectionGuard {
        let guardian = ConnectionGuard(limits: limits)
        if observeBytes { try pipeline.addHandler(RequestBytesObserver(guardian)) }
        var decoderLimits = NIOHTTPDecoderLimitConfiguration()
        decoderLimits.maxHeaderFieldSize = limits.maxHeaderBytes
        decoderLimits.maxHeaderListSize = limits.maxHeaderBytes
        decoderLimits.maxHeaderFieldCount = 1000
        try pipeline.configureHTTPServerPipeline(
            withPipeliningAssistance: false,  // ConnectionGuard holds pipelined requests itself
            withErrorHandling: false,  // ConnectionGuard answers parser errors
            withOutboundHeaderValidation: false,
            withEncoderConfiguration: .init(),
            withDecoderLimitConfiguration: decoderLimits)
        try pipeline.addHandler(guardian)
        return guardian
    }

    func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }
}

/// A connection beyond `maxConnections`: `503` with `Retry-After`, then close, without reading a byte.
final class ConnectionRefusal: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let response: ByteBuffer = {
        let body = "Too many connections, retry shortly\n"
        return ByteBuffer(string: "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\nRetry-After: 1\r\nCache-Control: no-store\r\nConnection: close\r\n"
            + "Access-Control-Allow-Origin: *\r\n\r\n" + body)
    }()

    func channelActive(context: ChannelHandlerContext) {
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(Self.response), promise: promise)
        promise.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}

/// Tells the `ConnectionGuard` when request bytes arrive (before they are parsed), so that a head that trickles in
/// is timed from its first byte, and a too-long request line is told apart from a too-large header block.
final class RequestBytesObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    let guardian: ConnectionGuard
    init(_ guardian: ConnectionGuard) { self.guardian = guardian }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guardian.bytesArrived(unwrapInboundIn(data))
        context.fireChannelRead(data)
    }
}
