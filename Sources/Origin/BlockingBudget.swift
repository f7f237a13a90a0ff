import Hummingbird
import NIOCore
import Synchronization

/// How many LL-HLS requests are held at once (blocking playlist reloads, parts not yet published), per client
/// address and in all. A held request costs a task, a waiter and a timer but no traffic, so it is the cheapest way
/// to pin the origin's memory; these bounds make that cost finite.
///
/// Over the per-client bound the answer is `429 Too Many Requests` (RFC 6585 §4: "the user has sent too many
/// requests in a given amount of time"; the client can fix it). Over the global bound it is `503 Service
/// Unavailable` (RFC 9110 §15.6.4: "temporary overload"; not this client's doing). Both carry `Retry-After`.
final class BlockingBudget: Sendable {
    enum Verdict: Equatable { case admitted, clientOverLimit, serverOverLimit }

    let perClient: Int
    let total: Int
    private let state = Mutex<(held: Int, byClient: [ClientKey: Int])>((0, [:]))

    init(perClient: Int, total: Int) {
        self.perClient = perClient
        self.total = total
    }

    /// Takes a slot for a request from `remote` (no address, as in tests: counted in the total only).
    func acquire(_ remote: SocketAddress?) -> Verdict {
        let key = ClientKey(remote)
        return state.withLock { s in
            guard s.held < total else { return .serverOverLimit }
            if let key {
                let n = s.byClient[key, default: 0]
                guard n < perClient else { return .clientOverLimit }
                s.byClient[key] = n + 1
            }
            s.held += 1
            return .admitted
        }
    }

    func release(_ remote: SocketAddress?) {
        let key = ClientKey(remote)
        state.withLock { s in
            s.held -= 1
            if let key, let n = s.byClient[key] {
                if n <= 1 { s.byClient[key] = nil } else { s.byClient[key] = n - 1 }
            }
        }
    }

    /// Requests held now.
    var held: Int { state.withLock { $0.held } }

    static let tooManyFromClient = PreparedResponse.text(.tooManyRequests, "Too many waiting requests from this client\n",
                                                         extra: [.retryAfter: "1"])
    static let tooManyInAll = PreparedResponse.text(.serviceUnavailable, "Too many waiting requests, retry shortly\n",
                                                    extra: [.retryAfter: "1"])
}
