import HLS
import Hummingbird
import MediaCore
import Synchronization

/// One finished media segment handed to the origin by the producer.
public struct LiveSegment: Sendable {
    /// The complete `.m4s` (styp/moof/mdat…).
    public var bytes: [UInt8]
    public var duration: MediaTime
    public var programDateTime: WallClock
    /// `EXT-X-DISCONTINUITY` before this segment (timestamps or encoding parameters changed).
    public var discontinuity: Bool
    /// Video samples in the segment, when the producer knows them; otherwise the origin counts them from
    /// the `trun` boxes of the video track. Used to measure `FRAME-RATE`.
    public var videoFrames: Int?

    public init(bytes: [UInt8], duration: MediaTime, programDateTime: WallClock, discontinuity: Bool = false,
                videoFrames: Int? = nil) {
        self.bytes = bytes
        self.duration = duration
        self.programDateTime = programDateTime
        self.discontinuity = discontinuity
        self.videoFrames = videoFrames
    }
}

/// One LL-HLS partial segment handed to the origin by the producer (RFC 8216bis §4.4.4.9): a `moof`+`mdat`
/// fragment of the segment in progress. The first part of a segment starts with a keyframe (`independent`).
public struct LivePart: Sendable {
    public var bytes: [UInt8]
    public var duration: MediaTime
    public var independent: Bool

    public init(bytes: [UInt8], duration: MediaTime, independent: Bool) {
        self.bytes = bytes
        self.duration = duration
        self.independent = independent
    }
}

/// A part as stored by the origin (`seg<N>.<i>.m4s`).
struct StoredPart: Sendable {
    let bytes: ByteBuffer
    let headers: HTTPFields
    let duration: MediaTime
    let independent: Bool
}

/// What a waiting request waits for.
enum WaitCondition: Sendable {
    /// A media playlist and an init segment exist.
    case firstSegment
    /// Blocking playlist reload (`_HLS_msn`, `_HLS_part`): segment `msn` is complete, or part `part` of it exists.
    case playlist(msn: UInt64, part: Int?)
    /// A part URI (`seg<msn>.<index>.m4s`) is published. Resolves `false` once it can never exist.
    case part(msn: UInt64, index: Int)
}

/// A segment as stored by the origin: bytes copied once into a `ByteBuffer`, response headers prebuilt.
struct StoredSegment: Sendable {
    let sequence: UInt64
    let bytes: ByteBuffer
    let headers: HTTPFields
    let duration: MediaTime
    let programDateTime: WallClock
    /// As rendered: the producer's flag, or a new init segment.
    let discontinuity: Bool
    let initIndex: Int
    /// Video samples in this segment (from `trun`), when there is a video track.
    let videoSamples: Int?
    /// LL-HLS parts of this segment (servable as long as the segment is).
    var parts: [StoredPart] = []
}

/// An init segment; `index` 0 is `init.mp4`, then `init1.mp4`, `init2.mp4`, …
struct StoredInit: Sendable {
    let index: Int
    let uri: String
    let bytes: ByteBuffer
    let headers: HTTPFields
    let tracks: [TrackFormat]
    let declaredFrameRate: Double?

    static func uri(for index: Int) -> String { index == 0 ? "init.mp4" : "init\(index).mp4" }
}

/// An immutable view of the stream at one publish, shared by every request that reads it.
///
/// Playlists are rendered once per publish into `ByteBuffer`s (with their response headers) so
/// request handlers only look things up. A `final class` with `let`s: one retain per request.
public final class LiveSnapshot: Sendable {
    /// Number of segments evicted from the playlist window so far.
    public let mediaSequence: UInt64
    /// Number of `EXT-X-DISCONTINUITY` tags evicted so far.
    public let discontinuitySequence: UInt64
    /// The sequence number the next segment will get.
    public let nextSequence: UInt64
    public let finished: Bool
    /// The media playlist model, `nil` until the first segment.
    public let playlist: MediaPlaylist?
    /// The multivariant playlist model, `nil` until both an init segment and a segment exist.
    public let multivariant: MultivariantPlaylist?

    let window: [StoredSegment]
    /// Evicted but still downloadable segments, oldest first, contiguous sequences ending at `mediaSequence - 1`.
    let retained: [StoredSegment]
    let inits: [StoredInit]
    let mediaPlaylistBody: ByteBuffer?
    let mediaPlaylistHeaders: HTTPFields
    let multivariantBody: ByteBuffer?
    let multivariantHeaders: HTTPFields
    /// Parts of the segment in progress (sequence `nextSequence`).
    let partial: [StoredPart]

    init(mediaSequence: UInt64 = 0, discontinuitySequence: UInt64 = 0, nextSequence: UInt64 = 0, finished: Bool = false,
         playlist: MediaPlaylist? = nil, multivariant: MultivariantPlaylist? = nil,
         window: [StoredSegment] = [], retained: [StoredSegment] = [], inits: [StoredInit] = [],
         partial: [StoredPart] = []) {
        self.partial = partial
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.nextSequence = nextSequence
        self.finished = finished
        self.playlist = playlist
        self.multivariant = multivariant
        self.window = window
        self.retained = retained
        self.inits = inits
        if let playlist {
            let body = ByteBuffer(string: playlist.render())
            mediaPlaylistBody = body
            mediaPlaylistHeaders = ResponseHeaders.playlist(contentLength: body.readableBytes)
        } else {
            mediaPlaylistBody = nil
            mediaPlaylistHeaders = [:]
        }
        if let multivariant {
            let body = ByteBuffer(string: multivariant.render())
            multivariantBody = body
            multivariantHeaders = ResponseHeaders.playlist(contentLength: body.readableBytes)
        } else {
            multivariantBody = nil
            multivariantHeaders = [:]
        }
    }

    /// Segments published so far (the next sequence number).
    public var segmentCount: Int { Int(clamping: nextSequence) }

    /// Segment sequence numbers that can be downloaded now (window + retention).
    public var availableSequences: Range<UInt64> {
        (retained.first?.sequence ?? mediaSequence)..<nextSequence
    }

    /// Sequence numbers listed in the playlist.
    public var windowSequences: Range<UInt64> { mediaSequence..<(mediaSequence + UInt64(window.count)) }

    /// URIs of the init segments that can be downloaded now.
    public var initURIs: [String] { inits.map(\.uri) }

    /// Rendered media playlist text (for tests and tools), `nil` before the first segment.
    public var mediaPlaylistText: String? { mediaPlaylistBody.map { String(buffer: $0) } }
    public var multivariantText: String? { multivariantBody.map { String(buffer: $0) } }

    func segment(_ sequence: UInt64) -> StoredSegment? {
        if sequence >= mediaSequence {
            let i = sequence - mediaSequence
            return i < UInt64(window.count) ? window[Int(i)] : nil
        }
        guard let first = retained.first?.sequence, sequence >= first else { return nil }
        let i = Int(sequence - first)
        return i < retained.count ? retained[i] : nil
    }

    func initSegment(_ index: Int) -> StoredInit? {
        inits.first { $0.index == index }
    }

    func part(_ sequence: UInt64, _ index: Int) -> StoredPart? {
        guard index >= 0 else { return nil }
        if sequence == nextSequence { return index < partial.count ? partial[index] : nil }
        guard let seg = segment(sequence), index < seg.parts.count else { return nil }
        return seg.parts[index]
    }

    /// Whether a part not published yet can still appear: it belongs to the segment in progress or the one
    /// after it, and the stream is not finished.
    func partMayAppear(_ sequence: UInt64, _ index: Int) -> Bool {
        !finished && index >= 0 && (sequence == nextSequence || sequence == nextSequence + 1)
    }

    /// Parts published so far for the segment in progress.
    public var partialPartCount: Int { partial.count }

    /// Bytes of a part (`seg<sequence>.<index>.m4s`), `nil` when unknown or expired.
    public func partBytes(_ sequence: UInt64, _ index: Int) -> ByteBuffer? { part(sequence, index)?.bytes }

    /// Bytes of a segment by sequence number (window or retention), `nil` when unknown or expired.
    public func segmentBytes(_ sequence: UInt64) -> ByteBuffer? { segment(sequence)?.bytes }
}

/// One live (or finished) presentation: init segment plus a sliding window of segments, written by one
/// producer task and read by many HTTP handlers (STYLE.md §6). The state is an immutable `LiveSnapshot`
/// swapped under a `Mutex`; no I/O or `await` happens inside the lock.
///
/// - Window: `windowSize` segments are listed; `EXT-X-MEDIA-SEQUENCE` counts evicted segments and
///   `EXT-X-DISCONTINUITY-SEQUENCE` counts evicted discontinuities.
/// - Retention: an evicted segment stays downloadable until more than one playlist duration (the window's
///   total duration when it was evicted) of media has been published after it, then it is dropped (404).
///   A hard cap of `16 × windowSize` retained segments bounds memory even for pathological durations.
/// - Playlist type: `nil` is a live sliding window (no `EXT-X-PLAYLIST-TYPE`). `.event` and `.vod`
///   keep every segment (RFC 8216bis forbids removing segments from them); `.event` is announced from the
///   start, `.vod` only once `finish()` was called (no `EXT-X-PLAYLIST-TYPE` while live).
///
/// LL-HLS (`partTarget` non-nil): the producer calls `publishPart(_:)` for each part of the segment in
/// progress, then `publish(_:)` with the whole segment. The media playlist then carries
/// `EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES`, `EXT-X-PART-INF`, `EXT-X-PART` lines for the segments whose
/// start lies within three target durations of the playlist end (RFC 8216bis §4.4.4.9 recommends removing
/// older ones) plus the parts of the segment in progress, and `EXT-X-PRELOAD-HINT` for the next part.
/// Blocking requests wait on continuations stored in the state and resumed after unlock.
public final class LiveStream: Sendable {
    public let windowSize: Int
    public let playlistType: MediaPlaylist.PlaylistType?
    /// The configured LL-HLS part target; `nil` for a standard (non-LL) playlist.
    public let partTarget: MediaTime?

    private struct Waiter {
        var condition: WaitCondition
        var continuation: CheckedContinuation<Bool, Never>?
        var resolved: Bool?
    }

    private struct State {
        var snapshot = LiveSnapshot()
        var inits: [StoredInit] = []
        /// Media time published so far, in `clockTimescale` ticks (the first segment's timescale).
        var elapsed: Int64 = 0
        var clockTimescale: Int32?
        /// Per retained segment: `elapsed` at eviction and the playlist duration then (clock ticks).
        var retention: [(evictedAt: Int64, keepFor: Int64)] = []
        var lastInitIndexPublished: Int?
        var waiters: [Int: Waiter] = [:]
        var nextWaiterID = 0
        var targetDuration: Int
        /// Parts of the segment in progress.
        var partial: [StoredPart] = []
        /// `PART-TARGET`: the configured target, raised to the longest part ever published.
        var partTarget: MediaTime?
    }

    private let state: Mutex<State>

    /// The `EXT-X-TARGETDURATION` floor (seconds).
    public var targetDuration: Int { state.withLock { $0.targetDuration } }

    /// - Parameters:
    ///   - windowSize: segments listed in the live playlist (at least 1).
    ///   - targetDuration: `EXT-X-TARGETDURATION` floor; the rendered value is the larger of this and the rule
    ///     applied to the segments in the window (so a playlist never lies about a long segment).
    ///     `setInitSegment(_:tracks:targetDuration:)` can raise or lower it later.
    ///   - partTarget: LL-HLS part target (e.g. 0.333 s); when non-nil the media playlist is LL-HLS.
    public init(windowSize: Int = 6, targetDuration: Int = 1, playlistType: MediaPlaylist.PlaylistType? = nil,
                partTarget: MediaTime? = nil) {
        precondition(windowSize >= 1, "windowSize must be at least 1")
        precondition(partTarget.map { $0.value > 0 && $0.timescale > 0 } ?? true, "partTarget must be positive")
        self.windowSize = windowSize
        self.playlistType = playlistType
        self.partTarget = partTarget
        var state = State(targetDuration: max(1, targetDuration))
        state.partTarget = partTarget
        self.state = Mutex(state)
    }

    /// The `PART-TARGET` in force (configured target raised to the longest published part), `nil` if not LL-HLS.
    public var currentPartTarget: MediaTime? { state.withLock { $0.partTarget } }

    /// Appends a part to the segment in progress (its sequence is `snapshot().nextSequence`, its index the
    /// number of parts published for that segment so far) and re-renders the playlist. Ignored when the
    /// stream is not LL-HLS (`partTarget == nil`) or finished.
    public func publishPart(_ part: LivePart) {
        guard partTarget != nil else { return }
        let body = ByteBuffer(bytes: part.bytes)
        let stored = StoredPart(bytes: body, headers: ResponseHeaders.segment(contentLength: body.readableBytes),
                                duration: part.duration, independent: part.independent)
        let waiters: [(CheckedContinuation<Bool, Never>, Bool)] = state.withLock { s in
            let old = s.snapshot
            guard !old.finished else { return [] }
            s.partial.append(stored)
            if let t = s.partTarget, t < part.duration { s.partTarget = part.duration }
            s.snapshot = makeSnapshot(&s, window: old.window, retained: old.retained, mediaSequence: old.mediaSequence,
                                      discontinuitySequence: old.discontinuitySequence, nextSequence: old.nextSequence,
                                      finished: false)
            return takeDecidedWaiters(&s)
        }
        for (c, v) in waiters { c.resume(returning: v) }
    }

    /// Sets (or replaces, on a format change) the init segment. A different init gets a new URI
    /// (`init.mp4`, `init1.mp4`, …); the next segment then carries `EXT-X-DISCONTINUITY` + `EXT-X-MAP`.
    /// Identical bytes are ignored. `frameRate` is a declared rate used only until a rate can be
    /// measured from the segments (video `trun` sample count / duration). `targetDuration`, when given,
    /// replaces the `EXT-X-TARGETDURATION` floor.
    public func setInitSegment(_ bytes: [UInt8], tracks: [TrackFormat], targetDuration: Int? = nil,
                               frameRate: Double? = nil) {
        let waiters: [(CheckedContinuation<Bool, Never>, Bool)] = state.withLock { s in
            if let targetDuration { s.targetDuration = max(1, targetDuration) }
            let buffer = ByteBuffer(bytes: bytes)
            if let last = s.inits.last, last.bytes == buffer {
                s.inits[s.inits.count - 1] = StoredInit(index: last.index, uri: last.uri, bytes: last.bytes,
                                                        headers: last.headers, tracks: tracks,
                                                        declaredFrameRate: frameRate)
            } else {
                let index = (s.inits.last?.index).map { $0 + 1 } ?? 0
                s.inits.append(StoredInit(index: index, uri: StoredInit.uri(for: index), bytes: buffer,
                                          headers: ResponseHeaders.initSegment(contentLength: buffer.readableBytes),
                                          tracks: tracks, declaredFrameRate: frameRate))
            }
            let old = s.snapshot
            s.snapshot = makeSnapshot(&s, window: old.window, retained: old.retained, mediaSequence: old.mediaSequence,
                                      discontinuitySequence: old.discontinuitySequence, nextSequence: old.nextSequence,
                                      finished: old.finished)
            return takeDecidedWaiters(&s)
        }
        for (c, v) in waiters { c.resume(returning: v) }
    }

    /// Appends a segment (sequence numbers start at 0), evicts beyond the window, expires retention,
    /// and renders both playlists once.
    public func publish(_ segment: LiveSegment) {
        let counts = segment.videoFrames == nil ? FragmentInspector.sampleCounts(in: segment.bytes) : [:]
        let body = ByteBuffer(bytes: segment.bytes)  // the one copy
        let headers = ResponseHeaders.segment(contentLength: body.readableBytes)
        // One writer: the parts read here are the ones appended below. When the segment ends with exactly its
        // parts' bytes (styp + parts), the stored parts become views of the segment buffer (no second copy).
        let parts = Self.sharingStorage(state.withLock { $0.partial }, with: body)
        let waiters: [(CheckedContinuation<Bool, Never>, Bool)] = state.withLock { s in
            let old = s.snapshot
            let initIndex = s.inits.last?.index ?? 0
            let videoTrack = s.inits.last?.tracks.first { $0.kind == .video }
            let isFirst = s.lastInitIndexPublished == nil
            let initChanged = !isFirst && s.lastInitIndexPublished != initIndex
            s.lastInitIndexPublished = initIndex
            let stored = StoredSegment(
                sequence: old.nextSequence, bytes: body, headers: headers, duration: segment.duration,
                programDateTime: segment.programDateTime, discontinuity: !isFirst && (segment.discontinuity || initChanged),
                initIndex: initIndex, videoSamples: videoTrack == nil ? nil : segment.videoFrames ?? videoTrack.flatMap { counts[$0.trackID] },
                parts: parts)
            s.partial = []

            let clock = s.clockTimescale ?? segment.duration.timescale
            s.clockTimescale = clock
            let elapsedBefore = s.elapsed
            // The playlist duration as clients last saw it (before this segment was appended).
            let playlistTicks = old.window.reduce(Int64(0)) { $0 + $1.duration.converted(to: clock).value }
            s.elapsed += segment.duration.converted(to: clock).value

            var window = old.window
            var retained = old.retained
            var mediaSequence = old.mediaSequence
            var discontinuitySequence = old.discontinuitySequence
            window.append(stored)
            if playlistType == nil {
                while window.count > windowSize {
                    let evicted = window.removeFirst()
                    mediaSequence += 1
                    if evicted.discontinuity { discontinuitySequence += 1 }
                    retained.append(evicted)
                    s.retention.append((elapsedBefore, playlistTicks))
                }
                // Expire: more than one playlist duration of media published since eviction, or over the cap.
                var drop = 0
                while drop < retained.count {
                    let r = s.retention[drop]
                    if s.elapsed - r.evictedAt > r.keepFor || retained.count - drop > windowSize * 16 {
                        drop += 1
                    } else {
                        break
                    }
                }
                if drop > 0 {
                    retained.removeFirst(drop)
                    s.retention.removeFirst(drop)
                }
            }
            s.snapshot = makeSnapshot(&s, window: window, retained: retained, mediaSequence: mediaSequence,
                                      discontinuitySequence: discontinuitySequence, nextSequence: old.nextSequence + 1,
                                      finished: false)
            return takeDecidedWaiters(&s)
        }
        for (c, v) in waiters { c.resume(returning: v) }
    }

    /// Ends the presentation: `EXT-X-ENDLIST` (and `EXT-X-PLAYLIST-TYPE:VOD` if so configured).
    /// The server keeps serving the last window.
    /// Parts of an unfinished segment are dropped (never listed without their segment); every blocked
    /// request is released.
    public func finish() {
        let waiters: [(CheckedContinuation<Bool, Never>, Bool)] = state.withLock { s in
            let old = s.snapshot
            s.partial = []
            s.snapshot = makeSnapshot(&s, window: old.window, retained: old.retained, mediaSequence: old.mediaSequence,
                                      discontinuitySequence: old.discontinuitySequence, nextSequence: old.nextSequence,
                                      finished: true)
            return takeDecidedWaiters(&s)
        }
        for (c, v) in waiters { c.resume(returning: v) }
    }

    public func snapshot() -> LiveSnapshot {
        state.withLock { $0.snapshot }
    }

    /// Waits until the media playlist exists (a segment was published) and an init segment is set,
    /// or until `timeout`/cancellation. Returns whether it is ready.
    public func waitForFirstSegment(timeout: Duration) async -> Bool {
        await wait(for: .firstSegment, timeout: timeout)
    }

    /// Blocking playlist reload (RFC 8216bis §6.2.5.2): waits until segment `msn` is complete or, with
    /// `part`, until part `part` of segment `msn` is published (a complete segment satisfies any of its parts),
    /// or the stream finished. Returns `false` on timeout or cancellation.
    public func waitForPlaylist(msn: UInt64, part: Int?, timeout: Duration) async -> Bool {
        await wait(for: .playlist(msn: msn, part: part), timeout: timeout)
    }

    /// Preload-hint support: waits until part `index` of segment `msn` is published. Returns `false` at once
    /// when it can never exist (segment complete without it, expired, finished, or more than one segment ahead),
    /// and on timeout or cancellation.
    public func waitForPart(msn: UInt64, index: Int, timeout: Duration) async -> Bool {
        await wait(for: .part(msn: msn, index: index), timeout: timeout)
    }

    /// Requests currently waiting (for tests: no leaks after cancellation).
    var pendingWaiterCount: Int { state.withLock { $0.waiters.count } }

    /// Waits until `condition` is decided, or until `timeout`/cancellation (then `false`).
    /// The continuation lives in the locked state; it is resumed outside the lock by whoever decides it.
    func wait(for condition: WaitCondition, timeout: Duration) async -> Bool {
        let id: Int? = state.withLock { s in
            if Self.outcome(condition, s) != nil { return nil }
            let id = s.nextWaiterID
            s.nextWaiterID += 1
            s.waiters[id] = Waiter(condition: condition)
            return id
        }
        guard let id else { return state.withLock { Self.outcome(condition, $0) } ?? false }
        return await withTaskGroup(of: Bool?.self) { group in
            group.addTask {
                await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                    let immediate: Bool? = self.state.withLock { s in
                        guard var w = s.waiters[id] else { return Self.outcome(condition, s) ?? false }
                        if let r = w.resolved {
                            s.waiters[id] = nil
                            return r
                        }
                        w.continuation = c
                        s.waiters[id] = w
                        return nil
                    }
                    if let immediate { c.resume(returning: immediate) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.resolveWaiter(id, false)
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

    private func resolveWaiter(_ id: Int, _ value: Bool) {
        let c: CheckedContinuation<Bool, Never>? = state.withLock { s in
            guard var w = s.waiters[id] else { return nil }
            if let c = w.continuation {
                s.waiters[id] = nil
                return c
            }
            if w.resolved == nil { w.resolved = value }
            s.waiters[id] = w
            return nil
        }
        c?.resume(returning: value)
    }

    private static func isReady(_ s: State) -> Bool {
        s.snapshot.playlist != nil && !s.inits.isEmpty
    }

    /// `true`/`false` once decided, `nil` while the condition may still come true.
    private static func outcome(_ condition: WaitCondition, _ s: State) -> Bool? {
        let snap = s.snapshot
        switch condition {
        case .firstSegment:
            return isReady(s) ? true : nil
        case .playlist(let msn, let part):
            if snap.finished { return true }
            guard snap.playlist != nil else { return nil }
            if msn < snap.nextSequence { return true }
            if let part, msn == snap.nextSequence, part < snap.partial.count { return true }
            return nil
        case .part(let msn, let index):
            if snap.part(msn, index) != nil { return true }
            return snap.partMayAppear(msn, index) ? nil : false
        }
    }

    /// Removes decided waiters that already have a continuation (returned, to resume after unlock) and marks
    /// the others so that their continuation is resumed as soon as it is installed.
    private func takeDecidedWaiters(_ s: inout State) -> [(CheckedContinuation<Bool, Never>, Bool)] {
        guard !s.waiters.isEmpty else { return [] }
        var decided: [(CheckedContinuation<Bool, Never>, Bool)] = []
        for (id, var w) in s.waiters where w.resolved == nil {
            guard let value = Self.outcome(w.condition, s) else { continue }
            if let c = w.continuation {
                decided.append((c, value))
                s.waiters[id] = nil
            } else {
                w.resolved = value
                s.waiters[id] = w
            }
        }
        return decided
    }

    private func makeSnapshot(_ s: inout State, window: [StoredSegment], retained: [StoredSegment],
                              mediaSequence: UInt64, discontinuitySequence: UInt64, nextSequence: UInt64,
                              finished: Bool) -> LiveSnapshot {
        // Keep only init segments still referenced (plus the current one).
        let oldestInit = retained.first?.initIndex ?? window.first?.initIndex ?? s.inits.last?.index ?? 0
        if let current = s.inits.last?.index {
            s.inits.removeAll { $0.index < oldestInit && $0.index != current }
        }
        var playlist: MediaPlaylist?
        var multivariant: MultivariantPlaylist?
        let partial = finished ? [] : s.partial
        if let first = window.first {
            let targetDuration = max(s.targetDuration, MediaPlaylist.targetDuration(for: window.map(\.duration)))
            // LL-HLS: parts for segments starting within 3 target durations of the playlist end (§4.4.4.9).
            var partsFrom = window.count
            if s.partTarget != nil {
                let limit = Int64(targetDuration) * 3_000_000
                var fromEnd = partial.reduce(Int64(0)) { $0 + Self.micros($1.duration) }
                while partsFrom > 0 {
                    let d = Self.micros(window[partsFrom - 1].duration)
                    guard fromEnd + d <= limit else { break }
                    fromEnd += d
                    partsFrom -= 1
                }
            }
            var previousInit = first.initIndex
            let segments = window.enumerated().map { i, seg -> PlaylistSegment in
                let map: String? = seg.initIndex != previousInit ? StoredInit.uri(for: seg.initIndex) : nil
                previousInit = seg.initIndex
                return PlaylistSegment(sequence: seg.sequence, uri: "seg\(seg.sequence).m4s", duration: seg.duration,
                                       programDateTime: seg.programDateTime, discontinuity: seg.discontinuity,
                                       mapURI: map,
                                       parts: i >= partsFrom ? Self.playlistParts(seg.parts, sequence: seg.sequence) : [])
            }
            let type: MediaPlaylist.PlaylistType? = switch playlistType {
            case .event: .event
            case .vod: finished ? .vod : nil
            case nil: nil
            }
            playlist = MediaPlaylist(
                targetDuration: targetDuration,
                mediaSequence: mediaSequence, discontinuitySequence: discontinuitySequence,
                mapURI: StoredInit.uri(for: first.initIndex), playlistType: type, segments: segments,
                endList: finished)
            if let partTarget = s.partTarget {
                // PART-HOLD-BACK ≥ 3 × PART-TARGET and HOLD-BACK ≥ 3 × TARGETDURATION (§4.4.3.8), in the
                // microseconds the playlist shows (PART-TARGET is rendered rounded up).
                let renderedPartTarget = MediaTime.rescale(partTarget.value, from: partTarget.timescale, to: 1_000_000,
                                                           rounding: .up)
                playlist?.serverControl = ServerControl(
                    canBlockReload: true, holdBack: .seconds(Int64(targetDuration) * 3),
                    partHoldBack: MediaTime(value: renderedPartTarget * 3, timescale: 1_000_000))
                playlist?.partTarget = partTarget
                playlist?.trailingParts = Self.playlistParts(partial, sequence: nextSequence)
                if !finished {
                    playlist?.preloadHint = PreloadHint(type: .part, uri: "seg\(nextSequence).\(partial.count).m4s")
                }
            }
            if let current = s.inits.last {
                multivariant = MultivariantPlaylist(variants: [Self.variant(current, window: window)])
            }
        }
        return LiveSnapshot(mediaSequence: mediaSequence, discontinuitySequence: discontinuitySequence,
                            nextSequence: nextSequence, finished: finished, playlist: playlist,
                            multivariant: multivariant, window: window, retained: retained, inits: s.inits,
                            partial: partial)
    }

    private static func micros(_ t: MediaTime) -> Int64 {
        MediaTime.rescale(t.value, from: t.timescale, to: 1_000_000, rounding: .down)
    }

    /// `parts` as slices of `segment` when the segment's tail is their concatenation; otherwise unchanged.
    static func sharingStorage(_ parts: [StoredPart], with segment: ByteBuffer) -> [StoredPart] {
        let total = parts.reduce(0) { $0 + $1.bytes.readableBytes }
        guard !parts.isEmpty, total <= segment.readableBytes else { return parts }
        var offset = segment.readerIndex + segment.readableBytes - total
        var shared: [StoredPart] = []
        shared.reserveCapacity(parts.count)
        for p in parts {
            guard let slice = segment.getSlice(at: offset, length: p.bytes.readableBytes), slice == p.bytes else {
                return parts
            }
            shared.append(StoredPart(bytes: slice, headers: p.headers, duration: p.duration, independent: p.independent))
            offset += p.bytes.readableBytes
        }
        return shared
    }

    private static func playlistParts(_ parts: [StoredPart], sequence: UInt64) -> [PlaylistPart] {
        parts.enumerated().map { i, p in
            PlaylistPart(uri: "seg\(sequence).\(i).m4s", duration: p.duration, independent: p.independent)
        }
    }

    /// `EXT-X-STREAM-INF` attributes from the real segments in the window:
    /// BANDWIDTH = peak segment bit rate (bytes × 8 / duration, rounded up), AVERAGE-BANDWIDTH = total bits /
    /// total duration, CODECS from the tracks, RESOLUTION from the video track, FRAME-RATE measured as video
    /// samples / duration over the window's segments of the current init (else the declared rate).
    static func variant(_ initSegment: StoredInit, window: [StoredSegment]) -> VariantStream {
        var peak: Int64 = 0
        var totalBits: Int128 = 0
        var totalTicks: Int128 = 0  // in 1/1_000_000 s
        var frames = 0
        var frameMicros: Int64 = 0
        for seg in window {
            let bits = Int128(seg.bytes.readableBytes) * 8
            let d = seg.duration
            guard d.value > 0 else { continue }
            // bits * timescale / value, rounded up.
            let num = bits * Int128(d.timescale)
            let rate = (num + Int128(d.value) - 1) / Int128(d.value)
            peak = max(peak, Int64(clamping: rate))
            totalBits += bits
            totalTicks += Int128(MediaTime.rescale(d.value, from: d.timescale, to: 1_000_000))
            if seg.initIndex == initSegment.index, let n = seg.videoSamples, n > 0 {
                frames += n
                frameMicros += MediaTime.rescale(d.value, from: d.timescale, to: 1_000_000)
            }
        }
        let average: Int? = totalTicks > 0 ? Int(clamping: Int64(clamping: (totalBits * 1_000_000 + totalTicks / 2) / totalTicks)) : nil
        let video = initSegment.tracks.first { $0.kind == .video }
        var frameRate: Double? = initSegment.declaredFrameRate
        if frames > 0, frameMicros > 0 {
            frameRate = Double(frames) * 1_000_000 / Double(frameMicros)  // display only
        }
        let codecs = initSegment.tracks.map(\.codecString).joined(separator: ",")
        return VariantStream(
            bandwidth: Int(clamping: max(peak, 1)), averageBandwidth: average, codecs: codecs,
            resolution: video.flatMap { $0.width > 0 && $0.height > 0 ? .init(width: $0.width, height: $0.height) : nil },
            frameRate: video == nil ? nil : frameRate, uri: "stream.m3u8")
    }
}
