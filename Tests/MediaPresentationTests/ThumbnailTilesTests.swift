import DASH
import HLS
import MediaCore
import Testing
@testable import MediaPresentation

@Suite struct ThumbnailTilesTests {
    /// 5x5 tiles of 160x90, one a second, in a 90 kHz timeline.
    let grid = TileGrid(columns: 5, rows: 5, tileWidth: 160, tileHeight: 90, interval: .seconds(1, timescale: 90_000))

    @Test func placesTilesRowByRow() {
        #expect(grid.tilesPerSheet == 25)
        #expect(grid.sheetWidth == 800 && grid.sheetHeight == 450)
        #expect(grid.rect(ofTile: 0) == (0, 0, 160, 90))
        #expect(grid.rect(ofTile: 4) == (640, 0, 160, 90))
        #expect(grid.rect(ofTile: 5) == (0, 90, 160, 90))
        #expect(grid.rect(ofTile: 24) == (640, 360, 160, 90))
        let wide = TileGrid(columns: 3, rows: 2, tileWidth: 100, tileHeight: 50, interval: .seconds(2))
        #expect(wide.rect(ofTile: 4) == (100, 50, 100, 50))
        #expect(wide.sheetDuration == .seconds(12))
    }

    @Test func tilesStartingInASegment() {
        // A segment [1 s, 2 s) holds tile 1; [1.5 s, 3.5 s) holds tiles 2 and 3; [0.2 s, 0.9 s) none.
        #expect(grid.tiles(startingIn: .seconds(1, timescale: 90_000), duration: .seconds(1, timescale: 90_000)) == 1..<2)
        #expect(grid.tiles(startingIn: .milliseconds(1500), duration: .milliseconds(2000)) == 2..<4)
        #expect(grid.tiles(startingIn: .milliseconds(200), duration: .milliseconds(700)).isEmpty)
        // Consecutive segments give every tile exactly once.
        var seen: [Int64] = []
        var t: Int64 = 0
        for d in [90_000, 135_000, 45_000, 180_000, 93_003] as [Int64] {
            seen += Array(grid.tiles(startingIn: MediaTime(value: t, timescale: 90_000), duration: MediaTime(value: d, timescale: 90_000)))
            t += d
        }
        #expect(seen == Array(0..<7))
        #expect(grid.start(ofTile: 26) == MediaTime(value: 26 * 90_000, timescale: 90_000))
    }

    @Test func tileHeightKeepsTheDisplayAspect() {
        #expect(TileGrid.tileHeight(tileWidth: 160, width: 1280, height: 720) == 90)
        #expect(TileGrid.tileHeight(tileWidth: 160, width: 640, height: 480) == 120)
        // Anamorphic 720x576 at 64:45 displays 1024 wide.
        #expect(TileGrid.tileHeight(tileWidth: 160, width: 720, height: 576, sar: Rational(64, 45)) == 90)
        #expect(TileGrid.tileHeight(tileWidth: 160, width: 1920, height: 1080) % 2 == 0)
    }

    private func sheets(_ count: Int, last: Int = 25, retention: MediaTime? = nil, first: Int64 = 0) -> TileSheets<[UInt8]> {
        let s = TileSheets<[UInt8]>(retention: retention) { $0 }
        s.setGrid(grid)
        for n in 0..<count {
            s.publish(TileSheetInfo(number: first + Int64(n), tileCount: n == count - 1 ? last : 25), jpeg: Array(repeating: 1, count: 1000 + n))
        }
        return s
    }

    @Test func imagePlaylistFollowsTheSpec() {
        let s = sheets(2, last: 7)
        s.finish()
        let text = ThumbnailManifests.imagePlaylist(s.snapshot(), playlistType: .vod)!.render()
        #expect(text == """
        #EXTM3U
        #EXT-X-VERSION:7
        #EXT-X-TARGETDURATION:25
        #EXT-X-MEDIA-SEQUENCE:0
        #EXT-X-PLAYLIST-TYPE:VOD
        #EXT-X-IMAGES-ONLY
        #EXT-X-TILES:RESOLUTION=160x90,LAYOUT=5x5,DURATION=1.0
        #EXTINF:25.0,
        thumbnails/0.jpg
        #EXT-X-TILES:RESOLUTION=160x90,LAYOUT=5x5,DURATION=1.0
        #EXTINF:7.0,
        thumbnails/1.jpg
        #EXT-X-ENDLIST

        """)
        let stream = ThumbnailManifests.imageStream(s.snapshot(), uriQuery: "sig=1")!
        // The largest sheet, 1001 bytes, over a full sheet's 25 s.
        #expect(stream.render() == "#EXT-X-IMAGE-STREAM-INF:BANDWIDTH=321,RESOLUTION=160x90,CODECS=\"jpeg\",URI=\"thumbnails.m3u8?sig=1\"")
        var m = MultivariantPlaylist(variants: [VariantStream(bandwidth: 1000, codecs: "avc1.64001f", uri: "a.m3u8")])
        ThumbnailManifests.add(s.snapshot(), to: &m)
        #expect(m.render().hasSuffix("a.m3u8\n#EXT-X-IMAGE-STREAM-INF:BANDWIDTH=321,RESOLUTION=160x90,CODECS=\"jpeg\",URI=\"thumbnails.m3u8\"\n"))
    }

    @Test func liveSheetsLeaveWithTheWindow() {
        // Retention 20 s: once sheet 3 (75–100 s) is published, sheets ending at or before 55 s are gone (sheet 2,
        // 50–75 s, overlaps the window still).
        let s = sheets(4, retention: .seconds(20))
        let snap = s.snapshot()
        #expect(snap.sheets.map(\.info.number) == [2, 3])
        #expect(snap.sheet(1) == nil)
        #expect(snap.sheet(3)?.payload.count == 1003)
        let playlist = ThumbnailManifests.imagePlaylist(snap)!
        #expect(playlist.mediaSequence == 2 && !playlist.endList && playlist.playlistType == nil)
        // A sheet number not above the last is ignored.
        s.publish(TileSheetInfo(number: 3, tileCount: 25), jpeg: [0])
        #expect(s.snapshot().sheet(3)?.payload.count == 1003)
    }

    @Test func webVTTListsEveryTileAtItsPlace() {
        let s = sheets(2, last: 2)
        let vtt = ThumbnailManifests.vtt(s.snapshot(), uriQuery: "sig=1")
        let blocks = vtt.components(separatedBy: "\n\n")
        #expect(blocks.first == "WEBVTT")
        #expect(blocks.count == 1 + 25 + 2)
        #expect(blocks[1] == "00:00:00.000 --> 00:00:01.000\nthumbnails/0.jpg?sig=1#xywh=0,0,160,90")
        #expect(blocks[7] == "00:00:06.000 --> 00:00:07.000\nthumbnails/0.jpg?sig=1#xywh=160,90,160,90")
        #expect(blocks[27] == "00:00:26.000 --> 00:00:27.000\nthumbnails/1.jpg?sig=1#xywh=160,0,160,90\n")
        #expect(ThumbnailManifests.timestamp(.milliseconds(3_723_004)) == "01:02:03.004")
    }

    @Test func dashThumbnailSet() {
        let s = sheets(3, last: 10, first: 4)
        var mpd = MPD(type: .static, profiles: ["urn:mpeg:dash:profile:isoff-live:2011"], minBufferTime: .seconds(2),
                      periods: [MPD.Period(id: "0", adaptationSets: [])])
        ThumbnailManifests.add(s.snapshot(), to: &mpd)
        let set = mpd.periods[0].thumbnails!
        #expect(set.id == 1 && set.width == 800 && set.height == 450 && set.startNumber == 4 && set.timescale == 90_000)
        #expect(set.timeline == [MPD.TimelineEntry(time: 4 * 25 * 90_000, duration: 25 * 90_000, repeatCount: 1),
                                 MPD.TimelineEntry(time: nil, duration: 10 * 90_000, repeatCount: 0)])
        let xml = mpd.render()
        #expect(xml.contains("""
        <AdaptationSet id="1" contentType="image" mimeType="image/jpeg">
        """))
        #expect(xml.contains("<SegmentTemplate timescale=\"90000\" media=\"thumbnails/$Number$.jpg\" startNumber=\"4\">"))
        #expect(xml.contains("<EssentialProperty schemeIdUri=\"http://dashif.org/thumbnail_tile\" value=\"5x5\"/>"))
        #expect(xml.contains("<Representation id=\"thumbnails\" bandwidth=\"321\" width=\"800\" height=\"450\">"))
    }

    @Test func sheetNames() {
        #expect(ThumbnailManifests.sheetURI(12) == "thumbnails/12.jpg")
        #expect(ThumbnailManifests.sheetNumber("thumbnails/12.jpg") == 12)
        for bad in ["thumbnails/012.jpg", "thumbnails/-1.jpg", "thumbnails/1.png", "thumbnails/.jpg", "thumbnails/1/2.jpg",
                    "thumbnail/1.jpg", "thumbnails/99999999999999999999.jpg"] {
            #expect(ThumbnailManifests.sheetNumber(Substring(bad)) == nil, "\(bad)")
        }
    }
}

@Suite struct KeyframeSampleRetentionTests {
    /// A window lists a segment without the keyframe sample its event carried (a long time-shift window or a VOD
    /// would otherwise keep a keyframe per segment in memory).
    @Test func theWindowDoesNotKeepTheKeyframeSample() throws {
        let p = Presentation<Void>(windowSize: 3, payloads: .none)
        try p.consume(.layout([.muxed()], TimingPolicy(targetDuration: 1)))
        try p.consume(.initSegment(rendition: 0, bytes: [1], tracks: []))
        let info = SegmentInfo(sequence: 0, startTime: .seconds(0), duration: .seconds(1), byteCount: 4, keyframeSample: [9, 9, 9])
        try p.consume(.segment(rendition: 0, info, bytes: [0, 0, 0, 0]))
        let stored = try #require(p.layout?.windows[0].snapshot().window.last)
        #expect(stored.info.keyframeSample == nil)
        #expect(stored.info.duration == .seconds(1))
    }
}
