import HTTPTypes
import Logging
import MediaCore
import MediaPresentation
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// What most requests to a live origin are: a plain `GET` (or `HEAD`) of a media playlist, a segment, a part or an
/// init segment that is already in memory. Those are answered on the event loop by `RawFastPathHandler`, from the
/// bytes as the client sent them to a status line and headers prepared once per object, without HTTP parsing into
/// objects, Hummingbird's request task, router or middleware. Everything else (waiting, delivery directives,
/// conditional and range requests, access control, pages, bodies) takes the full path (`OriginResponder.route`),
/// which gives the same answers; requests are counted the same way (stats, viewers, `/metrics`).
struct FastPath: Sendable {
    let responder: OriginResponder
    /// Off when every request is logged (`debug`): the full path logs them.
    let enabled: Bool

    init(responder: OriginResponder, logLevel: Logger.Level) {
        self.responder = responder
        enabled = logLevel > .debug && !responder.access.isEnabled && responder.cors.allowedOrigins == nil
    }

    struct Answer {
        /// Status line and header fields, without `Date` and the blank line.
        let head: ByteBuffer
        /// The same header fields (HTTP/2).
        let fields: HTTPFields
        let body: Body
        /// The same bytes in a memory file (a segment, or a part kept after its segment left the playlist), sent with
        /// `sendfile(2)`.
        let file: Body.FileRange?
        let labels: (stream: String, rendition: String, kind: String)
        /// The registry name of the stream (for the viewer count).
        let stream: String
        /// What the answer was made from, and that presentation's `changeCount` (read first): the answer stays right
        /// for the same path while neither the registry nor the presentation has changed.
        let presentation: LivePresentation
        let changes: UInt64
        let generation: UInt64
    }

    /// Whether `answer` is still what `answer(path:)` would give for its path.
    func isCurrent(_ answer: Answer) -> Bool {
        answer.presentation.changeCount == answer.changes && responder.registry.generation == answer.generation
    }

    /// The answer to a plain request for `path` (no query) when the object is in memory now; `nil` otherwise.
    /// `sawViewer`: the connection's client has not been counted as a viewer of this stream for a second (a viewer
    /// counts for 10 s after its last request: once a second per connection is the same count, with less locking).
    func answer(path: Substring, remote: SocketAddress?, sawViewer: (String) -> Bool = { _ in true }) -> Answer? {
        let generation = responder.registry.generation
        guard enabled, Route.validate(path) == nil,
              case .stream(let name, let presentation, let route) = Route.resolve(path, in: responder.registry) else { return nil }
        // Read before the objects: an answer made from them is current while it has not moved.
        let changes = presentation.changeCount
        if case .tiles(let sheets, .sheet(let n)) = route {
            // A thumbnail sheet: immutable once published, like a segment.
            guard let o = sheets.snapshot().sheet(n)?.payload, let head = o.head else { return nil }
            if sawViewer(name) { responder.stats.sawViewer(remote, stream: name) }
            return Answer(head: head, fields: o.headers, body: o.body, file: nil,
                          labels: Route.stream(name: name, presentation, route).labels, stream: name,
                          presentation: presentation, changes: changes, generation: generation)
        }
        if case .key(let id) = route {
            // Only when access control is off (the fast path is then enabled): as open as the segments it decrypts.
            guard let key = presentation.contentKey(id) else { return nil }
            let prepared = KeyDelivery.response(key)
            if sawViewer(name) { responder.stats.sawViewer(remote, stream: name) }
            return Answer(head: Self.head(prepared.headers), fields: prepared.headers, body: Body(prepared.body), file: nil,
                          labels: Route.stream(name: name, presentation, route).labels, stream: name,
                          presentation: presentation, changes: changes, generation: generation)
        }
        guard case .object(let r, let object, let layout) = route else { return nil }
        let window = layout.windows[r]
        let found: (head: ByteBuffer, fields: HTTPFields, body: Body, file: Body.FileRange?)
        switch object {
        case .playlist:
            guard window.snapshot().isPlayable,
                  let (body, fields, head) = responder.preparedMediaPlaylist(presentation, layout, r) else { return nil }
            found = (head, fields, Body(body), nil)
        case .iFramePlaylist:
            guard window.snapshot().isPlayable, let e = responder.iFramePlaylistEntry(presentation, layout, r, uriQuery: "") else {
                return nil
            }
            found = (e.head, e.headers, Body(e.body), nil)
        case .initSegment(let i):
            guard let o = window.snapshot().initSegment(i), let head = o.payload.head else { return nil }
            found = (head, o.payload.headers, o.payload.body, nil)
        case .segment(let n):
            guard let o = window.snapshot().segment(n), let head = o.payload.head else { return nil }
            found = (head, o.payload.headers, o.payload.body,
                     o.payload.file.map { Body.FileRange(file: $0, range: 0..<$0.length) } ?? o.payload.body.fileRange)
        case .part(let n, let i):
            guard let o = window.snapshot().part(n, i), let head = o.payload.head else { return nil }
            found = (head, o.payload.headers, o.payload.body, o.payload.body.fileRange)
        }
        if sawViewer(name) { responder.stats.sawViewer(remote, stream: name) }
        return Answer(head: found.head, fields: found.fields, body: found.body, file: found.file,
                      labels: Route.stream(name: name, presentation, route).labels, stream: name,
                      presentation: presentation, changes: changes, generation: generation)
    }

    /// Counts an answer as `OriginResponder.route` counts its own; `cache`: the connection's last label set and its
    /// counters (a connection mostly asks for the same kinds of object of the same stream).
    func count(_ a: Answer, sent: Int,
               cache: inout (labels: (String, String, String), counters: OriginMetrics.RequestCounters)?) {
        responder.stats.countRequest(bytes: sent)
        guard let metrics = responder.metrics else { return }
        let labels = (a.labels.stream, a.labels.rendition, a.labels.kind)
        if let c = cache, c.labels == labels { return c.counters.count(bytes: sent) }
        let counters = metrics.requestCounters(stream: a.labels.stream, rendition: a.labels.rendition, kind: a.labels.kind, status: 200)
        cache = (labels, counters)
        counters.count(bytes: sent)
    }

    /// `HTTP/1.1 200 OK` and `fields`, each line ending in CR LF, ready for `Date` and the blank line.
    static func head(_ fields: HTTPFields) -> ByteBuffer {
        var out = ByteBuffer()
        out.reserveCapacity(64 + fields.reduce(0) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count + 4 })
        out.writeStaticString("HTTP/1.1 200 OK\r\n")
        for field in fields {
            out.writeString(field.name.rawName)
            out.writeStaticString(": ")
            out.writeString(field.value)
            out.writeStaticString("\r\n")
        }
        return out
    }
}

/// One connection's use of `FastPath`, on the event loop (HTTP/1.1's `RawFastPathHandler`, HTTP/2's
/// `H2FrameFastPath`): its last answer (a player reloads the same playlist), its client's address, its viewer count,
/// its metrics counters and its `Date`, each found once rather than per request.
final class FastPathConnection {
    let fastPath: FastPath
    private var remote: SocketAddress??
    private var date = (second: Int64(-1), text: "")
    private var counters: (labels: (String, String, String), counters: OriginMetrics.RequestCounters)?
    /// The stream this connection was last counted a viewer of, and when (ms since 1970).
    private var viewer = (stream: "", at: Int64(0))
    /// The connection's last answer and the request target (path bytes) it answered.
    private var last: (target: [UInt8], answer: FastPath.Answer)?

    init(_ fastPath: FastPath) {
        self.fastPath = fastPath
    }

    /// The connection's last answer again when the request is for the same target and it is still current;
    /// otherwise a new one from `FastPath` (`nil`: the full path answers).
    func answer<Target: Collection<UInt8>>(target: Target, channel: any Channel) -> FastPath.Answer? {
        if let last, last.target.elementsEqual(target), fastPath.isCurrent(last.answer) {
            if due(last.answer.stream) { fastPath.responder.stats.sawViewer(remoteAddress(channel), stream: last.answer.stream) }
            return last.answer
        }
        let bytes = Array(target)
        guard let answer = fastPath.answer(path: Substring(decoding: bytes, as: UTF8.self), remote: remoteAddress(channel),
                                           sawViewer: due) else { return nil }
        last = (bytes, answer)
        return answer
    }

    func count(_ answer: FastPath.Answer, sent: Int) {
        fastPath.count(answer, sent: sent, cache: &counters)
    }

    /// `Date` (RFC 9110 §6.6.1), formatted once per second per connection.
    func httpDate() -> String {
        let now = WallClock.now
        let second = now.millisecondsSince1970 / 1000
        if second != date.second { date = (second, now.httpDate) }
        return date.text
    }

    private func remoteAddress(_ channel: any Channel) -> SocketAddress? {
        if let remote { return remote }
        let r = channel.remoteAddress
        remote = .some(r)
        return r
    }

    /// Whether to count this connection's client as a viewer of `stream` now (at most once a second per stream).
    private func due(_ stream: String) -> Bool {
        let now = WallClock.now.millisecondsSince1970
        if stream == viewer.stream && now &- viewer.at < 1000 { return false }
        viewer = (stream, now)
        return true
    }
}

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
