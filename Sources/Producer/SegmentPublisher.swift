import HLS
import Logging
import MediaCore
import MediaPresentation
import Segmenter

/// The last stage of the producer chain: what the segmenter made, as the facts the presentation consumers read
/// (`PresentationEvent`s): each rendition's init segment, its parts (`PartInfo`) and segments (`SegmentInfo`), with
/// their program date-time.
///
/// `EXT-X-PROGRAM-DATE-TIME` = anchor wall clock + (segment start − anchor media time): it advances exactly with the
/// media, whatever the arrival jitter. Re-anchored only when arrival drifts from the projection by more than
/// `maxClockDriftMillis` (a stalled input; never for an input read faster than real time), and after a reconnect;
/// not for the segments up to `keepsClockThrough` (a daterange listed ahead of its start named its `START-DATE` on
/// this projection). Epoch-locked, a segment's date is its start on the input clock: the same on every origin fed the
/// same input.
public struct SegmentPublisher {
    public let epochLocked: Bool
    let logger: Logger
    /// `EXT-X-TARGETDURATION` the stream announced (a longer segment is logged once).
    public var targetDuration: Int
    /// When the samples being accepted now arrived: a part they close was closed then (`PartInfo.closedAt`).
    public var arrival: WallClock?
    static let maxClockDriftMillis: Int64 = 5_000
    /// Segments that start at or before this output time keep the projection whatever their arrival.
    public var keepsClockThrough: MediaTime?
    private var clockAnchor: (wall: Int64, media: MediaTime)?
    private var warnedLongSegment = false
    private var warnedEpochSlip = false

    /// `false`: never re-anchored on drift (an input read faster than real time arrives ahead of any projection).
    public let reanchorsOnDrift: Bool

    public init(targetDuration: Int, epochLocked: Bool = false, reanchorsOnDrift: Bool = true, logger: Logger) {
        self.targetDuration = targetDuration
        self.epochLocked = epochLocked
        self.reanchorsOnDrift = reanchorsOnDrift
        self.logger = logger
    }

    /// Whether the next segments' dates follow from the last one's by their media times (what a daterange listed
    /// ahead of its start needs): epoch-locked, or anchored on samples' arrival. Segments with no arrival are dated
    /// when they are published.
    public var projectsClock: Bool { epochLocked || clockAnchor != nil }

    /// A new connection's program date-time is anchored afresh.
    public mutating func reconnected() { clockAnchor = nil }

    /// The events for one supervisor output. `epochSlips`: the running segmenter's count (a warning, once).
    public mutating func events(_ output: TimelineSupervisor.Output, epochSlips: Int = 0) -> [PresentationEvent] {
        switch output {
        case .inits(let inits):
            return inits.enumerated().map { .initSegment(rendition: $0, bytes: $1.bytes, tracks: $1.tracks) }
        case .part(let p):
            return [.part(rendition: p.group, PartInfo(segmentSequence: p.segmentSequence, index: p.index, duration: p.duration,
                                                       byteCount: p.bytes.count, independent: p.independent,
                                                       endsSegment: p.endsSegment, closedAt: arrival, offset: p.offset),
                          bytes: p.bytes)]
        case .segment(let s):
            return [.segment(rendition: s.group, info(s, epochSlips: epochSlips), bytes: s.bytes)]
        }
    }

    mutating func info(_ s: Segment, epochSlips: Int) -> SegmentInfo {
        SegmentInfo(sequence: s.sequence, startTime: s.startTime, duration: s.duration, byteCount: s.bytes.count,
                    programDateTime: programDateTime(s, epochSlips: epochSlips) ?? .now, discontinuity: s.discontinuity,
                    videoSampleCount: s.videoSampleCount, startsWithSyncSample: s.startsWithSyncSample,
                    earliestPresentationTime: s.earliestPresentationTime, partRanges: s.partRanges,
                    keyframe: s.keyframe, keyframeSample: s.keyframeSample)
    }

    private mutating func programDateTime(_ s: Segment, epochSlips: Int) -> WallClock? {
        if s.group == 0 {
            let rounded = MediaPlaylist.targetDuration(for: [s.duration])
            if rounded > targetDuration && !warnedLongSegment {
                warnedLongSegment = true
                logger.warning("segment \(s.sequence) lasts \(s.duration.seconds) s, longer than EXT-X-TARGETDURATION \(targetDuration) (the input's keyframes are irregular)")
            }
        }
        if epochLocked {
            if epochSlips > 0, !warnedEpochSlip {
                warnedEpochSlip = true
                logger.warning("epoch locking: segment \(s.sequence) is not numbered by its place on the input clock's grid (keyframes further apart than the segment duration, or a timeline that moved): an origin that joined at another moment may number it differently")
            }
            // The segment's start on the input clock is its date.
            return WallClock(millisecondsSince1970: MediaTime.rescale(s.startTime.value, from: s.startTime.timescale, to: 1000))
        }
        guard let arrival = s.programDateTime?.millisecondsSince1970 else { return s.programDateTime }
        let projected = clockAnchor.map { $0.wall + MediaTime.rescale((s.startTime - $0.media).value, from: s.startTime.timescale, to: 1000) }
        if let projected, !reanchorsOnDrift || abs(arrival - projected) <= Self.maxClockDriftMillis
            || keepsClockThrough.map({ s.startTime <= $0 }) == true {
            return WallClock(millisecondsSince1970: projected)
        }
        if projected != nil { logger.info("input clock drifted from the wall clock; re-anchoring program date-time") }
        clockAnchor = (arrival, s.startTime)
        return s.programDateTime
    }
}
