import HTTPTypes
import NIOCore
import NIOHTTP2
import NIOHTTPTypes

/// `--send-timeout` on an HTTP/2 stream: a response that cannot move for `timeout` (the stream stays unwritable: the
/// client keeps its flow-control window at zero, RFC 9113 §6.9, or does not read the socket at all) closes the whole
/// connection with GOAWAY ENHANCE_YOUR_CALM, as the HTTP/1.1 port drops a client that does not read
/// (`ConnectionGuard`). The stream holds what was written to it (references to the objects' shared buffers, not
/// copies) and swift-nio-http2 sends only what the window allows; without this, such a connection and its streams
/// stayed open for ever (HTTP/2's idle timeout counts only connections without open streams).
///
/// One timer per stream, armed when the stream first becomes unwritable and re-armed lazily, so a response that
/// drains at once costs a store or two.
final class H2SendTimeout: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let timeout: TimeAmount
    private var unwritableSince: NIODeadline?
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerRemoved(context: ChannelHandlerContext) { timer.cancelAndClear() }

    func channelInactive(context: ChannelHandlerContext) {
        timer.cancelAndClear()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            unwritableSince = nil
        } else if unwritableSince == nil {
            let now = context.eventLoop.now
            unwritableSince = now
            if timer == nil { schedule(context, at: now + timeout) }
        }
        context.fireChannelWritabilityChanged()
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            guard let since = unwritableSince, context.channel.isActive else { return }
            if context.eventLoop.now >= since + timeout {
                Self.closeConnection(of: context.channel, code: .enhanceYourCalm)
            } else {
                schedule(context, at: since + timeout)
            }
        }
    }

    /// GOAWAY with `code` on the stream's connection (RFC 9113 §6.8), then close it; at once if the GOAWAY cannot be
    /// written within a second (a socket the client does not read).
    static func closeConnection(of stream: any Channel, code: NIOHTTP2.HTTP2ErrorCode) {
        guard let connection = stream.parent else {
            stream.close(promise: nil)
            return
        }
        closeConnection(connection, code: code)
    }

    /// GOAWAY with `code` on `connection`, then close it (see `closeConnection(of:code:)`).
    static func closeConnection(_ connection: any Channel, code: NIOHTTP2.HTTP2ErrorCode) {
        let goAway = HTTP2Frame(streamID: .rootStream,
                                payload: .goAway(lastStreamID: .maxID, errorCode: code, opaqueData: nil))
        connection.writeAndFlush(goAway).whenComplete { _ in connection.close(promise: nil) }
        connection.eventLoop.scheduleTask(in: .seconds(1)) { connection.close(promise: nil) }
    }
}

/// The end of an HTTP/2 connection's pipeline: a connection error (swift-nio-http2 has written its GOAWAY, RFC 9113
/// §5.4.1) closes the connection. (HummingbirdHTTP2's connection manager did this; swift-nio-http2's leaves it to the
/// application.)
///
/// It also bounds a graceful shutdown. On `ChannelShouldQuiesceEvent` swift-nio-http2's connection manager sends a
/// GOAWAY and a PING, and starts its grace timer (`maxGraceTime`) only when the PING is acknowledged: a client that
/// never answers (gone silent, or hostile) held the connection, and so the server's shutdown, open for ever. Here the
/// connection closes `ackWait` after the shutdown began if no stream is open by then, and in any case `deadline`
/// after it (the manager's own grace, counted from the ack, ends sooner for a client that answers).
final class H2ConnectionErrorHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame

    private let ackWait: TimeAmount
    private let deadline: TimeAmount
    private var openStreams: Set<HTTP2StreamID> = []
    private var timers: [Scheduled<Void>] = []

    init(ackWait: TimeAmount = .seconds(2), deadline: TimeAmount) {
        self.ackWait = ackWait
        self.deadline = deadline
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let e as NIOHTTP2StreamCreatedEvent: openStreams.insert(e.streamID)
        case let e as StreamClosedEvent: openStreams.remove(e.streamID)
        case is ChannelShouldQuiesceEvent where timers.isEmpty:
            let loop = context.eventLoop.assumeIsolated()
            timers.append(loop.scheduleTask(in: ackWait) { [self] in
                if openStreams.isEmpty { context.close(promise: nil) }
            })
            timers.append(loop.scheduleTask(in: deadline) { context.close(promise: nil) })
        default: break
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        for t in timers { t.cancel() }
        timers = []
        context.fireChannelInactive()
    }
}

/// A lingering close (nginx's `lingering_close`), at the socket end of the TLS port's pipeline: when the connection
/// is closed, what was written (a GOAWAY and the TLS close_notify, or a `408`) is flushed, the sending side is shut
/// (FIN), and what the client still sends is read and dropped for up to `linger` before the socket closes. Closing at
/// once with unread bytes in the socket makes the kernel answer with a reset, and the client's kernel then drops
/// what it had not yet read: a client that floods (CONTINUATION frames, PINGs) would never see the GOAWAY that
/// tells it why. The client's own close (EOF) ends it sooner; the bytes read meanwhile are neither decrypted nor
/// kept. A graceful shutdown closes without lingering (its clients are not flooding, and the server is leaving).
final class LingeringClose: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let linger: TimeAmount
    private var lingering = false
    /// The server is shutting down gracefully (`ChannelShouldQuiesceEvent`): its connections close at once.
    private var quiescing = false
    private var closePromise: EventLoopPromise<Void>?
    private var timer: Scheduled<Void>?

    init(linger: TimeAmount) { self.linger = linger }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all, context.channel.isActive, !quiescing else {
            context.close(mode: mode, promise: promise)
            return
        }
        if lingering {
            if let promise { closePromise?.futureResult.cascade(to: promise) }
            return
        }
        lingering = true
        closePromise = promise ?? context.eventLoop.makePromise()
        context.flush()
        context.close(mode: .output, promise: nil)
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: linger) { [self] in finish(context) }
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !lingering { context.fireChannelRead(data) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if lingering { context.read() } else { context.fireChannelReadComplete() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent { quiescing = true }
        if lingering, let event = event as? ChannelEvent, event == .inputClosed {
            finish(context)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if lingering {
            finish(context)
            return
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if let promise = closePromise {
            closePromise = nil
            promise.succeed(())
        }
        context.fireChannelInactive()
    }

    private func finish(_ context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        guard let promise = closePromise else { return }
        closePromise = nil
        context.close(mode: .all, promise: promise)
    }
}

extension Optional where Wrapped == Scheduled<Void> {
    /// Cancels the task, if any, and forgets it.
    mutating func cancelAndClear() {
        self?.cancel()
        self = nil
    }
}
