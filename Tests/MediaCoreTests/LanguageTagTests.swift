import MediaCore
import Testing

@Suite struct LanguageTagTests {
    @Test func containerTagsBecomeTheShortestBCP47Code() {
        // RFC 5646 §2.2.1: the 2-letter ISO 639-1 code where there is one; ISO 639-2 /T and /B alike.
        let cases: [(String, String?)] = [
            ("eng", "en"), ("fra", "fr"), ("fre", "fr"), ("ger", "de"), ("deu", "de"), ("spa", "es"), ("jpn", "ja"),
            ("chi", "zh"), ("en", "en"), ("FR", "fr"), ("pt-br", "pt-BR"), ("en_US", "en-US"), ("zh-hant", "zh-Hant"),
            ("yue", "yue"), ("und", nil), ("zxx", nil), ("mul", nil), ("", nil), ("e", nil), ("english", nil),
            ("en-", nil), ("fr!", nil), ("not a tag", nil),
        ]
        for (tag, expected) in cases { #expect(LanguageTag(tag)?.bcp47 == expected, "\(tag)") }
    }

    @Test func mdhdGetsTheTerminologicalCode() {
        // ISO/IEC 14496-12 §8.4.2.3: ISO-639-2/T.
        #expect(LanguageTag("fre")?.iso639T == "fra")
        #expect(LanguageTag("fr")?.iso639T == "fra")
        #expect(LanguageTag("ger")?.iso639T == "deu")
        #expect(LanguageTag("en-GB")?.iso639T == "eng")
        #expect(LanguageTag("yue")?.iso639T == "yue")
        #expect(LanguageTag("xx")?.iso639T == "und")     // a 2-letter code the table does not know
    }

    @Test func namesAreInTheLanguageItself() {
        #expect(LanguageTag("eng")?.nativeName == "English")
        #expect(LanguageTag("fre")?.nativeName == "Français")
        #expect(LanguageTag("de")?.nativeName == "Deutsch")
        #expect(LanguageTag("pt-BR")?.nativeName == "Português")
        #expect(LanguageTag("yue")?.nativeName == nil)
    }

    @Test func aChoiceMatchesByPrimaryLanguage() throws {
        let ptBR = try #require(LanguageTag("pt-BR"))
        #expect(ptBR.matches(try #require(LanguageTag("por"))))
        #expect(ptBR.matches(try #require(LanguageTag("pt-BR"))))
        #expect(!ptBR.matches(try #require(LanguageTag("pt-PT"))))
        #expect(!(try #require(LanguageTag("fr"))).matches(try #require(LanguageTag("en"))))
    }

    @Test func audioTrackListsReadPositionsAndLanguages() {
        #expect(AudioTrackSelector.parseList("0,2") == [.index(0), .index(2)])
        #expect(AudioTrackSelector.parseList("fr, en") == [.language(LanguageTag("fr")!), .language(LanguageTag("en")!)])
        #expect(AudioTrackSelector.parseList("1,fre")?.map(\.description) == ["1", "fr"])
        #expect(AudioTrackSelector.parseList("") == nil)
        #expect(AudioTrackSelector.parseList("-1") == nil)
        #expect(AudioTrackSelector.parseList("fr,???") == nil)
    }
}
