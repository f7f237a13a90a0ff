import MediaCore
import Synchronization

/// Timed events posted to a stream (the events API) on their way to its pipeline, which takes them between reads and
/// hands them to its producer chain like the input's own cues. Written by HTTP handlers, read by the pipeline thread.
public final class EventInbox: Sendable {
    private struct State {
        var queue: [TimedEvent] = []
        var cues: [PostedCue] = []
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

    /// Queues a subtitle cue (the live cue API).
    public func post(_ cue: PostedCue) {
        state.withLock { $0.cues.append(cue) }
    }

    /// The cues posted since the last call, in order.
    public func takeCues() -> [PostedCue] {
        state.withLock { s in
            defer { s.cues = [] }
            return s.cues
        }
    }

    /// The events posted since the last call, in order.
    public func take() -> [TimedEvent] {
        state.withLock { s in
            defer { s.queue = [] }
            return s.queue
        }
    }
}

/// A subtitle cue posted to a stream (`POST /NAME/subtitles`): for its subtitle rendition in `language` (BCP 47), its
/// `start` and `end` counted from the live edge (the newest media the stream has taken when the pipeline takes it),
/// or, `onInputClock`, already on the input's clock (a pulled playlist's WebVTT rendition followed live, each cue
/// placed by its segment's `X-TIMESTAMP-MAP`).
public struct PostedCue: Sendable, Equatable {
    public var language: String
    public var cue: SubtitleCue
    public var onInputClock: Bool

    public init(language: String, cue: SubtitleCue, onInputClock: Bool = false) {
        self.language = language
        self.cue = cue
        self.onInputClock = onInputClock
    }
}
