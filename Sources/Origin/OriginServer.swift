import Foundation
import HLS
import MediaPresentation
import Hummingbird
import HummingbirdCore
import Logging
import MediaCore
import NIOCore
import NIOSSL
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
    /// The player page starts hls.js in low-latency mode (the stream has LL-HLS parts).
    public var lowLatencyPage = true
    /// Serve HTTPS with this certificate chain and key (PEM files), negotiating HTTP/2 or HTTP/1.1 by ALPN;
    /// `nil`: plain HTTP/1.1.
    public var tls: TLSFiles?

    // MARK: Access control (issue 12 §4)
    /// Signed URLs, Bearer/Basic credentials, `Cache-Control: private`, the CORS allow-list. Off by default.
    public var access = AccessControl()

    // MARK: Hostile clients
    /// Connection, header, timeout and held-request limits (`ConnectionLimits`).
    public var limits = ConnectionLimits()

    /// `GET /metrics` (Prometheus text format) and the counting behind it; `nil`: none (the path answers 404).
    /// Access control applies to it as to every path (a scraper sends Bearer or Basic credentials).
    public var metrics: OriginMetrics?

    // MARK: Streams at run time
    /// The streams configured now, and adding, changing and ending them (`/readyz` reads it; the control API calls
    /// it). `nil`: every registered presentation is configured, and there is no API.
    public var streams: (any StreamControl)?
    /// The control API's credential (`Authorization: Bearer SECRET`, `--api-token`); `nil`: no API (404).
    public var apiToken: String?

    /// A PEM certificate chain and its private key.
    public struct TLSFiles: Sendable {
        public var certificatePath: String
        public var privateKeyPath: String
        public init(certificatePath: String, privateKeyPath: String) {
            self.certificatePath = certificatePath
            self.privateKeyPath = privateKeyPath
        }

        /// The server's TLS configuration; throws a one-line error for a file that is missing or not PEM.
        /// Reads both files now: a one-line error before anything is served.
        public func validate() throws { _ = try serverConfiguration() }

        func serverConfiguration() throws -> TLSConfiguration {
            let chain: [NIOSSLCertificate]
            do {
                chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
            } catch {
                throw OriginError.tls("cannot read the certificate '\(certificatePath)': \(error)")
            }
            guard !chain.isEmpty else { throw OriginError.tls("no PEM certificate in '\(certificatePath)'") }
            let key: NIOSSLPrivateKey
            do {
                key = try NIOSSLPrivateKey(file: privateKeyPath, format: .pem)
            } catch {
                throw OriginError.tls("cannot read the private key '\(privateKeyPath)': \(error)")
            }
            return TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) },
                                                            privateKey: .privateKey(key))
        }
    }

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

/// The HTTP origin: Hummingbird 2 over a registry of presentations.
///
/// Routes (GET and HEAD; OPTIONS answers a CORS preflight with 204 on every path): `/` player page ·
/// `/hls.mjs` local hls.js · per presentation (at the root, or under `/<name>/`): `index.m3u8` multivariant and,
/// per rendition, what its `URIScheme` names (media playlist, init segments, segments, LL-HLS parts; a part not yet
/// published is waited for). A media playlist answers `_HLS_msn`/`_HLS_part` (blocking reload, RFC 8216bis
/// §6.2.5.2) and `_HLS_skip` (delta update, §6.2.5.1) when the stream is LL-HLS. Every response carries
/// `Access-Control-Allow-Origin: *`.
public struct OriginServer: Sendable {
    public let registry: PresentationRegistry
    public let configuration: OriginConfiguration
    public let logger: Logger
    public let stats: OriginStats
    let responder: OriginResponder

    public init(registry: PresentationRegistry, configuration: OriginConfiguration, logger: Logger) {
        self.registry = registry
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
                                                  contentLength: body.readableBytes, acceptRanges: true),
                    body: body)
            } else {
                logger.warning("hls.js not readable; the player page will use the CDN",
                               metadata: ["path": "\(path)", "cdn": "\(configuration.cdnFallbackURL)"])
            }
        }
        let html = PlayerPage.html(hlsJSURL: hlsJS != nil ? "./hls.mjs" : configuration.cdnFallbackURL,
                                   fallbackURL: hlsJS != nil ? configuration.cdnFallbackURL : nil,
                                   lowLatencyDefault: configuration.lowLatencyPage)
        let pageBody = ByteBuffer(string: html)
        let page = PreparedResponse(
            headers: ResponseHeaders.make(contentType: "text/html; charset=utf-8", cacheControl: "no-cache",
                                          contentLength: pageBody.readableBytes, acceptRanges: true),
            body: pageBody)
        self.responder = OriginResponder(registry: registry, stats: stats, page: page, hlsJS: hlsJS,
                                         firstSegmentWait: configuration.firstSegmentWait,
                                         blockingReloadTimeout: configuration.blockingReloadTimeout,
                                         partWait: configuration.partWait,
                                         urlScheme: configuration.tls == nil ? "http" : "https",
                                         access: configuration.access,
                                         cors: CORSHeadersMiddleware(allowedOrigins: configuration.access.corsOrigins),
                                         budget: BlockingBudget(perClient: configuration.limits.maxBlockedPerClient,
                                                                total: configuration.limits.maxBlocked),
                                         metrics: configuration.metrics,
                                         control: configuration.streams,
                                         apiToken: configuration.apiToken.flatMap { $0.isEmpty ? nil : $0 })
        self.connections = ConnectionCounter(limit: configuration.limits.maxConnections)
    }

    /// Connections open now (on the plain or the TLS port).
    let connections: ConnectionCounter

    /// The Hummingbird application (also used by tests with `app.test(.router)`). With `tls`, HTTPS where ALPN picks
    /// HTTP/2 (`h2`) or HTTP/1.1; blocking reloads, preload hints and chunked DASH segments are then streams of one
    /// connection.
    func makeApplication(onStarted: @Sendable @escaping (Int) -> Void = { _ in }) throws -> some ApplicationProtocol {
        let limits = configuration.limits
        let server: HTTPServerBuilder
        // The accept queue: Hummingbird's default of 256 overflows under a burst of new connections (viewers joining
        // at once, an edge reconnecting its pool), and each dropped SYN costs its client a 1-s retransmission: 5,000
        // connections took 17.5 s against this origin, 17 of them dropped (`nstat TcpExtListenOverflows`). 4096 is
        // what Linux allows by default (`net.core.somaxconn`, which caps it).
        let serverConfiguration = ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port),
                                                           backlog: 4096)
        if let tls = configuration.tls {
            // HTTP/2 or HTTP/1.1 by ALPN, with the same limits as the plain port (OriginTLSChannel); a connection
            // beyond the limit is closed before its handshake (rather than answered 503).
            let fastPath = FastPath(responder: responder, logLevel: logger.logLevel)
            let tlsConfiguration = try tls.serverConfiguration()
            let connections = self.connections
            server = HTTPServerBuilder { responder in
                try OriginTLSChannel(tlsConfiguration: tlsConfiguration, limits: limits, connections: connections,
                                     fastPath: fastPath, responder: responder)
            }
        } else {
            let connections = self.connections
            let fastPath = FastPath(responder: responder, logLevel: logger.logLevel)
            server = HTTPServerBuilder { responder in
                OriginHTTP1Channel(responder: responder, limits: limits, connections: connections, fastPath: fastPath)
            }
        }
        return Application(
            responder: responder,
            server: server,
            configuration: serverConfiguration,
            onServerRunning: { channel in onStarted(channel.localAddress?.port ?? 0) },
            logger: RequestLogHandler.wrap(logger))
    }

    /// Serves until the surrounding task is cancelled, then shuts down gracefully and returns.
    ///
    /// Cancellation triggers a graceful shutdown of the service group (stop accepting, let in-flight
    /// responses finish, close idle keep-alive connections) instead of tearing the channels down.
    public func run(onStarted: @Sendable @escaping (_ boundPort: Int) -> Void = { _ in }) async throws {
        let group = ServiceGroup(configuration: .init(services: [try makeApplication(onStarted: onStarted)],
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
/// With `allowedOrigins` (`--cors-origin`), `Access-Control-Allow-Origin` names the request's `Origin` when it is
/// listed and is left out otherwise, with `Vary: Origin` either way (the answer depends on it).
struct CORSHeadersMiddleware<Context>: RouterMiddleware {
    var allowedOrigins: Set<String>? = nil

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let allowedOrigins else { return try await handleAnyOrigin(request, context: context, next: next) }
        var response = try await handleAnyOrigin(request, context: context, next: next)
        if let origin = request.headers[.origin], allowedOrigins.contains(origin) {
            response.headers[.accessControlAllowOrigin] = origin
        } else {
            response.headers[.accessControlAllowOrigin] = nil
            response.headers[.accessControlExposeHeaders] = nil
            response.headers[.accessControlAllowMethods] = nil
            response.headers[.accessControlAllowHeaders] = nil
            response.headers[.accessControlMaxAge] = nil
        }
        response.headers[.vary] = response.headers[.vary].map { $0 + ", Origin" } ?? "Origin"
        return response
    }

    private func handleAnyOrigin(_ request: Request, context: Context,
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


public enum OriginError: Error, Equatable, CustomStringConvertible {
    case tls(String)
    public var description: String {
        switch self {
        case .tls(let message): message
        }
    }
}
