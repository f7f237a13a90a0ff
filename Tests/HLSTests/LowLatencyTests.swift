import TestSupport
import MediaCore
import Testing
@testable import HLS

@Suite struct LowLatencyPlaylistTests {
    static let third = MediaTime(value: 30_000, timescale: 90_000)  // 0.333333… s

    static func parts(_ seq: Int, _ n: Int) -> [PlaylistPart] {
        (0..<n).map { PlaylistPart(uri: "seg\(seq).\($0).m4s", duration: third, independent: $0 == 0) }
    }

    static func llPlaylist() -> MediaPlaylist {
        let segs = (4...6).map { i in
            PlaylistSegment(sequence: UInt64(i), uri: "seg\(i).m4s", duration: .seconds(1, timescale: 90_000),
                            parts: i == 4 ? [] : parts(i, 3))
        }
        return MediaPlaylist(targetDuration: 1, mediaSequence: 4, mapURI: "init.mp4", segments: segs,
                             serverControl: ServerControl(canBlockReload: true, holdBack: .seconds(3),
                                                          partHoldBack: MediaTime(value: 1_002, timescale: 1000)),
                             partTarget: MediaTime(value: 334, timescale: 1000), trailingParts: parts(7, 2),
                             preloadHint: PreloadHint(type: .part, uri: "seg7.2.m4s"))
    }

    @Test func golden() {
        #expect(Self.llPlaylist().render() == """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:1
            #EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.002,HOLD-BACK=3.0
            #EXT-X-PART-INF:PART-TARGET=0.334
            #EXT-X-MEDIA-SEQUENCE:4
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:1.0,
            seg4.m4s
            #EXT-X-PART:DURATION=0.333333,URI="seg5.0.m4s",INDEPENDENT=YES
            #EXT-X-PART:DURATION=0.333333,URI="seg5.1.m4s"
            #EXT-X-PART:DURATION=0.333333,URI="seg5.2.m4s"
            #EXTINF:1.0,
            seg5.m4s
            #EXT-X-PART:DURATION=0.333333,URI="seg6.0.m4s",INDEPENDENT=YES
            #EXT-X-PART:DURATION=0.333333,URI="seg6.1.m4s"
            #EXT-X-PART:DURATION=0.333333,URI="seg6.2.m4s"
            #EXTINF:1.0,
            seg6.m4s
            #EXT-X-PART:DURATION=0.333333,URI="seg7.0.m4s",INDEPENDENT=YES
            #EXT-X-PART:DURATION=0.333333,URI="seg7.1.m4s"
            #EXT-X-PRELOAD-HINT:TYPE=PART,URI="seg7.2.m4s"

            """)
    }

    @Test func partTargetIsRoundedUpAndPartDurationsDown() {
        var p = Self.llPlaylist()
        p.partTarget = Self.third  // 0.3333333… s
        p.serverControl = nil
        p.preloadHint = nil
        let text = p.render()
        #expect(text.contains("#EXT-X-PART-INF:PART-TARGET=0.333334\n"))
        #expect(text.contains("#EXT-X-PART:DURATION=0.333333,"))
        #expect(!text.contains("SERVER-CONTROL") && !text.contains("PRELOAD-HINT"))
    }

    @Test func goldenParsesBack() throws {
        let p = Self.llPlaylist()
        let back = try MediaPlaylist.parse(p.render())
        #expect(back.serverControl == p.serverControl)
        #expect(back.partTarget == p.partTarget)
        #expect(back.preloadHint == PreloadHint(type: .part, uri: "seg7.2.m4s"))
        #expect(back.trailingParts.map(\.uri) == ["seg7.0.m4s", "seg7.1.m4s"])
        #expect(back.trailingParts.map(\.independent) == [true, false])
        #expect(back.segments.map(\.parts.count) == [0, 3, 3])
        // Durations come back truncated to µs.
        #expect(back.segments[1].parts[0].duration == MediaTime(value: 333_333, timescale: 1_000_000))
        #expect(back.render() == p.render())
    }

    /// Random LL playlists with µs-exact durations: render → parse gives back an equal model.
    @Test func renderParseRoundTripWithParts() throws {
        var rng = SplitMix64(seed: 0x11_4C4C)
        var sawParts = false, sawTrailing = false
        for _ in 0..<300 {
            var p = MediaPlaylistPropertyTests.randomPlaylist(&rng)
            guard !p.segments.isEmpty else { continue }
            var next = p.segments.last!.sequence + 1
            func randomParts(_ seq: UInt64) -> [PlaylistPart] {
                (0..<Int.random(in: 0...4, using: &rng)).map { i in
                    PlaylistPart(uri: "seg\(seq).\(i).m4s",
                                 duration: MediaTime(value: Int64.random(in: 1...500_000, using: &rng), timescale: 1_000_000),
                                 independent: i == 0 || Bool.random(using: &rng))
                }
            }
            for i in p.segments.indices where Bool.random(using: &rng) {
                p.segments[i].parts = randomParts(p.segments[i].sequence)
                sawParts = sawParts || !p.segments[i].parts.isEmpty
            }
            if !p.endList {
                p.trailingParts = randomParts(next)
                sawTrailing = sawTrailing || !p.trailingParts.isEmpty
                p.preloadHint = PreloadHint(type: .part, uri: "seg\(next).\(p.trailingParts.count).m4s")
                next += 1
            }
            p.partTarget = MediaTime(value: Int64.random(in: 500_000...600_000, using: &rng), timescale: 1_000_000)
            p.serverControl = ServerControl(canBlockReload: Bool.random(using: &rng),
                                            holdBack: Bool.random(using: &rng) ? .seconds(Int64(3 * p.targetDuration)) : nil,
                                            partHoldBack: MediaTime(value: 3 * p.partTarget!.value, timescale: 1_000_000))
            let text = p.render()
            let back = try MediaPlaylist.parse(text)
            #expect(back == p, "round trip failed for:\n\(text)")
            #expect(back.render() == text)
        }
        #expect(sawParts && sawTrailing)
    }

    @Test func parseRejectsMalformedLLTags() {
        let head = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MAP:URI=\"init.mp4\"\n"
        #expect(throws: HLSError.invalidAttribute(line: 4, name: "URI")) {
            try MediaPlaylist.parse(head + "#EXT-X-PART:DURATION=0.3\n")
        }
        #expect(throws: HLSError.invalidAttribute(line: 4, name: "DURATION")) {
            try MediaPlaylist.parse(head + "#EXT-X-PART:DURATION=abc,URI=\"a\"\n")
        }
        #expect(throws: HLSError.invalidAttribute(line: 4, name: "TYPE")) {
            try MediaPlaylist.parse(head + "#EXT-X-PRELOAD-HINT:TYPE=BOGUS,URI=\"a\"\n")
        }
        #expect(throws: HLSError.invalidAttribute(line: 4, name: "PART-TARGET")) {
            try MediaPlaylist.parse(head + "#EXT-X-PART-INF:X=1\n")
        }
    }
}
