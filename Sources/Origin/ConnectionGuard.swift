import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Synchronization

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

    /// Whether a request may be answered ahead of this handler (`RawFastPathHandler`): nothing in flight, held or half
    /// read here, no error pending, not closing, and the socket has room (a client that does not read is not written
    /// to: it is held here, then timed out).
    var mayAnswerAhead: Bool {
        inFlight == 0 && held.isEmpty && headSince == nil && !failed && !closeAfterResponse && pendingError == nil
            && (context?.channel.isWritable ?? false)
    }

    /// A request was answered ahead of this handler: the connection is busy and idle again, as after a response here.
    func answeredAhead() {
        firstRequest = false
        idleSince = .now()
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
