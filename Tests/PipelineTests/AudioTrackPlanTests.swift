import MediaCore
import MediaPresentation
import Producer
import Testing
@testable import Pipeline

@Suite struct AudioTrackPlanTests {
    static let enFr = [AudioTrackFacts(streamIndex: 1, language: "eng"), AudioTrackFacts(streamIndex: 2, language: "fre")]

    @Test func everyTrackIsARenditionNamedByItsLanguage() throws {
        let (tracks, notices) = try AudioTrackPlan.make(Self.enFr, options: AudioTrackOptions(), muxed: false)
        #expect(notices.isEmpty)
        #expect(tracks.map(\.rendition) == [
            AudioRendition(name: "audio", language: "en", label: AudioLabel(name: "English", isDefault: true, role: .main)),
            AudioRendition(name: "audio-fr", language: "fr",
                           label: AudioLabel(name: "Français", isDefault: false, role: .alternate)),
        ])
        #expect(tracks.map(\.streamIndex) == [1, 2] && tracks.map(\.iso639T) == ["eng", "fra"])
    }

    @Test func muxedKeepsTheDefaultInsideAndNamesTheOthers() throws {
        var o = AudioTrackOptions()
        o.defaultLanguage = LanguageTag("fr")
        let (tracks, _) = try AudioTrackPlan.make(Self.enFr, options: o, muxed: true)
        #expect(tracks.map(\.rendition.name) == ["audio-en", "audio-fr"])
        #expect(tracks.map(\.isDefault) == [false, true])
        #expect(tracks.map { $0.rendition.label?.role } == [.alternate, .main])
    }

    @Test func selectionOrdersRenamesAndRelabels() throws {
        var o = AudioTrackOptions()
        o.tracks = AudioTrackSelector.parseList("fr,0")
        o.names[0] = "English (original)"
        o.languages[1] = LanguageTag("fr-CA")
        let (tracks, _) = try AudioTrackPlan.make(Self.enFr, options: o, muxed: false)
        #expect(tracks.map(\.streamIndex) == [2, 1])
        #expect(tracks.map { $0.rendition.label?.name } == ["Français", "English (original)"])
        #expect(tracks.map(\.rendition.language) == ["fr-CA", "en"])
        #expect(tracks.map(\.rendition.name) == ["audio", "audio-en"])
        #expect(tracks[0].isDefault)
    }

    @Test func unknownEntriesAreOneLine() {
        var o = AudioTrackOptions()
        o.tracks = AudioTrackSelector.parseList("de")
        #expect(throws: PipelineError.invalidOption("--audio-tracks: the input has no audio track de (it has 0 en, 1 fr)")) {
            try AudioTrackPlan.make(Self.enFr, options: o, muxed: false)
        }
        o.tracks = [.index(2)]
        #expect(throws: PipelineError.self) { try AudioTrackPlan.make(Self.enFr, options: o, muxed: false) }
        var d = AudioTrackOptions()
        d.defaultLanguage = LanguageTag("de")
        let notices = (try? AudioTrackPlan.make(Self.enFr, options: d, muxed: false))?.notices ?? []
        #expect(notices.count == 1)
    }

    @Test func untaggedTracksFallBackAndDispositionsGiveRoles() throws {
        let tracks = [AudioTrackFacts(streamIndex: 0, language: nil),
                      AudioTrackFacts(streamIndex: 1, language: "eng", isCommentary: true),
                      AudioTrackFacts(streamIndex: 2, language: "qtz"),
                      AudioTrackFacts(streamIndex: 3, language: "eng", describesVideo: true)]
        let (planned, _) = try AudioTrackPlan.make(tracks, options: AudioTrackOptions(), muxed: false)
        #expect(planned.map { $0.rendition.label?.name } == ["Audio 1", "English", "qtz", "English 4"])
        #expect(planned.map(\.rendition.name) == ["audio", "audio-en", "audio-qtz", "audio-en-4"])
        #expect(planned.map { $0.rendition.label?.role } == [.main, .commentary, .alternate, .description])
        #expect(planned.map(\.iso639T) == ["und", "eng", "qtz", "eng"])
    }

    @Test func oneUntaggedTrackIsSignalledAsBefore() throws {
        let (planned, _) = try AudioTrackPlan.make([AudioTrackFacts(streamIndex: 1, language: nil)], options: AudioTrackOptions(),
                                                   muxed: false)
        #expect(planned.map(\.rendition) == [AudioRendition(name: "audio")])
    }

    @Test func ladderPlanSharesOneGroup() throws {
        let (tracks, _) = try AudioTrackPlan.make(Self.enFr, options: AudioTrackOptions(), muxed: false)
        let rung = LadderRung(name: "720p", width: 1280, height: 720, bitRate: 2_800_000, maxBitRate: nil, bufferSize: nil,
                              isSource: false)
        let plan = Ladder.renditions([rung], frameRate: Rational(30, 1), audio: tracks, audioBitRate: 128_000)
        #expect(plan.renditions.map(\.name) == ["720p", "audio", "audio-fr"])
        #expect(plan.renditions.map(\.audioGroup) == ["audio", "audio", "audio"])
        #expect(plan.groups == [[0], [1], [2]])
        #expect(plan.renditions[2].declaredBitRate == 128_000 && plan.renditions[2].language == "fr")
    }

    @Test func muxedPlanPutsTheAlternatesAfterTheMuxedTracks() {
        let main = AudioRendition(name: "audio-en", language: "en", label: AudioLabel(name: "English", isDefault: true, role: .main))
        let fr = AudioRendition(name: "audio-fr", language: "fr", label: AudioLabel(name: "Français", isDefault: false, role: .alternate))
        let plan = RenditionPlan.muxed(trackCount: 2, main: main, alternates: [fr])
        #expect(plan.renditions.map(\.name) == ["stream", "audio-fr"])
        #expect(plan.groups == [[0, 1], [2]])
        #expect(plan.renditions[0].audioGroup == "audio" && plan.renditions[0].audioLabel?.name == "English")
        #expect(RenditionPlan.muxed(trackCount: 2, main: main, alternates: []) == .muxed(trackCount: 2))
    }
}
