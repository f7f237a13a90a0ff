import TestSupport
import MediaCore
import Testing
@testable import HLS

/// `EXT-X-MEDIA` and the `AUDIO` attribute of `EXT-X-STREAM-INF` (RFC 8216bis §4.4.6.1, §4.4.6.2).
@Suite struct AlternativeRenditionTests {
    static func english() -> MediaRendition {
        MediaRendition(type: .audio, groupID: "aac", name: "English", language: "en", isDefault: true,
                       autoselect: true, channels: "2", uri: "audio/en/index.m3u8")
    }

    /// Shaped like RFC 8216bis §9.6 "Multivariant Playlist with Alternative Audio".
    static func withAudio() -> MultivariantPlaylist {
        MultivariantPlaylist(
            variants: [
                VariantStream(bandwidth: 2_640_000, averageBandwidth: 2_100_500, codecs: "avc1.64001f,mp4a.40.2",
                              resolution: .init(width: 1280, height: 720), frameRate: 30, audioGroup: "aac",
                              uri: "720p/index.m3u8"),
                VariantStream(bandwidth: 1_200_000, codecs: "avc1.64001e,mp4a.40.2",
                              resolution: .init(width: 640, height: 360), frameRate: 30, audioGroup: "aac",
                              uri: "360p/index.m3u8"),
            ],
            media: [
                english(),
                MediaRendition(type: .audio, groupID: "aac", name: "Deutsch", language: "de", autoselect: true,
                               channels: "2", uri: "audio/de/index.m3u8"),
                MediaRendition(type: .audio, groupID: "aac", name: "Commentary", language: "en", channels: "2",
                               uri: "audio/commentary/index.m3u8"),
            ])
    }

    @Test func golden() throws {
        let p = Self.withAudio()
        let text = p.render()
        #expect(text == """
            #EXTM3U
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",DEFAULT=YES,AUTOSELECT=YES,LANGUAGE="en",CHANNELS="2",URI="audio/en/index.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="Deutsch",DEFAULT=NO,AUTOSELECT=YES,LANGUAGE="de",CHANNELS="2",URI="audio/de/index.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="Commentary",DEFAULT=NO,AUTOSELECT=NO,LANGUAGE="en",CHANNELS="2",URI="audio/commentary/index.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=2640000,AVERAGE-BANDWIDTH=2100500,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=30.000,AUDIO="aac"
            720p/index.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=1200000,CODECS="avc1.64001e,mp4a.40.2",RESOLUTION=640x360,FRAME-RATE=30.000,AUDIO="aac"
            360p/index.m3u8

            """)
        #expect(try MultivariantPlaylist.parse(text) == p)
        #expect(p.validate() == [])
        #expect(p.requiredVersion == nil)
    }

    /// Muxed audio: a rendition without URI (the audio is in the variant's own playlist), and closed captions.
    @Test func goldenWithoutURIAndClosedCaptions() throws {
        let p = MultivariantPlaylist(
            variants: [VariantStream(bandwidth: 900_000, codecs: "avc1.64001f,mp4a.40.2", audioGroup: "main",
                                     uri: "index.m3u8")],
            media: [
                MediaRendition(type: .audio, groupID: "main", name: "Main", isDefault: true, autoselect: true),
                MediaRendition(type: .closedCaptions, groupID: "cc", name: "English CC", language: "en",
                               autoselect: true, instreamID: "CC1"),
            ],
            independentSegments: false)
        let text = p.render()
        #expect(text == """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="main",NAME="Main",DEFAULT=YES,AUTOSELECT=YES
            #EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="English CC",DEFAULT=NO,AUTOSELECT=YES,LANGUAGE="en",INSTREAM-ID="CC1"
            #EXT-X-STREAM-INF:BANDWIDTH=900000,CODECS="avc1.64001f,mp4a.40.2",AUDIO="main"
            index.m3u8

            """)
        #expect(try MultivariantPlaylist.parse(text) == p)
        #expect(p.validate() == [])
    }

    /// §8: no EXT-X-VERSION unless INSTREAM-ID needs one (7 for SERVICEn captions, 13 for other types).
    @Test func versionOnlyWhenRequired() {
        var p = Self.withAudio()
        #expect(!p.render().contains("EXT-X-VERSION"))
        p.media.append(MediaRendition(type: .closedCaptions, groupID: "cc", name: "708", instreamID: "SERVICE1"))
        #expect(p.requiredVersion == 7)
        #expect(p.render().hasPrefix("#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-INDEPENDENT-SEGMENTS\n"))
        p.media[0].instreamID = "1"
        #expect(p.requiredVersion == 13)
        #expect(p.render().hasPrefix("#EXTM3U\n#EXT-X-VERSION:13\n"))
    }

    /// The golden texts of the plain playlist are unchanged by the new (defaulted) fields.
    @Test func existingCallersRenderAsBefore() {
        let v = VariantStream(bandwidth: 130_000, codecs: "mp4a.40.2", uri: "a.m3u8")
        #expect(v.audioGroup == nil)
        #expect(MultivariantPlaylist(variants: [v]).render()
                == "#EXTM3U\n#EXT-X-INDEPENDENT-SEGMENTS\n#EXT-X-STREAM-INF:BANDWIDTH=130000,CODECS=\"mp4a.40.2\"\na.m3u8\n")
    }

    /// VIDEO-RANGE (RFC 8216bis §4.4.6.2): PQ and HLG are written and read back; SDR, the default, is not written.
    @Test func videoRangeRoundTrips() throws {
        var v = VariantStream(bandwidth: 2_000_000, codecs: "hvc1.2.4.L123.B0", uri: "v.m3u8")
        v.videoRange = .pq
        let text = MultivariantPlaylist(variants: [v]).render()
        #expect(text.contains(",VIDEO-RANGE=PQ\n"))
        #expect(try MultivariantPlaylist.parse(text).variants.first?.videoRange == .pq)
        v.videoRange = .sdr
        #expect(!MultivariantPlaylist(variants: [v]).render().contains("VIDEO-RANGE"))
        v.supplementalCodecs = "dvh1.08.06/db1p"
        let dv = MultivariantPlaylist(variants: [v]).render()
        #expect(dv.contains(",SUPPLEMENTAL-CODECS=\"dvh1.08.06/db1p\""))
        #expect(try MultivariantPlaylist.parse(dv).variants.first?.supplementalCodecs == "dvh1.08.06/db1p")
        #expect(throws: HLSError.self) {
            try MultivariantPlaylist.parse("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS=\"x\",VIDEO-RANGE=HDR\nv.m3u8\n")
        }
    }

    @Test func validateReportsEachRule() {
        var p = Self.withAudio()
        p.variants[1].audioGroup = "ac3"                               // no such group
        p.media.append(MediaRendition(type: .audio, groupID: "aac", name: "Deutsch", isDefault: true))  // dup name, 2nd default, no autoselect
        p.media.append(MediaRendition(type: .subtitles, groupID: "ac3", name: "x"))  // wrong TYPE for AUDIO=, no URI
        p.media.append(MediaRendition(type: .closedCaptions, groupID: "cc", name: "cc", uri: "cc.m3u8"))
        p.media.append(MediaRendition(type: .video, groupID: "v", name: "cam \"2\"", channels: "2"))
        let problems = p.validate()
        let expected = [
            "NAME=\"cam \"2\"\": NAME contains a double quote, CR or LF (§4.2)",
            "NAME=\"Deutsch\": NAME is not unique in its group (§4.4.6.1.1)",
            "NAME=\"Deutsch\": second DEFAULT=YES in group \"aac\" (§4.4.6.1.1)",
            "NAME=\"Deutsch\": DEFAULT=YES requires AUTOSELECT=YES (§4.4.6.1)",
            "NAME=\"x\": URI is required for SUBTITLES (§4.4.6.2.1)",
            "NAME=\"cc\": URI must be absent for CLOSED-CAPTIONS (§4.4.6.1)",
            "NAME=\"cc\": INSTREAM-ID is required for CLOSED-CAPTIONS (§4.4.6.1)",
            "NAME=\"cam \"2\"\": CHANNELS is allowed only for AUDIO (§4.4.6.1)",
            "EXT-X-STREAM-INF 360p/index.m3u8: AUDIO=\"ac3\" matches no EXT-X-MEDIA TYPE=AUDIO GROUP-ID (§4.4.6.2)",
        ]
        #expect(problems.count == expected.count, "\(problems)")
        for (problem, tail) in zip(problems, expected) { #expect(problem.hasSuffix(tail), "\(problem)") }
    }

    /// Same NAME in two different groups, and the same GROUP-ID under two TYPEs, are different groups.
    @Test func groupsAreTypeAndID() {
        let p = MultivariantPlaylist(
            variants: [VariantStream(bandwidth: 1, codecs: "mp4a.40.2", audioGroup: "a", uri: "v.m3u8")],
            media: [
                MediaRendition(type: .audio, groupID: "a", name: "English", isDefault: true, autoselect: true),
                MediaRendition(type: .audio, groupID: "b", name: "English", isDefault: true, autoselect: true),
                MediaRendition(type: .subtitles, groupID: "a", name: "English", isDefault: true, autoselect: true,
                               uri: "s.m3u8"),
            ])
        #expect(p.validate() == [])
    }

    @Test func renderParseRoundTrip() throws {
        var rng = SplitMix64(seed: 0xA0D10)
        let names = ["English", "Deutsch", "Español, LatAm", "Main = A", "日本語", "x"]
        for _ in 0..<500 {
            let groups = ["aac", "ac3", "g 1"]
            let media = (0..<Int.random(in: 0...6, using: &rng)).map { _ in
                MediaRendition(type: MediaRendition.MediaType.allCases.randomElement(using: &rng)!,
                               groupID: groups.randomElement(using: &rng)!, name: names.randomElement(using: &rng)!,
                               language: Bool.random(using: &rng) ? ["en", "de", "pt-BR"].randomElement(using: &rng) : nil,
                               isDefault: Bool.random(using: &rng), autoselect: Bool.random(using: &rng),
                               channels: Bool.random(using: &rng) ? ["2", "6", "16/JOC"].randomElement(using: &rng) : nil,
                               instreamID: Int.random(in: 0..<4, using: &rng) == 0 ? "SERVICE3" : nil,
                               uri: Bool.random(using: &rng) ? "r/\(Int.random(in: 0...9, using: &rng)).m3u8" : nil)
            }
            let variants = (0..<Int.random(in: 1...4, using: &rng)).map { i in
                VariantStream(bandwidth: Int.random(in: 1...10_000_000, using: &rng),
                              averageBandwidth: Bool.random(using: &rng) ? Int.random(in: 1...10_000_000, using: &rng) : nil,
                              codecs: "avc1.64001f,mp4a.40.2",
                              resolution: Bool.random(using: &rng) ? .init(width: 1280, height: 720) : nil,
                              frameRate: Bool.random(using: &rng) ? Double(Int.random(in: 1...120_000, using: &rng)) / 1000 : nil,
                              audioGroup: Bool.random(using: &rng) ? groups.randomElement(using: &rng) : nil,
                              uri: "v\(i)/index.m3u8")
            }
            let p = MultivariantPlaylist(variants: variants, media: media, independentSegments: Bool.random(using: &rng))
            let text = p.render()
            #expect(try MultivariantPlaylist.parse(text) == p, "\(text)")
            #expect(text.contains("#EXT-X-VERSION:") == (p.requiredVersion != nil))
        }
    }

    @Test func parseRejectsMalformedMedia() {
        let line2 = { (tag: String) in "#EXTM3U\n" + tag + "\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n" }
        #expect(throws: HLSError.invalidAttribute(line: 2, name: "TYPE")) {
            try MultivariantPlaylist.parse(line2("#EXT-X-MEDIA:TYPE=MUSIC,GROUP-ID=\"a\",NAME=\"n\""))
        }
        #expect(throws: HLSError.invalidAttribute(line: 2, name: "TYPE")) {
            try MultivariantPlaylist.parse(line2("#EXT-X-MEDIA:GROUP-ID=\"a\",NAME=\"n\""))
        }
        #expect(throws: HLSError.invalidAttribute(line: 2, name: "GROUP-ID")) {
            try MultivariantPlaylist.parse(line2("#EXT-X-MEDIA:TYPE=AUDIO,NAME=\"n\""))
        }
        #expect(throws: HLSError.invalidAttribute(line: 2, name: "NAME")) {
            try MultivariantPlaylist.parse(line2("#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\""))
        }
        #expect(throws: HLSError.invalidAttribute(line: 2, name: "DEFAULT")) {
            try MultivariantPlaylist.parse(line2("#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"n\",DEFAULT=yes"))
        }
        #expect(throws: HLSError.invalidAttribute(line: 2, name: "AUTOSELECT")) {
            try MultivariantPlaylist.parse(line2("#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"n\",AUTOSELECT=1"))
        }
        #expect(throws: HLSError.invalidAttribute(line: 2, name: "NAME")) {
            try MultivariantPlaylist.parse(line2("#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"unterminated"))
        }
        // Absent DEFAULT/AUTOSELECT read as NO.
        let parsed = try? MultivariantPlaylist.parse(line2("#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"n\""))
        #expect(parsed?.media == [MediaRendition(type: .audio, groupID: "a", name: "n")])
    }
}
