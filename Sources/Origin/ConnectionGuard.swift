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
/// RequestBytesObserver | HTTPResponseEncoder ByteToMessageHandler(HTTPRequestDecoder) | ConnectionGuard |
/// HTTP1ToHTTPServerCodec | NIOAsyncChannel -> Hummingbird's request loop
/// ```
struct OriginHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    let limits: ConnectionLimits
    let connections: ConnectionCounter

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let admitted = connections.open()
            let counter = connections
            channel.closeFuture.whenComplete { _ in counter.close() }
            if let bytes = limits.sendBufferBytes {
                try channel.syncOptions?.setOption(ChannelOptions.socketOption(.so_sndbuf), value: SocketOptionValue(bytes))
            }
            let pipeline = channel.pipeline.syncOperations
            if !admitted { try pipeline.addHandler(ConnectionRefusal()) }
            try Self.addGuardedHTTP1(to: pipeline, limits: limits, observeBytes: admitted)
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

/// The per-connection limits of `ConnectionLimits` that HummingbirdCore does not have, between the HTTP/1 parser and
/// Hummingbird. One timer per connection, re-armed lazily: a request costs a few stores, no scheduling.
///
/// - Parser errors (which Hummingbird answers with a bare `400`) get `400`, `414` or `431` with the CORS headers,
///   after the responses to the requests before them, then the connection closes.
/// - A head not complete within `headerTimeout` of its first byte: `408`, close. A new connection counts from its
///   opening, with or without bytes (then it is closed without an answer), as nginx's `client_header_timeout` does.
/// - No request within `idleTimeout` after the last response: close.
/// - The socket stays unwritable (the client does not read) for `sendTimeout`: close. Hummingbird's writer already
///   waits for writability, so a response is never copied into an unbounded buffer; this frees the connection.
/// - On graceful shutdown (`ChannelShouldQuiesceEvent`) an idle connection closes at once, a busy one after its
///   response, as HummingbirdCore's `HTTPConnectionStateHandler` (which this replaces) does.
/// - A request without a Host header (HTTP/1.1) or with two is `400` (RFC 9112 §3.2).
/// - An HTTP/1.0 request without `keep-alive` gets `Connection: close`, which Hummingbird honours (RFC 9112 §9.3).
/// - Pipelined requests wait here until the response before them has been handed to the socket and the socket can
///   take more (as NIO's `HTTPServerPipelineHandler` does; Hummingbird turns it off): a client that pipelines and
///   never reads costs one response, not one per request it sent. Requests that are not pipelined (every browser
///   and player) pass straight through.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let limits: ConnectionLimits
    private let headerTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private let sendTimeout: TimeAmount

    /// Requests whose head was read and whose response has not ended.
    private var inFlight = 0
    /// No request completed yet on this connection.
    private var firstRequest = true
    /// When the connection last became idle (opened, or the last response ended).
    private var idleSince = NIODeadline.now()
    /// When the head being read started (`nil`: no byte of a new head yet).
    private var headSince: NIODeadline?
    /// Bytes of the current head seen before its request line ended, and whether it ended.
    private var requestLineBytes = 0
    private var requestLineEnded = false
    private var unwritableSince: NIODeadline?
    /// Request parts held back: a head arrived while a response was in flight or the socket was full.
    private var held = CircularBuffer<HTTPServerRequestPart>()
    private var readPending = false
    private var inputClosed = false
    private var closeAfterResponse = false
    /// A parser error waiting for the responses before it.
    private var pendingError: PreparedResponse?
    private var failed = false
    private var timer: Scheduled<Void>?
    private var timerDeadline = NIODeadline.distantFuture
    /// The timer never sleeps longer than the shortest timeout, so a deadline that starts while it sleeps (a head's
    /// first byte on a keep-alive connection) is checked in time without re-arming it per request.
    private let longestSleep: TimeAmount
    private var context: ChannelHandlerContext?

    init(limits: ConnectionLimits) {
        self.limits = limits
        headerTimeout = TimeAmount(limits.headerTimeout)
        idleTimeout = TimeAmount(limits.idleTimeout)
        sendTimeout = TimeAmount(limits.sendTimeout)
        longestSleep = min(headerTimeout, idleTimeout, sendTimeout)
    }

    // MARK: Errors sent from here, complete with CORS headers

    static let badRequest = PreparedResponse.text(.badRequest, "Bad Request\n", extra: [.connection: "close"])
    static let uriTooLong = PreparedResponse.text(.uriTooLong, "URI Too Long\n", extra: [.connection: "close"])
    static let headerTooLarge = PreparedResponse.text(.requestHeaderFieldsTooLarge, "Request Header Fields Too Large\n",
                                                      extra: [.connection: "close"])
    static let requestTimeout = PreparedResponse.text(.requestTimeout, "Request Timeout\n", extra: [.connection: "close"])
    /// RFC 9110 §9.1: "An origin server that receives a request method that is unrecognized or not implemented SHOULD
    /// respond with the 501 (Not Implemented) status code." (The parser knows every registered method; those come
    /// through and are answered 405 with `Allow`.)
    static let notImplemented = PreparedResponse.text(.notImplemented, "Not Implemented\n",
                                                      extra: [.allow: ResponseHeaders.allowMethods, .connection: "close"])

    // MARK: Events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard timer == nil else { return }
        idleSince = .now()
        schedule(context, at: idleSince + headerTimeout)
    }

    /// Called by `RequestBytesObserver` before the bytes reach the parser.
    func bytesArrived(_ bytes: ByteBuffer) {
        if inFlight == 0 && held.isEmpty && headSince == nil {
            headSince = firstRequest ? idleSince : .now()
        }
        if !requestLineEnded {
            if let lf = bytes.withUnsafeReadableBytes({ $0.firstIndex(of: UInt8(ascii: "\n")) }) {
                requestLineEnded = true
                requestLineBytes += lf
            } else {
                requestLineBytes += bytes.readableBytes
            }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let part = unwrapInboundIn(data)
        if !held.isEmpty || (isHead(part) && !mayDeliver(context)) {
            held.append(part)
            return
        }
        deliver(part, context)
    }

    private func isHead(_ part: HTTPServerRequestPart) -> Bool {
        if case .head = part { return true }
        return false
    }

    private func mayDeliver(_ context: ChannelHandlerContext) -> Bool {
        inFlight == 0 && context.channel.isWritable
    }

    /// Hands held requests on, one at a time, as responses go out.
    private func drain(_ context: ChannelHandlerContext) {
        guard !held.isEmpty else { return }
        var delivered = false
        while let first = held.first, !isHead(first) || mayDeliver(context) {
            held.removeFirst()
            deliver(first, context)
            delivered = true
        }
        if delivered { context.fireChannelReadComplete() }
        if held.isEmpty {
            if inputClosed {
                inputClosed = false
                context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            }
            if readPending {
                readPending = false
                context.read()
            }
        }
    }

    func read(context: ChannelHandlerContext) {
        // Nothing more is read while requests are held: the socket's buffer pushes back on the client.
        if held.isEmpty { context.read() } else { readPending = true }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            if inFlight == 0 && held.isEmpty { context.close(promise: nil) } else { closeAfterResponse = true }
            return
        }
        if let e = event as? ChannelEvent, e == .inputClosed, !held.isEmpty {
            inputClosed = true  // after the held requests
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func deliver(_ part: HTTPServerRequestPart, _ context: ChannelHandlerContext) {
        if case .head(var head) = part {
            // RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1 request
            // message that lacks a Host header field and to any request message that contains more than one Host
            // header field line".
            var hosts = 0
            for field in head.headers where field.name.utf8.count == 4 && field.name.lowercased() == "host" { hosts += 1 }
            if hosts > 1 || (hosts == 0 && head.version.minor >= 1) {
                failed = true
                send(Self.badRequest, context)
                return
            }
            inFlight += 1
            headSince = nil
            requestLineEnded = false
            requestLineBytes = 0
            firstRequest = false
            if head.version.major == 1 && head.version.minor == 0 && !head.isKeepAlive {
                // RFC 9112 §9.3: HTTP/1.0 without "keep-alive": the connection closes after the response.
                head.headers.replaceOrAdd(name: "connection", value: "close")
                context.fireChannelRead(wrapInboundOut(.head(head)))
                return
            }
        }
        context.fireChannelRead(wrapInboundOut(part))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        inFlight -= 1
        if inFlight == 0 && closeAfterResponse {
            context.writeAndFlush(data, promise: promise)
            context.close(promise: nil)
            return
        }
        context.write(data, promise: promise)
        if inFlight == 0 {
            idleSince = .now()
            drain(context)
            if inFlight == 0 && held.isEmpty, let error = pendingError {
                pendingError = nil
                send(error, context)
            }
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let writable = context.channel.isWritable
        context.fireChannelWritabilityChanged()
        if writable {
            unwritableSince = nil
            drain(context)
        } else if unwritableSince == nil {
            let now = NIODeadline.now()
            unwritableSince = now
            if timerDeadline > now + sendTimeout, context.channel.isActive {
                timer?.cancel()
                schedule(context, at: now + sendTimeout)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if failed, error is ByteToMessageDecoderError { return }  // bytes after a parse error: already answered
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !failed else { return }
        failed = true
        let response: PreparedResponse
        if parserError == .headerOverflow {
            // The parser counts the request line as a header field: tell the two apart by where the line ended.
            let lineTooLong = !requestLineEnded || requestLineBytes > limits.maxHeaderBytes
            response = lineTooLong ? Self.uriTooLong : Self.headerTooLarge
        } else if parserError == .invalidMethod {
            response = Self.notImplemented
        } else {
            response = Self.badRequest
        }
        if inFlight == 0 && held.isEmpty {
            send(response, context)
        } else {
            pendingError = response
        }
    }

    /// Writes `response` after whatever is queued and closes the connection once it is out.
    private func send(_ response: PreparedResponse, _ context: ChannelHandlerContext) {
        failed = true
        var head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: response.status.code))
        for field in response.headers { head.headers.add(name: field.name.canonicalName, value: field.value) }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil)
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: promise)
        promise.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    // MARK: Timer

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        let deadline = min(deadline, .now() + longestSleep)
        timerDeadline = deadline
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            check(context)
        }
    }

    private func check(_ context: ChannelHandlerContext) {
        guard context.channel.isActive, !failed || inFlight > 0 || !held.isEmpty else { return }
        let now = NIODeadline.now()
        var next = now + sendTimeout
        if let since = unwritableSince {
            if now >= since + sendTimeout {
                context.close(promise: nil)
                return
            }
            next = since + sendTimeout
        }
        if inFlight == 0 && held.isEmpty && !failed {
            if let since = headSince {
                if now >= since + headerTimeout {
                    send(Self.requestTimeout, context)
                    return
                }
                next = min(next, since + headerTimeout)
            } else {
                let deadline = idleSince + (firstRequest ? headerTimeout : idleTimeout)
                if now >= deadline {
                    context.close(promise: nil)
                    return
                }
                next = min(next, deadline)
            }
        }
        schedule(context, at: next)
    }
}
