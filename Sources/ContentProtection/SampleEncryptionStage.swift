import ISOBMFF
import MediaCore
import MediaPresentation
import Synchronization

/// The encryption stage of `cbcs` and `cenc` (ISO/IEC 23001-7): between a producer and its consumers, like
/// `EncryptionStage`, it writes each init segment again with protected sample entries and `pssh` boxes, and each part
/// again with its samples encrypted and `senc`/`saiz`/`saio` in every `traf` (`FragmentProtector`), once, at
/// publication. Consumers store and serve the bytes as they would clear ones.
///
/// A segment is its parts in turn, encrypted or not: the segment event reuses the parts' encrypted bytes (no second
/// AES pass), and its `partRanges` are the encrypted parts' places. The keyframe fragment (the I-frame entry) is
/// moved to where that fragment is now: it carries its own `senc`, so it decrypts alone.
///
/// With key periods (`SampleProtection.keyPeriod`), segment *s* uses period *s / k*'s key (*k* segments a period, as
/// `KeySchedule` counts them for AES-128): its fragments state it (`FragmentProtector` rotating), its facts carry it
/// (a new `EXT-X-KEY` at the boundary, listed ahead through `nextEncryption`), and the init segment's `tenc` names
/// the key of the period it was made in.
///
/// With per-track keys (`TrackKeys`), each rendition's init segment decides its key (by its video track's picture, or
/// its audio): its `tenc`, `pssh`, fragments and `EXT-X-KEY` are that key's.
///
/// With a clear lead, the segments that start less than `clearLead` into the stream keep their samples clear, each
/// `traf` saying so (a `seig` entry with isProtected 0), and carry no `encryption` (no `EXT-X-KEY` before them).
public final class SampleEncryptionStage: PresentationConsumer, Sendable {
    private let downstream: any PresentationConsumer
    public var holdBackMillis: Int64 { downstream.holdBackMillis }
    public let keys: TrackKeys
    /// The first segments covering this much media stay clear (`--clear-lead`).
    public let clearLead: MediaTime?

    private struct State {
        var segmentsPerPeriod = UInt64(Int64.max)
        /// Clear lead: the media published before each segment (from the first rendition's finished segments), and
        /// which segments were decided clear (a segment starting before `clearLead` is).
        var leadRendition: Int?
        var elapsed: MediaTime?
        var clearDecisions: [UInt64: Bool] = [:]
        /// Per key (`keys.entries`): the latest period's protection (its key derived once).
        var current: [Int: SampleProtection] = [:]
        /// Per rendition: its key (`keys.entries` index), from its latest init segment.
        var keyOf: [Int: Int] = [:]
        /// Per rendition: the key its latest init segment names (its `tenc`, its `pssh` boxes).
        var initKey: [Int: SampleProtection] = [:]
        /// Per rendition: how its tracks are protected (from its latest init segment).
        var protectors: [Int: FragmentProtector] = [:]
        /// Renditions of no media track (subtitles), which stay in the clear.
        var clear: Set<Int> = []
        /// Per rendition: the encrypted parts of the segment in progress (clear size, bytes, and where each fragment
        /// went, in segment coordinates).
        var parts: [Int: SegmentInProgress] = [:]
    }
    private let state = Mutex(State())

    struct SegmentInProgress {
        var sequence: UInt64
        var clearCount = 0
        var parts: [[UInt8]] = []
        var fragments: [(clear: Range<Int>, protected: Range<Int>)] = []
        var protectedCount: Int { parts.reduce(0) { $0 + $1.count } }
    }

    public convenience init(_ protection: SampleProtection, clearLead: MediaTime? = nil, downstream: any PresentationConsumer) {
        self.init(TrackKeys(protection), clearLead: clearLead, downstream: downstream)
    }

    public init(_ keys: TrackKeys, clearLead: MediaTime? = nil, downstream: any PresentationConsumer) {
        self.keys = keys
        self.clearLead = clearLead
        self.downstream = downstream
    }

    /// Whether segment `sequence` is in the clear lead: it starts less than `clearLead` into the stream. Decided when
    /// it is first seen (its first part), from the durations of the segments before it, the same for every rendition.
    private func isClear(_ sequence: UInt64) -> Bool {
        guard let clearLead else { return false }
        return state.withLock { s in
            if let d = s.clearDecisions[sequence] { return d }
            let d = (s.elapsed ?? .seconds(0)) < clearLead
            s.clearDecisions[sequence] = d
            s.clearDecisions = s.clearDecisions.filter { $0.key &+ 16 > sequence }
            return d
        }
    }

    /// A finished segment of rendition `r` adds its duration to the media before the next one (one rendition counts).
    private func count(_ r: Int, _ info: SegmentInfo) {
        guard clearLead != nil else { return }
        state.withLock { s in
            if s.leadRendition == nil { s.leadRendition = r }
            guard s.leadRendition == r else { return }
            s.elapsed = s.elapsed.map { $0 + info.duration } ?? info.duration
        }
    }

    private var rotating: Bool { keys.keyPeriod != nil }

    /// Rendition `r`'s key in segment `sequence`'s key period.
    private func protection(segment sequence: UInt64, rendition r: Int) -> SampleProtection {
        state.withLock { s in
            let n = sequence / max(1, s.segmentsPerPeriod)
            let k = s.keyOf[r] ?? 0
            if let c = s.current[k], c.key.id == n { return c }
            let p = keys.entries[k].protection.period(n)
            s.current[k] = p
            return p
        }
    }

    /// Whether rendition `r` announced no media track (a subtitle rendition): its segments stay in the clear.
    private func isClearRendition(_ r: Int) -> Bool { state.withLock { $0.clear.contains(r) } }

    public func consume(_ event: PresentationEvent) throws {
        switch event {
        case .layout(_, let policy):
            // Key periods in whole segments of the duration segments are cut at (as AES-128's).
            let duration = policy.segmentDuration ?? .seconds(Int64(policy.targetDuration))
            if let period = keys.keyPeriod {
                let n = KeySchedule(master: keys.first.key.bytes, period: period).segmentsPerPeriod(segmentDuration: duration)
                state.withLock { $0.segmentsPerPeriod = n }
            }
            try downstream.consume(event)
        case .end:
            keys.finish()
            try downstream.consume(event)
        case .event:
            try downstream.consume(event)
        case .initSegment(let r, _, let tracks) where tracks.isEmpty:
            // A rendition of no media track (subtitles: WebVTT, or wvtt text) stays in the clear, as CMAF text does.
            state.withLock { _ = $0.clear.insert(r) }
            try downstream.consume(event)
        case .part(let r, _, _) where isClearRendition(r), .segment(let r, _, _) where isClearRendition(r):
            try downstream.consume(event)
        case .initSegment(let r, _, let tracks):
            try downstream.consume(.initSegment(rendition: r, bytes: try protectedInit(r, tracks), tracks: tracks))
        case .part(let r, let info, let bytes):
            let (sealed, info) = try protect(part: info, bytes, rendition: r)
            try downstream.consume(.part(rendition: r, info, bytes: sealed))
        case .segment(let r, let info, let bytes):
            let (sealed, info) = try protect(segment: info, bytes, rendition: r)
            try downstream.consume(.segment(rendition: r, info, bytes: sealed))
        }
    }

    /// Rendition `r`'s init segment with its key: `tenc` and `sinf` per track, `pssh` per system. Picks the
    /// rendition's key (per-track keys) and its fragments' protector.
    private func protectedInit(_ r: Int, _ tracks: [TrackFormat]) throws -> [UInt8] {
        var protected: [UInt32: ProtectedTrack] = [:]
        for t in tracks { protected[t.trackID] = try ProtectedTrack(t, scheme: keys.scheme) }
        let k = try keys.entry(for: tracks)
        let key = state.withLock { s in
            s.keyOf[r] = k
            return s.current[k]
        } ?? keys.entries[k].protection.period(0)
        state.withLock { $0.initKey[r] = key }
        let bytes = try InitSegment.make(tracks: tracks,
                                         protection: protected.mapValues { $0.encryption(keyID: key.keyID, constantIV: key.constantIV) },
                                         systems: key.systemHeaders)
        let protector = FragmentProtector(tracks: protected, rendition: r)
        state.withLock { $0.protectors[r] = protector }
        return bytes
    }

    /// A part sealed, its place in the sealed segment in progress kept (where each fragment's clear bytes went).
    private func protect(part info: PartInfo, _ bytes: MediaBytes, rendition r: Int) throws -> (MediaBytes, PartInfo) {
        var info = info
        let key = protection(segment: info.segmentSequence, rendition: r)
        let clear = isClear(info.segmentSequence)
        let (sealed, map) = try protector(r).protect(bytes.joined, key: key, rotating: rotating, clearLead: clear)
        let offset = state.withLock { s -> Int in
            var current = s.parts[r] ?? SegmentInProgress(sequence: info.segmentSequence)
            if info.index == 0 || current.sequence != info.segmentSequence { current = SegmentInProgress(sequence: info.segmentSequence) }
            let offset = current.protectedCount
            for f in map {
                current.fragments.append(((f.clear.lowerBound + current.clearCount)..<(f.clear.upperBound + current.clearCount),
                                          (f.protected.lowerBound + offset)..<(f.protected.upperBound + offset)))
            }
            current.clearCount += bytes.count
            current.parts.append(sealed)
            s.parts[r] = current
            return offset
        }
        info.byteCount = sealed.count
        info.offset = offset
        info.encryption = clear ? nil : encryption(key, rendition: r)
        return (MediaBytes(sealed), info)
    }

    /// A segment sealed: its parts' sealed bytes when it was seen as parts, else sealed whole (an app's own
    /// producer); its part ranges and keyframe fragment moved to where they are in the sealed bytes.
    private func protect(segment info: SegmentInfo, _ bytes: MediaBytes, rendition r: Int) throws -> (MediaBytes, SegmentInfo) {
        var info = info
        let key = protection(segment: info.sequence, rendition: r)
        let clear = isClear(info.sequence)
        let done = state.withLock { s -> SegmentInProgress? in
            defer { s.parts[r] = nil }
            guard let p = s.parts[r], p.sequence == info.sequence, p.clearCount == bytes.count else { return nil }
            return p
        }
        let parts = done?.parts
        var fragments = done?.fragments ?? []
        var pieces = parts ?? []
        if parts == nil {
            let whole = try protector(r).protect(bytes.joined, key: key, rotating: rotating, clearLead: clear)
            fragments = whole.fragments
            pieces = [whole.bytes]
        }
        var ranges: [Range<Int>] = []
        var at = 0
        for p in pieces {
            ranges.append(at..<(at + p.count))
            at += p.count
        }
        info.byteCount = at
        info.partRanges = parts == nil ? [] : ranges
        info.keyframe = info.keyframe.flatMap { k in
            // The fragment (after any styp before it) whose end is the keyframe range's end: same styp, new place.
            fragments.first { $0.clear.contains(k.range.lowerBound) && $0.clear.upperBound == k.range.upperBound }.map { f in
                KeyframeFragment(range: (f.protected.lowerBound + k.range.lowerBound - f.clear.lowerBound)..<f.protected.upperBound,
                                 decodeTime: k.decodeTime)
            }
        }
        info.encryption = clear ? nil : encryption(key, rendition: r)
        count(r, info)
        info.nextEncryption = isClear(info.sequence &+ 1) ? nil : encryption(protection(segment: info.sequence &+ 1, rendition: r), rendition: r)
        return (MediaBytes(chunks: pieces), info)
    }

    /// What a part or segment of rendition `r` under `key` states: the key's facts, and (with key periods) the key its
    /// init segment names when that is another period's.
    private func encryption(_ key: SampleProtection, rendition r: Int) -> SegmentEncryption {
        var e = key.segmentEncryption
        if rotating, let initial = state.withLock({ $0.initKey[r] }), initial.keyID != key.keyID {
            e.initKeyID = initial.keyID
            e.initKeySystems = initial.keySystems
        }
        return e
    }

    private func protector(_ r: Int) throws -> FragmentProtector {
        guard let p = state.withLock({ $0.protectors[r] }) else {
            throw MP4Error.invalidConfiguration("rendition \(r): a fragment before its init segment")
        }
        return p
    }
}
