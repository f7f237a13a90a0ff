import HLS
import MediaCore
import Synchronization

/// What kind of object a payload is made for (a consumer may want different headers for each).
public enum ObjectKind: Sendable {
    case initSegment
    case segment
    case part
}

/// Told of every segment and part once its window lists it (metrics). Called on the producer's thread: keep it short.
public protocol PublicationObserver: Sendable {
    func didPublish(segment: SegmentInfo, rendition: Rendition)
    func didPublish(part: PartInfo, rendition: Rendition)
}

/// A set of renditions and their windows, fed by one producer's events (STYLE.md §9). The layout arrives with
/// the producer's first event (a ladder is planned only once the input is probed), so readers can wait for it.
///
/// How a consumer holds each object, made once per object: a prepared HTTP response in Origin, nothing in a VOD
/// writer. A segment is its parts in turn; with LL-HLS its window holds its parts' payloads, which `segment` receives
/// to build on (Origin's segment is a list of its parts' buffers, not a second copy of them).
public struct PayloadMaker<Payload: Sendable>: Sendable {
    public var initSegment: @Sendable (_ bytes: [UInt8]) -> Payload
    public var part: @Sendable (_ bytes: MediaBytes, _ info: PartInfo) -> Payload
    /// `parts`: the payloads its window made for its parts, in order, tiling `bytes` (`info.partRanges`); empty without
    /// LL-HLS (no part was kept).
    public var segment: @Sendable (_ bytes: MediaBytes, _ info: SegmentInfo, _ parts: [Payload]) -> Payload
    /// What a segment keeps once it has left a live playlist, for its RFC 8216 §6.2.2 time (`LiveWindow.Retain`):
    /// lighter payloads for it and its parts, or `nil` to keep them as they are. `nil` (the default): always kept.
    public var retained: LiveWindow<Payload>.Retain?

    public init(initSegment: @escaping @Sendable (_ bytes: [UInt8]) -> Payload,
                part: @escaping @Sendable (_ bytes: MediaBytes, _ info: PartInfo) -> Payload,
                segment: @escaping @Sendable (_ bytes: MediaBytes, _ info: SegmentInfo, _ parts: [Payload]) -> Payload,
                retained: LiveWindow<Payload>.Retain? = nil) {
        self.initSegment = initSegment
        self.part = part
        self.segment = segment
        self.retained = retained
    }

    /// Nothing kept: a presentation that only indexes (a VOD writer's, a recorder's, a pusher's playlists).
    public static var none: PayloadMaker<Void> {
        PayloadMaker<Void>(initSegment: { _ in () }, part: { _, _ in () }, segment: { _, _, _ in () })
    }

    /// One function of every object's bytes in one array (simple consumers and tests; a copy per object).
    public init(_ make: @escaping @Sendable (_ bytes: [UInt8], _ kind: ObjectKind) -> Payload) {
        self.init(initSegment: { make($0, .initSegment) }, part: { b, _ in make(b.joined, .part) },
                  segment: { b, _, _ in make(b.joined, .segment) })
    }
}

/// Serial numbers of presentations (a generic class has no static stored property).
private let presentationSerials = Atomic<UInt64>(0)

/// The presentation is itself a `PresentationConsumer`: each object's bytes become a `Payload` once, through its
/// `PayloadMaker`, and go to the rendition's window.
public final class Presentation<Payload: Sendable>: PresentationConsumer, Sendable {
    /// This presentation's number in the process, never reused (unlike its address, once a stream was replaced):
    /// what a cache of things derived from it keys on.
    public let serial = presentationSerials.wrappingAdd(1, ordering: .relaxed).newValue

    public typealias MakePayload = @Sendable (_ bytes: [UInt8], _ kind: ObjectKind) -> Payload

    /// The renditions and their windows, fixed once announced.
    public struct Layout: Sendable {
        public let renditions: [Rendition]
        public let windows: [LiveWindow<Payload>]
        public let policy: TimingPolicy
        /// Media and I-frame playlists by URI.
        let byPlaylist: [String: (rendition: Int, object: URIScheme.Object)]
        let byDirectory: [String: Int]
        /// The rendition whose objects sit at the root (`directory == ""`), if any.
        let rootRendition: Int?

        /// The rendition and object a root-relative path (no leading `/`) names.
        public func resolve(_ path: Substring) -> (rendition: Int, object: URIScheme.Object)? {
            if let named = byPlaylist[String(path)] { return named }
            if let slash = path.firstIndex(of: "/") {
                let dir = String(path[...slash])
                guard let r = byDirectory[dir], let o = renditions[r].scheme.mediaObject(path[path.index(after: slash)...]) else { return nil }
                return (r, o)
            }
            guard let r = rootRendition, let o = renditions[r].scheme.mediaObject(path) else { return nil }
            return (r, o)
        }

        public func snapshots() -> [WindowSnapshot<Payload>] { windows.map { $0.snapshot() } }
    }

    /// Segments each window lists; `setWindowSize` changes it while the presentation is fed.
    public var windowSize: Int { size.load(ordering: .relaxed) }
    private let size: Atomic<Int>
    public let playlistType: MediaPlaylist.PlaylistType?
    /// Its DASH manifest carries trick-mode AdaptationSets (`--dash-trick-mode`).
    public let dashTrickMode: Bool
    /// How its events are written besides EXT-X-DATERANGE and the MPD's EventStream (legacy cue tags, interstitials).
    public let eventSignalling: EventSignalling
    /// Timed events posted to this stream (the events API), for its pipeline to take.
    public let eventInbox = EventInbox()
    private let payloads: PayloadMaker<Payload>
    /// Time-shift depth of every window (`LiveWindow` `history`), `nil`: none.
    public let history: MediaTime?
    /// `LiveWindow.Spill` with the rendition (index and value): where a segment that leaves the hot window goes.
    public typealias Spill = @Sendable (_ index: Int, _ rendition: Rendition, _ segment: StoredSegment<Payload>) -> Payload?
    private let spill: Spill?
    private let clock: @Sendable () -> Int64

    private struct State {
        var layout: Layout?
        var finished = false
        var waiters: [Int: LayoutWaiter] = [:]
        var nextWaiterID = 0
    }
    private struct LayoutWaiter {
        var continuation: CheckedContinuation<Void, Never>?
        var resolved = false
    }
    private let state = Mutex(State())
    private let observer = Mutex<(any PublicationObserver)?>(nil)
    private let changes = Atomic<UInt64>(0)

    /// Counts every change (an event consumed, the end): a reader that kept something derived from the windows (an
    /// origin's prepared answer) knows it is still current while this has not moved. Read it before deriving.
    public var changeCount: UInt64 { changes.load(ordering: .acquiring) }

    /// Each window lists `n` segments from its next publication on (`LiveWindow.setWindowSize`); windows made later
    /// too.
    public func setWindowSize(_ n: Int) {
        precondition(n >= 1, "windowSize must be at least 1")
        size.store(n, ordering: .relaxed)
        layout?.windows.forEach { $0.setWindowSize(n) }
    }

    /// Sets (or with `nil` removes) the one observer of publications.
    public func observePublications(_ o: (any PublicationObserver)?) { observer.withLock { $0 = o } }

    public init(windowSize: Int = 6, playlistType: MediaPlaylist.PlaylistType? = nil,
                clock: @escaping @Sendable () -> Int64 = LiveWindowClock.monotonicMilliseconds,
                history: MediaTime? = nil, spill: Spill? = nil, dashTrickMode: Bool = false,
                eventSignalling: EventSignalling = EventSignalling(), payloads: PayloadMaker<Payload>) {
        self.eventSignalling = eventSignalling
        self.history = history
        self.dashTrickMode = dashTrickMode
        self.spill = spill
        self.size = Atomic(windowSize)
        self.playlistType = playlistType
        self.clock = clock
        self.payloads = payloads
    }

    /// Every object's payload from its bytes in one array (`PayloadMaker.init(_:)`).
    public convenience init(windowSize: Int = 6, playlistType: MediaPlaylist.PlaylistType? = nil,
                            clock: @escaping @Sendable () -> Int64 = LiveWindowClock.monotonicMilliseconds,
                            history: MediaTime? = nil, spill: Spill? = nil, makePayload: @escaping MakePayload) {
        self.init(windowSize: windowSize, playlistType: playlistType, clock: clock, history: history, spill: spill,
                  payloads: PayloadMaker(makePayload))
    }

    public var layout: Layout? { state.withLock { $0.layout } }
    /// The longest any window asks the producer to wait (`LiveWindow.millisUntilRetentionRoom`).
    public var holdBackMillis: Int64 { layout?.windows.reduce(0) { max($0, $1.millisUntilRetentionRoom()) } ?? 0 }
    /// `true` once the producer sent `end` (or ended before announcing a layout).
    public var isFinished: Bool { state.withLock { $0.finished } }

    public func consume(_ event: PresentationEvent) throws {
        defer { changes.add(1, ordering: .releasing) }
        switch event {
        case .layout(let renditions, let policy):
            try announce(renditions, policy)
        case .initSegment(let r, let bytes, let tracks):
            try window(r).0.setInit(payloads.initSegment(bytes), digest: bytes, tracks: tracks)
        case .part(let r, let info, let bytes):
            let (w, rendition) = try window(r)
            // Without LL-HLS a window keeps no part: none is made.
            if w.policy.partTarget != nil { w.publishPart(info, payloads.part(bytes, info)) }
            observer.withLock { $0 }?.didPublish(part: info, rendition: rendition)
        case .segment(let r, let info, let bytes):
            let (w, rendition) = try window(r)
            // Made outside the window's lock from the parts it keeps (only this producer adds to them).
            let parts = w.partsInProgress(of: info.sequence).map(\.payload)
            w.publishSegment(info, payloads.segment(bytes, info, parts.count == info.partRanges.count ? parts : []))
            observer.withLock { $0 }?.didPublish(segment: info, rendition: rendition)
        case .event(let e):
            layout?.windows.forEach { $0.publishEvent(e) }
        case .end:
            finish()
        }
    }

    /// Ends every window (and releases readers waiting for a layout that will never come).
    public func finish() {
        defer { changes.add(1, ordering: .releasing) }
        let (layout, waiters) = state.withLock { s in
            s.finished = true
            return (s.layout, Self.takeWaiters(&s))
        }
        layout?.windows.forEach { $0.finish() }
        waiters.forEach { $0.resume() }
    }

    /// Marks every layout waiter resolved; returns the continuations to resume after unlocking.
    private static func takeWaiters(_ s: inout State) -> [CheckedContinuation<Void, Never>] {
        var out: [CheckedContinuation<Void, Never>] = []
        for (id, var w) in s.waiters {
            if let c = w.continuation {
                out.append(c)
                s.waiters[id] = nil
            } else {
                w.resolved = true
                s.waiters[id] = w
            }
        }
        return out
    }

    private func window(_ r: Int) throws -> (LiveWindow<Payload>, Rendition) {
        guard let layout = layout, layout.windows.indices.contains(r) else { throw PresentationError.unknownRendition(r) }
        return (layout.windows[r], layout.renditions[r])
    }

    private func announce(_ renditions: [Rendition], _ policy: TimingPolicy) throws {
        guard !renditions.isEmpty else { throw PresentationError.noRenditions }
        var byPlaylist: [String: (rendition: Int, object: URIScheme.Object)] = [:]
        var byDirectory: [String: Int] = [:]
        var root: Int?
        for (i, r) in renditions.enumerated() {
            // An audio or subtitle rendition has no I-frames: its I-frame playlist's name is nobody's.
            let playlists = [(r.scheme.playlistURI, URIScheme.Object.playlist)]
                + (r.kind.hasPictures ? [(r.scheme.iFramePlaylistURI, .iFramePlaylist)] : [])
            for (uri, object) in playlists {
                guard byPlaylist.updateValue((i, object), forKey: uri) == nil, uri != "index.m3u8" else {
                    throw PresentationError.duplicateName(r.name)
                }
            }
            if r.scheme.directory.isEmpty {
                guard root == nil else { throw PresentationError.duplicateName(r.name) }
                root = i
            } else if byDirectory.updateValue(i, forKey: r.scheme.directory) != nil {
                throw PresentationError.duplicateName(r.name)
            }
        }
        var windows: [LiveWindow<Payload>] = []
        for (r, rendition) in renditions.enumerated() {
            var windowSpill: LiveWindow<Payload>.Spill?
            if let spill { windowSpill = { segment in spill(r, rendition, segment) } }
            windows.append(LiveWindow<Payload>(windowSize: windowSize, playlistType: playlistType, policy: policy,
                                               clock: clock, history: history, spill: windowSpill,
                                               retain: payloads.retained))
        }
        let layout = Layout(renditions: renditions, windows: windows, policy: policy, byPlaylist: byPlaylist,
                            byDirectory: byDirectory, rootRendition: root)
        let waiters: [CheckedContinuation<Void, Never>] = try state.withLock { s in
            guard s.layout == nil else { throw PresentationError.layoutAlreadySet }
            s.layout = layout
            return Self.takeWaiters(&s)
        }
        // A `setWindowSize` that ran while the windows were made and found no layout yet.
        let current = windowSize
        windows.forEach { $0.setWindowSize(current) }
        waiters.forEach { $0.resume() }
    }

    /// Waits until every rendition can give out a playlist (or `timeout`, or the end of input); returns whether
    /// the presentation is playable.
    public func waitUntilPlayable(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        if layout == nil { await waitForLayout(until: deadline) }
        guard let layout else { return false }
        for w in layout.windows {
            let left = deadline - ContinuousClock.now
            guard left > .zero, await w.wait(for: .playable, timeout: left) else { return w.snapshot().isPlayable }
        }
        return true
    }

    private func waitForLayout(until deadline: ContinuousClock.Instant) async {
        let id: Int? = state.withLock { s in
            if s.layout != nil || s.finished { return nil }
            defer { s.nextWaiterID += 1 }
            s.waiters[s.nextWaiterID] = LayoutWaiter()
            return s.nextWaiterID
        }
        guard let id else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    let now: Bool = self.state.withLock { s in
                        guard var w = s.waiters[id], !w.resolved else { s.waiters[id] = nil; return true }
                        w.continuation = c
                        s.waiters[id] = w
                        return false
                    }
                    if now { c.resume() }
                }
            }
            group.addTask {
                try? await Task.sleep(until: deadline)
                let timedOut: CheckedContinuation<Void, Never>? = self.state.withLock { s in
                    guard var w = s.waiters[id] else { return nil }
                    if let c = w.continuation {
                        s.waiters[id] = nil
                        return c
                    }
                    w.resolved = true
                    s.waiters[id] = w
                    return nil
                }
                timedOut?.resume()
            }
            await group.next()
            group.cancelAll()
        }
    }
}

public enum PresentationError: Error, Equatable, CustomStringConvertible {
    case noRenditions
    case duplicateName(String)
    case layoutAlreadySet
    case unknownRendition(Int)

    public var description: String {
        switch self {
        case .noRenditions: "a presentation needs at least one rendition"
        case .duplicateName(let n): "two renditions would share the URIs of '\(n)'"
        case .layoutAlreadySet: "the presentation's renditions were already announced"
        case .unknownRendition(let r): "event for rendition \(r), which the layout does not have"
        }
    }
}
