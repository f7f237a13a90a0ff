import DASH
import HLS
import MediaCore
import Testing
import TestSupport
@testable import MediaPresentation

/// Several audio languages (issue 21 §1): the multivariant's `EXT-X-MEDIA:TYPE=AUDIO` group and the MPD's audio sets.
@Suite struct AudioLanguageTests {
    static let policy = TimingPolicy(targetDuration: 1)
    static let english = AudioLabel(name: "English", isDefault: true, role: .main)
    static let french = AudioLabel(name: "Français", isDefault: false, role: .alternate)

    /// `renditions` fed two 1-second segments each, with `tracks[r]` as rendition r's init.
    static func fed(_ renditions: [Rendition], _ tracks: [[TrackFormat]], bytes: [Int]) throws -> Presentation<Int> {
        let p = Presentation<Int>(windowSize: 6) { b, _ in b.count }
        try p.consume(.layout(renditions, policy))
        for r in renditions.indices { try p.consume(.initSegment(rendition: r, bytes: [UInt8(r)], tracks: tracks[r])) }
        for n in 0..<UInt64(2) {
            for r in renditions.indices {
                try p.consume(.segment(rendition: r, Fixture.info(n, bytes: bytes[r]), bytes: [UInt8](repeating: 0, count: bytes[r])))
            }
        }
        return p
    }

    static var frenchTrack: TrackFormat {
        var t = Fixture.audio
        t.trackID = 3
        t.language = "fra"
        return t
    }

    static func ladder() throws -> Presentation<Int> {
        let audio = [AudioRendition(name: "audio", language: "en", label: english, bitRate: 128_000),
                     AudioRendition(name: "audio-fr", language: "fr", label: french, bitRate: 128_000)]
        let plan = RenditionPlanShape.ladder(audio)
        return try fed(plan, [[Fixture.video], [Fixture.audio], [frenchTrack]], bytes: [300_000, 16_000, 20_000])
    }

    static func muxed() throws -> Presentation<Int> {
        var stream = Rendition.muxed()
        stream.audioGroup = "audio"
        stream.language = "en"
        stream.audioLabel = english
        let fr = Rendition(name: "audio-fr", kind: .audio, scheme: .nested("audio-fr"), audioGroup: "audio", language: "fr",
                           audioLabel: french)
        return try fed([stream, fr], [Fixture.tracks, [frenchTrack]], bytes: [316_000, 20_000])
    }

    @Test func ladderListsEveryLanguageInOneGroup() throws {
        let layout = try #require(try Self.ladder().layout)
        let mv = try #require(PlaylistBuilder.multivariant(layout.renditions, layout.snapshots()))
        let text = mv.render()
        #expect(text.contains("""
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="English",DEFAULT=YES,AUTOSELECT=YES,LANGUAGE="en",CHANNELS="2",URI="audio.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="Français",DEFAULT=NO,AUTOSELECT=YES,LANGUAGE="fr",CHANNELS="2",URI="audio-fr.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=2560000,AVERAGE-BANDWIDTH=2560000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=30.000,AUDIO="audio"
            """), "\(text)")
        #expect(mv.validate().isEmpty)
        #expect(try MultivariantPlaylist.parse(text) == mv)
    }

    @Test func muxedVariantCarriesTheDefaultAndOffersTheOthers() throws {
        let layout = try #require(try Self.muxed().layout)
        let mv = try #require(PlaylistBuilder.multivariant(layout.renditions, layout.snapshots()))
        // RFC 8216bis §4.4.6.1: no URI: the English audio is in the variant's own playlist.
        #expect(mv.media == [
            MediaRendition(type: .audio, groupID: "audio", name: "English", language: "en", isDefault: true, autoselect: true,
                           channels: "2"),
            MediaRendition(type: .audio, groupID: "audio", name: "Français", language: "fr", isDefault: false,
                           autoselect: true, channels: "2", uri: "audio-fr.m3u8"),
        ])
        #expect(mv.variants.count == 1)
        let v = mv.variants[0]
        #expect(v.uri == "stream.m3u8" && v.audioGroup == "audio")
        #expect(v.codecs == "avc1.64001f,mp4a.40.2")           // the group's AAC once
        #expect(v.bandwidth == (316_000 + 20_000) * 8)          // the muxed stream plus the French alongside
        #expect(mv.validate().isEmpty)
    }

    @Test func aGroupOfAnotherCodecIsAddedToCodecs() throws {
        var fr = Self.frenchTrack
        fr.codec = .opus(OpusConfig(outputChannelCount: 2, preSkip: 312, inputSampleRate: 48_000))
        var stream = Rendition.muxed()
        stream.audioGroup = "audio"
        stream.audioLabel = Self.english
        let alt = Rendition(name: "audio-fr", kind: .audio, scheme: .nested("audio-fr"), audioGroup: "audio", language: "fr",
                            audioLabel: Self.french)
        let p = try Self.fed([stream, alt], [Fixture.tracks, [fr]], bytes: [1000, 1000])
        let layout = try #require(p.layout)
        let mv = try #require(PlaylistBuilder.multivariant(layout.renditions, layout.snapshots()))
        #expect(mv.variants[0].codecs == "avc1.64001f,mp4a.40.2,opus")
    }

    @Test func unlabelledRenditionsKeepTheirOldSignalling() throws {
        let r = Rendition(name: "audio", kind: .audio, scheme: .nested("audio"), audioGroup: "audio")
        let v = Rendition(name: "720p", kind: .video, scheme: .nested("720p"), audioGroup: "audio")
        let p = try Self.fed([v, r], [[Fixture.video], [Fixture.audio]], bytes: [1000, 100])
        let layout = try #require(p.layout)
        let mv = try #require(PlaylistBuilder.multivariant(layout.renditions, layout.snapshots()))
        #expect(mv.media.map(\.name) == ["audio"] && mv.media[0].isDefault && mv.media[0].language == nil)
        let mpd = try #require(ManifestBuilder.onDemand(layout.renditions, layout.snapshots()))
        #expect(mpd.render().contains(#"<Role schemeIdUri="urn:mpeg:dash:role:2011" value="main"/>"#))
    }

    @Test func dashHasAnAudioSetPerLanguageWithLangAndRole() throws {
        let layout = try #require(try Self.ladder().layout)
        let mpd = try #require(ManifestBuilder.onDemand(layout.renditions, layout.snapshots()))
        let audio = mpd.periods[0].adaptationSets.filter { $0.contentType == .audio }
        #expect(audio.map(\.language) == ["en", "fr"])
        #expect(audio.map(\.role) == ["main", "alternate"])
        #expect(audio.map { $0.representations.map(\.id) } == [["audio"], ["audio-fr"]])
        #expect(Set(mpd.periods[0].adaptationSets.map(\.id)).count == 3)
        let xml = mpd.render()
        #expect(xml.contains(#"lang="fr""#) && xml.contains(#"value="alternate""#))
    }

    @Test func audioDescriptionHasItsCharacteristics() throws {
        var label = Self.french
        label.role = .description
        let v = Rendition(name: "720p", kind: .video, scheme: .nested("720p"), audioGroup: "audio")
        let a = Rendition(name: "audio", kind: .audio, scheme: .nested("audio"), audioGroup: "audio", language: "en",
                          audioLabel: Self.english)
        let d = Rendition(name: "audio-en-2", kind: .audio, scheme: .nested("audio-en-2"), audioGroup: "audio", language: "en",
                          audioLabel: label)
        let p = try Self.fed([v, a, d], [[Fixture.video], [Fixture.audio], [Self.frenchTrack]], bytes: [1000, 100, 100])
        let layout = try #require(p.layout)
        let mv = try #require(PlaylistBuilder.multivariant(layout.renditions, layout.snapshots()))
        #expect(mv.media.map(\.characteristics) == [nil, "public.accessibility.describes-video"])
        #expect(mv.render().contains(#",CHARACTERISTICS="public.accessibility.describes-video",URI="audio-en-2.m3u8""#))
        #expect(try MultivariantPlaylist.parse(mv.render()) == mv)
    }

    @Test func commentaryIsItsOwnRole() throws {
        var label = Self.french
        label.role = .commentary
        let v = Rendition(name: "720p", kind: .video, scheme: .nested("720p"), audioGroup: "audio")
        let a = Rendition(name: "audio", kind: .audio, scheme: .nested("audio"), audioGroup: "audio", language: "en",
                          audioLabel: Self.english)
        let c = Rendition(name: "audio-en-2", kind: .audio, scheme: .nested("audio-en-2"), audioGroup: "audio", language: "en",
                          audioLabel: label)
        let p = try Self.fed([v, a, c], [[Fixture.video], [Fixture.audio], [Self.frenchTrack]], bytes: [1000, 100, 100])
        let layout = try #require(p.layout)
        let mpd = try #require(ManifestBuilder.onDemand(layout.renditions, layout.snapshots()))
        #expect(mpd.periods[0].adaptationSets.compactMap(\.role) == ["main", "commentary"])
    }
}

/// The ladder's renditions as `RenditionPlan.ladder` lays them out (one 720p rung), without the Producer module.
enum RenditionPlanShape {
    static func ladder(_ audio: [AudioRendition]) -> [Rendition] {
        [Rendition(name: "720p", kind: .video, scheme: .nested("720p"), audioGroup: "audio", declaredBitRate: 2_800_000,
                   declaredFrameRate: 30)]
            + audio.map { $0.rendition(group: "audio") }
    }
}
