import MediaCore
import MediaPresentation
import Synchronization

/// Where a stream's key periods get their keys when the origin does not derive them (`--key-server`). Asked by the
/// encryption stage for each part and segment, on the media path: it answers from what it holds, never waiting on
/// the network.
public protocol PeriodKeySource: Sendable {
    /// Period `n`'s KID and key (`id` = `n`).
    func key(period n: UInt64) -> ContentKey
    /// The stream ended (no period will be asked for again): the source may stop fetching.
    func finish()
}

extension PeriodKeySource {
    public func finish() {}
}

/// The keys fetched so far, and the rule when a period's key has not come: it keeps the latest earlier period's key,
/// so the stream goes on (one `.keeping` event when that starts, one `.resumed` when a period gets its own key again).
/// A period's answer is decided when it is first asked and kept for the whole period, so the parts and segments of
/// one segment, and every rendition, use the same key. `wanted` tells the fetcher the next period it lacks.
public final class FetchedPeriodKeys: PeriodKeySource {
    public enum Event: Sendable, Equatable {
        /// Period `period` has no key of its own: it uses period `keeping`'s.
        case keeping(period: UInt64, keeping: UInt64)
        /// Period `period` has its own key again.
        case resumed(period: UInt64)
    }

    private struct State {
        var fetched: [UInt64: ContentKey] = [:]
        /// What each recent period was given (decided once).
        var decided: [UInt64: ContentKey] = [:]
        var latest: UInt64 = 0
        var keeping = false
        var finished = false
    }
    private let state: Mutex<State>
    private let onEvent: @Sendable (Event) -> Void
    private let onNeed: @Sendable () -> Void

    /// - Parameters:
    ///   - first: the keys fetched at start (period 0's among them).
    ///   - onEvent: told when the stream starts keeping an old key and when it resumes (outside the lock).
    ///   - onNeed: told when a new period begins (the fetcher may want the next one).
    public init(_ first: [ContentKey], onEvent: @escaping @Sendable (Event) -> Void = { _ in },
                onNeed: @escaping @Sendable () -> Void = {}) {
        precondition(first.contains { $0.id == 0 }, "period 0's key is fetched before the stream starts")
        var s = State()
        for k in first { s.fetched[k.id] = k }
        state = Mutex(s)
        self.onEvent = onEvent
        self.onNeed = onNeed
    }

    /// Keys that came from the server.
    public func store(_ keys: [ContentKey]) {
        state.withLock { s in
            for k in keys where k.id + 2 >= s.latest { s.fetched[k.id] = k }
        }
    }

    /// Whether period `n`'s own key is here.
    public func has(_ n: UInt64) -> Bool { state.withLock { $0.fetched[n] != nil } }

    public func finish() {
        state.withLock { $0.finished = true }
        onNeed()
    }

    /// Whether the stream ended (`finish()`): its fetcher stops.
    public var isFinished: Bool { state.withLock { $0.finished } }

    /// Whether the latest period keeps an earlier period's key (the server has not answered for it).
    public var isKeeping: Bool { state.withLock { $0.keeping } }

    /// The next period whose key is not here yet (the one after the latest begun), or `nil`.
    public var wanted: UInt64? {
        state.withLock { s in s.fetched[s.latest + 1] == nil ? s.latest + 1 : nil }
    }

    public func key(period n: UInt64) -> ContentKey {
        let (key, event, began) = state.withLock { s -> (ContentKey, Event?, Bool) in
            if let k = s.decided[n] { return (k, nil, false) }
            var event: Event?
            let key: ContentKey
            if let own = s.fetched[n] {
                key = own
                if s.keeping && n > s.latest { event = .resumed(period: n); s.keeping = false }
            } else {
                // The latest earlier period's key (decided or fetched), under this period's number.
                let held = s.decided.merging(s.fetched) { d, _ in d }
                let earlier = (held.filter { $0.key < n }.max { $0.key < $1.key } ?? held.min { $0.key < $1.key }!).value
                key = ContentKey(id: n, bytes: earlier.bytes, keyID: earlier.keyID)
                if !s.keeping {
                    s.keeping = true
                    event = .keeping(period: n, keeping: earlier.id)
                }
            }
            s.decided[n] = key
            let began = n > s.latest
            if began {
                s.latest = n
                s.decided = s.decided.filter { $0.key + 8 > n }
                s.fetched = s.fetched.filter { $0.key + 8 > n }
            }
            return (key, event, began)
        }
        if let event { onEvent(event) }
        if began { onNeed() }
        return key
    }
}
