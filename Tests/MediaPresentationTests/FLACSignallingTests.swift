import DASH
import HLS
import MediaCore
import Testing
import TestSupport
@testable import MediaPresentation

/// FLAC audio (issue 24 §1) as the playlists and the manifest say it: `fLaC` in HLS `CODECS` (the sample entry's
/// code), `flac` in DASH `@codecs` (what MSE and DASH players match), `CHANNELS` on the audio rendition.
@Suite struct FLACSignallingTests {
    static var flacTrack: TrackFormat {
        var streamInfo: [UInt8] = [0x12, 0x00, 0x12, 0x00, 0x00, 0x00, 0xCB, 0x00, 0x05, 0x1D, 0x0B, 0xB8, 0x0A, 0xF0]
        streamInfo += [UInt8](repeating: 0, count: 20)   // 48 kHz, 6 channels ((0x0A >> 1) + 1), 16 bits
        var t = Fixture.audio
        t.codec = .flac(FLACConfig(streamInfo: streamInfo))
        t.channelCount = 6
        return t
    }

    @Test func ladderSaysFLaCInHLSAndFlacInDASH() throws {
        let audio = [AudioRendition(name: "audio", language: "en", label: AudioLanguageTests.english, bitRate: 900_000)]
        let p = try AudioLanguageTests.fed(RenditionPlanShape.ladder(audio), [[Fixture.video], [Self.flacTrack]],
                                           bytes: [300_000, 100_000])
        let layout = try #require(p.layout)
        let mv = try #require(PlaylistBuilder.multivariant(layout.renditions, layout.snapshots()))
        #expect(mv.variants.map(\.codecs) == ["avc1.64001f,fLaC"])
        #expect(mv.media.map(\.channels) == ["6"])
        let mpd = try #require(ManifestBuilder.onDemand(layout.renditions, layout.snapshots()))
        let sets = mpd.periods[0].adaptationSets.filter { $0.contentType == .audio }
        #expect(sets.flatMap { $0.representations.map(\.codecs) } == ["flac"])
        #expect(sets.first?.representations.first?.audioChannelConfiguration == .mpeg(channelCount: 6))
    }
}
