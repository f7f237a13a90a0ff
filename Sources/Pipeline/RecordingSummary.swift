import Foundation
import MediaCore
import MediaPresentation

/// What a finished recording holds, handed to `Recorder`'s finish hook so another manifest (a static DASH MPD)
/// can be written beside the HLS playlists from facts, without reading a byte back: per rendition its init
/// segments, a run-length timeline of its segments (a DASH `SegmentTimeline` maps onto it one to one) and its
/// measured bit rates.
public struct RecordingSummary: Sendable {
    public struct RecordedInit: Sendable, Equatable {
        /// `init.mp4` is 0, then `init1.mp4`, … (`URIScheme.initURI`).
        public let index: Int
        public let uri: String
        public let tracks: [TrackFormat]
    }

    public struct RenditionRecording: Sendable {
        public let rendition: Rendition
        public let inits: [RecordedInit]
        /// Every recorded segment, oldest first, in the reference track's timescale.
        public let timeline: [TimelineEntry]
        public let segmentCount: Int
        /// Over the segments of the last init segment (what `BANDWIDTH` says in `index.m3u8`).
        public let statistics: VariantStatistics?
    }

    /// The recording's directory; every URI above is relative to it.
    public let directory: URL
    public let policy: TimingPolicy
    public let renditions: [RenditionRecording]
}

/// A run of segments of one duration that follow each other without a gap, under one init segment
/// (DASH `<S t= d= r=>`, with `$Number$` = `firstSequence`).
public struct TimelineEntry: Sendable, Equatable {
    /// Sequence number of the run's first segment (its URI is `URIScheme.segmentURI(firstSequence)`).
    public var firstSequence: UInt64
    /// `tfdt` of the first segment.
    public var start: MediaTime
    /// Duration of each segment of the run.
    public var duration: MediaTime
    /// Segments after the first one (DASH `r`).
    public var repeatCount: Int
    public var initIndex: Int
    /// The run's first segment starts a new timeline (`EXT-X-DISCONTINUITY`): a new DASH Period.
    public var discontinuity: Bool

    /// Segments in the run.
    public var count: Int { repeatCount + 1 }
}

extension [TimelineEntry] {
    /// Adds a segment, extending the last run when it continues it exactly.
    mutating func append(sequence: UInt64, start: MediaTime, duration: MediaTime, initIndex: Int, discontinuity: Bool) {
        if !discontinuity, var last = self.last, last.initIndex == initIndex, last.duration == duration,
           last.firstSequence + UInt64(last.count) == sequence,
           last.start.value + last.duration.value * Int64(last.count) == start.value,
           last.start.timescale == start.timescale {
            last.repeatCount += 1
            self[count - 1] = last
            return
        }
        append(TimelineEntry(firstSequence: sequence, start: start, duration: duration, repeatCount: 0,
                             initIndex: initIndex, discontinuity: discontinuity))
    }
}
