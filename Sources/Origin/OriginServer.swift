import Foundation
import HLS
import Hummingbird
import Logging
import MediaCore
import NIOCore
import ServiceLifecycle

/// Where and how the origin listens.
public struct OriginConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// A local `hls.mjs` (ES module exporting `Hls` as default) served at `/hls.mjs`. When `nil` or unreadable,
    /// the player page imports `cdnFallbackURL` instead and `/hls.mjs` answers 404.
    public var hlsJSPath: String?
    public var cdnFallbackURL: String
    /// How long a playlist request waits for the first segment before answering 503. `nil`: two target durations.
    public var firstSegmentWait: Duration?
    /// LL-HLS blocking playlist reload: how long `?_HLS_msn=` is held before 503. `nil`: three target durations
    /// (RFC 8216bis §6.2.5.2).
    public var blockingReloadTimeout: Duration?
    /// LL-HLS preload hint: how long a request for a part not yet published waits. `nil`: three part targets.
    public var partWait: Duration?

    public init(host: String = "127.0.0.1", port: Int = 8080, hlsJSPath: String? = nil,
                cdnFallbackURL: String = "https://cdn.jsdelivr.net/npm/hls.js@1.6.15/dist/hls.mjs",
                firstSegmentWait: Duration? = nil, blockingReloadTimeout: Duration? = nil, partWait: Duration? = nil) {
        self.blockingReloadTimeout = blockingReloadTimeout
        self.partWait = partWait
        self.host = host
        self.port = port
        self.hlsJSPath = hlsJSPath
        self.cdnFallbackURL = cdnFallbackURL
        self.firstSegmentWait = firstSegmentWait
    }
}

/// The request context: no router storage, just the channel (for the client address) and the logger.
public struct OriginRequestContext: InitializableFromSource, RequestContextSource {
    public let channel: any Channel
    public let logger: Logger

    public init(source: ApplicationRequestContextSource) {
        self.channel = source.channel
        self.logger = source.logger
    }
}

/// The HTTP origin: Hummingbird 2 over `LiveStream` snapshots.
///
/// Routes (GET and HEAD; OPTIONS answers a CORS preflight with 204 on every path):
/// `/` player page · `/hls.mjs` local hls.js · `/index.m3u8` multivariant · `/stream.m3u8` media playlist ·
/// `/init.mp4`, `/init<N>.mp4` · `/seg<N>.m4s` · LL-HLS parts `/seg<N>.<i>.m4s` (a not-yet-published part
/// blocks until it is). `/stream.m3u8?_HLS_msn=M[&_HLS_part=P]` is a blocking reload when the stream is
/// LL-HLS (RFC 8216bis §6.2.5.2; `_HLS_skip` is ignored: no `CAN-SKIP-UNTIL`). Every response carries `Access-Control-Allow-Origin: *`.
public struct OriginServer: Sendable {
    public let stream: LiveStream
    public let configuration: OriginConfiguration
    public let logger: Logger
    public let stats: OriginStats
    let responder: OriginResponder

    public init(stream: LiveStream, configuration: OriginConfiguration, logger: Logger) {
        self.stream = stream
        self.configuration = configuration
        self.logger = logger
        let stats = OriginStats()
        self.stats = stats

        var hlsJS: PreparedResponse?
        if let path = configuration.hlsJSPath {
            if let data = FileManager.default.contents(atPath: path), !data.isEmpty {
                let body = ByteBuffer(bytes: data)
                hlsJS = PreparedResponse(
                    headers: ResponseHeaders.make(contentType: "text/javascript; charset=utf-8",
                                                  cacheControl: "public, max-age=3600",
                                                  contentLength: body.readableBytes),
                    body: body)
            } else {
                logger.warning("hls.js not readable; the player page will use the CDN",
                               metadata: ["path": "\(path)", "cdn": "\(configuration.cdnFallbackURL)"])
            }
        }
        let html = PlayerPage.html(hlsJSURL: hlsJS != nil ? "/hls.mjs" : configuration.cdnFallbackURL,
                                   fallbackURL: hlsJS != nil ? configuration.cdnFallbackURL : nil,
                                   lowLatencyDefault: stream.partTarget != nil)
        let pageBody = ByteBuffer(string: html)
        let page = PreparedResponse(
            headers: ResponseHeaders.make(contentType: "text/html; charset=utf-8", cacheControl: "no-cache",
                                          contentLength: pageBody.readableBytes),
            body: pageBody)
        self.responder = OriginResponder(stream: stream, stats: stats, page: page, hlsJS: hlsJS,
                                         firstSegmentWait: configuration.firstSegmentWait,
                                         blockingReloadTimeout: configuration.blockingReloadTimeout,
                                         partWait: configuration.partWait)
    }

    /// The Hummingbird application (also used by tests with `app.test(.router)`).
    func makeApplication(onStarted: @Sendable @escaping (Int) -> Void = { _ in }) -> some ApplicationProtocol {
        Application(
            responder: responder,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port)),
            onServerRunning: { channel in onStarted(channel.localAddress?.port ?? 0) },
            logger: RequestLogHandler.wrap(logger))
    }

    /// Serves until the surrounding task is cancelled, then shuts down gracefully and returns.
    ///
    /// Cancellation triggers a graceful shutdown of the service group (stop accepting, let in-flight
    /// responses finish, close idle keep-alive connections) instead of tearing the channels down.
    public func run(onStarted: @Sendable @escaping (_ boundPort: Int) -> Void = { _ in }) async throws {
        let group = ServiceGroup(configuration: .init(services: [makeApplication(onStarted: onStarted)],
                                                      gracefulShutdownSignals: [], logger: logger))
        // The group runs in its own (uncancelled) task so that our cancellation becomes a graceful shutdown.
        let running = Task { try await group.run() }
        try await withTaskCancellationHandler {
            try await running.value
        } onCancel: {
            Task { await group.triggerGracefulShutdown() }
        }
    }
}

/// Adds CORS to every response (including errors) and answers preflight `OPTIONS` with 204.
/// Responses that already carry `Access-Control-Allow-Origin` (the prebuilt ones) are passed through untouched.
struct CORSHeadersMiddleware<Context>: RouterMiddleware {
    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.method == .options {
            var h = ResponseHeaders.cors
            h[.accessControlAllowMethods] = ResponseHeaders.allowMethods
            h[.accessControlAllowHeaders] = request.headers[.accessControlRequestHeaders] ?? ResponseHeaders.defaultAllowHeaders
            h[.accessControlMaxAge] = "86400"
            h[.contentLength] = "0"
            return Response(status: .noContent, headers: h, body: .init())
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            let r = PreparedResponse.text(.internalServerError, "Internal Server Error\n")
            response = Response(status: r.status, headers: r.headers, body: .init(byteBuffer: r.body))
        }
        if !response.headers.contains(.accessControlAllowOrigin) {
            response.headers.append(contentsOf: ResponseHeaders.cors)
        }
        return response
    }
}

struct OriginResponder: HTTPResponder {
    typealias Context = OriginRequestContext

    let stream: LiveStream
    let stats: OriginStats
    let page: PreparedResponse
    let hlsJS: PreparedResponse?
    /// `nil`: two target durations of the stream.
    let firstSegmentWait: Duration?
    /// `nil`: three target durations.
    let blockingReloadTimeout: Duration?
    /// `nil`: three part targets.
    let partWait: Duration?
    let cors = CORSHeadersMiddleware<OriginRequestContext>()

    static let maxPathLength = 256
    static let notFound = PreparedResponse.text(.notFound, "Not Found\n")
    static let badRequest = PreparedResponse.text(.badRequest, "Bad Request\n")
    static let uriTooLong = PreparedResponse.text(.uriTooLong, "URI Too Long\n")
    static let methodNotAllowed = PreparedResponse.text(.methodNotAllowed, "Method Not Allowed\n",
                                                        extra: [.allow: ResponseHeaders.allowMethods])

    func respond(to request: Request, context: Context) async throws -> Response {
        let response = try await cors.handle(request, context: context) { request, context in
            await self.route(request, context)
        }
        context.logger.debug("request", metadata: [
            "method": "\(request.method.rawValue)", "path": "\(request.uri.path.prefix(Self.maxPathLength))",
            "status": "\(response.status.code)", "remote": "\(context.channel.remoteAddress?.description ?? "-")",
        ])
        return response
    }

    private func send(_ prepared: PreparedResponse, _ request: Request) -> Response {
        send(prepared.status, prepared.headers, prepared.body, request)
    }

    private func send(_ status: HTTPResponse.Status, _ headers: HTTPFields, _ body: ByteBuffer, _ request: Request) -> Response {
        if request.method == .head {
            stats.countRequest(bytes: 0)
            return Response(status: status, headers: headers, body: .init())
        }
        stats.countRequest(bytes: body.readableBytes)
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }

    func route(_ request: Request, _ context: Context) async -> Response {
        guard request.method == .get || request.method == .head else { return send(Self.methodNotAllowed, request) }
        let path = request.uri.path
        let utf8 = path.utf8
        guard utf8.count <= Self.maxPathLength else { return send(Self.uriTooLong, request) }
        guard utf8.first == UInt8(ascii: "/"), !Self.hasDotDot(utf8) else { return send(Self.badRequest, request) }

        if let sequence = Self.number(in: utf8, prefix: "/seg", suffix: ".m4s") {
            stats.sawViewer(context.channel.remoteAddress)
            guard let seg = stream.snapshot().segment(sequence) else { return send(Self.notFound, request) }
            return send(.ok, seg.headers, seg.bytes, request)
        }
        if let (sequence, index) = Self.partNumbers(in: path) {
            stats.sawViewer(context.channel.remoteAddress)
            return await sendPart(sequence, index, request)
        }
        switch path {
        case "/stream.m3u8", "/index.m3u8":
            stats.sawViewer(context.channel.remoteAddress)
            let multivariant = path == "/index.m3u8"
            if !multivariant, stream.partTarget != nil, let blocking = await blockingReload(request) {
                return blocking
            }
            var snapshot = stream.snapshot()
            if (multivariant ? snapshot.multivariantBody : snapshot.mediaPlaylistBody) == nil {
                _ = await stream.waitForFirstSegment(timeout: firstSegmentWait ?? .seconds(2 * stream.targetDuration))
                snapshot = stream.snapshot()
            }
            if multivariant, let body = snapshot.multivariantBody {
                return send(.ok, snapshot.multivariantHeaders, body, request)
            } else if !multivariant, let body = snapshot.mediaPlaylistBody {
                return send(.ok, snapshot.mediaPlaylistHeaders, body, request)
            }
            let r = PreparedResponse.text(.serviceUnavailable, "No segment yet, retry shortly\n",
                                          extra: [.retryAfter: String(stream.targetDuration)])
            return send(r, request)
        case "/", "/index.html":
            return send(page, request)
        case "/hls.mjs":
            return send(hlsJS ?? Self.notFound, request)
        default:
            if path == "/init.mp4" {
                return sendInit(0, request)
            }
            if let n = Self.number(in: utf8, prefix: "/init", suffix: ".mp4"), n > 0, n <= UInt64(Int.max) {
                return sendInit(Int(n), request)
            }
            return send(Self.notFound, request)
        }
    }

    static let serviceUnavailable = PreparedResponse.text(.serviceUnavailable, "Not available yet, retry shortly\n",
                                                          extra: [.retryAfter: "1"])

    /// Handles `_HLS_msn`/`_HLS_part`; `nil` when the request has no delivery directive (plain reload).
    private func blockingReload(_ request: Request) async -> Response? {
        let query = request.uri.queryParameters
        let msnText = query.get("_HLS_msn")
        let partText = query.get("_HLS_part")
        guard let msnText else {
            return partText == nil ? nil : send(Self.badRequest, request)   // _HLS_part needs _HLS_msn
        }
        guard let msn = Self.decimal(msnText) else { return send(Self.badRequest, request) }
        var part: Int?
        if let partText {
            guard let p = Self.decimal(partText), p <= UInt64(Int32.max) else { return send(Self.badRequest, request) }
            part = Int(p)
        }
        let snapshot = stream.snapshot()
        // More than two segments beyond the last one in the playlist: 400 (§6.2.5.2).
        if msn > snapshot.nextSequence + 1 { return send(Self.badRequest, request) }
        let timeout = blockingReloadTimeout ?? .seconds(3 * max(1, snapshot.playlist?.targetDuration ?? stream.targetDuration))
        let ready = await stream.waitForPlaylist(msn: msn, part: part, timeout: timeout)
        let now = stream.snapshot()
        guard ready, let body = now.mediaPlaylistBody else { return send(Self.serviceUnavailable, request) }
        return send(.ok, now.mediaPlaylistHeaders, body, request)
    }

    private func sendPart(_ sequence: UInt64, _ index: Int, _ request: Request) async -> Response {
        if let part = stream.snapshot().part(sequence, index) { return send(.ok, part.headers, part.bytes, request) }
        guard let target = stream.currentPartTarget else { return send(Self.notFound, request) }
        let timeout = partWait ?? .microseconds(3 * MediaTime.rescale(target.value, from: target.timescale, to: 1_000_000,
                                                                      rounding: .up))
        _ = await stream.waitForPart(msn: sequence, index: index, timeout: timeout)
        let snapshot = stream.snapshot()
        if let part = snapshot.part(sequence, index) { return send(.ok, part.headers, part.bytes, request) }
        // Never will exist → 404; still possible (timed out) → 503.
        return send(snapshot.partMayAppear(sequence, index) ? Self.serviceUnavailable : Self.notFound, request)
    }

    /// Strict unsigned decimal (1–19 digits).
    static func decimal(_ s: String) -> UInt64? {
        let u = s.utf8
        guard !u.isEmpty, u.count <= 19, u.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return UInt64(s)
    }

    /// `/seg<N>.<i>.m4s` → (N, i); decimal without sign or leading zeros.
    static func partNumbers(in path: String) -> (UInt64, Int)? {
        guard path.hasPrefix("/seg"), path.hasSuffix(".m4s") else { return nil }
        let middle = path.dropFirst(4).dropLast(4)
        let pieces = middle.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 2 else { return nil }
        func number(_ p: Substring) -> UInt64? {
            guard p.first != "0" || p.count == 1 else { return nil }
            return decimal(String(p))
        }
        guard let n = number(pieces[0]), let i = number(pieces[1]), i <= UInt64(Int32.max) else { return nil }
        return (n, Int(i))
    }

    private func sendInit(_ index: Int, _ request: Request) -> Response {
        guard let i = stream.snapshot().initSegment(index) else { return send(Self.notFound, request) }
        return send(.ok, i.headers, i.bytes, request)
    }

    static func hasDotDot(_ utf8: String.UTF8View) -> Bool {
        var previousDot = false
        for c in utf8 {
            let dot = c == UInt8(ascii: ".")
            if dot && previousDot { return true }
            previousDot = dot
        }
        return false
    }

    /// `prefix` + decimal digits (no sign, no leading zero unless "0", at most 19 digits) + `suffix`.
    static func number(in utf8: String.UTF8View, prefix: StaticString, suffix: StaticString) -> UInt64? {
        let p = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        let s = UnsafeBufferPointer(start: suffix.utf8Start, count: suffix.utf8CodeUnitCount)
        let count = utf8.count
        guard count > p.count + s.count, count - p.count - s.count <= 19 else { return nil }
        var i = utf8.startIndex
        for c in p {
            guard utf8[i] == c else { return nil }
            i = utf8.index(after: i)
        }
        let digitsEnd = utf8.index(i, offsetBy: count - p.count - s.count)
        var j = digitsEnd
        for c in s {
            guard utf8[j] == c else { return nil }
            j = utf8.index(after: j)
        }
        if utf8[i] == UInt8(ascii: "0") && utf8.index(after: i) != digitsEnd { return nil }
        var value: UInt64 = 0
        while i != digitsEnd {
            let c = utf8[i]
            guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(c - UInt8(ascii: "0")))
            guard !o1, !o2 else { return nil }
            value = a
            i = utf8.index(after: i)
        }
        return value
    }
}
