import TestSupport
import Testing
@testable import ISOBMFF
@testable import MediaCore
@testable import Segmenter


let videoTrack = TrackFormat(trackID: 1, kind: .video, timescale: 90000,
                             codec: .h264(avcC: [1, 0x64, 0, 0x1F, 0xFF, 0xE1, 0, 4, 0x67, 0x64, 0, 0x1F, 1, 0, 2, 0x68, 0xEE]),
                             width: 640, height: 360)
let audioTrack = TrackFormat(trackID: 2, kind: .audio, timescale: 48000,
                             codec: .aac(audioSpecificConfig: [0x11, 0x90]), sampleRate: 48000, channelCount: 2)

/// Interleaved synthetic samples: video at `fps` with a keyframe every `gop` frames and 2 B-frames
/// (negative first DTS), AAC frames of 1024 samples with 1024 samples of priming.
func makeStream(seconds: Int, fps: Int64 = 30, gop: Int = 30, audio: Bool = true, video: Bool = true,
                rng: inout SplitMix64) -> [(track: Int, sample: Sample)] {
    var out: [(Int, Sample, MediaTime)] = []
    let frameTicks = 90000 / fps
    if video {
        for i in 0..<(Int(fps) * seconds) {
            let dts = Int64(i - 2) * frameTicks
            // Decode order I P B B ...: give B-frames a pts before the following P.
            let pts = Int64(i) * frameTicks + (i % 3 == 0 ? 0 : frameTicks)
            let size = Int.random(in: 10...400, using: &rng)
            let s = Sample(data: [UInt8](repeating: UInt8(i & 0xFF), count: size), dts: dts, pts: pts,
                           isSync: i % gop == 0, durationHint: frameTicks)
            out.append((0, s, MediaTime(value: dts, timescale: 90000)))
        }
    }
    if audio {
        for i in 0..<(seconds * 48000 / 1024) {
            let dts = Int64(i) * 1024 - 1024
            let s = Sample(data: [UInt8](repeating: 0xAA, count: Int.random(in: 5...300, using: &rng)),
                           dts: dts, pts: dts, isSync: true, durationHint: 1024)
            out.append((video ? 1 : 0, s, MediaTime(value: dts, timescale: 48000)))
        }
    }
    out.sort { $0.2 < $1.2 }
    return out.map { ($0.0, $0.1) }
}

func run(_ seg: inout Segmenter, _ stream: [(track: Int, sample: Sample)]) throws -> [Segment] {
    var segments: [Segment] = []
    for item in stream { segments += try seg.append(item.sample, track: item.track) }
    segments += try seg.finish()
    return segments
}

@Suite struct SegmenterTests {
    @Test func cutsAtKeyframesAfterEachSecond() throws {
        var rng = SplitMix64(seed: 1)
        let stream = makeStream(seconds: 10, rng: &rng)
        var seg = try Segmenter(tracks: [videoTrack, audioTrack], segmentDuration: .seconds(1))
        let segments = try run(&seg, stream)
        #expect(segments.count == 10)
        for (n, s) in segments.enumerated() {
            #expect(s.sequence == UInt64(n))
            #expect(s.startsWithSyncSample)
            if n < segments.count - 1 { #expect(s.duration == .seconds(1)) }
            #expect(s.trackSampleCounts[0] == 30)
        }
        // Every video sample survives (none dropped: the stream starts with a keyframe).
        #expect(segments.reduce(0) { $0 + $1.trackSampleCounts[0] } == 300)
        #expect(seg.droppedLeadingSamples == 0 || segments[0].trackStartTimes[1] >= 0)
    }

    @Test func decodeTimesAreContinuousAndNonNegative() throws {
        for seed in 1...20 as ClosedRange<UInt64> {
            var rng = SplitMix64(seed: seed)
            let gop = [15, 30, 45, 60, 90][Int(seed) % 5]
            let stream = makeStream(seconds: 8, gop: gop, rng: &rng)
            var seg = try Segmenter(tracks: [videoTrack, audioTrack], segmentDuration: .seconds(1))
            let segments = try run(&seg, stream)
            var expectedNext: [Int64?] = [nil, nil]
            var total = MediaTime.zero(90000)
            for s in segments {
                let parsed = try trafs(s.bytes.joined)
                for traf in parsed {
                    let t = Int(traf.trackID) - 1
                    #expect(traf.baseMediaDecodeTime >= 0)
                    if let e = expectedNext[t] { #expect(Int64(traf.baseMediaDecodeTime) == e, "seed \(seed) track \(t)") }
                    expectedNext[t] = Int64(traf.baseMediaDecodeTime) + traf.durations.reduce(0) { $0 + Int64($1) }
                }
                // Segments follow keyframes: a GOP longer than 1 s gives segments of one GOP.
                if s.sequence + 1 < UInt64(segments.count) {
                    #expect(s.duration >= .seconds(1))
                    #expect(s.duration.value % (90000 * Int64(gop) / 30) == 0)
                }
                total = total + s.duration
            }
            // The whole video timeline is covered: 8 s (the last frame uses its duration hint).
            #expect(total == .seconds(8), "seed \(seed)")
        }
    }

    @Test func audioIsCutAtTheSameMediaTime() throws {
        var rng = SplitMix64(seed: 7)
        let stream = makeStream(seconds: 6, rng: &rng)
        var seg = try Segmenter(tracks: [videoTrack, audioTrack], segmentDuration: .seconds(1))
        let segments = try run(&seg, stream)
        for s in segments.dropFirst() {
            let v = MediaTime(value: s.trackStartTimes[0], timescale: 90000)
            let a = MediaTime(value: s.trackStartTimes[1], timescale: 48000)
            // The audio fragment starts within one AAC frame after the video keyframe.
            #expect(a >= v)
            #expect(a - v < MediaTime(value: 1024, timescale: 48000))
        }
    }

    @Test func audioOnlyAndVideoOnly() throws {
        var rng = SplitMix64(seed: 3)
        var a = try Segmenter(tracks: [audioTrack], segmentDuration: .seconds(1))
        let aSegs = try run(&a, makeStream(seconds: 5, video: false, rng: &rng))
        #expect(aSegs.count >= 4)
        for s in aSegs.dropLast() {
            #expect(s.duration >= .seconds(1))
            #expect(s.duration < MediaTime.seconds(1, timescale: 48000) + MediaTime(value: 1024, timescale: 48000))
        }
        var v = try Segmenter(tracks: [videoTrack], segmentDuration: .seconds(2))
        let vSegs = try run(&v, makeStream(seconds: 6, audio: false, rng: &rng))
        #expect(vSegs.count == 3)
        #expect(vSegs.allSatisfy { $0.duration == .seconds(2) })
    }

    @Test func dropsEverythingBeforeTheFirstKeyframe() throws {
        var rng = SplitMix64(seed: 11)
        let stream = makeStream(seconds: 4, rng: &rng).filter { item in
            // Join mid-GOP: drop the first 10 frames and the matching audio.
            item.track == 1 ? item.sample.dts >= 16000 : item.sample.dts >= 30000
        }
        var seg = try Segmenter(tracks: [videoTrack, audioTrack], segmentDuration: .seconds(1))
        let segments = try run(&seg, stream)
        #expect(segments.first?.startsWithSyncSample == true)
        #expect(segments.allSatisfy { $0.startsWithSyncSample })
        #expect(seg.droppedLeadingSamples > 0)
    }

    @Test func lowLatencyPartsSplitASegmentIntoFragments() throws {
        var rng = SplitMix64(seed: 5)
        var seg = try Segmenter(tracks: [videoTrack, audioTrack], segmentDuration: .seconds(1),
                                fragmentDuration: .milliseconds(334, timescale: 90000))
        let segments = try run(&seg, makeStream(seconds: 3, rng: &rng))
        for s in segments.dropLast() {
            #expect(s.partRanges.count == 3)
            #expect(s.partRanges.first?.lowerBound == 0 && s.partRanges.last?.upperBound == s.bytes.count)
            #expect(zip(s.partRanges, s.partRanges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
        }
    }

    @Test func partsArePublishedBeforeTheirSegmentAndMakeItUp() throws {
        var rng = SplitMix64(seed: 9)
        var seg = try Segmenter(tracks: [videoTrack, audioTrack], segmentDuration: .seconds(1),
                                fragmentDuration: .milliseconds(334, timescale: 90000))
        var events: [SegmenterEvent] = []
        for item in makeStream(seconds: 4, rng: &rng) { events += try seg.appendEvents(item.sample, track: item.track) }
        events += try seg.finishEvents()
        var partsOfCurrent: [Part] = []
        var segments = 0
        for (i, e) in events.enumerated() {
            switch e {
            case .part(let p):
                // Only the part right before its segment is marked as its last.
                #expect(p.endsSegment == (events[i + 1].segment != nil))
                #expect(p.segmentSequence == UInt64(segments))
                #expect(p.index == partsOfCurrent.count)
                #expect(p.independent == (p.index == 0))
                partsOfCurrent.append(p)
            case .segment(let s):
                #expect(s.sequence == UInt64(segments))
                // A segment is its parts in turn; the first opens with the `styp` (a CMAF segment's first chunk).
                let styp = MediaSegmentBoxes.styp()
                #expect(Array(s.bytes.joined[..<styp.count]) == styp)
                #expect(Array(partsOfCurrent[0].bytes.joined[..<styp.count]) == styp)
                #expect(s.bytes.joined == partsOfCurrent.flatMap(\.bytes.joined))
                #expect(s.partRanges == partsOfCurrent.map { $0.offset..<($0.offset + $0.bytes.count) })
                #expect(s.duration == partsOfCurrent.reduce(MediaTime.zero(90000)) { $0 + $1.duration })
                partsOfCurrent = []
                segments += 1
            }
        }
        #expect(segments == 4)
        #expect(partsOfCurrent.isEmpty)
    }

    @Test func nonIncreasingTimestampsAreNudged() throws {
        var seg = try Segmenter(tracks: [audioTrack], segmentDuration: .seconds(1))
        var out: [Segment] = []
        for dts: Int64 in [0, 1024, 1024, 3072, 2048, 5120] {
            out += try seg.append(Sample(data: [1, 2, 3], dts: dts, pts: dts, isSync: true), track: 0)
        }
        out += try seg.finish()
        let fragments = try out.flatMap { try trafs($0.bytes.joined) }
        let durations = fragments.flatMap(\.durations)
        #expect(durations.allSatisfy { $0 > 0 })
    }
}

/// The track fragments of a segment, read by the test-only reader in TestSupport (it shares no code with the writer).
func trafs(_ bytes: [UInt8]) throws -> [ReadTrackFragment] {
    try FragmentReader.readSegment(bytes).flatMap(\.tracks)
}
