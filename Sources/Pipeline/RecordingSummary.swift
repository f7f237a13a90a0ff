import DASH
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
        /// How its latest segment was encrypted (`nil`: in the clear).
        public var encryption: SegmentEncryption? = nil
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

extension RecordingSummary {
    /// A static MPD of the recording (ISO/IEC 23009-1 §5.4), from its facts: per rendition a `SegmentTemplate`
    /// whose `SegmentTimeline` is the recorded run-length timeline, one to one. `nil` when a rendition has no
    /// segment or more than one init segment (a codec change needs a second Period, which is not written here).
    public func manifest() -> MPD? {
        var facts: [ManifestBuilder.RepresentationFacts] = []
        var longest: Int64 = 0
        for r in renditions {
            guard r.segmentCount > 0, r.inits.count == 1, let first = r.timeline.first else { return nil }
            let timescale = first.start.timescale
            var entries: [MPD.TimelineEntry] = []
            var expected: Int64?
            var ms: Int64 = 0
            for e in r.timeline {
                let t = e.start.converted(to: timescale).value
                let d = e.duration.converted(to: timescale).value
                entries.append(MPD.TimelineEntry(time: t == expected ? nil : t, duration: d, repeatCount: e.repeatCount))
                expected = t + d * Int64(e.count)
                ms += e.duration.converted(to: 1000, rounding: .up).value * Int64(e.count)
            }
            longest = max(longest, ms)
            let template = MPD.SegmentTemplate(timescale: timescale, initialization: r.inits[0].uri,
                                               media: r.rendition.scheme.segmentTemplate, startNumber: first.firstSequence,
                                               timeline: entries)
            let stats = r.statistics ?? VariantStatistics(peakBitRate: r.rendition.declaredBitRate ?? 1,
                                                          averageBitRate: r.rendition.declaredBitRate ?? 1,
                                                          frameRate: r.rendition.declaredFrameRate)
            facts.append(ManifestBuilder.RepresentationFacts(rendition: r.rendition, tracks: r.inits[0].tracks,
                                                             statistics: stats, segments: .template(template),
                                                             encryption: r.encryption))
        }
        return ManifestBuilder.onDemand(facts, duration: .milliseconds(longest), targetDuration: policy.targetDuration)
    }
}
