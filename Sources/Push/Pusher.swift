import HLS
import Logging
import MediaCore
import MediaPresentation
import Synchronization

/// Pushes a live presentation to an HTTP ingest as it is published (`serve --push URL`), the way FFmpeg's
/// `-method PUT` feeds a CDN: every init segment, segment, LL-HLS part and playlist is sent with `PUT` (or `POST`)
/// to `URL` + its URI (`URIScheme`), so a player pointed at the ingest sees what it would see at the origin: the
/// media playlists and `index.m3u8` are rendered from an index `Presentation` by the same `PlaylistBuilder` calls
/// the origin answers with.
///
/// - `consume` only queues (one `PushLane` per rendition, plus one for `index.m3u8`): it never waits for the
///   network. One worker task per lane sends its objects in order (init, then segments and parts, then the
///   playlist that lists them) over one pool of persistent connections; `index.m3u8` goes once every rendition's
///   playlist has arrived.
/// - A failed attempt (no connection, timeout, 5xx, 408, 429) is retried with exponential back-off (`Backoff`),
///   until the object has left the window (a segment, a part, an init no segment uses) or a newer state of it is
///   queued (a playlist). While the ingest is down the lanes fill up and drop their oldest media objects; the
///   newest playlists are always sent once it is back. One log line when the ingest goes away, one when it is back.
/// - A refusal (other 4xx, 3xx) is not retried: one error line naming the method, URL and status, again only when
///   the status changes.
/// - `deleteExpired` (`--push-delete`): a segment and its parts are deleted once they are out of the window plus
///   the RFC 8216 §6.2.2 retention (segment duration + playlist duration), as the origin's own window forgets them.
/// - `finish()` (the input's end) queues the final playlists (`EXT-X-ENDLIST`); `drain(timeout:)` waits for them.
public final class Pusher: PresentationConsumer, Sendable {
    public struct Configuration: Sendable {
        /// The ingest URL every URI is appended to; ends with `/`.
        public let url: String
        public var method: PushMethod = .put
        /// `DELETE` expired segments and parts.
        public var deleteExpired = false
        /// Segments in the live playlists (the origin's `--window`).
        public var windowSize = 6
        /// Media objects waiting per rendition before the oldest is dropped.
        public var queueLimit = 64
        public var backoff = Backoff()
        /// Attempts at a `DELETE` before it is given up (a leftover file is harmless).
        public var deleteAttempts = 4

        public init(url: String) {
            self.url = url.hasSuffix("/") ? url : url + "/"
        }
    }

    /// Counters, for tests and the end-of-stream line.
    public struct Stats: Sendable, Equatable {
        public var pushed = 0
        public var deleted = 0
        public var refused = 0
        /// Dropped without an attempt: from a full lane, or out of the window by the time its turn came.
        public var dropped = 0
        /// Given up after failed attempts (left the window, or the final wait ran out); a playlist given up for a
        /// newer state of it is not counted.
        public var abandoned = 0
        public var failedAttempts = 0
        /// Times the ingest became unreachable.
        public var outages = 0
    }

    public typealias Sleep = @Sendable (Duration) async -> Void

    public let configuration: Configuration
    let transport: any PushTransport
    let logger: Logger
    let sleep: Sleep
    /// The live window the playlists are rendered from: the same rules as the origin's windows (and its clock, for
    /// the retention that decides deletions).
    let index: Presentation<Void>

    struct State {
        var renditions: [Rendition] = []
        var policy = TimingPolicy(targetDuration: 1)
        /// One per rendition, then the multivariant playlist's.
        var lanes: [PushLane] = []
        var wakes: [AsyncStream<Void>.Continuation] = []
        var workers: [Task<Void, Never>] = []
        /// Per rendition, the next init index not queued yet.
        var nextInit: [Int] = []
        /// Per rendition, parts per pushed segment not deleted yet (for `DELETE`).
        var partCounts: [[UInt64: Int]] = []
        /// Per rendition, every segment below this one is deleted (or queued for it).
        var deletedBelow: [UInt64] = []
        var lastMultivariant: [UInt8]?
        /// Per rendition, whether its playlist reached the ingest (or was refused): `index.m3u8` waits for all of
        /// them, so a player never finds a multivariant playlist naming a media playlist that is not there yet.
        var playlistArrived: [Bool] = []
        var stopped = false
        var finished = false
        /// The final wait ran out: workers give up what they are retrying.
        var givingUp = false
    }
    let state = Mutex(State())

    struct Health {
        var down = false
        var outageStart = ContinuousClock.now
        var failuresThisOutage = 0
        var droppedAtOutageStart = 0
        var lastRefusal: Int?
        var stats = Stats()
    }
    let health = Mutex(Health())

    public init(configuration: Configuration, transport: any PushTransport, logger: Logger,
                clock: @escaping @Sendable () -> Int64 = LiveWindowClock.monotonicMilliseconds,
                sleep: @escaping Sleep = { try? await Task.sleep(for: $0) }) {
        self.configuration = configuration
        self.transport = transport
        self.logger = logger
        self.sleep = sleep
        index = Presentation<Void>(windowSize: configuration.windowSize, clock: clock, payloads: .none)
    }

    public var stats: Stats { health.withLock { $0.stats } }

    // MARK: - Producer side (never waits for the network)

    public func consume(_ event: PresentationEvent) {
        let started: [(Int, AsyncStream<Void>)] = state.withLock { s in
            guard !s.stopped, !s.finished else { return [] }
            do {
                return try handle(event, &s)
            } catch {
                s.stopped = true
                logger.error("push stopped: \(error); the live stream goes on")
                return []
            }
        }
        if !started.isEmpty {
            let tasks = started.map { lane, wake in Task.detached { [self] in await self.work(lane, wake) } }
            state.withLock { $0.workers += tasks }
        }
        if case .end = event { finish() }
    }

    private func handle(_ event: PresentationEvent, _ s: inout State) throws -> [(Int, AsyncStream<Void>)] {
        switch event {
        case .layout(let renditions, let policy):
            try index.consume(event)
            s.renditions = renditions
            s.policy = policy
            s.nextInit = renditions.map { _ in 0 }
            s.partCounts = renditions.map { _ in [:] }
            s.deletedBelow = renditions.map { _ in 0 }
            s.playlistArrived = renditions.map { _ in false }
            var started: [(Int, AsyncStream<Void>)] = []
            for lane in 0...renditions.count {
                let (stream, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
                s.lanes.append(PushLane(limit: configuration.queueLimit))
                s.wakes.append(wake)
                started.append((lane, stream))
            }
            return started
        case .initSegment(let r, let bytes, _):
            try index.consume(event)
            guard let current = snapshot(r)?.inits.last, current.index >= s.nextInit[r] else { return [] }  // the same init again
            s.nextInit[r] = current.index + 1
            guard s.renditions[r].scheme.hasInitSegment else { return [] }  // WebVTT segments need none
            enqueue(PushItem(path: s.renditions[r].scheme.initURI(current.index), kind: .initSegment(current.index),
                             body: bytes), lane: r, &s)
        case .part(let r, let info, let bytes):
            guard s.policy.partTarget != nil else { return [] }
            try index.consume(event)
            guard let snap = snapshot(r), !snap.inits.isEmpty else { return [] }  // not stored: no init yet
            enqueue(PushItem(path: s.renditions[r].scheme.partURI(info.segmentSequence, info.index),
                             kind: .part(info.segmentSequence, info.index), body: bytes), lane: r, &s)
            // The last part of a segment appears in the playlist with its segment.
            if !info.endsSegment { enqueuePlaylist(r, &s) }
        case .segment(let r, let info, let bytes):
            try index.consume(event)
            guard let snap = snapshot(r), let stored = snap.window.last, stored.sequence == info.sequence else {
                return []  // not listed (no init segment yet)
            }
            var item = PushItem(path: s.renditions[r].scheme.segmentURI(info.sequence), kind: .segment(info.sequence), body: bytes)
            item.format = info.format
            enqueue(item, lane: r, &s)
            s.partCounts[r][info.sequence] = stored.parts.count
            enqueuePlaylist(r, &s)
            enqueueMultivariant(&s)
            if configuration.deleteExpired { enqueueDeletions(r, snap, &s) }
        case .event:
            break
        case .end:
            break  // `consume` calls `finish()` once the lock is released
        }
        return []
    }

    func snapshot(_ r: Int) -> WindowSnapshot<Void>? {
        guard let layout = index.layout, layout.windows.indices.contains(r) else { return nil }
        return layout.windows[r].snapshot()
    }

    private func enqueue(_ item: PushItem, lane: Int, _ s: inout State) {
        let dropped = s.lanes[lane].enqueue(item)
        if dropped > 0 { health.withLock { $0.stats.dropped += dropped } }
        s.wakes[lane].yield()
    }

    /// Rendition `r`'s media playlist as the origin serves it now (with the other renditions' reports under LL-HLS).
    private func enqueuePlaylist(_ r: Int, _ s: inout State) {
        guard let layout = index.layout else { return }
        let snaps = layout.snapshots()
        let reports = layout.policy.partTarget == nil ? [] : layout.renditions.indices.compactMap { o in
            o == r || !layout.renditions[o].isListedInHLS ? nil
                : PlaylistBuilder.renditionReport(snaps[o], scheme: layout.renditions[o].scheme)
        }
        guard let playlist = PlaylistBuilder.mediaPlaylist(snaps[r], scheme: layout.renditions[r].scheme,
                                                           playlistType: index.playlistType, reports: reports) else { return }
        enqueue(PushItem(path: layout.renditions[r].scheme.playlistURI, kind: .playlist, body: Array(playlist.render().utf8)),
                lane: r, &s)
    }

    /// `index.m3u8` once every rendition is playable, again whenever its text changes (measured bit rates).
    private func enqueueMultivariant(_ s: inout State) {
        guard let layout = index.layout,
              let multivariant = PlaylistBuilder.multivariant(layout.renditions, layout.snapshots()) else { return }
        let body = Array(multivariant.render().utf8)
        guard body != s.lastMultivariant else { return }
        s.lastMultivariant = body
        enqueue(PushItem(path: "index.m3u8", kind: .playlist, body: body), lane: s.renditions.count, &s)
    }

    /// Segments (and their parts) the window has forgotten: out of the playlist for longer than the retention.
    private func enqueueDeletions(_ r: Int, _ snap: WindowSnapshot<Void>, _ s: inout State) {
        let available = snap.availableSequences.lowerBound
        let scheme = s.renditions[r].scheme
        while s.deletedBelow[r] < available {
            let n = s.deletedBelow[r]
            s.deletedBelow[r] += 1
            guard let parts = s.partCounts[r].removeValue(forKey: n) else { continue }  // never pushed
            for i in 0..<parts { enqueue(PushItem(path: scheme.partURI(n, i), kind: .delete), lane: r, &s) }
            enqueue(PushItem(path: scheme.segmentURI(n), kind: .delete), lane: r, &s)
        }
    }

    /// Ends the stream: the final playlists (`EXT-X-ENDLIST`) are queued. Idempotent.
    public func finish() {
        state.withLock { s in
            guard !s.finished else { return }
            s.finished = true
            index.finish()
            guard !s.stopped, index.layout != nil else { return }
            for r in s.renditions.indices { enqueuePlaylist(r, &s) }
            enqueueMultivariant(&s)
        }
    }

    /// Waits until every queued object is sent (or given up), at most `timeout`; then gives up what is left.
    /// Returns whether everything was sent in time.
    public func drain(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if state.withLock({ $0.lanes.allSatisfy(\.isIdle) }) { return true }
            if ContinuousClock.now >= deadline { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        state.withLock { $0.givingUp = true }
        return false
    }

    /// Stops the workers and closes the connections. Call once, after `drain`.
    public func shutdown() async {
        let workers: [Task<Void, Never>] = state.withLock { s in
            s.givingUp = true
            s.wakes.forEach { $0.finish() }
            return s.workers
        }
        for w in workers { w.cancel() }
        for w in workers { await w.value }
        await transport.shutdown()
    }
}
