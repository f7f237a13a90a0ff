import DASH
import Foundation
import HLS
import MediaCore
import Testing
import TestSupport
@testable import MediaPresentation

/// A query given to the builders (a signed URL's signature) goes on every URI they list, and nowhere else.
@Suite struct URIQueryTests {
    static let query = "hls_prefix=/&hls_exp=2000&hls_sig=abc_-"

    /// Every URI of a rendered media playlist: URI lines and `URI="…"` attributes.
    static func uris(_ text: String) -> [String] {
        var out: [String] = []
        for line in text.split(separator: "\n") {
            if !line.hasPrefix("#") { out.append(String(line)); continue }
            var rest = line[...]
            while let r = rest.range(of: "URI=\"") {
                let tail = rest[r.upperBound...]
                guard let end = tail.firstIndex(of: "\"") else { break }
                out.append(String(tail[..<end]))
                rest = tail[tail.index(after: end)...]
            }
        }
        return out
    }

    @Test func mediaPlaylistMultivariantAndReportsCarryTheQuery() throws {
        let p = try PresentationTests.fed(segments: 3)
        let layout = try #require(p.layout)
        let snaps = layout.snapshots()
        let reports = [1, 2].compactMap {
            PlaylistBuilder.renditionReport(snaps[$0], scheme: layout.renditions[$0].scheme, uriQuery: Self.query)
        }
        let signed = try #require(PlaylistBuilder.mediaPlaylist(snaps[0], scheme: layout.renditions[0].scheme,
                                                                playlistType: nil, reports: reports, uriQuery: Self.query))
        let plain = try #require(PlaylistBuilder.mediaPlaylist(snaps[0], scheme: layout.renditions[0].scheme,
                                                               playlistType: nil, reports: [1, 2].compactMap {
            PlaylistBuilder.renditionReport(snaps[$0], scheme: layout.renditions[$0].scheme)
        }))
        let text = signed.render()
        let uris = Self.uris(text)
        // Segments, the map, parts, the preload hint and both rendition reports.
        #expect(uris.count == Self.uris(plain.render()).count)
        #expect(uris.count >= 3 + 1 + 9 + 1 + 2)
        #expect(uris == Self.uris(plain.render()).map { $0 + "?" + Self.query })
        #expect(text.contains("#EXT-X-RENDITION-REPORT:URI=\"360p.m3u8?\(Self.query)\""))
        #expect(text.contains("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"720p/seg3.0.m4s?\(Self.query)\""))
        // The playlist reads back (the parser takes the URIs as they are).
        #expect(try MediaPlaylist.parse(text) == signed)
        // A delta update keeps the query on what it lists.
        let delta = try #require(PlaylistBuilder.mediaPlaylist(snaps[0], scheme: layout.renditions[0].scheme,
                                                               playlistType: nil, skip: true, uriQuery: Self.query))
        #expect(Self.uris(delta.render()).allSatisfy { $0.hasSuffix("?" + Self.query) })

        let mv = try #require(PlaylistBuilder.multivariant(layout.renditions, snaps, uriQuery: Self.query))
        #expect(mv.variants.map(\.uri).sorted() == ["360p.m3u8?\(Self.query)", "720p.m3u8?\(Self.query)"])
        #expect(mv.media.map(\.uri) == ["audio.m3u8?\(Self.query)"])
        let plainMV = try #require(PlaylistBuilder.multivariant(layout.renditions, snaps))
        #expect(plainMV.variants.map(\.uri).sorted() == ["360p.m3u8", "720p.m3u8"])
    }

    @Test func manifestTemplatesCarryTheQueryEscaped() throws {
        let p = try PresentationTests.fed(segments: 3)
        let layout = try #require(p.layout)
        let mpd = try #require(ManifestBuilder.live(layout.renditions, layout.snapshots(),
                                                    options: .init(now: ManifestBuilderTests.now, uriQuery: Self.query)))
        let xml = mpd.render()
        #expect(xml.contains("initialization=\"720p/init.mp4?hls_prefix=/&amp;hls_exp=2000&amp;hls_sig=abc_-\""))
        #expect(xml.contains("media=\"720p/seg$Number$.m4s?hls_prefix=/&amp;hls_exp=2000&amp;hls_sig=abc_-\""))
        let plain = try #require(ManifestBuilder.live(layout.renditions, layout.snapshots(),
                                                      options: .init(now: ManifestBuilderTests.now))).render()
        #expect(plain.contains("media=\"720p/seg$Number$.m4s\""))
    }
}
