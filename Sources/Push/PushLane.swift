import MediaCore
import MediaPresentation

/// One object to send to the ingest: its path under the push URL, what it is, and its body.
public struct PushItem: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case initSegment(Int)
        case segment(UInt64)
        case part(UInt64, Int)
        /// A media playlist or `index.m3u8`: only the newest state of a path is worth sending.
        case playlist
        /// `DELETE` of an expired segment or part (`--push-delete`).
        case delete
    }

    public let path: String
    public let kind: Kind
    /// The producer's chunks (a segment's samples are not copied until the request is made).
    public let body: MediaBytes
    /// A segment's format (`SegmentInfo.format`): its `Content-Type`.
    public var format: URIScheme.SegmentFormat = .fragmentedMP4

    public init(path: String, kind: Kind, body: MediaBytes = MediaBytes()) {
        self.path = path
        self.kind = kind
        self.body = body
    }

    public init(path: String, kind: Kind, body: [UInt8]) {
        self.init(path: path, kind: kind, body: MediaBytes(body))
    }

    /// Media objects (segments, parts, deletions) may be dropped when the queue is full; an init segment never is
    /// (every later segment needs it), nor a playlist (its newest state is always sent once the ingest is back).
    public var isDroppable: Bool { dropRank != nil }

    /// Which droppable objects go first when the queue is full: a deletion (a file left behind costs only disk),
    /// then a part (its segment carries the same media), then a segment (a hole in the playlist). `nil`: never.
    var dropRank: Int? {
        switch kind {
        case .delete: 0
        case .part: 1
        case .segment: 2
        case .initSegment, .playlist: nil
        }
    }
}

/// The objects of one rendition waiting to be sent, in the order they must arrive at the ingest: an init segment
/// before the segments that use it, a segment (and its parts) before the playlist that lists it. One worker takes
/// them one at a time, so the order on the wire is the order here.
///
/// - A playlist supersedes a pending playlist of the same path: the older one leaves the queue and the newer one is
///   appended, after every object it lists (they were queued before it).
/// - Bounded: beyond `limit` pending media objects one is dropped (the ingest is down or too slow; what is dropped
///   would leave the live window before it could be sent): the oldest deletion, else the oldest part, else the
///   oldest segment. Init segments and playlists are never dropped.
public struct PushLane: Sendable {
    public let limit: Int
    public private(set) var pending: [PushItem] = []
    /// The item the worker is sending (taken with `next()`, released with `done()`).
    public private(set) var inFlight: PushItem?
    /// Media objects dropped because the lane was full, since the lane was created.
    public private(set) var dropped = 0

    public init(limit: Int) {
        precondition(limit >= 1, "a push lane holds at least one object")
        self.limit = limit
    }

    public var isIdle: Bool { pending.isEmpty && inFlight == nil }

    /// Queues `item`; returns how many media objects were dropped to make room.
    @discardableResult
    public mutating func enqueue(_ item: PushItem) -> Int {
        if item.kind == .playlist {
            pending.removeAll { $0.kind == .playlist && $0.path == item.path }
        }
        pending.append(item)
        var droppedNow = 0
        var droppable = pending.reduce(0) { $0 + ($1.isDroppable ? 1 : 0) }
        while droppable > limit, let rank = pending.compactMap(\.dropRank).min(),
              let i = pending.firstIndex(where: { $0.dropRank == rank }) {
            pending.remove(at: i)
            droppable -= 1
            droppedNow += 1
        }
        dropped += droppedNow
        return droppedNow
    }

    /// The next object to send, or `nil` when there is none (or one is already being sent).
    public mutating func next() -> PushItem? {
        guard inFlight == nil, !pending.isEmpty else { return nil }
        inFlight = pending.removeFirst()
        return inFlight
    }

    /// The object taken by `next()` is sent, refused or given up.
    public mutating func done() { inFlight = nil }

    /// Whether a newer state of the in-flight playlist is waiting (then retrying the old one is pointless).
    public var inFlightIsSuperseded: Bool {
        guard let f = inFlight, f.kind == .playlist else { return false }
        return pending.contains { $0.kind == .playlist && $0.path == f.path }
    }
}

/// Exponential back-off between attempts at one object: `initial`, doubled per failure, capped at `cap`
/// (0.25 s, 0.5 s, 1 s, 2 s, 4 s, 4 s, …). Integer milliseconds.
public struct Backoff: Sendable, Equatable {
    public var initialMilliseconds: Int64
    public var capMilliseconds: Int64

    public init(initialMilliseconds: Int64 = 250, capMilliseconds: Int64 = 4_000) {
        precondition(initialMilliseconds > 0 && capMilliseconds >= initialMilliseconds, "back-off must be positive and capped above its start")
        self.initialMilliseconds = initialMilliseconds
        self.capMilliseconds = capMilliseconds
    }

    /// The wait after failure number `failures` (1: the first failure).
    public func delayMilliseconds(afterFailures failures: Int) -> Int64 {
        precondition(failures >= 1, "a delay follows a failure")
        var d = initialMilliseconds
        for _ in 1..<min(failures, 63) {
            if d >= capMilliseconds { break }
            d *= 2
        }
        return min(d, capMilliseconds)
    }
}
