import Foundation
import Hummingbird
import Logging
import NIOCore

/// Mounts an origin on an application's own Hummingbird router, the way an app once embedded a small HTTP server
/// beside its encoder: requests under `prefix` (`/live/index.m3u8`, `/live/720p/seg3.m4s`, the player page at
/// `/live/`) are answered by the origin, with its CORS headers; everything else goes on to the app's routes.
///
/// ```swift
/// let presentation = LivePresentation.live()
/// router.add(middleware: OriginMiddleware(registry: PresentationRegistry(root: presentation), mountedAt: "/live"))
/// ```
public struct OriginMiddleware<Context: RequestContext>: RouterMiddleware {
    let responder: OriginResponder
    let prefix: String
    private let cors: CORSHeadersMiddleware<Context>

    /// - Parameters:
    ///   - prefix: where the origin's paths start (`""`: at the root), without a trailing `/`.
    ///   - configuration: page and timeout settings (`host`/`port` are the app's, not used here).
    public init(registry: PresentationRegistry, mountedAt prefix: String = "", configuration: OriginConfiguration = .init(),
                logger: Logger = Logger(label: "hls-origin")) {
        precondition(prefix.isEmpty || (prefix.hasPrefix("/") && !prefix.hasSuffix("/")), "mount at \"\" or \"/path\"")
        self.prefix = prefix
        cors = CORSHeadersMiddleware(allowedOrigins: configuration.access.corsOrigins)
        responder = OriginServer(registry: registry, configuration: configuration, logger: logger).responder
    }

    public func handle(_ request: Request, context: Context,
                       next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard prefix.isEmpty || path == prefix || path.hasPrefix(prefix + "/") else { return try await next(request, context) }
        if !prefix.isEmpty && path == prefix {
            // The page's relative URLs need the trailing slash.
            return Response(status: .movedPermanently, headers: [.location: prefix + "/", .contentLength: "0"])
        }
        let inner = path.dropFirst(prefix.count)
        let remote = (context as? any RemoteAddressRequestContext)?.remoteAddress
        let response = try await cors.handle(request, context: context) { request, _ in
            await responder.route(request, path: inner, remote: remote)
        }
        // Mounted at the root, the origin shares the namespace: what it does not know goes on to the app.
        if prefix.isEmpty && response.status == .notFound { return try await next(request, context) }
        return response
    }
}
