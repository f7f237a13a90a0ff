import FFmpegBridge
import MediaCore
import MediaPresentation
import Producer

/// Which of the input's audio tracks become renditions, and how each is labelled (`--audio-tracks`, `--audio-name`,
/// `--audio-language`, `--default-audio`). Positions count the input's audio tracks only: `0` is the first (FFmpeg's
/// `0:a:0`).
public struct AudioTrackOptions: Sendable, Equatable {
    /// Selected tracks in order (by position or language); `nil`: every audio track, in input order.
    public var tracks: [AudioTrackSelector]?
    /// A track's `NAME` instead of its language's name, by position.
    public var names: [Int: String] = [:]
    /// A track's language instead of the container's tag, by position.
    public var languages: [Int: LanguageTag] = [:]
    /// The default track (`DEFAULT=YES`, DASH `Role` main): the first selected in this language; `nil`: the first.
    public var defaultLanguage: LanguageTag?

    public init() {}
}

/// One input audio track as planned: which input stream, the rendition it becomes, its `mdhd` language.
struct PlannedAudio: Equatable {
    var streamIndex: Int
    /// Among the input's audio tracks.
    var position: Int
    var rendition: AudioRendition
    /// ISO 639-2/T for `mdhd` (`und` when unknown).
    var iso639T: String
    var isDefault: Bool { rendition.label?.isDefault ?? true }
}

/// What an audio track says of itself, as the planner reads it (from a `StreamInfo`: its language tag and disposition).
struct AudioTrackFacts: Equatable {
    var streamIndex: Int
    var language: String?
    /// `AV_DISPOSITION_COMMENT`.
    var isCommentary = false
    /// `AV_DISPOSITION_VISUAL_IMPAIRED`: audio description.
    var describesVideo = false

    init(streamIndex: Int, language: String?, isCommentary: Bool = false, describesVideo: Bool = false) {
        self.streamIndex = streamIndex
        self.language = language
        self.isCommentary = isCommentary
        self.describesVideo = describesVideo
    }

    init(_ s: StreamInfo) {
        self.init(streamIndex: s.index, language: s.language, isCommentary: s.disposition.contains(.comment),
                  describesVideo: s.disposition.contains(.visualImpaired))
    }
}

/// Planning the audio renditions (pure). Every selected track is its own rendition in group `audio`:
/// - `NAME`: `--audio-name`, else the language's own name ("Français"), else the container's tag as it is, else
///   "Audio N" (N its place in the selection, from 1); a name already taken gets " 2", " 3"…
/// - `DEFAULT=YES` on the first selected track, or the first in `--default-audio`'s language.
/// - DASH role: `commentary` or `description` where the disposition says so, else `main` for the default and
///   `alternate` for the others.
/// - Rendition names (URI path segments): `audio` for the first of a ladder (today's name), `audio-<language>` for the
///   others (`audio-fr`), `audio-<N>` without a language; a name taken gets `-<N>`. With the muxed default, the default
///   track is carried inside the muxed rendition (`stream`) and only the others are named.
/// - One track without a language and without an option is labelled as before languages existed (`label` nil).
enum AudioTrackPlan {
    static func make(_ tracks: [AudioTrackFacts], options: AudioTrackOptions, muxed: Bool)
        throws(PipelineError) -> (tracks: [PlannedAudio], notices: [String]) {
        var notices: [String] = []
        let languages = tracks.indices.map { options.languages[$0] ?? tracks[$0].language.flatMap(LanguageTag.init) }
        let selected = try select(tracks, languages, options.tracks)
        var defaultPosition = selected.first
        if let wanted = options.defaultLanguage {
            if let p = selected.first(where: { languages[$0]?.matches(wanted) ?? false }) {
                defaultPosition = p
            } else {
                notices.append("--default-audio: no selected audio track in '\(wanted)'; the first one is the default")
            }
        }
        let plain = selected.count == 1 && languages[selected[0]] == nil && options.names[selected[0]] == nil
        var names: Set<String> = []
        var renditionNames: Set<String> = muxed ? ["stream"] : []
        var out: [PlannedAudio] = []
        for (k, p) in selected.enumerated() {
            let language = languages[p]
            var name = options.names[p] ?? language?.nativeName ?? tracks[p].language.flatMap { $0.isEmpty ? nil : $0 }
                ?? "Audio \(k + 1)"
            if names.contains(name) { name += " \(k + 1)" }
            names.insert(name)
            let isDefault = p == defaultPosition
            let role: AudioLabel.Role = tracks[p].isCommentary ? .commentary : tracks[p].describesVideo ? .description
                : isDefault ? .main : .alternate
            var rendition = k == 0 && !muxed ? "audio" : "audio-" + (language.map { safe($0.bcp47) } ?? String(k + 1))
            if renditionNames.contains(rendition) { rendition += "-\(k + 1)" }
            renditionNames.insert(rendition)
            let label = plain ? nil : AudioLabel(name: name, isDefault: isDefault, role: role)
            out.append(PlannedAudio(streamIndex: tracks[p].streamIndex, position: p,
                                    rendition: AudioRendition(name: rendition, language: language?.bcp47, label: label),
                                    iso639T: language?.iso639T ?? "und"))
        }
        return (out, notices)
    }

    /// The positions `--audio-tracks` selects, in its order, each once; every position without it.
    static func select(_ tracks: [AudioTrackFacts], _ languages: [LanguageTag?], _ selectors: [AudioTrackSelector]?)
        throws(PipelineError) -> [Int] {
        guard let selectors else { return Array(tracks.indices) }
        var out: [Int] = []
        for s in selectors {
            let matching: [Int]
            switch s {
            case .index(let i): matching = tracks.indices.contains(i) ? [i] : []
            case .language(let l): matching = tracks.indices.filter { languages[$0]?.matches(l) ?? false }
            }
            guard !matching.isEmpty else {
                let have = tracks.indices.map { "\($0) \(languages[$0]?.bcp47 ?? "und")" }.joined(separator: ", ")
                throw .invalidOption("--audio-tracks: the input has no audio track \(s) (it has \(tracks.isEmpty ? "none" : have))")
            }
            for m in matching where !out.contains(m) { out.append(m) }
        }
        return out
    }

    /// A language tag as a rendition name's part (`pt-BR` stays; anything else outside [A-Za-z0-9-] is dropped).
    private static func safe(_ tag: String) -> String {
        String(tag.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }.prefix(20))
    }
}
