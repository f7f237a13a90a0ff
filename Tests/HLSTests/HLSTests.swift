import TestSupport
import Testing
import MediaCore
@testable import HLS


@Suite struct MediaPlaylistRenderTests {
    @Test func liveGolden() {
        let t0 = WallClock(millisecondsSince1970: 1_763_785_226_123)  // 2025-11-22T04:20:26.123Z
        let segs = [
            PlaylistSegment(sequence: 10, uri: "seg10.m4s", duration: MediaTime(value: 90_090, timescale: 90_000),
                            programDateTime: t0),
            PlaylistSegment(sequence: 11, uri: "seg11.m4s", duration: MediaTime(value: 87_000, timescale: 90_000),
                            programDateTime: WallClock(millisecondsSince1970: t0.millisecondsSince1970 + 1001)),
            PlaylistSegment(sequence: 12, uri: "seg12.m4s", duration: MediaTime(value: 135_000, timescale: 90_000),
                            programDateTime: WallClock(millisecondsSince1970: t0.millisecondsSince1970 + 1968),
                            discontinuity: true, mapURI: "init1.mp4"),
        ]
        let p = MediaPlaylist(targetDuration: MediaPlaylist.targetDuration(for: segs.map(\.duration)),
                              mediaSequence: 10, discontinuitySequence: 2, mapURI: "init.mp4",
                              segments: segs, endList: false)
        #expect(p.render() == """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:2
            #EXT-X-MEDIA-SEQUENCE:10
            #EXT-X-DISCONTINUITY-SEQUENCE:2
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MAP:URI="init.mp4"
            #EXT-X-PROGRAM-DATE-TIME:2025-11-22T04:20:26.123Z
            #EXTINF:1.001,
            seg10.m4s
            #EXT-X-PROGRAM-DATE-TIME:2025-11-22T04:20:27.124Z
            #EXTINF:0.966666,
            seg11.m4s
            #EXT-X-DISCONTINUITY
            #EXT-X-MAP:URI="init1.mp4"
            #EXT-X-PROGRAM-DATE-TIME:2025-11-22T04:20:28.091Z
            #EXTINF:1.5,
            seg12.m4s

            """)
    }

    @Test func vodGolden() throws {
        let segs = (0..<3).map {
            PlaylistSegment(sequence: UInt64($0), uri: "seg\($0).m4s", duration: .seconds(2, timescale: 1000))
        }
        let p = MediaPlaylist(targetDuration: 2, mapURI: "init.mp4", playlistType: .vod, segments: segs, endList: true)
        #expect(p.render() == """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:2
            #EXT-X-MEDIA-SEQUENCE:0
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:2.0,
            seg0.m4s
            #EXTINF:2.0,
            seg1.m4s
            #EXTINF:2.0,
            seg2.m4s
            #EXT-X-ENDLIST

            """)
        #expect(try MediaPlaylist.parse(p.render()) == p)
    }

    @Test func extinfIsTruncatedNeverRoundedUp() {
        // 2/3 s = 0.6666666…: truncation gives .666666, never .666667.
        #expect(MediaPlaylist.extinfText(MediaTime(value: 2, timescale: 3)) == "0.666666")
        #expect(MediaPlaylist.extinfText(MediaTime(value: 1001, timescale: 30_000)) == "0.033366")
        #expect(MediaPlaylist.extinfText(MediaTime(value: 3_003, timescale: 3_000)) == "1.001")
        #expect(MediaPlaylist.extinfText(MediaTime(value: 0, timescale: 90_000)) == "0.0")
        #expect(MediaPlaylist.extinfText(MediaTime(value: 1, timescale: 1_000_000)) == "0.000001")
    }

    @Test func targetDurationRule() {
        #expect(MediaPlaylist.targetDuration(for: []) == 1)
        #expect(MediaPlaylist.targetDuration(for: [MediaTime(value: 100, timescale: 1000)]) == 1)
        #expect(MediaPlaylist.targetDuration(for: [MediaTime(value: 1_499_999, timescale: 1_000_000)]) == 1)
        #expect(MediaPlaylist.targetDuration(for: [MediaTime(value: 1_500_000, timescale: 1_000_000)]) == 2)
        #expect(MediaPlaylist.targetDuration(for: [.seconds(1), MediaTime(value: 224_999, timescale: 90_000)]) == 2)
        #expect(MediaPlaylist.targetDuration(for: [.seconds(1), MediaTime(value: 225_000, timescale: 90_000)]) == 3)
        #expect(MediaPlaylist.targetDuration(for: [MediaTime(value: 6_006, timescale: 1000), .seconds(4)]) == 6)
    }

    @Test func programDateTimeFormat() {
        #expect(MediaPlaylist.programDateTimeText(WallClock(millisecondsSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(MediaPlaylist.programDateTimeText(WallClock(millisecondsSince1970: 951_782_400_007))
                == "2000-02-29T00:00:00.007Z")
        #expect(MediaPlaylist.programDateTimeText(WallClock(millisecondsSince1970: 1_798_761_599_999))
                == "2026-12-31T23:59:59.999Z")
        #expect(MediaPlaylist.programDateTimeText(WallClock(millisecondsSince1970: -1)) == "1969-12-31T23:59:59.999Z")
        #expect(HLSFormat.parseProgramDateTime("2000-02-29T00:00:00.007Z")?.millisecondsSince1970 == 951_782_400_007)
        #expect(HLSFormat.parseProgramDateTime("2000-02-29T01:30:00.007+01:30")?.millisecondsSince1970 == 951_782_400_007)
        #expect(HLSFormat.parseProgramDateTime("2000-02-29T00:00:00") == nil)
        #expect(HLSFormat.parseProgramDateTime("2000-13-29T00:00:00Z") == nil)
    }

    @Test func programDateTimeRoundTripsOverRandomInstants() {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<2000 {
            let ms = Int64.random(in: -2_000_000_000_000...5_000_000_000_000, using: &rng)
            let text = MediaPlaylist.programDateTimeText(WallClock(millisecondsSince1970: ms))
            #expect(text.count == 24 && text.hasSuffix("Z"))
            #expect(HLSFormat.parseProgramDateTime(text[...])?.millisecondsSince1970 == ms)
        }
    }
}

@Suite struct MediaPlaylistPropertyTests {
    /// A random live window: durations exact in microseconds (so parse gives back equal `MediaTime`s),
    /// random discontinuities, map changes only on discontinuities, optional PDT, optional ENDLIST.
    static func randomPlaylist(_ rng: inout SplitMix64) -> MediaPlaylist {
        let count = Int.random(in: 0...12, using: &rng)
        let first = UInt64.random(in: 0...1_000_000, using: &rng)
        let timescale: Int32 = [90_000, 1000, 48_000, 1_000_000].randomElement(using: &rng) ?? 90_000
        let unit: Int64 = switch timescale { case 90_000: 9; case 48_000: 48; default: 1 }  // exact in µs
        var pdt = Int64.random(in: 1_600_000_000_000...1_900_000_000_000, using: &rng)
        let withPDT = Bool.random(using: &rng)
        var initIndex = 0
        var segments: [PlaylistSegment] = []
        for i in 0..<count {
            let ticks = unit * Int64.random(in: 1...(Int64(timescale) * 4 / unit), using: &rng)
            let d = MediaTime(value: ticks, timescale: timescale)
            let disc = i > 0 && Int.random(in: 0..<5, using: &rng) == 0
            var map: String?
            if disc && Bool.random(using: &rng) { initIndex += 1; map = "init\(initIndex).mp4" }
            segments.append(PlaylistSegment(sequence: first + UInt64(i), uri: "seg\(first + UInt64(i)).m4s", duration: d,
                                            programDateTime: withPDT ? WallClock(millisecondsSince1970: pdt) : nil,
                                            discontinuity: disc, mapURI: map))
            pdt += ticks * 1000 / Int64(timescale)
        }
        let endList = Bool.random(using: &rng)
        return MediaPlaylist(targetDuration: MediaPlaylist.targetDuration(for: segments.map(\.duration)),
                             mediaSequence: first, discontinuitySequence: UInt64.random(in: 0...3, using: &rng),
                             mapURI: "init.mp4", playlistType: endList && Bool.random(using: &rng) ? .vod : nil,
                             segments: segments, endList: endList)
    }

    @Test func renderParseRoundTrip() throws {
        var rng = SplitMix64(seed: 0x5EED)
        var sawDiscontinuity = false, sawMapChange = false
        for _ in 0..<500 {
            let p = Self.randomPlaylist(&rng)
            sawDiscontinuity = sawDiscontinuity || p.segments.contains { $0.discontinuity }
            sawMapChange = sawMapChange || p.segments.contains { $0.mapURI != nil }
            let text = p.render()
            let back = try MediaPlaylist.parse(text)
            #expect(back == p, "round trip failed for:\n\(text)")
            #expect(back.render() == text)
        }
        #expect(sawDiscontinuity && sawMapChange)
    }

    @Test func renderParseRenderIsStableForArbitraryTicks() throws {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<200 {
            let n = Int.random(in: 1...8, using: &rng)
            let segs = (0..<n).map { i in
                PlaylistSegment(sequence: UInt64(i), uri: "seg\(i).m4s",
                                duration: MediaTime(value: Int64.random(in: 1...400_000, using: &rng), timescale: 90_000))
            }
            let p = MediaPlaylist(targetDuration: MediaPlaylist.targetDuration(for: segs.map(\.duration)),
                                  mapURI: "init.mp4", segments: segs)
            let text = p.render()
            let back = try MediaPlaylist.parse(text)
            #expect(back.render() == text)
            // Parsed durations are the truncated EXTINF values: never longer than the real ones.
            for (a, b) in zip(segs, back.segments) { #expect(b.duration <= a.duration) }
        }
    }

    @Test func everyRoundedExtinfFitsTargetDuration() throws {
        var rng = SplitMix64(seed: 99)
        for _ in 0..<500 {
            let p = Self.randomPlaylist(&rng)
            let parsed = try MediaPlaylist.parse(p.render())
            for s in parsed.segments {
                #expect(MediaPlaylist.roundedDuration(s.duration) <= parsed.targetDuration)
            }
            #expect(parsed.targetDuration >= 1)
        }
    }

    @Test func parseRejectsMalformedInput() {
        #expect(throws: HLSError.missingHeader) { try MediaPlaylist.parse("#EXT-X-VERSION:7\n") }
        #expect(throws: HLSError.missingTag("EXT-X-TARGETDURATION")) {
            try MediaPlaylist.parse("#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\"\n")
        }
        #expect(throws: HLSError.self) {
            try MediaPlaylist.parse("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MAP:URI=\"i.mp4\"\n#EXTINF:abc,\nseg0.m4s\n")
        }
        #expect(throws: HLSError.unexpectedURI(line: 4)) {
            try MediaPlaylist.parse("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MAP:URI=\"i.mp4\"\nseg0.m4s\n")
        }
    }
}

@Suite struct MultivariantPlaylistTests {
    @Test func golden() throws {
        let p = MultivariantPlaylist(variants: [
            VariantStream(bandwidth: 2_640_000, averageBandwidth: 2_100_500, codecs: "avc1.64001f,mp4a.40.2",
                          resolution: .init(width: 1280, height: 720), frameRate: 29.97, uri: "stream.m3u8"),
        ])
        let text = p.render()
        #expect(text == """
            #EXTM3U
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-STREAM-INF:BANDWIDTH=2640000,AVERAGE-BANDWIDTH=2100500,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=29.970
            stream.m3u8

            """)
        #expect(try MultivariantPlaylist.parse(text) == p)
    }

    @Test func audioOnlyVariantRoundTrips() throws {
        let p = MultivariantPlaylist(variants: [VariantStream(bandwidth: 130_000, codecs: "mp4a.40.2", uri: "a.m3u8")],
                                     independentSegments: false)
        #expect(try MultivariantPlaylist.parse(p.render()) == p)
        #expect(throws: HLSError.self) { try MultivariantPlaylist.parse("#EXTM3U\n#EXT-X-STREAM-INF:CODECS=\"x\"\nv.m3u8\n") }
    }
}
