import HLS
import MediaCore
import Synchronization

/// The segments of one rendition: a sliding window of listed segments plus evicted ones kept for a while,
/// written by one producer and read by many (STYLE.md §6). Knows nothing of HTTP: what it stores per object is
/// the consumer's `Payload`.
///
/// - Window: `windowSize` segments are listed; `mediaSequence` counts evicted segments and
///   `discontinuitySequence` evicted discontinuities.
/// - Retention (RFC 8216 §6.2.2): "When the server removes a media segment URI from the Playlist, the
///   corresponding media segment MUST remain available to clients for a period of time equal to the duration of
///   the segment plus the duration of the longest Playlist file distributed by the server containing that
///   segment." An evicted segment is kept until that much wall-clock time has passed since its eviction
///   (the playlist's duration when it was evicted, which is the longest playlist that listed it). At most
///   `maxRetained` segments or `maxRetainedBytes`, whichever is more, are kept (the memory bound when the input is
///   read much faster than real time): the producer is then held back until the oldest may go
///   (`millisUntilRetentionRoom`); one that does not wait (an app's own producer that ignores it) makes the oldest
///   go early. With a recording (`spill`), a segment evicted then is kept as its stand-in instead (read back from
///   disk if asked for), and the producer is not held back.
/// - Time-shift (`history`, live windows only): the playlist lists at least `history` of media (evicting by
///   time, never below `windowSize` segments); only the newest `windowSize` segments stay as they were
///   published: an older one is handed to `spill`, which returns a small stand-in payload (a reference to the
///   bytes on disk) or `nil` when it cannot (then it and everything older leave the playlist). Its LL parts are
///   dropped. Without `spill` the whole history stays in memory. Listed segments live in a `SegmentList`, so a
///   snapshot per publish costs O(windowSize), not O(history).
/// - Playlist type: `nil` is a live sliding window; `.event` and `.vod` keep every segment (RFC 8216bis forbids
///   removing segments from them).
/// - LL-HLS (`policy.partTarget` non-nil): parts of the segment in progress are published before the segment.
/// - Blocking readers wait on continuations stored in the locked state, resumed after unlock.
public final class LiveWindow<Payload: Sendable>: Sendable {
    /// Segments listed; `setWindowSize` changes it while the window is fed.
    public var windowSize: Int { size.load(ordering: .relaxed) }
    private let size: Atomic<Int>
    public let playlistType: MediaPlaylist.PlaylistType?
    public let policy: TimingPolicy
    public let maxRetained: Int
    /// Evicted segments' bytes kept whatever their count: the retention holds up to `maxRetained` segments or this
    /// many bytes, whichever is more (16 MiB: a 240p stream's evicted segments are small, and at `maxRetained` alone
    /// an input read 15 times faster than real time would already be held back).
    public let maxRetainedBytes: Int
    public static var defaultMaxRetainedBytes: Int { 16 << 20 }
    /// Monotonic milliseconds (injected so tests control time).
    private let clock: @Sendable () -> Int64
    /// Gives the stand-in payload of a segment that leaves the hot part of a time-shift window (see the type's
    /// comment), or `nil` if it has none. Called under the window's lock: it must not block or do I/O.
    public typealias Spill = @Sendable (_ segment: StoredSegment<Payload>) -> Payload?
    private let spill: Spill?
    /// What an evicted segment keeps in retention: its payload and its parts', made lighter (the origin's: read from
    /// the memory file it already has, its heap buffers let go), or `nil` to keep them as they are. Called under the
    /// window's lock: it must not block.
    public typealias Retain = @Sendable (_ segment: Payload, _ parts: [Payload]) -> (segment: Payload, parts: [Payload])?
    private let retain: Retain?
    /// Time-shift depth in milliseconds, `nil`: a plain sliding window of `windowSize` segments.
    public let historyMillis: Int64?

    private struct State {
        var snapshot: WindowSnapshot<Payload>
        var inits: [StoredInit<Payload>] = []
        var window = SegmentList<Payload>()
        /// Sum of the listed segments' durations (milliseconds, each rounded up): retention and time-shift.
        var windowMillis: Int64 = 0
        /// Listed segments per rounded EXTINF value, for `EXT-X-TARGETDURATION` without a pass over the window.
        var roundedDurations: [Int: Int] = [:]
        var retained: [StoredSegment<Payload>] = []
        /// Per retained segment: the monotonic millisecond after which it may go.
        var expiry: [Int64] = []
        /// Per retained segment, the bytes it holds in memory (0: spilled to the recording); their sum and count.
        var retainedHeld: [Int] = []
        var retainedBytes = 0
        var retainedInMemory = 0
        var partial: [StoredPart<Payload>] = []
        /// Timed events listed with the segments (`EXT-X-DATERANGE`, the MPD's `EventStream`).
        var events = EventList()
        var mediaSequence: UInt64 = 0
        var discontinuitySequence: UInt64 = 0
        var nextSequence: UInt64 = 0
        var finished = false
        var version: UInt64 = 0
        var lastInitIndexPublished: Int?
        var readers = WaitingReaders()
    }

    private let state: Mutex<State>

    public init(windowSize: Int = 6, playlistType: MediaPlaylist.PlaylistType? = nil,
                policy: TimingPolicy = TimingPolicy(targetDuration: 1), maxRetained: Int? = nil,
                maxRetainedBytes: Int = LiveWindow.defaultMaxRetainedBytes,
                clock: @escaping @Sendable () -> Int64 = LiveWindowClock.monotonicMilliseconds,
                history: MediaTime? = nil, spill: Spill? = nil, retain: Retain? = nil) {
        precondition(windowSize >= 1, "windowSize must be at least 1")
        precondition(history.map { $0.value >= 0 && $0.timescale > 0 } ?? true, "history must not be negative")
        self.size = Atomic(windowSize)
        self.playlistType = playlistType
        self.policy = policy
        self.maxRetained = maxRetained ?? windowSize * 16
        self.maxRetainedBytes = maxRetainedBytes
        self.clock = clock
        self.historyMillis = history.map(Self.millis)
        self.spill = spill
        self.retain = retain
        self.state = Mutex(State(snapshot: WindowSnapshot(policy: policy)))
    }

    public func snapshot() -> WindowSnapshot<Payload> { state.withLock { $0.snapshot } }

    /// 0 while another evicted segment can be kept; else the milliseconds until the oldest one's retention ends. The
    /// producer waits that long before its next segment (`PresentationConsumer.holdBackMillis`), so an input read
    /// faster than real time never makes a segment leave before RFC 8216 §6.2.2 allows: `maxRetained` bounds the
    /// memory by holding the producer back, not by shortening the retention.
    public func millisUntilRetentionRoom() -> Int64 {
        state.withLock { s in
            // With a recording, what does not fit in memory is kept as its stand-in (`evict`): no need to wait.
            guard spill == nil, isFull(s.retainedInMemory, s.retainedBytes), let first = s.expiry.first else { return 0 }
            return max(0, first - clock() + 1)
        }
    }

    /// Lists `n` segments from the next publication on: a smaller window lets its oldest go then (into retention,
    /// as any evicted segment), a larger one keeps more as they come. `maxRetained` stays as it was made.
    public func setWindowSize(_ n: Int) {
        precondition(n >= 1, "windowSize must be at least 1")
        size.store(n, ordering: .relaxed)
    }

    // MARK: - Publishing (one producer)

    /// Sets the init segment, or replaces it after a codec change: a different init gets the next URI
    /// (`init1.mp4`, …) and the next segment carries `EXT-X-DISCONTINUITY` + `EXT-X-MAP`. An init with the same
    /// bytes (`digest`) as the current one is ignored.
    public func setInit(_ payload: Payload, digest: [UInt8], tracks: [TrackFormat]) {
        update { s in
            if let last = s.inits.last, last.digest == digest { return false }
            let index = (s.inits.last?.index ?? -1) + 1
            s.inits.append(StoredInit(index: index, payload: payload, tracks: tracks, digest: digest))
            return true
        }
    }

    /// The first object published sets where the numbering starts (an epoch-locked timeline numbers its first
    /// segment by its place on the input clock's grid: `EXT-X-MEDIA-SEQUENCE` starts there, not at 0).
    private static func adoptFirstSequence(_ sequence: UInt64, _ s: inout State) {
        guard s.nextSequence == 0, s.mediaSequence == 0, s.window.count == 0, s.partial.isEmpty, s.retained.isEmpty else { return }
        s.nextSequence = sequence
        s.mediaSequence = sequence
    }

    /// Appends a part to the segment in progress. Ignored without LL-HLS or once finished. The last part of a
    /// segment (`info.endsSegment`) is stored but not published: it appears with its segment, so no reader sees a
    /// playlist whose preload hint names a part after it (RFC 8216bis §4.4.5.3: the hinted URI "MUST match the
    /// URI that will be subsequently added to the Playlist").
    public func publishPart(_ info: PartInfo, _ payload: Payload) {
        guard policy.partTarget != nil else { return }
        update { s in
            guard !s.finished, !s.inits.isEmpty else { return false }
            Self.adoptFirstSequence(info.segmentSequence, &s)
            s.partial.append(StoredPart(info: info, payload: payload))
            return !info.endsSegment
        }
    }

    /// The parts kept so far for segment `sequence` in progress, the last one (published with its segment) included.
    public func partsInProgress(of sequence: UInt64) -> [StoredPart<Payload>] {
        state.withLock { s in s.partial.filter { $0.info.segmentSequence == sequence } }
    }

    /// Lists a timed event (from the next snapshot on); a repeated cue changes nothing.
    public func publishEvent(_ e: EventInfo) {
        update { s in !s.finished && s.events.add(e) }
    }

    /// Appends a finished segment (its parts, if any, were published before it), evicting the oldest listed
    /// segment when the window is full. Returns the sequence number it got.
    @discardableResult
    public func publishSegment(_ info: SegmentInfo, _ payload: Payload) -> UInt64? {
        // The keyframe's sample is for the consumers that see the event (thumbnail tiles); a listed segment does not
        // keep it alive (a day of time-shift, a whole VOD), its bytes are in the payload or the recording.
        var info = info
        info.keyframeSample = nil
        var assigned: UInt64?
        let windowSize = self.windowSize
        update { s in
            guard !s.finished, let currentInit = s.inits.last else { return false }
            Self.adoptFirstSequence(info.sequence, &s)
            let sequence = s.nextSequence
            assert(info.sequence == sequence, "segment \(info.sequence) published as \(sequence)")
            let newInit = s.lastInitIndexPublished.map { $0 != currentInit.index } ?? false
            s.lastInitIndexPublished = currentInit.index
            let parts = s.partial.filter { $0.info.segmentSequence == sequence }
            s.partial = []
            s.window.append(StoredSegment(sequence: sequence, info: info, payload: payload,
                                          discontinuity: info.discontinuity || newInit, initIndex: currentInit.index,
                                          parts: parts))
            s.windowMillis += Self.millis(info.duration)
            s.roundedDurations[MediaPlaylist.roundedDuration(info.duration), default: 0] += 1
            s.nextSequence += 1
            assigned = sequence
            let now = clock()
            if playlistType != nil {
                // EVENT and VOD keep every segment: the older ones move to the shared chunks as they are, so a snapshot
                // per publish copies O(windowSize + chunk) of them, not the whole list (a 10-minute VOD: 600).
                while s.window.hot.count > windowSize { s.window.appendCold(s.window.removeOldestHot()) }
            }
            if playlistType == nil {
                if historyMillis != nil {
                    // The hot part keeps `windowSize` segments; older listed ones are spilled.
                    while s.window.hot.count > windowSize {
                        let old = s.window.removeOldestHot()
                        guard let spill else { s.window.appendCold(old); continue }
                        if let standIn = spill(old) {
                            s.window.appendCold(old.spilled(to: standIn))
                        } else {
                            // Not on disk: the history ends here (a playlist lists contiguous segments).
                            for cold in s.window.removeAllCold() { evict(cold, &s, now: now, spilled: true) }
                            evict(old, &s, now: now)
                        }
                    }
                }
                while s.window.count > windowSize {
                    if let historyMillis, s.windowMillis - Self.millis(s.window[0].info.duration) < historyMillis { break }
                    evict(s.window.removeOldest(), &s, now: now)
                }
            }
            if let pdt = info.programDateTime {
                _ = s.events.elapse(to: WallClock(millisecondsSince1970: pdt.millisecondsSince1970 + Self.millis(info.duration)))
            }
            // A live window lists an event while its segments are listed; EVENT and VOD keep every one.
            if playlistType == nil, let first = s.window.first?.info.programDateTime { _ = s.events.prune(before: first) }
            var drop = 0, droppedBytes = 0, droppedInMemory = 0
            while drop < s.retained.count
                    && (s.expiry[drop] < now
                        || isOver(s.retainedInMemory - droppedInMemory, s.retainedBytes - droppedBytes)) {
                droppedBytes += s.retainedHeld[drop]
                droppedInMemory += s.retainedHeld[drop] > 0 ? 1 : 0
                drop += 1
            }
            if drop > 0 {
                s.retained.removeFirst(drop)
                s.expiry.removeFirst(drop)
                s.retainedHeld.removeFirst(drop)
                s.retainedBytes -= droppedBytes
                s.retainedInMemory -= droppedInMemory
            }
            return true
        }
        return assigned
    }

    /// Whether the retention holds as much as it may: `maxRetained` segments and `maxRetainedBytes` bytes (the
    /// producer then waits). `isOver`: more than that, past a quarter of the bytes more (the eviction after a wait
    /// adds one segment of any size): a producer that did not wait, whose oldest segments go early.
    private func isFull(_ count: Int, _ bytes: Int) -> Bool { count >= maxRetained && bytes >= maxRetainedBytes }
    private func isOver(_ count: Int, _ bytes: Int) -> Bool {
        count > maxRetained && bytes > maxRetainedBytes + maxRetainedBytes / 4
    }

    /// Takes `evicted` (just removed from the front of the listed segments) out of the playlist into retention. Once
    /// the retention holds as much in memory as it may, a segment the recording has is kept as its stand-in (`spill`:
    /// read back from disk if asked for) instead of holding the producer back.
    private func evict(_ evicted: StoredSegment<Payload>, _ s: inout State, now: Int64, spilled: Bool = false) {
        // RFC 8216 §6.2.2: the segment's duration plus the longest playlist that contained it (this one, before
        // the eviction).
        let playlistMillis = s.windowMillis
        s.windowMillis -= Self.millis(evicted.info.duration)
        let rounded = MediaPlaylist.roundedDuration(evicted.info.duration)
        if let n = s.roundedDurations[rounded], n > 1 { s.roundedDurations[rounded] = n - 1 } else { s.roundedDurations[rounded] = nil }
        s.mediaSequence += 1
        // EXT-X-DISCONTINUITY-SEQUENCE counts the discontinuity tags that left the playlist.
        if evicted.discontinuity { s.discontinuitySequence += 1 }
        if !spilled, isFull(s.retainedInMemory, s.retainedBytes), let standIn = spill?(evicted) {
            s.retained.append(evicted.spilled(to: standIn))
            s.retainedHeld.append(0)
        } else {
            s.retained.append(spilled ? evicted : retain.map { evicted.retained(by: $0) } ?? evicted)
            let held = spilled ? 0 : max(1, evicted.info.byteCount)
            s.retainedHeld.append(held)
            s.retainedBytes += held
            s.retainedInMemory += spilled ? 0 : 1
        }
        s.expiry.append(now + Self.millis(evicted.info.duration) + playlistMillis)
    }

    /// Ends the window: `EXT-X-ENDLIST` (and `EXT-X-PLAYLIST-TYPE:VOD` if so configured). Parts of an unfinished
    /// segment are dropped (never listed without their segment); every blocked reader is released.
    public func finish() {
        update { s in
            guard !s.finished else { return false }
            s.finished = true
            s.partial = []
            return true
        }
    }

    /// Applies `change` under the lock; when it changed something, takes a new snapshot and resumes the waiters
    /// it decided (after unlocking).
    private func update(_ change: (inout State) -> Bool) {
        let decided: [(CheckedContinuation<Bool, Never>, Bool)] = state.withLock { s in
            guard change(&s) else { return [] }
            // Keep only init segments still referenced (plus the current one).
            if let current = s.inits.last?.index {
                let oldest = s.retained.first?.initIndex ?? s.window.first?.initIndex ?? current
                s.inits.removeAll { $0.index < oldest && $0.index != current }
            }
            s.version += 1
            s.snapshot = WindowSnapshot(version: s.version, mediaSequence: s.mediaSequence,
                                        discontinuitySequence: s.discontinuitySequence, nextSequence: s.nextSequence,
                                        finished: s.finished, window: s.window, retained: s.retained, inits: s.inits,
                                        partial: s.partial, events: s.events.events, removedEvents: s.events.removed,
                                        inbandSchemes: s.events.inbandSchemes,
                                        policy: policy,
                                        longestSegment: s.roundedDurations.keys.max() ?? 1)
            return s.readers.takeDecided(by: s.snapshot)
        }
        for (c, v) in decided { c.resume(returning: v) }
    }

    static func millis(_ t: MediaTime) -> Int64 {
        MediaTime.rescale(t.value, from: t.timescale, to: 1000, rounding: .up)
    }

    // MARK: - Waiting readers

    /// Waits until `condition` is decided, or `timeout`/cancellation (then `false`).
    public func wait(for condition: WaitCondition, timeout: Duration) async -> Bool {
        let id: Int? = state.withLock { s in
            condition.outcome(in: s.snapshot) != nil ? nil : s.readers.add(condition)
        }
        guard let id else { return condition.outcome(in: snapshot()) ?? false }
        return await withTaskGroup(of: Bool?.self) { group in
            group.addTask {
                await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                    let immediate = self.state.withLock { s in
                        let snap = s.snapshot
                        return s.readers.install(id, c) { condition.outcome(in: snap) ?? false }
                    }
                    if let immediate { c.resume(returning: immediate) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.state.withLock { $0.readers.resolve(id, false) }?.resume(returning: false)
                return nil
            }
            var result = false
            for await r in group {
                if let r {
                    result = r
                    group.cancelAll()
                }
            }
            return result
        }
    }

    /// Readers currently waiting (for tests: nothing leaks after cancellation).
    public var pendingWaiterCount: Int { state.withLock { $0.readers.count } }
}

public enum LiveWindowClock {
    private static let origin = ContinuousClock.now
    /// Milliseconds since the process's first use of this clock (monotonic).
    @Sendable public static func monotonicMilliseconds() -> Int64 {
        let d = ContinuousClock.now - origin
        return d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    }
}
