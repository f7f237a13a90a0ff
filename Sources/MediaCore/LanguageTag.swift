/// A track's language, from a container's tag to what each output writes (pure, no tables beyond the common ones):
///
/// - `bcp47`: the HLS `LANGUAGE` attribute (RFC 8216bis §4.4.6.1: "one of the standard tags for identifying
///   languages", RFC 5646 / BCP 47) and DASH `AdaptationSet@lang` (ISO/IEC 23009-1 §5.3.3.2, also RFC 5646). BCP 47
///   uses the shortest ISO 639 code (RFC 5646 §2.2.1), so `eng` → `en`, `fra`/`fre` → `fr`; a 3-letter code without a
///   2-letter one stays as it is (`yue`).
/// - `iso639T`: the `mdhd` language (ISO/IEC 14496-12 §8.4.2.3: "ISO-639-2/T language code"), `fre` → `fra`.
/// - `nativeName`: a readable `NAME` in the language itself ("Français"), for a player's menu.
///
/// `und` (undetermined), `mis`, `mul`, `zxx` and an empty or malformed tag are no language (`nil`).
public struct LanguageTag: Sendable, Hashable, CustomStringConvertible {
    /// The BCP 47 tag: a lowercase primary language subtag, optionally followed by subtags (`pt-BR`, `zh-Hant`).
    public let bcp47: String

    /// A tag as containers and users write it: ISO 639-2 (T or B: `fra`, `fre`), ISO 639-1 (`fr`) or a BCP 47 tag
    /// (`pt-BR`, `en_US` read as `en-US`). `nil` for undetermined or malformed tags.
    public init?(_ text: String) {
        let parts = text.split(omittingEmptySubsequences: false) { $0 == "-" || $0 == "_" }
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy(\.isASCIILetter) else { return nil }
        let primary = first.lowercased()
        guard !Self.noLanguage.contains(primary) else { return nil }
        var subtags: [String] = []
        for p in parts.dropFirst() {
            // RFC 5646 §2.1: subtags are 1-8 alphanumerics.
            guard (1...8).contains(p.count), p.allSatisfy({ $0.isASCIILetter || $0.isASCIIDigit }) else { return nil }
            // §2.1.1 conventions: a region in capitals (`BR`), a script in title case (`Hant`).
            subtags.append(p.count == 2 ? p.uppercased() : p.count == 4 ? p.prefix(1).uppercased() + p.dropFirst().lowercased()
                : p.lowercased())
        }
        let shortest = primary.count == 3 ? (Self.entry(primary)?.two ?? primary) : primary
        bcp47 = ([shortest] + subtags).joined(separator: "-")
    }

    /// Whether `text` reads as a language tag (`LanguageTag(text) != nil`), for an option's check.
    public static func isValid(_ text: String) -> Bool { LanguageTag(text) != nil }

    /// The primary language subtag (`pt` of `pt-BR`).
    public var primary: String { String(bcp47.prefix { $0 != "-" }) }

    /// ISO 639-2/T for `mdhd`: the table's 3-letter code of a 2-letter language, a 3-letter primary as it is (a
    /// bibliographic code turned terminological), `und` when the table does not know a 2-letter code.
    public var iso639T: String {
        let p = primary
        if p.count == 3 { return Self.bibliographic[p] ?? p }
        return Self.table.first { $0.two == p }?.t ?? "und"
    }

    /// The language's name in itself ("English", "Français", "Deutsch"), `nil` when the table does not know it.
    public var nativeName: String? { Self.table.first { $0.two == primary || $0.t == primary }?.name }

    /// Matches a user's choice (`fr`, `fra`, `fre`, `pt-BR`): the same tag, or the same primary language when `other`
    /// names none of the subtags.
    public func matches(_ other: LanguageTag) -> Bool {
        bcp47 == other.bcp47 || (!other.bcp47.contains("-") && primary == other.primary)
    }

    public var description: String { bcp47 }

    static let noLanguage: Set<String> = ["und", "mis", "mul", "zxx", "qaa"]

    /// ISO 639-2/B codes that differ from their /T code.
    static let bibliographic: [String: String] = [
        "fre": "fra", "ger": "deu", "dut": "nld", "chi": "zho", "cze": "ces", "gre": "ell", "per": "fas", "rum": "ron",
        "slo": "slk", "ice": "isl", "mac": "mkd", "may": "msa", "arm": "hye", "baq": "eus", "bur": "mya", "geo": "kat",
        "tib": "bod", "wel": "cym", "alb": "sqi",
    ]

    /// The common languages: ISO 639-2/T, ISO 639-1, and the name in the language itself.
    static let table: [(t: String, two: String, name: String)] = [
        ("eng", "en", "English"), ("fra", "fr", "Français"), ("deu", "de", "Deutsch"), ("spa", "es", "Español"),
        ("ita", "it", "Italiano"), ("por", "pt", "Português"), ("nld", "nl", "Nederlands"), ("swe", "sv", "Svenska"),
        ("dan", "da", "Dansk"), ("nor", "no", "Norsk"), ("nob", "nb", "Norsk bokmål"), ("fin", "fi", "Suomi"),
        ("isl", "is", "Íslenska"), ("pol", "pl", "Polski"), ("ces", "cs", "Čeština"), ("slk", "sk", "Slovenčina"),
        ("hun", "hu", "Magyar"), ("ron", "ro", "Română"), ("bul", "bg", "Български"), ("hrv", "hr", "Hrvatski"),
        ("srp", "sr", "Српски"), ("slv", "sl", "Slovenščina"), ("ell", "el", "Ελληνικά"), ("tur", "tr", "Türkçe"),
        ("rus", "ru", "Русский"), ("ukr", "uk", "Українська"), ("heb", "he", "עברית"), ("ara", "ar", "العربية"),
        ("fas", "fa", "فارسی"), ("hin", "hi", "हिन्दी"), ("ben", "bn", "বাংলা"), ("tam", "ta", "தமிழ்"),
        ("tha", "th", "ไทย"), ("vie", "vi", "Tiếng Việt"), ("ind", "id", "Bahasa Indonesia"), ("msa", "ms", "Bahasa Melayu"),
        ("zho", "zh", "中文"), ("jpn", "ja", "日本語"), ("kor", "ko", "한국어"), ("cat", "ca", "Català"),
        ("eus", "eu", "Euskara"), ("glg", "gl", "Galego"), ("cym", "cy", "Cymraeg"), ("gle", "ga", "Gaeilge"),
        ("lat", "la", "Latina"), ("est", "et", "Eesti"), ("lav", "lv", "Latviešu"), ("lit", "lt", "Lietuvių"),
    ]

    static func entry(_ three: String) -> (t: String, two: String, name: String)? {
        let t = bibliographic[three] ?? three
        return table.first { $0.t == t }
    }
}

private extension Character {
    var isASCIILetter: Bool { isASCII && isLetter }
    var isASCIIDigit: Bool { isASCII && isNumber }
}

/// One entry of `--audio-tracks`: an input audio track by its position among the input's audio tracks (`0` is the
/// first, as FFmpeg's `0:a:0`), or every track in a language (`fr`, `fra`, `fre`).
public enum AudioTrackSelector: Sendable, Hashable, CustomStringConvertible {
    case index(Int)
    case language(LanguageTag)

    /// `0,2` or `fr,en` (mixed too); `nil` when an entry is neither a position nor a language tag, or none is given.
    public static func parseList(_ text: String) -> [AudioTrackSelector]? {
        let entries = text.split(separator: ",").map { $0.trimmingSpaces }
        guard !entries.isEmpty else { return nil }
        var out: [AudioTrackSelector] = []
        for e in entries {
            if let i = Int(e), i >= 0, i < 1000 {
                out.append(.index(i))
            } else if let tag = LanguageTag(e) {
                out.append(.language(tag))
            } else {
                return nil
            }
        }
        return out
    }

    public var description: String {
        switch self {
        case .index(let i): String(i)
        case .language(let l): l.bcp47
        }
    }
}

private extension Substring {
    var trimmingSpaces: String { String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
}
