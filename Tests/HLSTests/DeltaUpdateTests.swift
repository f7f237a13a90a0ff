import TestSupport
import MediaCore
import Testing
@testable import HLS

/// Playlist Delta Updates: `CAN-SKIP-UNTIL`, `EXT-X-SKIP`, `MediaPlaylist.deltaUpdate()` (RFC 8216bis §6.2.5.1).
@Suite struct DeltaUpdateTests {
    static let second = MediaTime(value: 90_000, timescale: 90_000)
    static let third = MediaTime(value: 30_000, timescale: 90_000)
    static let t0: Int64 = 1_763_785_226_123  // 2025-11-22T04:20:26.123Z

    static func parts(_ seq: Int, _ n: Int) -> [PlaylistPart] {
        (0..<n).map { PlaylistPart(uri: "seg\(seq).\($0).m4s", duration: third, independent: $0 == 0) }
    }

    /// Ten 1 s segments 20…29 (10 s), CAN-SKIP-UNTIL=6.0. Segment 22 starts a discontinuity with a new map
    /// and a date; 23 has no date of its own.
    static func fullPlaylist() -> MediaPlaylist {
        let segs = (20...29).map { i in
            PlaylistSegment(sequence: UInt64(i), uri: "seg\(i).m4s", duration: second,
                            programDateTime: i == 20 ? WallClock(millisecondsSince1970: t0)
                                : i == 22 ? WallClock(millisecondsSince1970: t0 + 5000) : nil,
                            discontinuity: i == 22, mapURI: i == 22 ? "init1.mp4" : nil,
                            parts: i >= 28 ? parts(i, 3) : [])
        }
        return MediaPlaylist(targetDuration: 1, mediaSequence: 20, discontinuitySequence: 4, mapURI: "init.mp4",
                             segments: segs,
                             serverControl: ServerControl(canBlockReload: true, holdBack: .seconds(3),
                                                          partHoldBack: MediaTime(value: 1_002, timescale: 1000),
                                                          canSkipUntil: .seconds(6)),
                             partTarget: MediaTime(value: 334, timescale: 1000), trailingParts: parts(30, 2),
                             preloadHint: PreloadHint(type: .part, uri: "seg30.2.m4s"),
                             renditionReports: [RenditionReport(uri: "../audio/index.m3u8", lastMSN: 30, lastPart: 1)])
    }

    @Test func fullPlaylistAdvertisesSkipAndKeepsVersion7() throws {
        let p = Self.fullPlaylist()
        let text = p.render()
        #expect(text.hasPrefix("#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:1\n"
            + "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.002,HOLD-BACK=3.0,CAN-SKIP-UNTIL=6.0\n"))
        #expect(!text.contains("EXT-X-SKIP"))
        #expect(text.hasSuffix("""
            #EXT-X-PRELOAD-HINT:TYPE=PART,URI="seg30.2.m4s"
            #EXT-X-RENDITION-REPORT:URI="../audio/index.m3u8",LAST-MSN=30,LAST-PART=1

            """))
        let back = try MediaPlaylist.parse(text)
        #expect(back.serverControl?.canSkipUntil == .seconds(6))
        #expect(back.skippedSegments == nil)
        #expect(back.render() == text)
    }

    /// Checked by hand: the playlist ends at 10 s; segments ending more than 6 s before that (20, 21, 22 end
    /// at 1, 2, 3 s) are skipped; 23 ends exactly 6 s before the end and stays. The map in force after 22 is
    /// init1.mp4; 23's date is 22's date + 1 s.
    @Test func deltaGolden() throws {
        let delta = try #require(Self.fullPlaylist().deltaUpdate())
        let text = delta.render()
        #expect(text == """
            #EXTM3U
            #EXT-X-VERSION:9
            #EXT-X-TARGETDURATION:1
            #EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.002,HOLD-BACK=3.0,CAN-SKIP-UNTIL=6.0
            #EXT-X-PART-INF:PART-TARGET=0.334
            #EXT-X-MEDIA-SEQUENCE:20
            #EXT-X-DISCONTINUITY-SEQUENCE:4
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-SKIP:SKIPPED-SEGMENTS=3
            #EXT-X-MAP:URI="init1.mp4"
            #EXT-X-PROGRAM-DATE-TIME:2025-11-22T04:20:32.123Z
            #EXTINF:1.0,
            seg23.m4s
            #EXTINF:1.0,
            seg24.m4s
            #EXTINF:1.0,
            seg25.m4s
            #EXTINF:1.0,
            seg26.m4s
            #EXTINF:1.0,
            seg27.m4s
            #EXT-X-PART:DURATION=0.333333,URI="seg28.0.m4s",INDEPENDENT=YES
            #EXT-X-PART:DURATION=0.333333,URI="seg28.1.m4s"
            #EXT-X-PART:DURATION=0.333333,URI="seg28.2.m4s"
            #EXTINF:1.0,
            seg28.m4s
            #EXT-X-PART:DURATION=0.333333,URI="seg29.0.m4s",INDEPENDENT=YES
            #EXT-X-PART:DURATION=0.333333,URI="seg29.1.m4s"
            #EXT-X-PART:DURATION=0.333333,URI="seg29.2.m4s"
            #EXTINF:1.0,
            seg29.m4s
            #EXT-X-PART:DURATION=0.333333,URI="seg30.0.m4s",INDEPENDENT=YES
            #EXT-X-PART:DURATION=0.333333,URI="seg30.1.m4s"
            #EXT-X-PRELOAD-HINT:TYPE=PART,URI="seg30.2.m4s"
            #EXT-X-RENDITION-REPORT:URI="../audio/index.m3u8",LAST-MSN=30,LAST-PART=1

            """)
        #expect(delta.version == 9 && delta.skippedSegments == 3)
        let back = try MediaPlaylist.parse(text)
        #expect(back.skippedSegments == 3)
        #expect(back.segments.map(\.sequence) == Array(23...29))
        #expect(back.mapURI == "init1.mp4")
        #expect(back.discontinuitySequence == 4)
        #expect(back.render() == text)
    }

    @Test func ignoredWithoutCanSkipUntilOrWithEndList() {
        var p = Self.fullPlaylist()
        p.serverControl?.canSkipUntil = nil
        #expect(p.deltaUpdate() == nil)
        p.serverControl = nil
        #expect(p.deltaUpdate() == nil)
        var ended = Self.fullPlaylist()
        ended.endList = true
        ended.trailingParts = []
        ended.preloadHint = nil
        #expect(ended.deltaUpdate() == nil)
    }

    /// Nothing lies before the boundary: still a delta update, with SKIPPED-SEGMENTS=0 and version 9.
    @Test func nothingToSkipGivesSkippedSegmentsZero() throws {
        var p = Self.fullPlaylist()
        p.serverControl?.canSkipUntil = .seconds(9)  // segment 20 ends 9 s before the end: not further
        let delta = try #require(p.deltaUpdate())
        #expect(delta.skippedSegments == 0)
        #expect(delta.segments == p.segments && delta.mapURI == p.mapURI)
        let text = delta.render()
        #expect(text.contains("#EXT-X-VERSION:9\n"))
        #expect(text.contains("#EXT-X-INDEPENDENT-SEGMENTS\n#EXT-X-SKIP:SKIPPED-SEGMENTS=0\n#EXT-X-MAP:URI=\"init.mp4\"\n"))
        #expect(try MediaPlaylist.parse(text).segments.map(\.sequence) == Array(20...29))
        p.serverControl?.canSkipUntil = MediaTime(value: 8_999_999, timescale: 1_000_000)
        #expect(p.deltaUpdate()?.skippedSegments == 1)
    }

    /// A playlist with only the parts of its first segment has nothing to skip.
    @Test func noCompleteSegmentYet() throws {
        var p = Self.fullPlaylist()
        p.segments = []
        p.mediaSequence = 0
        let delta = try #require(p.deltaUpdate())
        #expect(delta.skippedSegments == 0 && delta.trailingParts == p.trailingParts)
        let back = try MediaPlaylist.parse(delta.render())
        #expect(back.segments.isEmpty && back.skippedSegments == 0 && back.trailingParts.count == 2)
        #expect(back.render() == delta.render())
    }

    /// Trailing parts do not move the boundary: it is measured from the end of the last complete segment.
    @Test func boundaryIgnoresTrailingParts() {
        var p = Self.fullPlaylist()
        let withParts = p.deltaUpdate()?.skippedSegments
        p.trailingParts = Self.parts(30, 2) + Self.parts(30, 2).map { PlaylistPart(uri: $0.uri + "x", duration: .seconds(1)) }
        #expect(p.deltaUpdate()?.skippedSegments == withParts)
    }

    /// The first remaining segment keeps its own date and map when it has them.
    @Test func firstRemainingSegmentKeepsItsOwnDateAndMap() throws {
        var p = Self.fullPlaylist()
        p.segments[3].programDateTime = WallClock(millisecondsSince1970: Self.t0 + 60_000)
        p.segments[3].discontinuity = true
        p.segments[3].mapURI = "init2.mp4"
        let delta = try #require(p.deltaUpdate())
        #expect(delta.segments[0].programDateTime == WallClock(millisecondsSince1970: Self.t0 + 60_000))
        #expect(delta.mapURI == "init2.mp4" && delta.segments[0].mapURI == nil && delta.segments[0].discontinuity)
        let text = delta.render()
        #expect(text.contains("""
            #EXT-X-SKIP:SKIPPED-SEGMENTS=3
            #EXT-X-MAP:URI="init2.mp4"
            #EXT-X-DISCONTINUITY
            #EXT-X-PROGRAM-DATE-TIME:2025-11-22T04:21:26.123Z
            #EXTINF:1.0,
            seg23.m4s

            """))
        let back = try MediaPlaylist.parse(text)
        #expect(back.mapURI == "init2.mp4" && back.segments[0].mapURI == nil && back.segments[0].discontinuity)
        #expect(back.render() == text)
    }

    /// A playlist without dates gets none; a map that never changed is restated as it was.
    @Test func noDatesStayWithoutDates() throws {
        var p = Self.fullPlaylist()
        for i in p.segments.indices { p.segments[i].programDateTime = nil; p.segments[i].mapURI = nil }
        let delta = try #require(p.deltaUpdate())
        #expect(delta.segments.allSatisfy { $0.programDateTime == nil })
        #expect(delta.mapURI == "init.mp4")
        #expect(!delta.render().contains("PROGRAM-DATE-TIME"))
    }

    @Test func versionIsRaisedOnlyWhenSkipping() {
        var p = Self.fullPlaylist()
        #expect(p.renderedVersion == 7)
        p.skippedSegments = 0
        #expect(p.renderedVersion == 9)
        p.version = 10
        #expect(p.renderedVersion == 10)
        p.skippedSegments = nil
        #expect(p.render().hasPrefix("#EXTM3U\n#EXT-X-VERSION:10\n"))
    }

    @Test func skippableCountEdges() {
        let s = MediaTime.seconds(1)
        #expect(MediaPlaylist.skippableCount([], skipBoundary: .seconds(6)) == 0)
        #expect(MediaPlaylist.skippableCount([s], skipBoundary: .seconds(0)) == 0)
        #expect(MediaPlaylist.skippableCount([s, s], skipBoundary: .seconds(0)) == 1)
        #expect(MediaPlaylist.skippableCount(Array(repeating: s, count: 7), skipBoundary: .seconds(6)) == 0)
        #expect(MediaPlaylist.skippableCount(Array(repeating: s, count: 8), skipBoundary: .seconds(6)) == 1)
        // In rendered microseconds: 1/3 s renders as 0.333333, so 18 thirds end 5.999994 s after the first.
        let third = MediaTime(value: 1, timescale: 3)
        #expect(MediaPlaylist.skippableCount(Array(repeating: third, count: 19), skipBoundary: MediaTime(value: 5_999_994, timescale: 1_000_000)) == 0)
        #expect(MediaPlaylist.skippableCount(Array(repeating: third, count: 19), skipBoundary: MediaTime(value: 5_999_993, timescale: 1_000_000)) == 1)
    }

    @Test func parseRejectsMalformedSkipAndServerControl() {
        let head = "#EXTM3U\n#EXT-X-VERSION:9\n#EXT-X-TARGETDURATION:1\n"
        let tail = "#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:1.0,\nseg5.m4s\n"
        for bad in ["#EXT-X-SKIP:RECENTLY-REMOVED-DATERANGES=\"\"", "#EXT-X-SKIP:SKIPPED-SEGMENTS=-1",
                    "#EXT-X-SKIP:SKIPPED-SEGMENTS=abc", "#EXT-X-SKIP:SKIPPED-SEGMENTS=1.5", "#EXT-X-SKIP:SKIPPED-SEGMENTS=",
                    "#EXT-X-SKIP:SKIPPED-SEGMENTS=+3", "#EXT-X-SKIP:SKIPPED-SEGMENTS=99999999999999999999999"] {
            #expect(throws: HLSError.invalidAttribute(line: 4, name: "SKIPPED-SEGMENTS"), "\(bad)") {
                try MediaPlaylist.parse(head + bad + "\n" + tail)
            }
        }
        for bad in ["#EXT-X-SKIP", "#EXT-X-SKIP:"] {
            #expect(throws: HLSError.invalidAttribute(line: 4, name: "SKIPPED-SEGMENTS"), "\(bad)") {
                try MediaPlaylist.parse(head + bad + "\n" + tail)
            }
        }
        #expect(throws: HLSError.invalidTag(line: 5, tag: "EXT-X-SKIP")) {
            try MediaPlaylist.parse(head + "#EXT-X-SKIP:SKIPPED-SEGMENTS=1\n#EXT-X-SKIP:SKIPPED-SEGMENTS=1\n" + tail)
        }
        #expect(throws: HLSError.invalidTag(line: 7, tag: "EXT-X-SKIP")) {  // after a segment
            try MediaPlaylist.parse(head + tail + "#EXT-X-SKIP:SKIPPED-SEGMENTS=1\n")
        }
        #expect(throws: HLSError.invalidTag(line: 5, tag: "EXT-X-SKIP")) {  // after a segment's tags
            try MediaPlaylist.parse(head + "#EXT-X-DISCONTINUITY\n#EXT-X-SKIP:SKIPPED-SEGMENTS=1\n" + tail)
        }
        // §8: EXT-X-SKIP needs EXT-X-VERSION 9.
        #expect(throws: HLSError.invalidTag(line: 4, tag: "EXT-X-VERSION")) {
            try MediaPlaylist.parse("#EXTM3U\n#EXT-X-VERSION:8\n#EXT-X-TARGETDURATION:1\n#EXT-X-SKIP:SKIPPED-SEGMENTS=2\n" + tail)
        }
        for bad in ["abc", "-6.0", "", "6.0.0"] {
            #expect(throws: HLSError.invalidAttribute(line: 4, name: "CAN-SKIP-UNTIL"), "\(bad)") {
                try MediaPlaylist.parse(head + "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=\(bad)\n" + tail)
            }
        }
        // Sequence numbers past UInt64.max are an error, not a trap.
        let maxSeq = "#EXT-X-MEDIA-SEQUENCE:18446744073709551615\n"
        #expect(throws: HLSError.invalidTag(line: 5, tag: "EXT-X-SKIP")) {
            try MediaPlaylist.parse(head + maxSeq + "#EXT-X-SKIP:SKIPPED-SEGMENTS=1\n#EXT-X-MAP:URI=\"i.mp4\"\n")
        }
        #expect(throws: HLSError.invalidTag(line: 8, tag: "EXT-X-MEDIA-SEQUENCE")) {
            try MediaPlaylist.parse(head + maxSeq + "#EXT-X-SKIP:SKIPPED-SEGMENTS=1\n" + tail)
        }
        #expect(throws: HLSError.invalidTag(line: 9, tag: "EXT-X-MEDIA-SEQUENCE")) {
            try MediaPlaylist.parse(head + maxSeq + tail + "#EXTINF:1.0,\nseg6.m4s\n")
        }
        // A well-formed delta numbers its segments after the skipped ones.
        #expect((try? MediaPlaylist.parse(head + "#EXT-X-MEDIA-SEQUENCE:10\n#EXT-X-SKIP:SKIPPED-SEGMENTS=4\n" + tail))?
            .segments.map(\.sequence) == [14])
    }
}
