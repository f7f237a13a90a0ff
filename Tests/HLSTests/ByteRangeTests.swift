import Foundation
import MediaCore
import TestSupport
import Testing
@testable import HLS

/// `EXT-X-BYTERANGE` and `EXT-X-MAP:BYTERANGE` (RFC 8216 §4.3.2.2, §4.3.2.5): a single-file VOD.
@Suite struct ByteRangePlaylistTests {
    static func singleFile(_ sizes: [Int], initLength: Int = 800, mediaStart: Int = 1000) -> MediaPlaylist {
        var offset = mediaStart
        let segments = sizes.enumerated().map { i, size -> PlaylistSegment in
            defer { offset += size }
            return PlaylistSegment(sequence: UInt64(i), uri: "stream.mp4", duration: .seconds(1),
                                   byteRange: PlaylistByteRange(length: size, offset: offset))
        }
        var p = MediaPlaylist(targetDuration: 1, mapURI: "stream.mp4", playlistType: .vod, segments: segments, endList: true)
        p.mapByteRange = PlaylistByteRange(length: initLength, offset: 0)
        return p
    }

    @Test func golden() {
        #expect(Self.singleFile([500, 700]).render() == """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:1
            #EXT-X-MEDIA-SEQUENCE:0
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MAP:URI="stream.mp4",BYTERANGE="800@0"
            #EXTINF:1.0,
            #EXT-X-BYTERANGE:500@1000
            stream.mp4
            #EXTINF:1.0,
            #EXT-X-BYTERANGE:700@1500
            stream.mp4
            #EXT-X-ENDLIST

            """)
    }

    @Test func roundTrips() throws {
        var rng = SplitMix64(seed: 0xB17E_0001)
        for _ in 0..<200 {
            let sizes = (0..<Int.random(in: 1...20, using: &rng)).map { _ in Int.random(in: 1...5_000_000, using: &rng) }
            let p = Self.singleFile(sizes, initLength: Int.random(in: 1...5000, using: &rng),
                                    mediaStart: Int.random(in: 5000...9000, using: &rng))
            let parsed = try MediaPlaylist.parse(p.render())
            #expect(parsed.mapByteRange == p.mapByteRange)
            #expect(parsed.segments.map(\.byteRange) == p.segments.map(\.byteRange))
            #expect(parsed.segments.map(\.uri) == p.segments.map(\.uri))
        }
    }

    /// §4.3.2.2: "If o is not present, the sub-range begins at the next byte following the sub-range of the
    /// previous Media Segment" — and without such a segment "the client MUST fail to parse the Playlist".
    @Test func offsetContinuesThePreviousSubRange() throws {
        let text = """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:1
            #EXT-X-MAP:URI="a.mp4",BYTERANGE="100"
            #EXTINF:1,
            #EXT-X-BYTERANGE:50@100
            a.mp4
            #EXTINF:1,
            #EXT-X-BYTERANGE:70
            a.mp4
            #EXT-X-ENDLIST
            """
        let p = try MediaPlaylist.parse(text)
        #expect(p.mapByteRange == PlaylistByteRange(length: 100, offset: 0))
        #expect(p.segments.map(\.byteRange) == [PlaylistByteRange(length: 50, offset: 100), PlaylistByteRange(length: 70, offset: 150)])
        for bad in [text.replacingOccurrences(of: "50@100", with: "50"),                       // no previous sub-range
                    text.replacingOccurrences(of: "#EXT-X-BYTERANGE:70\na.mp4", with: "#EXT-X-BYTERANGE:70\nb.mp4"),  // another resource
                    text.replacingOccurrences(of: "50@100", with: "5x@100"),
                    text.replacingOccurrences(of: "50@100", with: "50@"),
                    text.replacingOccurrences(of: "BYTERANGE=\"100\"", with: "BYTERANGE=\"-1\"")] {
            #expect(throws: HLSError.self) { try MediaPlaylist.parse(bad) }
        }
    }

    /// §4.3.2.2: "Use of the EXT-X-BYTERANGE tag REQUIRES a compatibility version number of 4 or greater."
    @Test func versionIsAtLeastFourWithByteRanges() {
        var p = Self.singleFile([10])
        p.version = 3
        #expect(p.renderedVersion == 4)
        p.mapByteRange = nil
        p.segments[0].byteRange = nil
        #expect(p.renderedVersion == 3)
    }

    @Test func segmentLevelMapByteRangeRendersWhenItChanges() throws {
        var p = Self.singleFile([10, 20])
        p.segments[1].discontinuity = true
        p.segments[1].mapURI = "stream.mp4"
        p.segments[1].mapByteRange = PlaylistByteRange(length: 900, offset: 5000)
        let text = p.render()
        #expect(text.contains("#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"stream.mp4\",BYTERANGE=\"900@5000\"\n"))
        let parsed = try MediaPlaylist.parse(text)
        #expect(parsed.segments[1].mapByteRange == PlaylistByteRange(length: 900, offset: 5000))
        #expect(parsed.segments[0].mapByteRange == nil)
    }
}
