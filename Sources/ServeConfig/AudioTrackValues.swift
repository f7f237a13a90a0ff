public import MediaCore

/// `--audio-tracks` / `audio_tracks`: which input audio tracks become renditions, in order, by position among the
/// input's audio tracks (`0,2`) or by language (`fr,en`).
public struct AudioTrackList: OptionValue, Hashable {
    public let selectors: [AudioTrackSelector]

    public init(parsing s: String) throws(OptionError) {
        guard let list = AudioTrackSelector.parseList(s) else {
            throw OptionError(" takes audio track positions or languages, comma-separated: 0,2 or fr,en (got '\(s)')")
        }
        selectors = list
    }

    /// "0,2", "fr,en".
    public var description: String { selectors.map(\.description).joined(separator: ",") }
}

extension StreamOptions {
    /// The rules of the audio track options (`validate(naming:)` calls it): `--audio-name` and `--audio-language`
    /// keyed by an audio track position, a name without a double quote or line break (it is a quoted `NAME`,
    /// RFC 8216bis §4.2), languages that read as language tags (BCP 47 or ISO 639).
    func validateAudioTracks(naming: OptionNaming) throws(ConfigError) {
        func position(_ key: String, _ option: CodingKeys) throws(ConfigError) {
            guard let i = Int(key), i >= 0 else {
                throw naming.error("\(naming.name(option)): '\(key)' is no audio track position (0 is the input's first audio track)", key: option)
            }
        }
        for (key, name) in (audioName ?? [:]).sorted(by: { $0.key < $1.key }) {
            try position(key, .audioName)
            if name.isEmpty || name.contains(where: { $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
                throw naming.error("\(naming.name(.audioName)) \(key): a name is not empty and has no double quote or line break", key: .audioName)
            }
        }
        for (key, tag) in (audioLanguage ?? [:]).sorted(by: { $0.key < $1.key }) {
            try position(key, .audioLanguage)
            guard LanguageTag.isValid(tag) else {
                throw naming.error("\(naming.name(.audioLanguage)) \(key): '\(tag)' is not a language tag (BCP 47 such as fr, pt-BR, or ISO 639-2 such as fra)", key: .audioLanguage)
            }
        }
        if let defaultAudio, !LanguageTag.isValid(defaultAudio) {
            throw naming.error("\(naming.name(.defaultAudio)): '\(defaultAudio)' is not a language tag (BCP 47 such as fr, or ISO 639-2 such as fra)", key: .defaultAudio)
        }
    }
}
