import TestSupport
import Testing
@testable import ISOBMFF
@testable import MediaCore
@testable import Segmenter

/// `Segment.keyframe`: where the segment's first keyframe's fragment lies, as the segmenter wrote it. Checked here
/// against an independent read of the bytes (TestSupport's box walker): the range is exactly one `moof`+`mdat`, its
/// video `tfdt` is the fact's decode time and its first video sample is the sync sample.
@Suite struct KeyframeFragmentTests {
    /// The fragment in `range` of `bytes`, read on its own; its video track's first sample flags and `tfdt`.
    static func readRange(_ bytes: [UInt8], _ range: Range<Int>, videoID: UInt32 = 1) throws -> (tfdt: UInt64, sync: [Bool]) {
        let piece = Array(bytes[range])
        let top = try BoxReader.walk(piece)
        #expect(top.map(\.type) == ["moof", "mdat"], "the range is one whole moof+mdat")
        let fragment = try FragmentReader.read(piece)
        let video = try #require(fragment.tracks.first { $0.trackID == videoID })
        // ISO/IEC 14496-12 §8.8.3.1: sample_is_non_sync_sample is bit 16 of the sample flags.
        return (video.baseMediaDecodeTime, video.samples.map { $0.flags & 0x1_0000 == 0 })
    }

    @Test func aWholeSegmentFragmentAfterItsStyp() throws {
        var rng = SplitMix64(seed: 3)
        var seg = try Segmenter(tracks: [videoTrack, audioTrack], segmentDuration: .seconds(1))
        let segments = try run(&seg, makeStream(seconds: 5, rng: &rng))
        #expect(segments.count == 5)
        let styp = MediaSegmentBoxes.styp().count
        for s in segments {
            let k = try #require(s.keyframe)
            let bytes = s.bytes.joined
            // One fragment per segment: everything after the styp.
            #expect(k.range == styp..<bytes.count)
            #expect(k.decodeTime == s.startTime)
            let read = try Self.readRange(bytes, k.range)
            #expect(read.tfdt == UInt64(k.decodeTime.value))
            #expect(read.sync.first == true && read.sync.filter { $0 }.count == 1, "one keyframe: a GOP per segment")
        }
    }

    @Test func theFirstPartWithLowLatencyParts() throws {
        var rng = SplitMix64(seed: 4)
        var seg = try Segmenter(tracks: [videoTrack, audioTrack], segmentDuration: .seconds(1),
                                fragmentDuration: .milliseconds(334, timescale: 90000))
        let segments = try run(&seg, makeStream(seconds: 5, rng: &rng))
        let styp = MediaSegmentBoxes.styp().count
        for s in segments {
            let k = try #require(s.keyframe)
            #expect(s.partRanges.count > 1 || s.sequence == 0)
            #expect(k.range == (s.partRanges[0].lowerBound + styp)..<s.partRanges[0].upperBound)
            let read = try Self.readRange(s.bytes.joined, k.range)
            #expect(read.tfdt == UInt64(k.decodeTime.value) && read.sync == [true] + Array(repeating: false, count: read.sync.count - 1))
        }
    }

    @Test func aShorterGOPLeavesItsOtherKeyframesInsideTheFragment() throws {
        // Keyframes every 15 frames, segments of 1 s, no parts: the range (the whole GOP pair) holds both keyframes;
        // the fact still names the fragment that opens with the first one.
        // Check a checker's failure too: a range one byte short is not a whole moof+mdat.
        var rng = SplitMix64(seed: 5)
        var seg = try Segmenter(tracks: [videoTrack], segmentDuration: .seconds(1))
        let segments = try run(&seg, makeStream(seconds: 3, gop: 15, audio: false, rng: &rng))
        let s = try #require(segments.first)
        let k = try #require(s.keyframe)
        let bytes = s.bytes.joined
        #expect(try Self.readRange(bytes, k.range).sync.filter { $0 }.count == 2, "a GOP of 0.5 s: two keyframes in the fragment")
        #expect(throws: (any Error).self) { try FragmentReader.read(Array(bytes[k.range.dropLast()])) }
    }

    @Test func audioRenditionsHaveNoKeyframeFact() throws {
        var rng = SplitMix64(seed: 6)
        var audioOnly = try Segmenter(tracks: [audioTrack], segmentDuration: .seconds(1))
        #expect(try run(&audioOnly, makeStream(seconds: 3, video: false, rng: &rng)).allSatisfy { $0.keyframe == nil })
        // A ladder's audio group has none; its video rungs have theirs, at the same time.
        var rng2 = SplitMix64(seed: 7)
        var ladder = try Segmenter(tracks: [videoTrack, audioTrack, RenditionGroupTests.rung2], segmentDuration: .seconds(1),
                                   groups: [[0], [2], [1]])
        var segments: [Segment] = []
        for item in RenditionGroupTests.ladderStream(seconds: 4, rng: &rng2) { segments += try ladder.append(item.sample, track: item.track) }
        segments += try ladder.finish()
        for s in segments where s.group == 2 { #expect(s.keyframe == nil) }
        for s in segments where s.group < 2 {
            let k = try #require(s.keyframe)
            #expect(k.decodeTime == s.startTime)
            let read = try Self.readRange(s.bytes.joined, k.range, videoID: s.group == 0 ? 1 : 3)
            #expect(read.tfdt == UInt64(k.decodeTime.value) && read.sync.first == true)
        }
    }
}
