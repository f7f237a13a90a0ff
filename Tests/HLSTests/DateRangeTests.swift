import MediaCore
import Testing
@testable import HLS

@Suite struct DateRangeTests {
    static let start = WallClock(millisecondsSince1970: 1_764_192_610_000)  // 2025-11-26T21:30:10.000Z

    @Test func scte35Break() {
        var d = DateRange(id: "splice-1", startDate: Self.start, plannedDuration: .seconds(30), scte35Out: [0xFC, 0x30, 0x0A])
        #expect(d.line == "#EXT-X-DATERANGE:ID=\"splice-1\",START-DATE=\"2025-11-26T21:30:10.000Z\",PLANNED-DURATION=30.0,SCTE35-OUT=0xFC300A")
        d.duration = MediaTime(value: 2_702_700, timescale: 90_000)
        d.scte35In = [0xFC, 0x01]
        #expect(d.line == "#EXT-X-DATERANGE:ID=\"splice-1\",START-DATE=\"2025-11-26T21:30:10.000Z\",DURATION=30.03,PLANNED-DURATION=30.0,SCTE35-OUT=0xFC300A,SCTE35-IN=0xFC01")
    }

    @Test func commandAndClientAttributes() {
        var d = DateRange(id: "x", rangeClass: "com.apple.hls.interstitial", startDate: Self.start, scte35Cmd: [0xAB])
        d.clientAttributes = [("X-ASSET-URI", .string("https://ads.example/a.m3u8")), ("X-RESUME-OFFSET", .decimal(.zero(1)))]
        #expect(d.line == "#EXT-X-DATERANGE:ID=\"x\",CLASS=\"com.apple.hls.interstitial\",START-DATE=\"2025-11-26T21:30:10.000Z\",X-ASSET-URI=\"https://ads.example/a.m3u8\",X-RESUME-OFFSET=0.0,SCTE35-CMD=0xAB")
    }

    /// Dateranges follow the header's map, before the first segment; a delta update keeps them all (they are not
    /// Media Segment tags, so EXT-X-SKIP does not replace them) and their playlist carries program dates.
    @Test func renderedInPlaylistAndKeptByDeltaUpdates() throws {
        var segments: [PlaylistSegment] = []
        for i in 0..<10 {
            segments.append(PlaylistSegment(sequence: UInt64(i), uri: "seg\(i).m4s", duration: .seconds(1),
                                            programDateTime: WallClock(millisecondsSince1970: Self.start.millisecondsSince1970 + Int64(i) * 1000)))
        }
        var p = MediaPlaylist(targetDuration: 1, mapURI: "init.mp4", segments: segments)
        p.serverControl = ServerControl(canBlockReload: true, canSkipUntil: .seconds(6))
        p.dateRanges = [DateRange(id: "a", startDate: Self.start, scte35Out: [0xFC])]
        let text = p.render()
        let lines = text.split(separator: "\n")
        let map = try #require(lines.firstIndex(of: "#EXT-X-MAP:URI=\"init.mp4\""))
        #expect(lines[map + 1].hasPrefix("#EXT-X-DATERANGE:ID=\"a\""))
        #expect(text.contains("#EXT-X-PROGRAM-DATE-TIME:"))
        let delta = try #require(p.deltaUpdate())
        #expect(delta.skippedSegments == 3)
        #expect(delta.render().contains("#EXT-X-DATERANGE:ID=\"a\""))
        #expect(delta.render().contains("#EXT-X-PROGRAM-DATE-TIME:"))
    }
}

/// `_HLS_skip=v2` (`CAN-SKIP-DATERANGES=YES`): older dateranges that can no longer change are skipped too, and
/// `EXT-X-SKIP` lists the recently removed ones (version 10).
@Suite struct DateRangeDeltaTests {
    static func playlist() -> MediaPlaylist {
        let start = DateRangeTests.start.millisecondsSince1970
        let segments = (0..<10).map { i in
            PlaylistSegment(sequence: UInt64(i), uri: "seg\(i).m4s", duration: .seconds(1),
                            programDateTime: WallClock(millisecondsSince1970: start + Int64(i) * 1000))
        }
        var p = MediaPlaylist(targetDuration: 1, mapURI: "init.mp4", segments: segments)
        p.serverControl = ServerControl(canBlockReload: true, canSkipUntil: .seconds(6))
        p.serverControl?.canSkipDateRanges = true
        func at(_ s: Int64) -> WallClock { WallClock(millisecondsSince1970: start + s * 1000) }
        p.dateRanges = [
            DateRange(id: "ended", startDate: at(1), duration: .seconds(1), scte35Out: [0xFC]),
            DateRange(id: "open", startDate: at(1), plannedDuration: .seconds(30), scte35Out: [0xFC]),
            DateRange(id: "signal", startDate: at(2), scte35Cmd: [0xFC]),
            DateRange(id: "recent", startDate: at(8), duration: .seconds(1), scte35Out: [0xFC]),
        ]
        return p
    }

    @Test func v2SkipsFinishedOlderRangesAndListsTheRemovedOnes() throws {
        let p = Self.playlist()
        #expect(p.render().contains("CAN-SKIP-UNTIL=6.0,CAN-SKIP-DATERANGES=YES\n"))
        let v2 = try #require(p.deltaUpdate(skippingDateRanges: true, recentlyRemoved: ["gone-1", "gone-2"]))
        #expect(v2.skippedSegments == 3)
        // Before seg3 (the first remaining): "ended" and "signal" are final, skipped; "open" can still end: kept.
        #expect(v2.dateRanges.map(\.id) == ["open", "recent"])
        let text = v2.render()
        #expect(text.contains("#EXT-X-SKIP:SKIPPED-SEGMENTS=3,RECENTLY-REMOVED-DATERANGES=\"gone-1\tgone-2\"\n"))
        #expect(text.contains("#EXT-X-VERSION:10\n"))
        let parsed = try MediaPlaylist.parse(text)
        #expect(parsed.recentlyRemovedDateRanges == ["gone-1", "gone-2"] && parsed.serverControl?.canSkipDateRanges == true)
        // YES keeps every daterange and says nothing of removals.
        let yes = try #require(p.deltaUpdate())
        #expect(yes.dateRanges.count == 4 && yes.recentlyRemovedDateRanges == nil)
        #expect(yes.render().contains("#EXT-X-VERSION:9\n") && !yes.render().contains("RECENTLY-REMOVED"))
        // Without CAN-SKIP-DATERANGES, v2 is a YES.
        var plain = p
        plain.serverControl?.canSkipDateRanges = false
        #expect(plain.deltaUpdate(skippingDateRanges: true)?.dateRanges.count == 4)
    }
}
