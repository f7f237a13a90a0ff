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
    private let transport: any PushTransport
    private let logger: Logger
    private let sleep: Sleep
    /// The live window the playlists are rendered from: the same rules as the origin's windows (and its clock, for
    /// the retention that decides deletions).
    private let index: Presentation<Void>

    private struct State {
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
    private let state = Mutex(State())

    private struct Health {
        var down = false
        var outageStart = ContinuousClock.now
        var failuresThisOutage = 0
        var droppedAtOutageStart = 0
        var lastRefusal: Int?
        var stats = Stats()
    }
    private let health = Mutex(Health())

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
            enqueue(PushItem(path: s.renditions[r].scheme.segmentURI(info.sequence), kind: .segment(info.sequence),
                             body: bytes), lane: r, &s)
            s.partCounts[r][info.sequence] = stored.parts.count
            enqueuePlaylist(r, &s)
            enqueueMultivariant(&s)
            if configuration.deleteExpired { enqueueDeletions(r, snap, &s) }
        case .end:
            break  // `consume` calls `finish()` once the lock is released
        }
        return []
    }

    private func snapshot(_ r: Int) -> WindowSnapshot<Void>? {
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
            o == r ? nil : PlaylistBuilder.renditionReport(snaps[o], scheme: layout.renditions[o].scheme)
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

    // MARK: - Workers (one per lane)

    private func work(_ lane: Int, _ wake: AsyncStream<Void>) async {
        for await _ in wake {
            while !Task.isCancelled, let item = state.withLock({ s in
                lane == s.renditions.count && !s.playlistArrived.allSatisfy { $0 } ? nil : s.lanes[lane].next()
            }) {
                await deliver(item, lane: lane)
                state.withLock { $0.lanes[lane].done() }
            }
        }
    }

    private func request(for item: PushItem) -> PushRequest {
        let url = configuration.url + item.path
        let method: PushRequest.Method = switch configuration.method {
        case .put: .put
        case .post: .post
        }
        switch item.kind {
        case .delete: return PushRequest(method: .delete, url: url, contentType: nil, body: [])
        case .playlist: return PushRequest(method: method, url: url, contentType: "application/vnd.apple.mpegurl", body: item.body)
        case .initSegment: return PushRequest(method: method, url: url, contentType: "video/mp4", body: item.body)
        case .segment, .part: return PushRequest(method: method, url: url, contentType: "video/iso.segment", body: item.body)
        }
    }

    private func deliver(_ item: PushItem, lane: Int) async {
        // Queued while the ingest was down and out of the window since: not worth a request. (A playlist with a
        // newer state queued behind it is not lost: the newer one goes next.)
        guard stillWanted(item, lane: lane) else {
            if item.kind != .playlist { health.withLock { $0.stats.dropped += 1 } }
            return
        }
        let request = request(for: item)
        var failures = 0
        while !Task.isCancelled {
            switch await transport.send(request) {
            case .accepted:
                succeeded(item)
                decided(item, lane: lane)
                return
            case .refused(let status, let reason):
                refused(request, status: status, reason: reason)
                decided(item, lane: lane)
                return
            case .failed(let why):
                failures += 1
                failed(request, why)
                if item.kind == .delete && failures >= configuration.deleteAttempts { break }
                guard stillWanted(item, lane: lane) else { break }
                await sleep(.milliseconds(configuration.backoff.delayMilliseconds(afterFailures: failures)))
                guard stillWanted(item, lane: lane) else { break }
                continue
            }
            break
        }
        // A playlist with a newer state queued is not lost: the newer one goes next.
        if item.kind == .playlist, state.withLock({ $0.lanes[lane].inFlightIsSuperseded }) { return }
        health.withLock { $0.stats.abandoned += 1 }
    }

    /// Whether another attempt at `item` (in flight on `lane`) is worth it.
    private func stillWanted(_ item: PushItem, lane: Int) -> Bool {
        state.withLock { s in
            guard !s.givingUp else { return false }
            switch item.kind {
            case .playlist:
                return !s.lanes[lane].inFlightIsSuperseded
            case .delete:
                return true
            case .initSegment(let i):
                return snapshot(lane)?.inits.contains { $0.index == i } ?? false
            case .segment(let n), .part(let n, _):
                guard let snap = snapshot(lane) else { return false }
                return n >= snap.mediaSequence
            }
        }
    }

    /// A rendition's playlist was answered: once every rendition's was, `index.m3u8` may go.
    private func decided(_ item: PushItem, lane: Int) {
        guard item.kind == .playlist else { return }
        state.withLock { s in
            guard s.playlistArrived.indices.contains(lane), !s.playlistArrived[lane] else { return }
            s.playlistArrived[lane] = true
            if s.playlistArrived.allSatisfy({ $0 }) { s.wakes[s.renditions.count].yield() }
        }
    }

    private func succeeded(_ item: PushItem) {
        let back: String? = health.withLock { h in
            if item.kind == .delete { h.stats.deleted += 1 } else { h.stats.pushed += 1 }
            h.lastRefusal = nil
            guard h.down else { return nil }
            h.down = false
            let seconds = (ContinuousClock.now - h.outageStart).components.seconds
            return "after \(seconds) s and \(h.failuresThisOutage) failed attempts; \(h.stats.dropped - h.droppedAtOutageStart) objects dropped while it was down"
        }
        if let back {
            logger.notice("push: ingest \(configuration.url) reachable again \(back)")
        }
    }

    private func failed(_ request: PushRequest, _ why: String) {
        let first: Bool = health.withLock { h in
            h.stats.failedAttempts += 1
            h.failuresThisOutage += 1
            guard !h.down else { return false }
            h.down = true
            h.outageStart = .now
            h.failuresThisOutage = 1
            h.stats.outages += 1
            h.droppedAtOutageStart = h.stats.dropped
            return true
        }
        if first {
            logger.warning("push: \(request.method.rawValue) \(request.url) failed: \(why); retrying with back-off up to \(configuration.backoff.capMilliseconds) ms, dropping the oldest objects while the ingest is unreachable")
        }
    }

    private func refused(_ request: PushRequest, status: Int, reason: String) {
        let log: Bool = health.withLock { h in
            h.stats.refused += 1
            h.down = false
            defer { h.lastRefusal = status }
            return h.lastRefusal != status
        }
        if log {
            logger.error("push: \(request.method.rawValue) \(request.url) refused: \(status) \(reason)")
        }
    }
}
