import HTTPTypes
import MediaCore
import NIOCore
import NIOHTTPTypes

/// `FastPath` on an HTTP/2 stream: in each stream's pipeline, after the frame-to-HTTP codec and before Hummingbird's
/// request handling, a plain `GET`/`HEAD` of an object in memory is answered here from its prepared header fields and
/// body, without Hummingbird's `Request`, router, middleware or response writer. The stream then ends, and
/// Hummingbird's handler for it sees no request and returns. Anything else passes on untouched: a path with a query
/// (LL-HLS delivery directives) or `%`, conditional and range requests, other methods, a request with a body.
final class H2FastPathHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let fastPath: FastPath
    /// The current request was answered here: the rest of it (up to its end) is not passed on.
    private var answered = false
    private var counters: (labels: (String, String, String), counters: OriginMetrics.RequestCounters)?

    init(_ fastPath: FastPath) {
        self.fastPath = fastPath
    }


    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if answered {
            // HTTP/1.1 over TLS (ALPN http/1.1) runs this handler per connection, not per stream: the request after
            // the answered one is a new request (a keep-alive connection hung on its second request before).
            if case .end = unwrapInboundIn(data) { answered = false }
            return
        }
        guard case .head(let request) = unwrapInboundIn(data), request.method == .get || request.method == .head,
              let path = request.path, !path.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "%") }),
              !request.headerFields.contains(where: { FullPathFields.contains($0.name.canonicalName) }),
              let answer = fastPath.answer(path: Substring(path), remote: context.channel.parent?.remoteAddress ?? context.channel.remoteAddress)
        else {
            context.fireChannelRead(data)
            return
        }
        answered = true
        let headOnly = request.method == .head
        var fields = answer.fields
        fields[.date] = WallClock.now.httpDate
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .ok, headerFields: fields))), promise: nil)
        if !headOnly {
            for chunk in answer.body.chunks { context.write(wrapOutboundOut(.body(chunk)), promise: nil) }
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        fastPath.count(answer, sent: headOnly ? 0 : answer.body.count, cache: &counters)
    }
}
