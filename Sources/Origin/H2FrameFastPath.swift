import HTTPTypes
import MediaCore
import NIOCore
import NIOHPACK
import NIOHTTP2

/// `FastPath` on an HTTP/2 connection, at the level of its frames: between swift-nio-http2's connection handler and
/// its stream multiplexer, a new stream's `HEADERS` that asks for an object in memory is answered here, with `HEADERS`
/// and `DATA` frames written on the connection, and no stream channel, pipeline or task is made for it. Everything
/// else goes on to the multiplexer and Hummingbird's request handling, as before: a path with a query (LL-HLS
/// delivery directives) or `%`, conditional and range requests, other methods, a request with a body (a `HEADERS`
/// without END_STREAM), an object not in memory, and any request while the connection cannot take more output (the
/// full path then waits with back-pressure).
///
/// swift-nio-http2's connection handler below still does all of the protocol: the stream state machine, HPACK,
/// flow control (a `DATA` frame waits in its buffer until the windows allow; the bytes are the objects' shared
/// buffers, not copies), and every limit in `OriginTLSChannel.http2Configuration`.
///
/// `--send-timeout`: while responses written here are waiting, the connection is closed with GOAWAY
/// ENHANCE_YOUR_CALM (RFC 9113 §7) once none of them has moved for `sendTimeout` (a client that keeps its windows at
/// zero, RFC 9113 §6.9, or does not read the socket): as the stream pipelines' `H2SendTimeout` and the HTTP/1.1 port.
final class H2FrameFastPath: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let connection: FastPathConnection
    private let sendTimeout: TimeAmount
    /// The largest `DATA` frame written: a body is sent in slices of its buffers (no copy) so that a slow client's
    /// progress is seen as it goes.
    static let sliceBytes = 64 * 1024
    /// Streams answered here and not yet closed: their later frames (WINDOW_UPDATE, RST_STREAM) go no further (the
    /// multiplexer knows no such stream).
    private var answered: Set<HTTP2StreamID> = []
    /// Frames written here whose write has not completed, and when one last did (or the first was written).
    private var pending = 0
    private var lastProgress = NIODeadline.uptimeNanoseconds(0)
    private var timer: Scheduled<Void>?
    private var wrote = false
    /// The newest stream a request opened: a `HEADERS` on a stream above it opens a request, on one at or below it is
    /// a trailer section (RFC 9113 §8.1; the connection handler below refuses a `HEADERS` on any other stream).
    private var lastRequestStream = HTTP2StreamID.rootStream
    /// Malformed requests reset in the current 30-s window (`H2RequestValidation`): beyond `maxMalformed`, the
    /// connection is closed with GOAWAY ENHANCE_YOUR_CALM, as swift-nio-http2's own limit on stream errors did.
    private var malformed = 0
    private var malformedWindowStart = NIODeadline.uptimeNanoseconds(0)
    static let maxMalformed = 200
    static let malformedWindow = TimeAmount.seconds(30)

    init(_ fastPath: FastPath, sendTimeout: TimeAmount) {
        connection = FastPathConnection(fastPath)
        self.sendTimeout = sendTimeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let id = frame.streamID
        if id != .rootStream, answered.contains(id) { return }
        if case .headers(let headers) = frame.payload {
            let opens = id > lastRequestStream
            if opens { lastRequestStream = id }
            if H2RequestValidation.problem(headers.headers, trailers: !opens) != nil {
                return reset(id, context)
            }
        }
        guard case .headers(let headers) = frame.payload, headers.endStream, context.channel.isWritable,
              let request = Self.plainRequest(headers.headers),
              let answer = connection.answer(target: request.path.utf8, channel: context.channel) else {
            context.fireChannelRead(data)
            return
        }
        answered.insert(id)
        respond(answer, on: id, headOnly: request.headOnly, context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if wrote {
            wrote = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent { answered.remove(closed.streamID) }
        context.fireUserInboundEventTriggered(event)
    }

    func handlerRemoved(context: ChannelHandlerContext) { timer.cancelAndClear() }

    func channelInactive(context: ChannelHandlerContext) {
        timer.cancelAndClear()
        context.fireChannelInactive()
    }

    /// RFC 9113 §8.1.1: a malformed request is "a stream error (Section 5.4.2) of type PROTOCOL_ERROR": RST_STREAM,
    /// and its stream's later frames go no further.
    private func reset(_ id: HTTP2StreamID, _ context: ChannelHandlerContext) {
        let now = context.eventLoop.now
        if now - malformedWindowStart > Self.malformedWindow {
            malformedWindowStart = now
            malformed = 0
        }
        malformed += 1
        if malformed > Self.maxMalformed {
            return H2SendTimeout.closeConnection(context.channel, code: .enhanceYourCalm)
        }
        answered.insert(id)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.protocolError))), promise: nil)
        wrote = true
    }

    // MARK: The request

    struct PlainRequest: Equatable {
        var path: String
        var headOnly: Bool
    }

    /// A request the fast path may answer: `GET` or `HEAD` of an origin-form path without a query or `%`, none of the
    /// fields `FullPathFields` names; `nil` otherwise (and for anything malformed: the full path answers it).
    static func plainRequest(_ headers: HPACKHeaders) -> PlainRequest? {
        var method: String?, path: String?
        for (name, value, _) in headers {
            if name.utf8.first == UInt8(ascii: ":") {
                switch name {
                case ":method": method = value
                case ":path": path = value
                case ":scheme", ":authority": break
                default: return nil
                }
            } else if FullPathFields.contains(name) {
                return nil
            }
        }
        guard let method, method == "GET" || method == "HEAD", let path, path.utf8.first == UInt8(ascii: "/"),
              !path.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "%") }) else { return nil }
        return PlainRequest(path: path, headOnly: method == "HEAD")
    }

    // MARK: The response

    private func respond(_ answer: FastPath.Answer, on id: HTTP2StreamID, headOnly: Bool, _ context: ChannelHandlerContext) {
        let chunks = headOnly ? [] : answer.body.chunks.filter { $0.readableBytes > 0 }
        let head = HTTP2Frame.FramePayload.Headers(headers: Self.responseHeaders(answer.fields, date: connection.httpDate()),
                                                   endStream: chunks.isEmpty)
        write(HTTP2Frame(streamID: id, payload: .headers(head)), context)
        for (k, chunk) in chunks.enumerated() {
            var rest = chunk
            while rest.readableBytes > 0 {
                let slice = rest.readSlice(length: min(Self.sliceBytes, rest.readableBytes))!
                let end = k == chunks.count - 1 && rest.readableBytes == 0
                write(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(slice), endStream: end))), context)
            }
        }
        wrote = true
        connection.count(answer, sent: headOnly ? 0 : answer.body.count)
    }

    /// The response's header block: `:status 200`, then `fields` (names lower-case, as HTTP/2 requires) and `Date`.
    static func responseHeaders(_ fields: HTTPFields, date: String) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(fields.count + 2)
        headers.add(name: ":status", value: "200")
        for field in fields where field.name != .date { headers.add(name: field.name.canonicalName, value: field.value) }
        headers.add(name: "date", value: date, indexing: .nonIndexable)
        return headers
    }

    /// Writes `frame`; one that ends its stream or carries data counts as waiting until its write completes
    /// (`--send-timeout`). A `HEADERS` followed by `DATA` is not waited on by itself (a promise less per response).
    private func write(_ frame: HTTP2Frame, _ context: ChannelHandlerContext) {
        if case .headers(let h) = frame.payload, !h.endStream {
            context.write(wrapOutboundOut(frame), promise: nil)
            return
        }
        if pending == 0 { lastProgress = context.eventLoop.now }
        pending += 1
        let promise = context.eventLoop.makePromise(of: Void.self)
        promise.futureResult.assumeIsolated().whenComplete { [self] _ in
            pending -= 1
            lastProgress = context.eventLoop.now
        }
        context.write(wrapOutboundOut(frame), promise: promise)
        if timer == nil { schedule(context, at: context.eventLoop.now + sendTimeout) }
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            guard pending > 0, context.channel.isActive else { return }
            if context.eventLoop.now >= lastProgress + sendTimeout {
                H2SendTimeout.closeConnection(context.channel, code: .enhanceYourCalm)
            } else {
                schedule(context, at: lastProgress + sendTimeout)
            }
        }
    }
}
