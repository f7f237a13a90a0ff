import MediaCore
import Testing
@testable import HLS

/// `EXT-X-I-FRAMES-ONLY` (RFC 8216 §4.3.3.6) and `EXT-X-I-FRAME-STREAM-INF` (§4.3.4.3): rendered, parsed back.
@Suite struct IFrameTagTests {
    static func iFramePlaylist(version: Int = 7) -> MediaPlaylist {
        var p = MediaPlaylist(version: version, targetDuration: 1, mediaSequence: 4, independentSegments: false,
                              mapURI: "720p/init.mp4",
                              segments: [PlaylistSegment(sequence: 4, uri: "720p/seg4.m4s", duration: .seconds(1),
                                                         byteRange: PlaylistByteRange(length: 812, offset: 24))])
        p.iFramesOnly = true
        return p
    }

    @Test func rendersTheTagAndParsesItBack() throws {
        let p = Self.iFramePlaylist()
        let text = p.render()
        #expect(text == """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:1
            #EXT-X-MEDIA-SEQUENCE:4
            #EXT-X-I-FRAMES-ONLY
            #EXT-X-MAP:URI="720p/init.mp4"
            #EXTINF:1.0,
            #EXT-X-BYTERANGE:812@24
            720p/seg4.m4s

            """)
        #expect(try MediaPlaylist.parse(text) == p)
        #expect(try MediaPlaylist.parse(MediaPlaylist(targetDuration: 1, mapURI: "i.mp4", segments: []).render()).iFramesOnly == false)
    }

    @Test func versionIsAtLeastFiveWithAMap() {
        // §4.3.2.5: EXT-X-MAP in an I-frames-only playlist needs version 5; §4.3.3.6: the tag itself 4.
        #expect(Self.iFramePlaylist(version: 1).renderedVersion == 5)
        #expect(Self.iFramePlaylist(version: 1).render().contains("#EXT-X-VERSION:5\n"))
    }

    @Test func iFrameStreamInfRoundTrips() throws {
        let mv = MultivariantPlaylist(
            variants: [VariantStream(bandwidth: 2_000_000, codecs: "avc1.64001f,mp4a.40.2", uri: "720p.m3u8")],
            iFrameStreams: [IFrameStream(bandwidth: 300_000, averageBandwidth: 250_000, codecs: "avc1.64001f",
                                         resolution: .init(width: 1280, height: 720), uri: "720p.iframes.m3u8"),
                            IFrameStream(bandwidth: 90_000, codecs: "avc1.42c01e", uri: "360p.iframes.m3u8")])
        let text = mv.render()
        #expect(text.hasSuffix("""
            720p.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=300000,AVERAGE-BANDWIDTH=250000,CODECS="avc1.64001f",RESOLUTION=1280x720,URI="720p.iframes.m3u8"
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=90000,CODECS="avc1.42c01e",URI="360p.iframes.m3u8"

            """))
        #expect(try MultivariantPlaylist.parse(text) == mv)
        // §4.3.4.3: "URI … This attribute is REQUIRED."
        #expect(throws: HLSError.self) {
            try MultivariantPlaylist.parse("#EXTM3U\n#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1,CODECS=\"avc1.64001f\"\n")
        }
    }
}
