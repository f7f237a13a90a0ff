import HLS
import MediaCore
import Testing
@testable import MediaPresentation

/// `PlaylistBuilder.mediaPlaylist(singleFile:)`: byte ranges from the segments' `byteCount`s, never from bytes.
@Suite struct SingleFilePlaylistTests {
    @Test func rangesAreLaidEndToEndFromTheIndex() throws {
        let window = LiveWindow<[UInt8]>(windowSize: 1, playlistType: .vod, policy: TimingPolicy(targetDuration: 1))
        let feed = Feed(window)
        let sizes = [1000, 2500, 40, 77_777]
        for s in sizes { feed.segment(bytes: s) }
        window.finish()
        let index = SingleFileIndex(fileURI: "720p.mp4", initRange: 0..<600, indexRange: 700..<788)
        let p = try #require(PlaylistBuilder.mediaPlaylist(window.snapshot(), scheme: .nested("720p"), playlistType: .vod,
                                                           singleFile: index))
        #expect(p.mapURI == "720p.mp4" && p.mapByteRange == PlaylistByteRange(length: 600, offset: 0))
        #expect(p.segments.allSatisfy { $0.uri == "720p.mp4" && $0.mapURI == nil })
        #expect(p.segments.map { $0.byteRange?.offset } == [788, 1788, 4288, 4328])
        #expect(p.segments.map { $0.byteRange?.length } == sizes)
        #expect(p.playlistType == .vod && p.endList)
        let text = p.render()
        #expect(text.contains("#EXT-X-MAP:URI=\"720p.mp4\",BYTERANGE=\"600@0\"\n"))
        #expect(text.contains("#EXTINF:1.0,\n#EXT-X-BYTERANGE:1000@788\n720p.mp4\n"))
        // Without it, the usual per-segment files.
        let plain = try #require(PlaylistBuilder.mediaPlaylist(window.snapshot(), scheme: .nested("720p"), playlistType: .vod))
        #expect(plain.segments.map(\.uri) == ["720p/seg0.m4s", "720p/seg1.m4s", "720p/seg2.m4s", "720p/seg3.m4s"])
        #expect(plain.segments.allSatisfy { $0.byteRange == nil } && plain.mapByteRange == nil)
    }
}
