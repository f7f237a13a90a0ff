import Testing
@testable import HLS

/// `CLOSED-CAPTIONS` on `EXT-X-STREAM-INF` and `EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS` (RFC 8216bis §4.4.6.1, §4.4.6.2).
@Suite struct ClosedCaptionTagTests {
    static func playlist(_ a: ClosedCaptionsReference?, _ b: ClosedCaptionsReference?, media: [MediaRendition]) -> MultivariantPlaylist {
        var v1 = VariantStream(bandwidth: 1_000_000, codecs: "avc1.64001f", uri: "720p.m3u8")
        var v2 = VariantStream(bandwidth: 500_000, codecs: "avc1.64001e", uri: "360p.m3u8")
        v1.closedCaptions = a
        v2.closedCaptions = b
        return MultivariantPlaylist(variants: [v1, v2], media: media)
    }

    static let cc1 = MediaRendition(type: .closedCaptions, groupID: "cc", name: "English", language: "en",
                                    autoselect: true, instreamID: "CC1")

    @Test func rendersAndParsesBothForms() throws {
        let p = Self.playlist(.group("cc"), .group("cc"), media: [Self.cc1])
        let text = p.render()
        #expect(text.contains("#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID=\"cc\",NAME=\"English\",DEFAULT=NO,AUTOSELECT=YES,LANGUAGE=\"en\",INSTREAM-ID=\"CC1\"\n"))
        #expect(text.contains(",CLOSED-CAPTIONS=\"cc\"\n720p.m3u8"))
        #expect(try MultivariantPlaylist.parse(text) == p)
        #expect(p.validate().isEmpty)
        let none = Self.playlist(ClosedCaptionsReference.none, ClosedCaptionsReference.none, media: [])
        #expect(none.render().contains(",CLOSED-CAPTIONS=NONE\n360p.m3u8"))
        #expect(try MultivariantPlaylist.parse(none.render()) == none)
        #expect(none.validate().isEmpty)
        // A group that happens to be named NONE is a quoted-string, not the enumerated value.
        let named = Self.playlist(.group("NONE"), .group("NONE"), media: [])
        #expect(try MultivariantPlaylist.parse(named.render()).variants[0].closedCaptions == .group("NONE"))
    }

    @Test func checkerEnforcesTheRules() {
        // §4.4.6.2: the quoted-string must match a GROUP-ID of a TYPE=CLOSED-CAPTIONS rendition.
        #expect(Self.playlist(.group("cc"), nil, media: []).validate().count == 1)
        // §4.4.6.2: NONE on one variant means NONE on all.
        let mixed = Self.playlist(ClosedCaptionsReference.none, .group("cc"), media: [Self.cc1]).validate()
        #expect(mixed == ["EXT-X-STREAM-INF 360p.m3u8: CLOSED-CAPTIONS must be NONE on every variant once one says NONE (§4.4.6.2)"])
        // §4.4.6.1: INSTREAM-ID required, URI forbidden.
        var bad = Self.cc1
        bad.instreamID = nil
        bad.uri = "cc.m3u8"
        #expect(Self.playlist(.group("cc"), .group("cc"), media: [bad]).validate().count == 2)
    }
}
