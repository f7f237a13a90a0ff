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
