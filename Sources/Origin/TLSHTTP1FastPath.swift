import HTTPTypes
import MediaCore
import NIOCore
import NIOHTTPTypes

/// `FastPath` on an HTTP/1.1 connection over TLS (ALPN `http/1.1`; HTTP/2 has `H2FrameFastPath`): after the
/// HTTP/1 codec and before Hummingbird's request handling, a plain `GET`/`HEAD` of an object in memory is answered
/// here from its prepared header fields and body, without Hummingbird's `Request`, router, middleware or response
/// writer. Anything else passes on untouched: a path with a query (LL-HLS delivery directives) or `%`, conditional
/// and range requests, other methods, a request with a body.
final class TLSHTTP1FastPathHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let connection: FastPathConnection
    /// The current request was answered here: the rest of it (up to its end) is not passed on.
    private var answered = false

    init(_ fastPath: FastPath) {
        connection = FastPathConnection(fastPath)
    }


    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if answered {
            // The request after the answered one is a new request (a keep-alive connection hung on its second
            // request before).
            if case .end = unwrapInboundIn(data) { answered = false }
            return
        }
        guard case .head(let request) = unwrapInboundIn(data), request.method == .get || request.method == .head,
              let path = request.path, !path.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "%") }),
              !request.headerFields.contains(where: { FullPathFields.contains($0.name.canonicalName) }),
              let answer = connection.answer(target: path.utf8, channel: context.channel)
        else {
            context.fireChannelRead(data)
            return
        }
        answered = true
        let headOnly = request.method == .head
        var fields = answer.fields
        fields[.date] = connection.httpDate()
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .ok, headerFields: fields))), promise: nil)
        if !headOnly {
            for chunk in answer.body.chunks { context.write(wrapOutboundOut(.body(chunk)), promise: nil) }
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        connection.count(answer, sent: headOnly ? 0 : answer.body.count)
    }
}
