import AsyncHTTPClient
import MediaCore
import NIOCore
import NIOHTTP1

/// The HTTP method objects are sent with (`--push-method`).
public enum PushMethod: String, Sendable, CaseIterable {
    case put = "PUT"
    case post = "POST"
}

/// One request to the ingest.
public struct PushRequest: Sendable, Equatable {
    public enum Method: String, Sendable { case put = "PUT", post = "POST", delete = "DELETE" }
    public let method: Method
    public let url: String
    public let contentType: String?
    public let body: MediaBytes

    public init(method: Method, url: String, contentType: String?, body: MediaBytes) {
        self.method = method
        self.url = url
        self.contentType = contentType
        self.body = body
    }

    public init(method: Method, url: String, contentType: String?, body: [UInt8]) {
        self.init(method: method, url: url, contentType: contentType, body: MediaBytes(body))
    }
}

/// What became of one attempt.
public enum PushResult: Sendable, Equatable {
    /// 2xx (and a 404 to a `DELETE`: the object is gone either way).
    case accepted
    /// The ingest answered with a refusal that another attempt will not change (4xx other than 408/429, 3xx).
    case refused(status: Int, reason: String)
    /// Worth another attempt: no connection, a timeout, 5xx, 408, 429.
    case failed(String)

    /// The verdict on an HTTP status code.
    public static func classify(status: Int, reason: String, method: PushRequest.Method) -> PushResult {
        switch status {
        case 200..<300: return .accepted
        case 404 where method == .delete: return .accepted
        case 408, 429, 500..<600: return .failed("\(status) \(reason)")
        default: return .refused(status: status, reason: reason)
        }
    }
}

/// Sends one request and says how it went; never throws (a failure is a result). Injected so tests need no network.
public protocol PushTransport: Sendable {
    func send(_ request: PushRequest) async -> PushResult
    func shutdown() async
}

/// The real transport: AsyncHTTPClient with one pool of persistent connections (HTTP/1.1 keep-alive, or HTTP/2
/// where an https ingest offers it), no redirects followed (an ingest that redirects a PUT is refusing it).
public final class HTTPPushTransport: PushTransport {
    private let client: HTTPClient
    private let requestTimeout: TimeAmount

    /// - Parameters:
    ///   - connectTimeout: to open a connection.
    ///   - readTimeout: the longest silence while waiting for the answer (a half-open connection to an ingest that
    ///     went away is found out by it).
    ///   - requestTimeout: a whole request; a live object later than this is hardly worth having.
    public init(connectTimeout: TimeAmount = .seconds(2), readTimeout: TimeAmount = .seconds(5),
                requestTimeout: TimeAmount = .seconds(10)) {
        let config = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: HTTPClient.Configuration.Timeout(connect: connectTimeout, read: readTimeout),
            connectionPool: HTTPClient.Configuration.ConnectionPool(idleTimeout: .seconds(60)))
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
        self.requestTimeout = requestTimeout
    }

    public func send(_ request: PushRequest) async -> PushResult {
        var r = HTTPClientRequest(url: request.url)
        r.method = switch request.method {
        case .put: .PUT
        case .post: .POST
        case .delete: .DELETE
        }
        if let contentType = request.contentType { r.headers.add(name: "Content-Type", value: contentType) }
        if request.method != .delete {
            var buffer = ByteBufferAllocator().buffer(capacity: request.body.count)
            for chunk in request.body.chunks { buffer.writeBytes(chunk) }
            r.body = .bytes(buffer)
        }
        do {
            let response = try await client.execute(r, timeout: requestTimeout)
            // Read the (small) answer to the end so the connection goes back to the pool.
            _ = try? await response.body.collect(upTo: 1 << 20)
            return PushResult.classify(status: Int(response.status.code), reason: response.status.reasonPhrase,
                                       method: request.method)
        } catch {
            return .failed("\(error)")
        }
    }

    public func shutdown() async {
        try? await client.shutdown()
    }
}
