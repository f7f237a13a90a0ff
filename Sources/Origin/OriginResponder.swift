import HLS
import Hummingbird
import Logging
import MediaCore
import MediaPresentation
import Dispatch
import NIOCore

/// Routes a request to the page, hls.js, or an object of a registered presentation. Owns the HTTP side only:
/// status codes, headers and `ByteBuffer`s; what exists and when is the presentations' business.
struct OriginResponder: HTTPResponder {
    typealias Context = OriginRequestContext

    let registry: PresentationRegistry
    let stats: OriginStats
    let page: PreparedResponse
    let hlsJS: PreparedResponse?
    /// `nil`: two target durations.
    let firstSegmentWait: Duration?
    /// `nil`: three target durations.
    let blockingReloadTimeout: Duration?
    /// `nil`: three part targets.
    let partWait: Duration?
    /// `http` or `https`: absolute URLs the origin names (the DASH time endpoint).
    var urlScheme = "http"
    /// Signatures, credentials and the CORS allow-list (off by default).
    var access = AccessControl()
    var cors = CORSHeadersMiddleware<OriginRequestContext>()
    let playlists = PlaylistCache()
    /// Bounds on LL-HLS requests held at once (`ConnectionLimits.maxBlockedPerClient`, `.maxBlocked`).
    var budget = BlockingBudget(perClient: ConnectionLimits().maxBlockedPerClient, total: ConnectionLimits().maxBlocked)
    /// `/metrics` and what it counts; `nil`: no `/metrics` (404) and nothing counted.
    var metrics: OriginMetrics?
    /// Player QoE beacons (`POST qoe`), counted in `metrics`.
    let qoeIntake = QoEIntake()
    /// The streams configured now and their control (`/readyz`; the API); `nil`: every registered stream.
    var control: (any StreamControl)?
    /// The control API's credential (`Authorization: Bearer`); `nil`: no API (its paths answer 404).
    var apiToken: String?


    /// A page rendered per request (the stream list): `no-cache`.
    static func html(_ text: String) -> PreparedResponse {
        let body = ByteBuffer(string: text)
        return PreparedResponse(headers: ResponseHeaders.make(contentType: "text/html; charset=utf-8", cacheControl: "no-cache",
                                                              contentLength: body.readableBytes),
                                body: body)
    }

    /// `/streams.json`: `no-cache` (it changes with every segment).
    static func json(_ body: ByteBuffer) -> PreparedResponse {
        PreparedResponse(headers: ResponseHeaders.make(contentType: "application/json", cacheControl: "no-cache",
                                                       contentLength: body.readableBytes),
                         body: body)
    }
    static let logger = Logger(label: "hls-origin")
    static let notFound = PreparedResponse.text(.notFound, "Not Found\n")
    static let badRequest = PreparedResponse.text(.badRequest, "Bad Request\n")
    static let uriTooLong = PreparedResponse.text(.uriTooLong, "URI Too Long\n")
    static let methodNotAllowed = PreparedResponse.text(.methodNotAllowed, "Method Not Allowed\n",
                                                        extra: [.allow: ResponseHeaders.allowMethods])
    static let serviceUnavailable = PreparedResponse.text(.serviceUnavailable, "Not available yet, retry shortly\n",
                                                          extra: [.retryAfter: "1"])

    func respond(to request: Request, context: Context) async throws -> Response {
        let response = try await cors.handle(request, context: context) { request, context in
            await self.route(request, path: Substring(request.uri.path), remote: context.channel.remoteAddress)
        }
        // Health probes come every few seconds from every load balancer: not logged one by one.
        if request.uri.path == "/healthz" || request.uri.path == "/readyz" { return response }
        context.logger.debug("request", metadata: [
            "method": "\(request.method.rawValue)", "path": "\(request.uri.path.prefix(Route.maxPathLength))",
            "query": "\(Self.redacted(request.uri.query?.prefix(Route.maxPathLength) ?? ""))",
            "status": "\(response.status.code)", "remote": "\(context.channel.remoteAddress?.description ?? "-")",
        ])
        return response
    }

    /// A query for the log with the URL signature's value left out (a signed URL is a credential until it expires).
    static func redacted(_ query: Substring) -> String {
        guard query.contains("hls_sig=") else { return String(query) }
        return query.split(separator: "&", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("hls_sig=") ? "hls_sig=(redacted)" : String($0) }
            .joined(separator: "&")
    }

    func send(_ prepared: PreparedResponse, _ request: Request) -> Response {
        send(prepared.status, prepared.headers, Body(prepared.body), request)
    }

    func send(_ status: HTTPResponse.Status, _ headers: HTTPFields, _ body: ByteBuffer, _ request: Request) -> Response {
        send(status, headers, Body(body), request)
    }

    /// The one place responses go out. A 200 for a served object (its prebuilt headers carry `Accept-Ranges`)
    /// answers a `Range` request (`RangeRequest`) with 206 and slices of the same buffers (no copy), or 416.
    func send(_ status: HTTPResponse.Status, _ headers: HTTPFields, _ body: Body, _ request: Request) -> Response {
        // RFC 9110 §13.1.2: a GET/HEAD whose If-None-Match matches the object's ETag gets 304, headers but no body.
        if status == .ok, let tag = headers[.eTag], let inm = request.headers[.ifNoneMatch], Validators.noneMatch(inm, tag) {
            var h = headers
            h[.contentLength] = nil
            h[.acceptRanges] = nil
            stats.countRequest(bytes: 0)
            return Response(status: .notModified, headers: h, body: .init())
        }
        // RFC 9110 §13.1.5: Range applies when If-Range is absent or names the current ETag (a date never matches:
        // the ETag is the strong validator here); otherwise the whole object is sent.
        if status == .ok, let range = request.headers[.range], headers[.acceptRanges] != nil,
           request.headers[.ifRange].map({ $0 == headers[.eTag] }) ?? true {
            switch RangeRequest.parse(range, length: body.count) {
            case .whole:
                break
            case .unsatisfiable:
                let r = PreparedResponse.text(.rangeNotSatisfiable, "Range Not Satisfiable\n",
                                              extra: [.contentRange: RangeRequest.unsatisfiedRange(length: body.count)])
                return deliver(r.status, r.headers, Body(r.body), request)
            case .partial(let r):
                var h = headers
                h[.contentLength] = String(r.count)
                h[.contentRange] = RangeRequest.contentRange(r, length: body.count)
                return deliver(.partialContent, h, body.slice(r), request)
            }
        }
        return deliver(status, headers, body, request)
    }

    private func deliver(_ status: HTTPResponse.Status, _ headers: HTTPFields, _ body: Body, _ request: Request) -> Response {
        if request.method == .head {
            stats.countRequest(bytes: 0)
            return Response(status: status, headers: headers, body: .init())
        }
        stats.countRequest(bytes: body.count)
        return Response(status: status, headers: headers, body: body.responseBody)
    }

    /// Answers one request for `path` (the request's path, or what follows the mount point of `OriginMiddleware`),
    /// and counts it in `metrics`. The path's route is resolved once, here, and read by everything after.
    func route(_ request: Request, path: Substring, remote: SocketAddress?) async -> Response {
        let route = Route.validate(path) == nil ? Route.resolve(path, in: registry) : nil
        let response = await routeUncounted(request, path: path, route: route, remote: remote)
        if let metrics {
            let (stream, rendition, kind) = route?.labels ?? ("", "", "other")
            let sent = request.method == .head || response.status == .notModified
                ? 0 : (response.headers[.contentLength].flatMap { Int($0) } ?? 0)
            metrics.countRequest(stream: stream, rendition: rendition, kind: kind, status: response.status.code, bytes: sent)
        }
        return response
    }

    private func routeUncounted(_ request: Request, path: Substring, route: Route?, remote: SocketAddress?) async -> Response {
        // Open to load balancers whatever the access control; the API has its own credential and methods.
        switch route {
        case .healthz?: return health(request)
        case .readyz?: return readiness(request)
        case .api(let api)?: return await self.api(api, request)
        // A stream's events API: the control API's credential, not the viewers' access control.
        case .stream(_, let presentation, .events)?: return await postEvent(request, presentation)
        case .stream(_, let presentation, .subtitles)?: return await postSubtitle(request, presentation)
        case nil where path.hasPrefix("/api/"):
            // Whatever the method: the path is what is wrong.
            return send(Route.validate(path) == .tooLong ? Self.uriTooLong : Self.badRequest, request)
        default: break
        }
        // POST only to a beacon path (a stream's or not: an unknown one is then 404, not 405).
        guard request.method == .get || request.method == .head || (request.method == .post && path.hasSuffix("/qoe")) else {
            return send(Self.methodNotAllowed, request)
        }
        guard let route else {
            return send(Route.validate(path) == .tooLong ? Self.uriTooLong : Self.badRequest, request)
        }
        guard access.isEnabled else { return await serve(request, route, remote: remote, uriQuery: "") }
        // Signatures name the path the client asked for (with the mount point, if any).
        switch access.check(request, path: Substring(request.uri.path)) {
        case .denied(let r):
            return send(r, request)
        case .allowed(let uriQuery):
            var response = await serve(request, route, remote: remote, uriQuery: uriQuery)
            if !access.edgeChecks {
                response.headers[.cacheControl] = AccessControl.privateCacheControl(response.headers[.cacheControl])
            }
            return response
        }
    }

    /// `uriQuery`: the signature query the URIs of a playlist or manifest carry (`""`: none).
    private func serve(_ request: Request, _ route: Route, remote: SocketAddress?, uriQuery: String) async -> Response {
        switch route {
        case .page:
            // Several named streams and none at the root: the list of streams.
            if registry.presentation(named: "") == nil && !registry.names.isEmpty { return send(Self.html(StreamDirectory.html(registry, stats)), request) }
            return send(page, request)
        case .hlsJS: return send(hlsJS ?? Self.notFound, request)
        case .streamsJSON: return send(Self.json(StreamDirectory.json(registry, stats)), request)
        case .metrics: return send(metrics?.scrape(registry, stats) ?? Self.notFound, request)
        case .time: return time(request)
        case .redirect(let location): return send(.text(.movedPermanently, "Moved\n", extra: [.location: location]), request)
        case .notFound, .healthz, .readyz, .api: return send(Self.notFound, request)
        case .stream(let name, let presentation, let inner):
            return await serve(request, name: name, presentation, inner, remote: remote, uriQuery: uriQuery)
        }
    }

    private func serve(_ request: Request, name: String, _ presentation: LivePresentation, _ route: Route.StreamRoute,
                       remote: SocketAddress?, uriQuery: String) async -> Response {
        let stream = OriginMetrics.streamLabel(name)
        switch route {
        // A named stream's own player page and the hls.js it loads (`./hls.mjs`, relative to `/cam1/`).
        case .page: return send(page, request)
        case .hlsJS: return send(hlsJS ?? Self.notFound, request)
        case .qoe: return await qoe(request, stream: stream, remote: remote)
        case .events: return await postEvent(request, presentation)
        case .subtitles: return await postSubtitle(request, presentation)
        case .thumbnail: return await thumbnail(name, request)
        case .tiles(let sheets, let object):
            stats.sawViewer(remote, stream: name)
            return tiles(sheets, object, request, uriQuery)
        case .time:
            stats.sawViewer(remote, stream: name)
            return time(request)
        case .multivariant:
            stats.sawViewer(remote, stream: name)
            return await multivariant(presentation, request, uriQuery, tiles: registry.tileSheets(for: name))
        case .manifest:
            stats.sawViewer(remote, stream: name)
            return await manifest(presentation, request, uriQuery, tiles: registry.tileSheets(for: name))
        case .unknown:
            stats.sawViewer(remote, stream: name)
            return send(Self.notFound, request)
        case .key(let id):
            guard let key = presentation.contentKey(id) else { return send(Self.notFound, request) }
            return send(KeyDelivery.response(key), request)
        case .beforeLayout(let inner):
            stats.sawViewer(remote, stream: name)
            // Not announced yet: only a playlist can be waited for.
            guard inner.hasSuffix(".m3u8"), await presentation.waitUntilPlayable(timeout: firstWait(nil)),
                  let layout = presentation.layout, let (r, object) = layout.resolve(inner),
                  object == .playlist || object == .iFramePlaylist else {
                return send(Self.retryLater(presentation), request)
            }
            if object == .iFramePlaylist { return await iFramePlaylist(presentation, layout, r, request, uriQuery) }
            return await mediaPlaylist(presentation, layout, r, request, uriQuery, remote, stream: stream)
        case .object(let r, let object, let layout):
            stats.sawViewer(remote, stream: name)
            let window = layout.windows[r]
            switch object {
            case .playlist:
                return await mediaPlaylist(presentation, layout, r, request, uriQuery, remote, stream: stream)
            case .iFramePlaylist:
                return await iFramePlaylist(presentation, layout, r, request, uriQuery)
            case .initSegment(let i):
                guard let o = window.snapshot().initSegment(i) else { return send(Self.notFound, request) }
                return send(.ok, o.payload.headers, o.payload.body, request)
            case .segment(let n):
                guard let o = window.snapshot().segment(n) else { return await pendingSegment(window, n, request) }
                guard let recorded = o.payload.recorded else { return send(.ok, o.payload.headers, o.payload.body, request) }
                return await sendRecorded(recorded, request)
            case .part(let n, let i):
                return await part(window, n, i, request, remote, labels: (stream, layout.renditions[r].name))
            }
        }
    }

    /// A segment of a time-shift window read back from the recording. A file that cannot be read (removed from
    /// under the origin) answers 404, as an evicted segment does.
    private func sendRecorded(_ segment: RecordedSegment, _ request: Request) async -> Response {
        do {
            let body = try await segment.read()
            return send(.ok, ResponseHeaders.segment(contentLength: body.readableBytes, etag: Validators.entityTag(body),
                                                     lastModified: nil), body, request)
        } catch {
            Self.logger.warning("time-shift: \(error)")
            return send(Self.notFound, request)
        }
    }

    func firstWait(_ layout: LivePresentation.Layout?) -> Duration {
        firstSegmentWait ?? .seconds(2 * (layout?.policy.targetDuration ?? 1))
    }

    static func retryLater(_ p: LivePresentation) -> PreparedResponse {
        PreparedResponse.text(.serviceUnavailable, p.isFinished ? "The stream ended before it had a segment\n" : "No segment yet, retry shortly\n",
                              extra: [.retryAfter: "1"])
    }
}
