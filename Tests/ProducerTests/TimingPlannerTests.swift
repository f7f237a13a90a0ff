import HLS
import MediaCore
import Producer
import Testing

/// `TimingPlanner`: `EXT-X-TARGETDURATION` and `PART-TARGET`, decided once.
@Suite struct TimingPlannerTests {
    @Test func targetDurationFollowsTheKeyframes() {
        let second = MediaTime.seconds(1)
        #expect(TimingPlanner.targetDuration(segmentDuration: second, keyframes: .onGrid) == 1)
        #expect(TimingPlanner.targetDuration(segmentDuration: .seconds(2), keyframes: .unknown) == 2)
        // A 2.5 s GOP: one GOP per segment, 2.5 s rounds to 3 (RFC 8216 §4.3.3.1 rounds EXTINF to the nearest integer).
        #expect(TimingPlanner.targetDuration(segmentDuration: second, keyframes: .measuredGOP(MediaTime(value: 5, timescale: 2))) == 3)
        // A 0.4 s GOP: three GOPs fill a second: 1.2 s, which rounds to 1.
        #expect(TimingPlanner.targetDuration(segmentDuration: second, keyframes: .measuredGOP(MediaTime(value: 2, timescale: 5))) == 1)
        // An MP4's index: keyframes at 0, 1, 2, then 5.6 (a 3.6 s GOP somewhere in the file) and 6.
        let keys: [Int64] = [0, 90_000, 180_000, 504_000, 540_000]
        #expect(TimingPlanner.targetDuration(segmentDuration: second, keyframes: .indexed(keys, timescale: 90_000)) == 4)
    }

    @Test func partTargetIsWholeFramesRoundedUpToMilliseconds() {
        let part = MediaTime(value: 333, timescale: 1000)
        // Muxed: 10 frames of 30 fps = 1/3 s -> 0.334.
        let muxed = TimingPlanner.partTarget(part, formats: [video, audio], groups: [[0, 1]], frameDurations: [3000, 1024])
        #expect(muxed == MediaTime(value: 334, timescale: 1000))
        // A separate audio rendition, cut at the video's boundaries on its own frames, may run one AAC frame longer.
        let ladder = TimingPlanner.partTarget(part, formats: [video, audio], groups: [[0], [1]], frameDurations: [3000, nil])
        #expect(ladder == MediaTime(value: 355, timescale: 1000))  // 1/3 s + 1024/48000 s = 0.35467 s, up to 0.355
        #expect(TimingPlanner.partTarget(nil, formats: [video], groups: [[0]], frameDurations: [3000]) == nil)
    }
}
