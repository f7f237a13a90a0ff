import MediaCore

/// What the segmenter knows about a finished segment, carried forward so nothing downstream re-parses bytes.
public struct SegmentInfo: Sendable, Equatable {
    /// The producer's sequence number (the window checks it continues its own numbering).
    public var sequence: UInt64
    /// Decode time of the first sample of the rendition's reference track (its `tfdt`), in that track's timescale.
    public var startTime: MediaTime
    /// Exact duration on the reference track.
    public var duration: MediaTime
    public var byteCount: Int
    public var programDateTime: WallClock?
    /// `EXT-X-DISCONTINUITY` before this segment (new timeline). A new init segment adds one by itself.
    public var discontinuity: Bool
    /// Video samples in the segment (for `FRAME-RATE`), `nil` when the rendition has no video.
    public var videoSampleCount: Int?
    /// Whether the segment starts with a sync sample on its reference track.
    public var startsWithSyncSample: Bool
    /// The smallest presentation time (`dts + composition offset`) of the reference track's samples, in its
    /// timescale (a `sidx`'s `earliest_presentation_time`); `startTime` when the producer did not say (no B-frames).
    public var earliestPresentationTime: MediaTime
    /// Where its parts (fragments) lie in its bytes: they tile it, the first from 0. A segment is its parts in turn, so
    /// an LL-HLS part, the DASH segment in progress and the finished segment are views of the same bytes. Empty when
    /// the producer did not say (one part: the whole segment).
    public var partRanges: [Range<Int>]
    /// The fragment that opens with the segment's first video keyframe (its bytes in this segment, its decode time
    /// in the reference track's timescale): the segment's entry in an I-frame playlist. `nil` when the rendition has
    /// no video or the producer did not say (then the rendition has no I-frame playlist entry for it).
    public var keyframe: KeyframeFragment?
    /// The sync sample the reference track opens with (the sample's own array, shared with the segment's bytes, not
    /// a copy), for trick play (thumbnail tiles decode it); `nil` when the producer did not say or there is none.
    public var keyframeSample: [UInt8]?
    /// How the segment's bytes were encrypted (`EXT-X-KEY`); `nil`: in the clear. An encrypted segment is one CBC
    /// stream of its own, not its parts' bytes in turn: its `partRanges` and `keyframe` are then empty.
    public var encryption: SegmentEncryption? = nil
    /// What the bytes are: fMP4 fragments, or a WebVTT file (a subtitle rendition's segment, `URIScheme.webVTT`), so
    /// an output that labels objects (an HTTP `Content-Type`) knows without reading them.
    public var format: URIScheme.SegmentFormat = .fragmentedMP4
    /// The key and IV of the segment after this one (known once this one is published: they are a function of the
    /// timeline), so a playlist can state them before an `EXT-X-PRELOAD-HINT` of that segment's first part.
    public var nextEncryption: SegmentEncryption? = nil

    public init(sequence: UInt64, startTime: MediaTime, duration: MediaTime, byteCount: Int,
                programDateTime: WallClock? = nil, discontinuity: Bool = false, videoSampleCount: Int? = nil,
                startsWithSyncSample: Bool = true, earliestPresentationTime: MediaTime? = nil,
                partRanges: [Range<Int>] = [], keyframe: KeyframeFragment? = nil, keyframeSample: [UInt8]? = nil) {
        precondition(keyframe.map { $0.range.upperBound <= byteCount } ?? true, "the keyframe's fragment lies in the segment")
        self.keyframe = keyframe
        self.keyframeSample = keyframeSample
        self.partRanges = partRanges
        self.earliestPresentationTime = earliestPresentationTime ?? startTime
        self.sequence = sequence
        self.startTime = startTime
        self.duration = duration
        self.byteCount = byteCount
        self.programDateTime = programDateTime
        self.discontinuity = discontinuity
        self.videoSampleCount = videoSampleCount
        self.startsWithSyncSample = startsWithSyncSample
    }
}

/// A low-latency part (RFC 8216bis §4.4.4.9) of the segment in progress.
public struct PartInfo: Sendable, Equatable {
    public var segmentSequence: UInt64
    public var index: Int
    public var duration: MediaTime
    public var byteCount: Int
    /// Where the part begins in its segment's bytes (the first part, with the segment's `styp`, at 0).
    public var offset: Int
    /// Starts with a sync sample (`INDEPENDENT=YES`).
    public var independent: Bool
    /// The last part of its segment: the segment is published right after it, and the two appear together
    /// (a playlist never hints a part that will not come, RFC 8216bis §4.4.5.3).
    public var endsSegment: Bool
    /// When the sample that closed this part reached the segmenter (the part is cut as the next sample arrives);
    /// `nil` when unknown. For metrics only: the time from it to publication.
    public var closedAt: WallClock?
    /// How the part's bytes were encrypted: its segment's key and IV (`nil`: in the clear).
    public var encryption: SegmentEncryption? = nil

    public init(segmentSequence: UInt64, index: Int, duration: MediaTime, byteCount: Int, independent: Bool,
                endsSegment: Bool = false, closedAt: WallClock? = nil, offset: Int = 0) {
        self.offset = offset
        self.closedAt = closedAt
        self.segmentSequence = segmentSequence
        self.index = index
        self.duration = duration
        self.byteCount = byteCount
        self.independent = independent
        self.endsSegment = endsSegment
    }
}

/// How the segments of every rendition are shaped; the same for the life of a presentation.
public struct TimingPolicy: Sendable, Equatable {
    /// `EXT-X-TARGETDURATION` floor (seconds).
    public var targetDuration: Int
    /// LL-HLS `PART-TARGET`, fixed for the life of the stream (Apple's player stops when it changes);
    /// `nil`: no LL-HLS.
    public var partTarget: MediaTime?
    /// The duration segments are cut at (they can be longer when the input's keyframes are further apart);
    /// `nil` when unknown. Low-latency DASH announces the segment in progress with it.
    public var segmentDuration: MediaTime?

    public init(targetDuration: Int, partTarget: MediaTime? = nil, segmentDuration: MediaTime? = nil) {
        precondition(partTarget.map { $0.value > 0 && $0.timescale > 0 } ?? true, "partTarget must be positive")
        precondition(segmentDuration.map { $0.value > 0 && $0.timescale > 0 } ?? true, "segmentDuration must be positive")
        self.targetDuration = max(1, targetDuration)
        self.partTarget = partTarget
        self.segmentDuration = segmentDuration
    }
}

/// One producer's output, in publishing order: a layout, then per rendition an init segment before its
/// first part or segment, every part of a segment before the segment, and `end` last.
public enum PresentationEvent: Sendable {
    /// The renditions and timing: sent once, first.
    case layout([Rendition], TimingPolicy)
    /// A new init segment for a rendition (first, or after a codec change; the next segment then starts a new
    /// discontinuity).
    case initSegment(rendition: Int, bytes: [UInt8], tracks: [TrackFormat])
    /// A part of the segment in progress. Parts are announced for every segment (one per segment without LL-HLS).
    case part(rendition: Int, PartInfo, bytes: MediaBytes)
    /// A finished segment: its parts' bytes in turn (the same chunks the parts carried, not a copy).
    case segment(rendition: Int, SegmentInfo, bytes: MediaBytes)
    /// A timed event placed on the presentation's timeline (an SCTE-35 cue): sent before the segment it starts in,
    /// so the playlist that first lists that segment lists its daterange too.
    case event(EventInfo)
    /// The input ended: playlists get `EXT-X-ENDLIST`.
    case end
}

/// A timed event on the presentation's timeline, placed once by the producer (`TimedEvent` → this): where it starts
/// on the `EXT-X-PROGRAM-DATE-TIME` clock and on the media timeline of the segments (their `tfdt`, the MPD's).
public struct EventInfo: Sendable, Equatable {
    public var id: String
    public var kind: TimedEvent.Kind
    /// `START-DATE`: the program date-time of the media time `mediaTime`.
    public var startDate: WallClock
    /// On the output timeline, in the timescale of the first rendition's reference track.
    public var mediaTime: MediaTime
    public var plannedDuration: MediaTime?
    /// The original `splice_info_section`.
    public var section: [UInt8]
    /// An SCTE-35 event also carried in the segments as an `emsg` (`--events inband`): DASH declares the scheme
    /// instead of listing it in the `EventStream`.
    public var inband = false

    public init(id: String, kind: TimedEvent.Kind, startDate: WallClock, mediaTime: MediaTime,
                plannedDuration: MediaTime? = nil, section: [UInt8], inband: Bool = false) {
        self.inband = inband
        self.id = id
        self.kind = kind
        self.startDate = startDate
        self.mediaTime = mediaTime
        self.plannedDuration = plannedDuration
        self.section = section
    }
}

extension PresentationEvent {
    /// A part from its bytes in one array (an app's own producer, tests).
    public static func part(rendition: Int, _ info: PartInfo, bytes: [UInt8]) -> PresentationEvent {
        .part(rendition: rendition, info, bytes: MediaBytes(bytes))
    }

    /// A segment from its bytes in one array (an app's own producer, tests).
    public static func segment(rendition: Int, _ info: SegmentInfo, bytes: [UInt8]) -> PresentationEvent {
        .segment(rendition: rendition, info, bytes: MediaBytes(bytes))
    }
}

/// Anything that takes a producer's events: a live presentation, a VOD writer, a recorder, a pusher.
public protocol PresentationConsumer: Sendable {
    func consume(_ event: PresentationEvent) throws
    /// Milliseconds the producer should wait before it hands over the next segment, 0 to go on: a live window whose
    /// evicted segments must all stay available (RFC 8216 §6.2.2) and that holds as many as it may says how long
    /// until its oldest one may go. A stage in front of other consumers passes theirs on.
    var holdBackMillis: Int64 { get }
}

extension PresentationConsumer {
    public var holdBackMillis: Int64 { 0 }
}

/// One producer → several consumers, in order. A consumer that throws stops the fan-out (the producer
/// decides what a failed output means).
public struct FanOut: PresentationConsumer {
    public let consumers: [any PresentationConsumer]
    public init(_ consumers: [any PresentationConsumer]) { self.consumers = consumers }
    public func consume(_ event: PresentationEvent) throws {
        for c in consumers { try c.consume(event) }
    }
    /// Asked after every packet read: no array made.
    public var holdBackMillis: Int64 { consumers.reduce(0) { max($0, $1.holdBackMillis) } }
}

/// Where the parts of a single-file rendition sit in its file (`package --single-file`):
///
/// ```
/// |ftyp|moov|            initRange    (the init segment: EXT-X-MAP BYTERANGE, DASH SegmentBase Initialization@range)
/// |free|                 slack left from the space reserved for the index (absent when none is left)
/// |sidx|                 indexRange   (DASH SegmentBase@indexRange)
/// |styp|moof|mdat|…      one segment after another, from `mediaStart`, each `SegmentInfo.byteCount` long
/// ```
/// Ranges are half-open byte offsets from the start of the file; DASH's `first-last` is
/// `lowerBound`-`upperBound - 1`.
public struct SingleFileIndex: Sendable, Equatable {
    /// The file, relative to the presentation root (`URIScheme.singleFileURI`).
    public var fileURI: String
    public var initRange: Range<Int>
    public var indexRange: Range<Int>
    /// The first segment's first byte: the `sidx` is immediately followed by the segments.
    public var mediaStart: Int { indexRange.upperBound }

    public init(fileURI: String, initRange: Range<Int>, indexRange: Range<Int>) {
        precondition(initRange.upperBound <= indexRange.lowerBound, "the index follows the init segment")
        self.fileURI = fileURI
        self.initRange = initRange
        self.indexRange = indexRange
    }
}
