import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// First in an HTTP/1.1 connection's pipeline, before the parser: answers the requests `FastPath` can answer
/// straight from the bytes, and hands every other request on, whole, to the parser and `ConnectionGuard`.
///
/// - A request is answered here only when the connection has nothing else in progress (`ConnectionGuard`
///   `.mayAnswerAhead`), so responses keep the requests' order; otherwise it goes on and is answered in turn.
/// - What goes on always ends at a request boundary: each request is framed here (its head ends with an empty line,
///   and it has no body). A request with a body, a head split across reads or too large, or anything not understood
///   here hands the rest of the connection to the full path, which applies every limit and answers every error.
/// - Takes a request only if it is `GET`/`HEAD`, `HTTP/1.1`, origin-form without a query or `%`, with exactly one
///   `Host`, `Connection` absent or `keep-alive`, and none of `Range`, `If-*`, `Expect`, `Upgrade`, `Content-Length`,
///   `Transfer-Encoding`.
final class RawFastPathHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = IOData

    private let connection: FastPathConnection
    private let guardian: ConnectionGuard
    private let maxHeadBytes: Int
    /// The full path has the connection from here on.
    private var passthrough = false

    /// `TCP_CORK` around the responses to one read that carry a file, as nginx does with `tcp_nopush on`: the status
    /// line and headers leave in the same TCP segment as the body's first bytes instead of a packet of their own
    /// (the socket has `TCP_NODELAY`). Measured on a 334 KB segment, wrk -t2 -c100: 19.1k -> 24.1k req/s, 43 -> 37 µs
    /// of origin CPU per request (`scripts/bench --only serving`).
    static let cork = ChannelOptions.Types.SocketOption(level: SocketOptionLevel(IPPROTO_TCP), name: SocketOptionName(TCP_CORK))

    init(_ fastPath: FastPath, guardian: ConnectionGuard, maxHeadBytes: Int) {
        connection = FastPathConnection(fastPath)
        self.guardian = guardian
        self.maxHeadBytes = maxHeadBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if passthrough { return context.fireChannelRead(data) }
        var buffer = unwrapInboundIn(data)
        var answered = false
        var corked = false
        while buffer.readableBytes > 0 {
            guard let request = Self.frame(buffer, maxHeadBytes: maxHeadBytes), request.plain || !request.hasBody else {
                passthrough = true
                break
            }
            if request.plain, guardian.mayAnswerAhead, let answer = answer(request, buffer, context) {
                buffer.moveReaderIndex(forwardBy: request.length)
                respond(answer, headOnly: request.headOnly, corked: &corked, context)
                answered = true
            } else {
                let slice = buffer.readSlice(length: request.length)!
                context.fireChannelRead(wrapInboundOut(slice))
            }
        }
        if answered { context.flush() }
        if corked { try? context.channel.syncOptions?.setOption(Self.cork, value: 0) }
        if buffer.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(buffer)) }
    }

    private func answer(_ request: Request, _ buffer: ByteBuffer, _ context: ChannelHandlerContext) -> FastPath.Answer? {
        guard let target = request.target else { return nil }
        return buffer.withUnsafeReadableBytes { connection.answer(target: $0[target], channel: context.channel) }
    }

    /// Writes the answer (flushed by the caller); corks the socket first when it sends a file and `corked` is not yet
    /// set (`cork`).
    private func respond(_ answer: FastPath.Answer, headOnly: Bool, corked: inout Bool, _ context: ChannelHandlerContext) {
        let file = headOnly ? nil : answer.file.flatMap { $0.range.count == answer.body.count ? $0 : nil }
        if file != nil && !corked {
            corked = true
            try? context.channel.syncOptions?.setOption(Self.cork, value: 1)
        }
        var head = answer.head
        head.writeStaticString("Date: ")
        head.writeString(connection.httpDate())
        head.writeStaticString("\r\n\r\n")
        context.write(wrapOutboundOut(.byteBuffer(head)), promise: nil)
        if let file {
            // The handle borrows the file's descriptor for this write (sendfile with an explicit offset: any number of
            // responses share it); the file stays open until the write is done.
            let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: file.file.descriptor)
            let promise = context.eventLoop.makePromise(of: Void.self)
            promise.futureResult.whenComplete { _ in
                _ = try? handle.takeDescriptorOwnership()
                withExtendedLifetime(file) {}
            }
            context.write(wrapOutboundOut(.fileRegion(FileRegion(fileHandle: handle, readerIndex: file.range.lowerBound,
                                                                 endIndex: file.range.upperBound))),
                          promise: promise)
        } else if !headOnly {
            for chunk in answer.body.chunks { context.write(wrapOutboundOut(.byteBuffer(chunk)), promise: nil) }
        }
        connection.count(answer, sent: headOnly ? 0 : answer.body.count)
        guardian.answeredAhead()
    }

    // MARK: Framing

    struct Request {
        /// Bytes of the head, through its empty line.
        var length: Int
        /// Answerable here (see the type's rules); `target` is then set.
        var plain: Bool
        var headOnly: Bool
        var hasBody: Bool
        /// Where the request target (the path) is, in the bytes framed.
        var target: Range<Int>?
        /// The request target as text (tests).
        func path(in buffer: ByteBuffer) -> String? {
            target.map { t in buffer.withUnsafeReadableBytes { String(decoding: $0[t], as: UTF8.self) } }
        }
    }

    /// The request at the start of `buffer` if its head is complete (within `maxHeadBytes`); `nil` otherwise.
    static func frame(_ buffer: ByteBuffer, maxHeadBytes: Int) -> Request? {
        buffer.withUnsafeReadableBytes { raw -> Request? in
            let bytes = raw.bindMemory(to: UInt8.self)
            let limit = min(bytes.count, maxHeadBytes)
            // The end of the head: CR LF CR LF.
            var end = -1
            var i = 0
            while i + 3 < limit {
                if bytes[i + 3] != 10 { i += 1; continue }  // LF at i + 3
                if bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 { end = i + 4; break }
                i += 1
            }
            guard end > 0 else { return nil }
            var request = Request(length: end, plain: false, headOnly: false, hasBody: false, target: nil)
            // Request line: METHOD SP TARGET SP HTTP/1.1 CR LF
            var lineEnd = 0
            while lineEnd < end && bytes[lineEnd] != 13 { lineEnd += 1 }
            let line = UnsafeBufferPointer(rebasing: bytes[0..<lineEnd])
            var plain = true
            var targetStart = 0
            if line.starts(with: "GET ".utf8) {
                targetStart = 4
            } else if line.starts(with: "HEAD ".utf8) {
                targetStart = 5
                request.headOnly = true
            } else {
                plain = false
            }
            let version = " HTTP/1.1".utf8
            if plain, line.count > targetStart + version.count, line[targetStart] == UInt8(ascii: "/"),
               line.suffix(version.count).elementsEqual(version) {
                let target = line[targetStart..<(line.count - version.count)]
                if target.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: " ") || $0 < 0x21 || $0 > 0x7E }) {
                    plain = false
                } else {
                    request.target = target.startIndex..<target.endIndex
                }
            } else {
                plain = false
            }
            // Header fields.
            var hosts = 0
            var start = lineEnd + 2
            while start < end - 2 {
                var stop = start
                while stop < end && bytes[stop] != 13 { stop += 1 }
                let field = UnsafeBufferPointer(rebasing: bytes[start..<stop])
                start = stop + 2
                guard let first = field.first, first != 32, first != 9, let colon = field.firstIndex(of: UInt8(ascii: ":")) else {
                    plain = false  // obsolete line folding, or not a field: the parser decides
                    continue
                }
                let name = UnsafeBufferPointer(rebasing: field[0..<colon])
                switch Self.fieldKind(name) {
                case .host: hosts += 1
                case .body:
                    plain = false
                    let value = field[(colon + 1)...].filter { $0 != 32 && $0 != 9 }
                    if !value.elementsEqual("0".utf8) { request.hasBody = true }
                case .excluded: plain = false
                case .connection:
                    // `keep-alive` (what browsers send over HTTP/1.1) changes nothing; `close` or an upgrade does.
                    let value = field[(colon + 1)...].filter { $0 != 32 && $0 != 9 }.map { $0 | 0x20 }
                    if !value.elementsEqual("keep-alive".utf8) { plain = false }
                case .other: break
                }
            }
            request.plain = plain && hosts == 1 && request.target != nil
            return request
        }
    }

    enum FieldKind { case host, body, connection, excluded, other }

    /// ASCII case-insensitive, without making a string.
    static func fieldKind(_ name: UnsafeBufferPointer<UInt8>) -> FieldKind {
        if FullPathFields.named(name, "host") { return .host }
        if FullPathFields.named(name, "connection") { return .connection }
        if FullPathFields.bodyFields.contains(where: { FullPathFields.named(name, $0) }) { return .body }
        if FullPathFields.contains(name) { return .excluded }
        return .other
    }
}

/// The one list of request header fields that send a request to the full path, on HTTP/1.1 and HTTP/2 alike: a body
/// (`Content-Length`, `Transfer-Encoding`), a range, a condition (`If-*`), an expectation or an upgrade need the full
/// path's rules. Names compare ASCII case-insensitively.
enum FullPathFields {
    static let bodyFields: [StaticString] = ["content-length", "transfer-encoding"]
    static let names: [StaticString] = bodyFields + ["range", "expect", "upgrade"]
    static let prefixes: [StaticString] = ["if-"]

    static func contains(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        names.contains { named(name, $0) } || prefixes.contains { prefixed(name, $0) }
    }

    static func contains(_ name: String) -> Bool {
        var n = name
        return n.withUTF8 { contains($0) }
    }

    static func named(_ name: UnsafeBufferPointer<UInt8>, _ s: StaticString) -> Bool {
        guard name.count == s.utf8CodeUnitCount else { return false }
        let p = s.utf8Start
        for k in 0..<name.count where name[k] | 0x20 != p[k] | 0x20 { return false }
        return true
    }

    static func prefixed(_ name: UnsafeBufferPointer<UInt8>, _ s: StaticString) -> Bool {
        guard name.count > s.utf8CodeUnitCount else { return false }
        let p = s.utf8Start
        for k in 0..<s.utf8CodeUnitCount where name[k] | 0x20 != p[k] | 0x20 { return false }
        return true
    }
}
