import HLS
import MediaCore

/// A segment as a window stores it: the producer's facts plus the consumer's payload (bytes, or a prepared
/// response, or nothing when the bytes went to disk).
public struct StoredSegment<Payload: Sendable>: Sendable {
    public let sequence: UInt64
    public let info: SegmentInfo
    public let payload: Payload
    /// As rendered: the producer's flag, or the first segment after a new init segment.
    public let discontinuity: Bool
    public let initIndex: Int
    /// LL-HLS parts of this segment (servable as long as the segment is).
    public internal(set) var parts: [StoredPart<Payload>]

    /// The same segment with a stand-in payload and no parts (it left the hot part of a time-shift window).
    func spilled(to standIn: Payload) -> StoredSegment {
        StoredSegment(sequence: sequence, info: info, payload: standIn, discontinuity: discontinuity,
                      initIndex: initIndex, parts: [])
    }

    /// The same segment with the payloads `retain` gives it and its parts (it left the playlist); unchanged when
    /// `retain` keeps them or does not give one payload per part.
    func retained(by retain: LiveWindow<Payload>.Retain) -> StoredSegment {
        guard let kept = retain(payload, parts.map(\.payload)), kept.parts.count == parts.count else { return self }
        return StoredSegment(sequence: sequence, info: info, payload: kept.segment, discontinuity: discontinuity,
                             initIndex: initIndex,
                             parts: zip(parts, kept.parts).map { StoredPart(info: $0.info, payload: $1) })
    }
}

public struct StoredPart<Payload: Sendable>: Sendable {
    public let info: PartInfo
    public let payload: Payload
}

/// An init segment; `index` 0 is `init.mp4`, then `init1.mp4`, …
public struct StoredInit<Payload: Sendable>: Sendable {
    public let index: Int
    public let payload: Payload
    public let tracks: [TrackFormat]
    /// Identity of the bytes, to ignore an identical init sent again.
    let digest: [UInt8]
}

/// An immutable view of a window at one publish, shared by every reader. A `final class` of `let`s: one
/// retain per request.
public final class WindowSnapshot<Payload: Sendable>: Sendable {
    /// Increases with every change: consumers cache what they derive from a snapshot by it.
    public let version: UInt64
    /// Segments evicted from the playlist so far (`EXT-X-MEDIA-SEQUENCE`).
    public let mediaSequence: UInt64
    /// `EXT-X-DISCONTINUITY` tags evicted so far (`EXT-X-DISCONTINUITY-SEQUENCE`).
    public let discontinuitySequence: UInt64
    /// The sequence number the segment in progress will get.
    public let nextSequence: UInt64
    public let finished: Bool
    /// Listed segments, oldest first, sequences `mediaSequence..<mediaSequence + window.count`.
    public let window: SegmentList<Payload>
    /// Evicted but still downloadable segments, oldest first, contiguous, ending at `mediaSequence - 1`.
    public let retained: [StoredSegment<Payload>]
    public let inits: [StoredInit<Payload>]
    /// Parts of the segment in progress (sequence `nextSequence`).
    public let partial: [StoredPart<Payload>]
    /// Timed events listed with the window's segments, oldest first (`EXT-X-DATERANGE`, the MPD's `EventStream`).
    public let events: [ListedEvent]
    /// The events it stopped listing lately (`EventList.removed`).
    public let removedEvents: [RemovedEvent]
    /// The `emsg` schemes its segments have carried (`EventList.inbandSchemes`).
    public let inbandSchemes: [String]
    public var carriesID3: Bool { inbandSchemes.contains(TimedEvent.id3Scheme) }
    /// `EXT-X-TARGETDURATION`: the policy's floor, raised by any longer segment in the window.
    public let targetDuration: Int
    public let policy: TimingPolicy

    init(version: UInt64 = 0, mediaSequence: UInt64 = 0, discontinuitySequence: UInt64 = 0, nextSequence: UInt64 = 0,
         finished: Bool = false, window: SegmentList<Payload> = SegmentList(), retained: [StoredSegment<Payload>] = [],
         inits: [StoredInit<Payload>] = [], partial: [StoredPart<Payload>] = [], events: [ListedEvent] = [],
         removedEvents: [RemovedEvent] = [], inbandSchemes: [String] = [], policy: TimingPolicy,
         longestSegment: Int = 1) {
        self.version = version
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.nextSequence = nextSequence
        self.finished = finished
        self.window = window
        self.retained = retained
        self.inits = inits
        self.partial = finished ? [] : partial
        self.events = events
        self.removedEvents = removedEvents
        self.inbandSchemes = inbandSchemes
        self.policy = policy
        // `longestSegment`: the largest rounded EXTINF in `window`, kept by the window as segments come and go.
        self.targetDuration = max(policy.targetDuration, longestSegment)
    }

    /// A media playlist can be given out: an init segment and a complete segment exist. (A playlist of parts only
    /// would be valid LL-HLS, but a legacy client that loads it finds no segment and gives up: instead the first
    /// segment of an LL stream is one part long.)
    public var isPlayable: Bool { !inits.isEmpty && !window.isEmpty }

    /// Segment sequence numbers that can be downloaded now (window + retention).
    public var availableSequences: Range<UInt64> { (retained.first?.sequence ?? mediaSequence)..<(mediaSequence + UInt64(window.count)) }
    /// Sequence numbers listed in the playlist.
    public var windowSequences: Range<UInt64> { mediaSequence..<(mediaSequence + UInt64(window.count)) }

    public func segment(_ sequence: UInt64) -> StoredSegment<Payload>? {
        if sequence >= mediaSequence {
            let i = sequence - mediaSequence
            return i < UInt64(window.count) ? window[Int(i)] : nil
        }
        guard let first = retained.first?.sequence, sequence >= first else { return nil }
        let i = Int(sequence - first)
        return i < retained.count ? retained[i] : nil
    }

    public func initSegment(_ index: Int) -> StoredInit<Payload>? { inits.first { $0.index == index } }

    public func part(_ sequence: UInt64, _ index: Int) -> StoredPart<Payload>? {
        guard index >= 0 else { return nil }
        if sequence == nextSequence { return index < partial.count ? partial[index] : nil }
        guard let seg = segment(sequence), index < seg.parts.count else { return nil }
        return seg.parts[index]
    }

    /// Whether a part not published yet can still appear: it belongs to the segment in progress or the one
    /// after it, and the window is not finished.
    public func partMayAppear(_ sequence: UInt64, _ index: Int) -> Bool {
        !finished && index >= 0 && (sequence == nextSequence || sequence == nextSequence + 1)
    }

    /// The last segment and part a rendition report (`EXT-X-RENDITION-REPORT`) names: the newest part if the
    /// segment in progress has one, else the last complete segment (with its last part, if it had parts).
    public var lastPosition: (msn: UInt64, part: Int?)? {
        if !partial.isEmpty { return (nextSequence, partial.count - 1) }
        guard let last = window.last else { return nil }
        return (last.sequence, last.parts.isEmpty ? nil : last.parts.count - 1)
    }
}
