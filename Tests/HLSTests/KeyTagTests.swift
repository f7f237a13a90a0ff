import HLS
import MediaCore
import Testing

/// `EXT-X-KEY` (RFC 8216bis §4.4.4.4): where `render()` puts it, and parsing it back.
@Suite struct KeyTagTests {
    static func key(_ n: UInt8) -> PlaylistKey {
        PlaylistKey(method: .aes128, uri: "keys/0.key", iv: [UInt8](repeating: 0, count: 15) + [n])
    }

    static func segment(_ n: UInt64, key: PlaylistKey?, map: String? = nil, discontinuity: Bool = false) -> PlaylistSegment {
        var s = PlaylistSegment(sequence: n, uri: "seg\(n).m4s", duration: .seconds(1), discontinuity: discontinuity, mapURI: map)
        s.key = key
        return s
    }

    /// Init segments stay clear: the header map precedes the first key, and a later map follows METHOD=NONE; a clear
    /// segment after encrypted ones gets METHOD=NONE too.
    @Test func mapsStayClear() throws {
        let playlist = MediaPlaylist(targetDuration: 1, mapURI: "init.mp4", segments: [
            Self.segment(0, key: Self.key(0)),
            Self.segment(1, key: Self.key(1)),
            Self.segment(2, key: Self.key(2), map: "init1.mp4", discontinuity: true),
            Self.segment(3, key: nil),
        ])
        let text = playlist.render()
        #expect(text.contains("""
            #EXT-X-MAP:URI="init.mp4"
            #EXT-X-KEY:METHOD=AES-128,URI="keys/0.key",IV=0x00000000000000000000000000000000
            #EXTINF:1.0,
            seg0.m4s
            #EXT-X-KEY:METHOD=AES-128,URI="keys/0.key",IV=0x00000000000000000000000000000001
            #EXTINF:1.0,
            seg1.m4s
            #EXT-X-DISCONTINUITY
            #EXT-X-KEY:METHOD=NONE
            #EXT-X-MAP:URI="init1.mp4"
            #EXT-X-KEY:METHOD=AES-128,URI="keys/0.key",IV=0x00000000000000000000000000000002
            #EXTINF:1.0,
            seg2.m4s
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:1.0,
            seg3.m4s
            """))
        let parsed = try MediaPlaylist.parse(text)
        #expect(parsed.segments.map(\.key) == [Self.key(0), Self.key(1), Self.key(2), nil])
        #expect(parsed.render() == text)
    }

    /// One key for several segments is stated once; the parts of the segment in progress get theirs.
    @Test func sameKeyOnceAndTrailingParts() throws {
        let constant = PlaylistKey(method: .aes128, uri: "k.key")
        var playlist = MediaPlaylist(targetDuration: 1, mapURI: "init.mp4",
                                     segments: [Self.segment(0, key: constant), Self.segment(1, key: constant)],
                                     partTarget: MediaTime(value: 1, timescale: 2),
                                     trailingParts: [PlaylistPart(uri: "seg2.0.m4s", duration: MediaTime(value: 1, timescale: 2))])
        playlist.trailingKey = Self.key(2)
        let text = playlist.render()
        #expect(text.components(separatedBy: "URI=\"k.key\"").count == 2)
        #expect(text.contains("IV=0x00000000000000000000000000000002\n#EXT-X-PART:"))
        #expect(try MediaPlaylist.parse(text).trailingKey == Self.key(2))
    }

    @Test func malformedKeys() {
        for bad in ["METHOD=AES-128", "URI=\"k\"", "METHOD=AES-128,URI=\"k\",IV=0x12", "METHOD=AES-128,URI=\"k\",IV=12",
                    "METHOD=SAMPLE-AES-X,URI=\"k\""] {
            let text = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MAP:URI=\"i.mp4\"\n#EXT-X-KEY:\(bad)\n#EXTINF:1,\ns.m4s\n"
            #expect(throws: (any Error).self, "\(bad)") { try MediaPlaylist.parse(text) }
        }
    }

    /// Sample encryption: one EXT-X-KEY per KEYFORMAT, all in force at once, read back as one key with alternatives;
    /// the same keys as EXT-X-SESSION-KEY lines.
    @Test func keyFormatsInForceTogether() throws {
        let key = PlaylistKey(method: .sampleAES, uri: "skd://0011", keyFormat: "com.apple.streamingkeydelivery",
                              keyFormatVersions: "1", alternatives: [
                                  PlaylistKey(method: .sampleAES, uri: "data:text/plain;base64,AAEC", keyFormat: "org.w3.clearkey",
                                              keyFormatVersions: "1"),
                              ])
        let playlist = MediaPlaylist(targetDuration: 1, mapURI: "init.mp4",
                                     segments: [Self.segment(0, key: key), Self.segment(1, key: key)])
        let text = playlist.render()
        #expect(text.contains("""
            #EXT-X-MAP:URI="init.mp4"
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://0011",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="data:text/plain;base64,AAEC",KEYFORMAT="org.w3.clearkey",KEYFORMATVERSIONS="1"
            #EXTINF:1.0,
            seg0.m4s
            #EXTINF:1.0,
            seg1.m4s
            """))
        let parsed = try MediaPlaylist.parse(text)
        #expect(parsed.segments.map(\.key) == [key, key])
        #expect(parsed.render() == text)
        #expect(key.sessionLines == [
            "#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI=\"skd://0011\",KEYFORMAT=\"com.apple.streamingkeydelivery\",KEYFORMATVERSIONS=\"1\"",
            "#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI=\"data:text/plain;base64,AAEC\",KEYFORMAT=\"org.w3.clearkey\",KEYFORMATVERSIONS=\"1\"",
        ])
        var multivariant = MultivariantPlaylist(variants: [])
        multivariant.sessionKeys = [key]
        #expect(multivariant.render().contains("#EXT-X-INDEPENDENT-SEGMENTS\n#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI=\"skd://"))
    }
}
