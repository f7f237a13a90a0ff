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
