import ISOBMFF
import MediaCore

/// A finished media segment: `styp` followed by one or more `moof`+`mdat` fragments (its parts).
public struct Segment: Sendable {
    /// The rendition (track group) this segment belongs to: an index into `Segmenter.groups`.
    public var group: Int = 0
    /// 0-based, continuous within its group.
    public var sequence: UInt64
    /// The whole segment: its parts' bytes in turn (the first opens with `styp`), shared with the parts, not copied.
    public var bytes: MediaBytes
    /// Byte ranges of its parts (fragments) inside `bytes`: they tile it, the first from 0 (with the `styp`).
    public var partRanges: [Range<Int>]
    /// Decode time of the segment's first sample on the reference track (its `tfdt`).
    public var startTime: MediaTime
    /// Exact duration on the reference track (video when present, else audio): the sum of its sample durations.
    public var duration: MediaTime
    /// Wall-clock time at which the segment's first reference sample was taken in, if the caller gave one.
    public var programDateTime: WallClock?
    /// Per track (same order as the segmenter's tracks): sample count and first decode time, in the track timescale
    /// (-1 when the track has no sample in this segment).
    public var trackSampleCounts: [Int]
    public var trackStartTimes: [Int64]
    /// Whether the reference track's first sample is a sync sample.
    public var startsWithSyncSample: Bool
    /// The smallest presentation time (`dts + composition offset`) on the reference track, in its timescale: the
    /// `earliest_presentation_time` of a `sidx` (ISO/IEC 14496-12 §8.16.3). Equals `startTime` without B-frames.
    public var earliestPresentationTime: MediaTime
    /// The first segment after the segmenter was re-created for new codec parameters (a new timeline).
    public var discontinuity = false
    /// Video samples in the segment (over the group's video tracks), `nil` when the group has no video.
    public var videoSampleCount: Int?
    /// The fragment that opens with the segment's first keyframe on its video reference track (what an I-frame
    /// playlist lists); `nil` when the group has no video or the segment no keyframe at a fragment's start.
    public var keyframe: KeyframeFragment?
    /// The sync sample the reference track opens with (its array, shared, not copied), for trick play: thumbnail
    /// tiles decode it. `nil` when the segment does not open with one.
    public var keyframeSample: [UInt8]?
}

/// A low-latency part: one `moof`+`mdat` fragment of the segment in progress, handed on as soon as it is complete.
public struct Part: Sendable {
    /// The rendition (track group) this part belongs to.
    public var group: Int = 0
    /// The segment this part belongs to.
    public var segmentSequence: UInt64
    /// 0-based within its segment.
    public var index: Int
    /// `moof` + `mdat` (the first part of a segment opens with its `styp`): the header, then the samples' own arrays.
    public var bytes: MediaBytes
    /// Where the part begins in its segment's bytes.
    public var offset: Int
    /// Duration on the reference track.
    public var duration: MediaTime
    /// Starts with a sync sample on the reference track (`INDEPENDENT=YES`).
    public var independent: Bool
    /// The last part of its segment: the segment event follows it in the same batch.
    public var endsSegment = false
}

/// What the segmenter produces, in the order it must be published: every part of a segment comes before it.
public enum SegmenterEvent: Sendable {
    case part(Part)
    case segment(Segment)

    public var segment: Segment? {
        if case .segment(let s) = self { return s }
        return nil
    }
}

public enum SegmenterError: Error, Equatable, CustomStringConvertible {
    case noTracks
    case unknownTrack(Int)
    case invalidGroups
    case timestampOutOfRange(track: Int, dts: Int64, pts: Int64)

    public var description: String {
        switch self {
        case .noTracks: "no video or audio track to segment"
        case .unknownTrack(let i): "sample for unknown track \(i)"
        case .invalidGroups: "every track must belong to exactly one non-empty group"
        case .timestampOutOfRange(let t, let dts, let pts):
            "track \(t): timestamp out of range (dts \(dts), pts \(pts) ticks; at most ±2^60 can be segmented)"
        }
    }
}
