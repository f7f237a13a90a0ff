import MediaCore
import Synchronization

/// Timed events posted to a stream (the events API) on their way to its pipeline, which takes them between reads and
/// hands them to its producer chain like the input's own cues. Written by HTTP handlers, read by the pipeline thread.
public final class EventInbox: Sendable {
    private struct State {
        var queue: [TimedEvent] = []
        /// Every `kind/id` accepted so far: an id names one break (its out, then its in), never two.
        var seen: Set<String> = []
    }
    private let state = Mutex(State())

    public init() {}

    public enum Refusal: Error, Equatable {
        /// An event of this kind with this id was posted before.
        case duplicate(String)
    }

    /// Queues `event`; refuses an id posted before with the same kind.
    public func post(_ event: TimedEvent) throws(Refusal) {
        let key = event.kind.rawValue + "/" + event.id
        let accepted = state.withLock { s in
            guard s.seen.insert(key).inserted else { return false }
            s.queue.append(event)
            return true
        }
        guard accepted else { throw .duplicate(event.id) }
    }

    /// Whether `id` was posted with `kind`.
    public func contains(_ id: String, kind: TimedEvent.Kind) -> Bool {
        state.withLock { $0.seen.contains(kind.rawValue + "/" + id) }
    }

    /// The events posted since the last call, in order.
    public func take() -> [TimedEvent] {
        state.withLock { s in
            defer { s.queue = [] }
            return s.queue
        }
    }
}
