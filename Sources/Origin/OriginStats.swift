import Hummingbird
import NIOCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Live counters of the origin, safe to read from any task.
public final class OriginStats: Sendable {
    private let requestCount = Atomic<Int>(0)
    private let sentBytes = Atomic<Int>(0)
    private struct Viewers {
        var clients: [ClientKey: ContinuousClock.Instant] = [:]
        /// The same per stream (registry name) the client fetched from.
        var perStream: [StreamViewer: ContinuousClock.Instant] = [:]
    }
    private struct StreamViewer: Hashable {
        let client: ClientKey
        let stream: String
    }
    private let viewers = Mutex(Viewers())
    /// How long a client counts as a viewer after its last playlist or segment request.
    public let viewerWindow: Duration

    public init(viewerWindow: Duration = .seconds(10)) {
        self.viewerWindow = viewerWindow
    }

    /// Requests answered (all routes, all statuses).
    public var requests: Int { requestCount.load(ordering: .relaxed) }
    /// Body bytes sent (HEAD sends none).
    public var bytesSent: Int { sentBytes.load(ordering: .relaxed) }
    /// Distinct client addresses (IP, not port) that fetched a playlist or segment in the last `viewerWindow`.
    public var activeViewers: Int {
        let cutoff = ContinuousClock.now - viewerWindow
        return viewers.withLock { v in
            v.clients = v.clients.filter { $0.value >= cutoff }
            return v.clients.count
        }
    }

    /// `activeViewers` per stream (the name it is registered under, `""` for the root); streams without any are left out.
    public func activeViewersByStream() -> [String: Int] {
        let cutoff = ContinuousClock.now - viewerWindow
        return viewers.withLock { v in
            v.perStream = v.perStream.filter { $0.value >= cutoff }
            var counts: [String: Int] = [:]
            for key in v.perStream.keys { counts[key.stream, default: 0] += 1 }
            return counts
        }
    }

    func countRequest(bytes: Int) {
        requestCount.add(1, ordering: .relaxed)
        if bytes > 0 { sentBytes.add(bytes, ordering: .relaxed) }
    }

    func sawViewer(_ address: SocketAddress?, stream: String = "") {
        guard let key = ClientKey(address) else { return }
        let now = ContinuousClock.now
        let cutoff = now - viewerWindow
        viewers.withLock { v in
            v.clients[key] = now
            v.perStream[StreamViewer(client: key, stream: stream)] = now
            if v.clients.count > 4096 { v.clients = v.clients.filter { $0.value >= cutoff } }
            if v.perStream.count > 16_384 { v.perStream = v.perStream.filter { $0.value >= cutoff } }
        }
    }
}

/// A client IP address packed into two words (no allocation per request).
struct ClientKey: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    init(high: UInt64, low: UInt64) { self.high = high; self.low = low }

    init?(_ address: SocketAddress?) {
        switch address {
        case .v4(let a)?:
            high = 0
            low = UInt64(a.address.sin_addr.s_addr)
        case .v6(let a)?:
            var addr = a.address.sin6_addr
            let words = withUnsafeBytes(of: &addr) { raw in
                (raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            }
            high = words.0
            low = words.1
        default:
            return nil
        }
    }
}
