import Testing
@testable import HLS

/// `SUBTITLES` on `EXT-X-STREAM-INF` and `EXT-X-MEDIA:TYPE=SUBTITLES` (RFC 8216bis §4.4.6.1, §4.4.6.1.1, §4.4.6.2,
/// §4.4.6.2.1): rendered, parsed back, and every checker rule shown failing.
@Suite struct SubtitleTagTests {
    static func en(group: String = "subs") -> MediaRendition {
        MediaRendition(type: .subtitles, groupID: group, name: "English", language: "en", autoselect: true, uri: "subs-en.m3u8")
    }

    /// The two variants of `ClosedCaptionTagTests.playlist` (720p, 360p), naming subtitle groups `a` and `b`.
    static func playlist(_ a: String?, _ b: String?, media: [MediaRendition]) -> MultivariantPlaylist {
        var p = ClosedCaptionTagTests.playlist(nil, nil, media: media)
        p.variants[0].subtitlesGroup = a
        p.variants[1].subtitlesGroup = b
        return p
    }

    @Test func rendersAndParses() throws {
        var forced = Self.en()
        forced.name = "English (forced)"
        forced.forced = true
        forced.uri = "subs-en-2.m3u8"
        let p = Self.playlist("subs", "subs", media: [Self.en(), forced])
        let text = p.render()
        #expect(text.contains("#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"subs\",NAME=\"English\",DEFAULT=NO,AUTOSELECT=YES,LANGUAGE=\"en\",URI=\"subs-en.m3u8\"\n"))
        #expect(text.contains("NAME=\"English (forced)\",DEFAULT=NO,AUTOSELECT=YES,FORCED=YES,LANGUAGE=\"en\",URI=\"subs-en-2.m3u8\"\n"))
        #expect(text.contains("#EXT-X-STREAM-INF:BANDWIDTH=1000000,CODECS=\"avc1.64001f\",SUBTITLES=\"subs\"\n720p.m3u8\n"))
        #expect(try MultivariantPlaylist.parse(text) == p)
        #expect(p.validate().isEmpty)
    }

    @Test func subtitlesMustNameASubtitleGroup() {
        // §4.4.6.2 SUBTITLES: "It MUST match the value of the GROUP-ID attribute of an EXT-X-MEDIA tag elsewhere in the
        // Multivariant Playlist whose TYPE attribute is SUBTITLES."
        #expect(Self.playlist("subs", "subs", media: [Self.en()]).validate().isEmpty)
        #expect(Self.playlist("subs", "other", media: [Self.en()]).validate()
                == ["EXT-X-STREAM-INF 360p.m3u8: SUBTITLES=\"other\" matches no EXT-X-MEDIA TYPE=SUBTITLES GROUP-ID (§4.4.6.2)"])
        // A group of another TYPE does not count.
        var audio = Self.en()
        audio.type = .audio
        audio.uri = nil
        #expect(Self.playlist("subs", nil, media: [audio]).validate().count == 1)
    }

    @Test func uriIsRequired() {
        // §4.4.6.2.1: "The URI attribute of the EXT-X-MEDIA tag is REQUIRED if the media type is SUBTITLES".
        var m = Self.en()
        m.uri = nil
        #expect(Self.playlist("subs", "subs", media: [m]).validate()
                == ["EXT-X-MEDIA TYPE=SUBTITLES GROUP-ID=\"subs\" NAME=\"English\": URI is required for SUBTITLES (§4.4.6.2.1)"])
    }

    @Test func forcedOnlyForSubtitles() {
        // §4.4.6.1 FORCED: "The FORCED attribute MUST NOT be present unless the TYPE is SUBTITLES."
        var audio = MediaRendition(type: .audio, groupID: "audio", name: "English", autoselect: true, uri: "audio.m3u8")
        audio.forced = true
        #expect(MultivariantPlaylist(variants: [], media: [audio]).validate()
                == ["EXT-X-MEDIA TYPE=AUDIO GROUP-ID=\"audio\" NAME=\"English\": FORCED is allowed only for SUBTITLES (§4.4.6.1)"])
    }

    @Test func groupRulesApply() {
        // §4.4.6.1.1: "All EXT-X-MEDIA tags in the same Group MUST have different NAME attributes." and "A Group MUST NOT
        // have more than one member with a DEFAULT attribute of YES."
        var second = Self.en()
        second.uri = "subs-en-2.m3u8"
        #expect(Self.playlist("subs", "subs", media: [Self.en(), second]).validate().count == 1)
        var d1 = Self.en(), d2 = Self.en()
        d1.isDefault = true
        d2.isDefault = true
        d2.name = "English 2"
        #expect(Self.playlist("subs", "subs", media: [d1, d2]).validate()
                == ["EXT-X-MEDIA TYPE=SUBTITLES GROUP-ID=\"subs\" NAME=\"English 2\": second DEFAULT=YES in group \"subs\" (§4.4.6.1.1)"])
        // §4.4.6.1.1: groups of the same TYPE "MUST have the same set of members, and each corresponding member MUST have
        // identical attributes with the exception of the URI and CHANNELS attributes."
        var fr = Self.en(group: "subs2")
        fr.language = "fr"
        let two = Self.playlist("subs", "subs2", media: [Self.en(), fr]).validate()
        #expect(two == ["EXT-X-MEDIA TYPE=SUBTITLES GROUP-ID=\"subs2\": not the same members as group \"subs\" (§4.4.6.1.1)"])
        var same = Self.en(group: "subs2")
        same.uri = "other.m3u8"
        #expect(Self.playlist("subs", "subs2", media: [Self.en(), same]).validate().isEmpty)
    }
}
