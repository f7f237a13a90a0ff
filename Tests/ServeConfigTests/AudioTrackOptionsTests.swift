import MediaCore
import ServeConfig
import Testing

@Suite struct AudioTrackOptionsTests {
    @Test func flagsReadTheAudioTrackOptions() throws {
        let o = try ServeFlags.options(["--audio-tracks", "fr,0", "--audio-name", "0=English (original)", "--audio-name",
                                        "1=VF", "--audio-language", "1=fre", "--default-audio", "fr"])
        #expect(o.audioTracks?.selectors == [.language(LanguageTag("fr")!), .index(0)])
        #expect(o.audioName == ["0": "English (original)", "1": "VF"])
        #expect(o.audioLanguage == ["1": "fre"])
        #expect(o.defaultAudio == "fr")
    }

    @Test func badValuesAreOneLineNamingTheFlag() {
        let cases: [([String], String)] = [
            (["--audio-tracks", "fr,??"], "--audio-tracks takes audio track positions or languages, comma-separated: 0,2 or fr,en (got 'fr,??')"),
            (["--audio-name", "x=English"], "--audio-name: 'x' is no audio track position (0 is the input's first audio track)"),
            (["--audio-name", "English"], "--audio-name takes KEY=VALUE (got 'English')"),
            (["--audio-name", "1=Say \"hi\""], "--audio-name 1: a name is not empty and has no double quote or line break"),
            (["--audio-language", "1=not a tag"], "--audio-language 1: 'not a tag' is not a language tag (BCP 47 such as fr, pt-BR, or ISO 639-2 such as fra)"),
            (["--default-audio", "french"], "--default-audio: 'french' is not a language tag (BCP 47 such as fr, or ISO 639-2 such as fra)"),
        ]
        for (arguments, message) in cases { #expect(ServeFlags.refusal(arguments) == message, "\(arguments)") }
    }

    @Test func aStreamOverridesTheFlagsKeyByKey() {
        var flags = StreamOptions()
        flags.audioName = ["0": "English", "1": "Français"]
        flags.defaultAudio = "en"
        var stream = StreamOptions()
        stream.audioName = ["1": "VF"]
        let merged = stream.merged(over: flags)
        #expect(merged.audioName == ["0": "English", "1": "VF"])
        #expect(merged.defaultAudio == "en")
    }
}
