import TestSupport
import MediaCore
import Testing
@testable import HLS

/// `EXT-X-RENDITION-REPORT` (RFC 8216bis §4.4.5.4) and a live LL-HLS playlist with no complete segment yet.
@Suite struct RenditionReportTests {
    static let third = MediaTime(value: 30_000, timescale: 90_000)

    /// A stream that has just started: the first part of segment 0 and a hint for the second, nothing else.
    static func firstPartOnly() -> MediaPlaylist {
        MediaPlaylist(targetDuration: 1, mediaSequence: 0, mapURI: "init.mp4", segments: [],
                      serverControl: ServerControl(canBlockReload: true, holdBack: .seconds(3),
                                                   partHoldBack: MediaTime(value: 1_002, timescale: 1000)),
                      partTarget: MediaTime(value: 334, timescale: 1000),
                      trailingParts: [PlaylistPart(uri: "seg0.0.m4s", duration: third, independent: true)],
                      preloadHint: PreloadHint(type: .part, uri: "seg0.1.m4s"))
    }

    @Test func noCompleteSegmentGolden() throws {
        let p = Self.firstPartOnly()
        let text = p.render()
        #expect(text == """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:1
            #EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.002,HOLD-BACK=3.0
            #EXT-X-PART-INF:PART-TARGET=0.334
            #EXT-X-MEDIA-SEQUENCE:0
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MAP:URI="init.mp4"
            #EXT-X-PART:DURATION=0.333333,URI="seg0.0.m4s",INDEPENDENT=YES
            #EXT-X-PRELOAD-HINT:TYPE=PART,URI="seg0.1.m4s"

            """)
        let back = try MediaPlaylist.parse(text)
        #expect(back.segments.isEmpty && back.mediaSequence == 0 && back.mapURI == "init.mp4")
        #expect(back.trailingParts == [PlaylistPart(uri: "seg0.0.m4s", duration: MediaTime(value: 333_333, timescale: 1_000_000),
                                                    independent: true)])
        #expect(back.preloadHint == PreloadHint(type: .part, uri: "seg0.1.m4s"))
        #expect(back.render() == text)
        // Its own report: part 0 of segment 0.
        #expect(p.renditionReport(uri: "a.m3u8") == RenditionReport(uri: "a.m3u8", lastMSN: 0, lastPart: 0))
    }

    @Test func reportsCloseThePlaylist() throws {
        var p = LowLatencyPlaylistTests.llPlaylist()
        p.renditionReports = [RenditionReport(uri: "../720p/index.m3u8", lastMSN: 7, lastPart: 1),
                              RenditionReport(uri: "../audio/index.m3u8", lastMSN: 7, lastPart: 2)]
        let text = p.render()
        #expect(text.hasSuffix("""
            #EXT-X-PART:DURATION=0.333333,URI="seg7.1.m4s"
            #EXT-X-PRELOAD-HINT:TYPE=PART,URI="seg7.2.m4s"
            #EXT-X-RENDITION-REPORT:URI="../720p/index.m3u8",LAST-MSN=7,LAST-PART=1
            #EXT-X-RENDITION-REPORT:URI="../audio/index.m3u8",LAST-MSN=7,LAST-PART=2

            """))
        #expect(try MediaPlaylist.parse(text).renditionReports == p.renditionReports)

        // A finished playlist: the reports come before EXT-X-ENDLIST (which carries no preload hint).
        var ended = p
        ended.endList = true
        ended.preloadHint = nil
        ended.trailingParts = []
        ended.renditionReports = [RenditionReport(uri: "../audio/index.m3u8", lastMSN: 6, lastPart: 2)]
        #expect(ended.render().hasSuffix("""
            seg6.m4s
            #EXT-X-RENDITION-REPORT:URI="../audio/index.m3u8",LAST-MSN=6,LAST-PART=2
            #EXT-X-ENDLIST

            """))
        #expect(try MediaPlaylist.parse(ended.render()).renditionReports == ended.renditionReports)
    }

    @Test func ownReport() {
        let ll = LowLatencyPlaylistTests.llPlaylist()  // segments 4…6, parts 7.0 and 7.1
        #expect(ll.renditionReport(uri: "x") == RenditionReport(uri: "x", lastMSN: 7, lastPart: 1))
        var noTrailing = ll
        noTrailing.trailingParts = []
        #expect(noTrailing.renditionReport(uri: "x") == RenditionReport(uri: "x", lastMSN: 6, lastPart: 2))
        noTrailing.segments[2].parts = []
        #expect(noTrailing.renditionReport(uri: "x") == RenditionReport(uri: "x", lastMSN: 6, lastPart: nil))
        noTrailing.segments = []
        #expect(noTrailing.renditionReport(uri: "x") == nil)
        // In a delta update the sequence numbers continue after the skipped segments.
        var delta = Self.firstPartOnly()
        delta.mediaSequence = 10
        delta.skippedSegments = 5
        #expect(delta.renditionReport(uri: "x") == RenditionReport(uri: "x", lastMSN: 15, lastPart: 0))
    }

    /// §4.4.5.4: "A server MAY omit adding an attribute to an EXT-X-RENDITION-REPORT tag - even a mandatory
    /// attribute - if its value is the same as that of the Rendition Report of the Media Playlist to which the
    /// EXT-X-RENDITION-REPORT tag is being added." Parsing fills such attributes from this playlist's own report.
    @Test func omittedAttributesAreThePlaylistsOwn() throws {
        let base = LowLatencyPlaylistTests.llPlaylist().render()
        let p = try MediaPlaylist.parse(base + """
            #EXT-X-RENDITION-REPORT:URI="../a.m3u8"
            #EXT-X-RENDITION-REPORT:URI="../b.m3u8",LAST-MSN=7
            #EXT-X-RENDITION-REPORT:URI="../c.m3u8",LAST-PART=0
            #EXT-X-RENDITION-REPORT:URI="../d.m3u8",LAST-MSN=8,LAST-PART=0

            """)
        #expect(p.renditionReports == [
            RenditionReport(uri: "../a.m3u8", lastMSN: 7, lastPart: 1),
            RenditionReport(uri: "../b.m3u8", lastMSN: 7, lastPart: 1),
            RenditionReport(uri: "../c.m3u8", lastMSN: 7, lastPart: 0),
            RenditionReport(uri: "../d.m3u8", lastMSN: 8, lastPart: 0),
        ])
        // Without parts anywhere, LAST-PART stays absent.
        let plain = try MediaPlaylist.parse("""
            #EXTM3U
            #EXT-X-TARGETDURATION:1
            #EXT-X-MEDIA-SEQUENCE:3
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:1.0,
            seg3.m4s
            #EXT-X-RENDITION-REPORT:URI="../a.m3u8"
            #EXT-X-RENDITION-REPORT:URI="../b.m3u8",LAST-MSN=2

            """)
        #expect(plain.renditionReports == [RenditionReport(uri: "../a.m3u8", lastMSN: 3, lastPart: nil),
                                           RenditionReport(uri: "../b.m3u8", lastMSN: 2, lastPart: nil)])
    }

    @Test func parseRejectsMalformedReports() {
        let head = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:1.0,\nseg0.m4s\n"
        for (bad, name) in [("LAST-MSN=-1", "LAST-MSN"), ("LAST-MSN=abc", "LAST-MSN"), ("LAST-MSN=1.0", "LAST-MSN"),
                            ("LAST-MSN=1,LAST-PART=-2", "LAST-PART"), ("LAST-MSN=1,LAST-PART=x", "LAST-PART")] {
            #expect(throws: HLSError.invalidAttribute(line: 6, name: name), "\(bad)") {
                try MediaPlaylist.parse(head + "#EXT-X-RENDITION-REPORT:URI=\"r.m3u8\",\(bad)\n")
            }
        }
        #expect(throws: HLSError.invalidAttribute(line: 6, name: "URI")) {
            try MediaPlaylist.parse(head + "#EXT-X-RENDITION-REPORT:LAST-MSN=1\n")
        }
        // LAST-MSN omitted, and no segment or part to take it from.
        #expect(throws: HLSError.invalidAttribute(line: 4, name: "LAST-MSN")) {
            try MediaPlaylist.parse("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MAP:URI=\"init.mp4\"\n"
                                    + "#EXT-X-RENDITION-REPORT:URI=\"r.m3u8\"\n")
        }
    }

    /// Random LL playlists with reports (and sometimes no complete segment): render → parse gives them back.
    @Test func renderParseRoundTrip() throws {
        var rng = SplitMix64(seed: 0x4E9087)
        var sawEmpty = false
        for _ in 0..<300 {
            var p = MediaPlaylistPropertyTests.randomPlaylist(&rng)
            p.endList = false
            p.playlistType = nil
            if Int.random(in: 0..<5, using: &rng) == 0 { p.segments = []; sawEmpty = true }
            let next = p.segments.last.map { $0.sequence + 1 } ?? p.mediaSequence
            p.trailingParts = (0..<Int.random(in: 1...3, using: &rng)).map {
                PlaylistPart(uri: "seg\(next).\($0).m4s", duration: MediaTime(value: 333_000, timescale: 1_000_000),
                             independent: $0 == 0)
            }
            p.partTarget = MediaTime(value: 334, timescale: 1000)
            p.serverControl = ServerControl(canBlockReload: true, partHoldBack: .seconds(1))
            p.preloadHint = PreloadHint(uri: "seg\(next).\(p.trailingParts.count).m4s")
            p.renditionReports = (0..<Int.random(in: 1...3, using: &rng)).map {
                RenditionReport(uri: "../r\($0).m3u8", lastMSN: next + UInt64.random(in: 0...1, using: &rng),
                                lastPart: Int.random(in: 0...5, using: &rng))
            }
            let text = p.render()
            #expect(try MediaPlaylist.parse(text) == p, "\(text)")
        }
        #expect(sawEmpty)
    }
}
