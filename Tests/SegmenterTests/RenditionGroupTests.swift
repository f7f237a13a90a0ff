import TestSupport
import Testing
@testable import ISOBMFF
@testable import MediaCore
@testable import Segmenter

/// A ladder: two video rungs with the same timestamps and keyframes (as the encoders force them), and audio,
/// each its own rendition.
@Suite struct RenditionGroupTests {
    static let rung2 = TrackFormat(trackID: 3, kind: .video, timescale: 90000,
                                   codec: .h264(avcC: [1, 0x42, 0xC0, 0x1E, 0xFF, 0xE1, 0, 4, 0x67, 0x42, 0xC0, 0x1E, 1, 0, 2, 0x68, 0xCE]),
                                   width: 320, height: 180)

    /// The stream of `makeStream` with the video duplicated as track 2 (the second rung).
    static func ladderStream(seconds: Int, rng: inout SplitMix64) -> [(track: Int, sample: Sample)] {
        var out: [(Int, Sample)] = []
        for item in makeStream(seconds: seconds, rng: &rng) {
            if item.track == 0 {
                out.append((0, item.sample))
                var small = item.sample
                small.data = Array(small.data.prefix(max(1, small.data.count / 4)))
                out.append((2, small))
            } else {
                out.append((1, item.sample))
            }
        }
        return out
    }

    func runEvents(_ seg: inout Segmenter, _ stream: [(track: Int, sample: Sample)]) throws -> [SegmenterEvent] {
        var events: [SegmenterEvent] = []
        for item in stream { events += try seg.appendEvents(item.sample, track: item.track) }
        return events + (try seg.finishEvents())
    }

    @Test func everyRenditionIsCutAtTheSameTimes() throws {
        var rng = SplitMix64(seed: 11)
        let stream = Self.ladderStream(seconds: 8, rng: &rng)
        var seg = try Segmenter(tracks: [videoTrack, audioTrack, Self.rung2], segmentDuration: .seconds(1),
                                fragmentDuration: MediaTime(value: 333, timescale: 1000), groups: [[0], [2], [1]])
        #expect(seg.initSegments.count == 3)
        let events = try runEvents(&seg, stream)
        let segments = events.compactMap(\.segment)
        let byGroup = Dictionary(grouping: segments, by: \.group)
        #expect(byGroup.keys.sorted() == [0, 1, 2])
        let counts = byGroup.values.map(\.count)
        #expect(Set(counts).count == 1, "every rendition has the same number of segments: \(counts)")
        for n in 0..<byGroup[0]!.count {
            let v1 = byGroup[0]![n], v2 = byGroup[1]![n], a = byGroup[2]![n]
            #expect(v1.sequence == UInt64(n) && v2.sequence == UInt64(n) && a.sequence == UInt64(n))
            // Video rungs: the same tfdt, exactly; both start with a keyframe.
            #expect(v1.startTime == v2.startTime)
            #expect(v1.startsWithSyncSample && v2.startsWithSyncSample)
            #expect(v1.duration == v2.duration)
            // Audio starts within one AAC frame of the video (after the first segment, whose audio starts at the
            // first keyframe's presentation time, two B-frame delays after its decode time).
            let gap = a.startTime - v1.startTime
            #expect(n == 0 || (gap >= .zero(48000) && gap < MediaTime(value: 1024, timescale: 48000)), "segment \(n): \(gap)")
            // Each rendition's fragments carry only its own track.
            for (s, track) in [(v1, 1), (v2, 3), (a, 2)] as [(Segment, UInt32)] {
                #expect(Set(try trafs(s.bytes.joined).map(\.trackID)) == [track])
            }
            #expect(v1.videoSampleCount == v1.trackSampleCounts[0] && a.videoSampleCount == nil)
        }
        // Parts: the same count and durations in both video rungs, per segment.
        let parts = events.compactMap { if case .part(let p) = $0 { p } else { nil } }
        let v1Parts = parts.filter { $0.group == 0 }.map { "\($0.segmentSequence).\($0.index) \($0.duration)" }
        let v2Parts = parts.filter { $0.group == 1 }.map { "\($0.segmentSequence).\($0.index) \($0.duration)" }
        #expect(v1Parts == v2Parts)
    }

    /// With parts, the first segment ends at the first keyframe one part in, and the second one ends on the
    /// segment grid: the stream is playable after one part, and the target duration never grows.
    @Test func firstSegmentIsOnePartLongWhenAKeyframeIsThere() throws {
        var samples: [Sample] = []
        for i in 0..<90 {
            let t = Int64(i) * 3000
            samples.append(Sample(data: [1, 2, 3], dts: t, pts: t, isSync: i % 30 == 0 || i == 10, durationHint: 3000))
        }
        var seg = try Segmenter(tracks: [videoTrack], segmentDuration: .seconds(1),
                                fragmentDuration: MediaTime(value: 333, timescale: 1000))
        var segments: [Segment] = []
        for s in samples { segments += try seg.append(s, track: 0) }
        segments += try seg.finish()
        #expect(segments.map(\.duration.value) == [30_000, 60_000, 90_000, 90_000])
        #expect(segments.allSatisfy { $0.startsWithSyncSample })

        // Without a keyframe there (copied video), the first segment is a normal one.
        var plain = try Segmenter(tracks: [videoTrack], segmentDuration: .seconds(1),
                                  fragmentDuration: MediaTime(value: 333, timescale: 1000))
        var plainSegments: [Segment] = []
        for var s in samples {
            s.isSync = s.dts % 90_000 == 0
            plainSegments += try plain.append(s, track: 0)
        }
        plainSegments += try plain.finish()
        #expect(plainSegments.map(\.duration.value) == [90_000, 90_000, 90_000])
    }

    /// After a codec change the pipeline starts a new segmenter that continues the numbering and the timeline.
    @Test func aContinuingSegmenterKeepsSequencesAndTimeline() throws {
        var rng = SplitMix64(seed: 5)
        var first = try Segmenter(tracks: [videoTrack, audioTrack], segmentDuration: .seconds(1))
        let a = try run(&first, makeStream(seconds: 3, rng: &rng))
        let timeline = try #require(first.timeline)
        var second = try Segmenter(tracks: [videoTrack, audioTrack], segmentDuration: .seconds(1),
                                   firstSequences: first.nextSequences, continuing: timeline)
        // The new input's timestamps start over (a concatenation): the timeline still continues.
        let b = try run(&second, makeStream(seconds: 3, rng: &rng))
        #expect(a.map(\.sequence) + b.map(\.sequence) == Array(0..<UInt64(a.count + b.count)))
        #expect(b.first?.discontinuity == true && b.dropFirst().allSatisfy { !$0.discontinuity })
        #expect(a.allSatisfy { !$0.discontinuity })
        let lastA = try #require(a.last)
        #expect(try #require(b.first).startTime == lastA.startTime + lastA.duration)

        // Input timestamps that go on with a gap (here 0.5 s after where they stopped) are re-anchored at the end
        // too: a player maps the new timeline to where the playlist places it.
        let previous = try #require(second.timeline)
        var third = try Segmenter(tracks: [videoTrack, audioTrack], segmentDuration: .seconds(1),
                                  firstSequences: second.nextSequences, continuing: previous)
        let onward = makeStream(seconds: 2, rng: &rng).map { item -> (track: Int, sample: Sample) in
            var s = item.sample
            let ticks = item.track == 0 ? Int64(3.5 * 90_000) : Int64(3.5 * 48_000)
            s.dts += ticks
            s.pts += ticks
            return (item.track, s)
        }
        let c = try run(&third, onward)
        let firstC = try #require(c.first)
        #expect(firstC.discontinuity)
        #expect(firstC.startTime == previous.end, "\(firstC.startTime) vs end \(previous.end)")
    }
}
