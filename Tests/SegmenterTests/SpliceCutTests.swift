import TestSupport
import Testing
@testable import MediaCore
@testable import Segmenter
import ISOBMFF

/// Splice points (SCTE-35): a segment starts at the first reference keyframe at or after each; the grid goes on.
@Suite struct SpliceCutTests {
    /// Feeds `stream`, asking for a cut at input presentation time `at` (video ticks) once the timeline is chosen.
    static func cut(gop: Int, at: Int64) throws -> (segments: [Segment], cuts: [(requested: Int64, at: Int64)], shift: Int64) {
        var rng = SplitMix64(seed: 7)
        let stream = makeStream(seconds: 10, gop: gop, rng: &rng)
        var seg = try Segmenter(tracks: [videoTrack, audioTrack], segmentDuration: .seconds(1))
        var segments: [Segment] = []
        var asked = false
        var cuts: [(requested: Int64, at: Int64)] = []
        var shift: Int64 = 0
        for item in stream {
            segments += try seg.append(item.sample, track: item.track)
            if !asked, let s = seg.timeline?.shift {
                shift = s.converted(to: 90_000).value
                seg.requestCut(at: MediaTime(value: at + shift, timescale: 90_000))
                asked = true
            }
            cuts += seg.takeSpliceCuts()
        }
        segments += try seg.finish()
        return (segments, cuts, shift)
    }

    @Test func encodedKeyframeAtTheSpliceStartsASegmentThere() throws {
        // Keyframes every half second (an encoder forced one at 6.5 s): 6–6.5 and 6.5–7 are segments of their own.
        let (segments, cuts, shift) = try Self.cut(gop: 15, at: 585_000)
        #expect(cuts.count == 1 && cuts[0].requested == cuts[0].at && cuts[0].at == 585_000 + shift)
        let i = try #require(segments.firstIndex { $0.startTime.value == (195 - 2) * 3000 + shift })
        #expect(segments[i - 1].duration == MediaTime(value: 45_000, timescale: 90_000))
        #expect(segments[i].duration == MediaTime(value: 45_000, timescale: 90_000))
        #expect(segments.dropLast().allSatisfy { $0.duration <= .seconds(1) && $0.startsWithSyncSample })
        #expect(segments.count == 11)
    }

    @Test func copiedKeyframesCutAtTheNextOneAndSayHowFar() throws {
        // Keyframes every second: the splice at 6.5 s falls on the one at 7 s, half a second late; no extra segment.
        let (segments, cuts, shift) = try Self.cut(gop: 30, at: 585_000)
        #expect(cuts.count == 1 && cuts[0].requested == 585_000 + shift && cuts[0].at - cuts[0].requested == 45_000)
        #expect(segments.count == 10)
        #expect(segments.dropLast().allSatisfy { $0.duration == .seconds(1) })
    }
}

/// `emsg` (ID3 timed metadata) in the next segment of every group.
@Suite struct EventMessageTests {
    @Test func boxBytes() throws {
        let m = EventMessage(schemeIdUri: "a", value: "", timescale: 90_000, presentationTime: 0x1_0000_0002, id: 7, data: [0xEE])
        #expect(try m.bytes() == [0, 0, 0, 0x24] + Array("emsg".utf8) + [1, 0, 0, 0, 0, 0x01, 0x5F, 0x90,
                                  0, 0, 0, 1, 0, 0, 0, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 7, 0x61, 0, 0, 0xEE])
    }

    @Test func inTheNextSegmentOfEveryGroup() throws {
        var rng = SplitMix64(seed: 3)
        let stream = makeStream(seconds: 4, rng: &rng)
        var seg = try Segmenter(tracks: [videoTrack, audioTrack], segmentDuration: .seconds(1), groups: [[0], [1]])
        var segments: [Segment] = []
        var added = false
        for item in stream {
            segments += try seg.append(item.sample, track: item.track)
            if !added, segments.count == 2 {
                try seg.addEventMessage(EventMessage(schemeIdUri: EventMessage.id3Scheme, timescale: 90_000,
                                                     presentationTime: 100, id: 1, data: Array("ID3".utf8)))
                added = true
            }
        }
        segments += try seg.finish()
        let emsg = Array("emsg".utf8)
        func carries(_ s: Segment) -> Bool {
            let b = s.bytes.joined
            return b.count > 40 && Array(b[32..<36]) == emsg  // right after the 28-byte styp's header
        }
        let carrying = segments.filter(carries)
        #expect(Set(carrying.map(\.group)) == [0, 1])
        #expect(Set(carrying.map(\.sequence)).count == 1)
        #expect(carrying.first.map { $0.sequence >= 1 } == true)
        #expect(carrying.count == 2)
    }
}
