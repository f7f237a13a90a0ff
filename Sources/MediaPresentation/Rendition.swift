import MediaCore

/// One rendition of a presentation: a name, what it carries, and where its objects live.
///
/// A ladder has one video rendition per rung (video only, one track, CMAF style) and one audio rendition;
/// a single-rendition stream has one muxed rendition (video and audio in one track set).
public struct Rendition: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case video
        case audio
        /// Video and audio in the same fragments.
        case muxed
        /// Subtitle cues as WebVTT segments (`URIScheme.webVTT`), on the segments of the first rendition.
        case subtitles

        /// Video, or video and audio: a variant of the multivariant playlist, with I-frames.
        public var hasPictures: Bool { self == .video || self == .muxed }
    }

    public var name: String
    public var kind: Kind
    public var scheme: URIScheme
    /// Audio renditions: the `GROUP-ID` they belong to. Video renditions: the audio group they play with.
    public var audioGroup: String?
    /// The BCP 47 language (`LanguageTag.bcp47`) of an audio rendition, or of a muxed rendition's audio (`LANGUAGE`,
    /// DASH `lang`), when known.
    public var language: String?
    /// How its audio is offered among the languages of its `audioGroup` (`NAME`, `DEFAULT`, DASH `Role`); `nil`: as
    /// before languages were planned (`NAME` is the rendition's name, the group's first rendition is the default).
    /// A muxed rendition with a label and an `audioGroup` is that group's member whose audio is inside the variant
    /// (an `EXT-X-MEDIA` without `URI`, RFC 8216bis §4.4.6.1).
    public var audioLabel: AudioLabel?
    /// A subtitle rendition's `NAME`, `LANGUAGE`, `DEFAULT`, `AUTOSELECT`, `FORCED`.
    public var subtitleLabel: SubtitleLabel?
    /// The bit rate the rendition is encoded at (bits/s), used for `BANDWIDTH` until segments can be measured.
    public var declaredBitRate: Int?
    /// The frame rate the rendition is encoded at, used for `FRAME-RATE` until it can be measured.
    public var declaredFrameRate: Double?

    public init(name: String, kind: Kind, scheme: URIScheme, audioGroup: String? = nil, language: String? = nil,
                declaredBitRate: Int? = nil, declaredFrameRate: Double? = nil, audioLabel: AudioLabel? = nil) {
        precondition(Self.isValidName(name), "a rendition name is 1-32 of [A-Za-z0-9_-]")
        self.name = name
        self.kind = kind
        self.scheme = scheme
        self.audioGroup = audioGroup
        self.language = language
        self.declaredBitRate = declaredBitRate
        self.declaredFrameRate = declaredFrameRate
        self.audioLabel = audioLabel
    }

    /// The single muxed rendition at the root: `stream.m3u8`, `init.mp4`, `seg<N>.m4s`.
    public static func muxed(name: String = "stream") -> Rendition {
        Rendition(name: name, kind: .muxed, scheme: .root(name))
    }

    /// Names become URI path segments: keep them to a safe alphabet.
    public static func isValidName(_ name: String) -> Bool {
        let u = name.utf8
        return (1...32).contains(u.count) && u.allSatisfy { c in
            (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "-") || c == UInt8(ascii: "_")
        }
    }
}

extension Rendition {
    /// The `GROUP-ID` of the subtitle renditions (RFC 8216bis §4.4.6.1), named by every variant's `SUBTITLES`.
    public static let subtitleGroup = "subs"

    /// A subtitle rendition named `subs-<language>` (`subs-2` without one; `subs-en-3` for a second in the same
    /// language, `position` being its place among the subtitle renditions).
    /// The same cues as a `wvtt` text track in fMP4 (ISO/IEC 14496-30) for DASH: `subs-en-wvtt/init.mp4`,
    /// `subs-en-wvtt/seg<N>.m4s`, on the same segments as the WebVTT rendition it is made beside.
    public var textTrackForm: Rendition {
        let twin = String((name + "-wvtt").suffix(32))
        var r = Rendition(name: twin, kind: .subtitles, scheme: .textTrack(twin))
        r.language = language
        r.subtitleLabel = subtitleLabel
        return r
    }

    /// A subtitle rendition as HLS lists it: WebVTT segments (its `textTrackForm` is the MPD's).
    public var isWebVTTSubtitles: Bool { kind == .subtitles && scheme.segmentFormat == .webVTT }

    /// Whether the multivariant playlist lists it (every rendition but a subtitle rendition's `wvtt` form): the
    /// renditions an `EXT-X-RENDITION-REPORT` may name.
    public var isListedInHLS: Bool { kind != .subtitles || isWebVTTSubtitles }

    public static func subtitles(_ label: SubtitleLabel, position: Int, taken: [String] = []) -> Rendition {
        var name = "subs-" + (label.language.map { $0.bcp47.filter { $0.isLetter || $0.isNumber || $0 == "-" } } ?? String(position + 1))
        if taken.contains(name) { name += "-\(position + 1)" }
        var r = Rendition(name: String(name.prefix(32)), kind: .subtitles, scheme: .webVTT(String(name.prefix(32))))
        r.language = label.language?.bcp47
        r.subtitleLabel = label
        return r
    }
}

/// How one audio track is offered to a player choosing among languages: the HLS `EXT-X-MEDIA` `NAME` and `DEFAULT`
/// (RFC 8216bis §4.4.6.1) and the DASH `Role` (ISO/IEC 23009-1 §5.8.5.5, scheme `urn:mpeg:dash:role:2011`).
public struct AudioLabel: Sendable, Hashable {
    /// DASH role values for audio (§5.8.5.5 Table 34).
    public enum Role: String, Sendable, Hashable {
        /// The default track.
        case main
        /// Another language of the same program.
        case alternate
        /// A commentary track (FFmpeg's `comment` disposition).
        case commentary
        /// Audio description for the visually impaired.
        case description
    }

    /// `NAME`: readable, unique in the group ("English", "Français").
    public var name: String
    /// `DEFAULT=YES`: the one a player starts with (one per group).
    public var isDefault: Bool
    public var role: Role

    public init(name: String, isDefault: Bool, role: Role) {
        self.name = name
        self.isDefault = isDefault
        self.role = role
    }
}

/// One planned audio rendition: its name (a URI path segment: `audio`, `audio-fr`), BCP 47 language and label.
public struct AudioRendition: Sendable, Equatable {
    public var name: String
    public var language: String?
    public var label: AudioLabel?
    public var bitRate: Int?

    public init(name: String, language: String? = nil, label: AudioLabel? = nil, bitRate: Int? = nil) {
        self.name = name
        self.language = language
        self.label = label
        self.bitRate = bitRate
    }

    /// The audio rendition in group `group`, its objects nested under its name.
    public func rendition(group: String) -> Rendition {
        Rendition(name: name, kind: .audio, scheme: .nested(name), audioGroup: group, language: language,
                  declaredBitRate: bitRate, audioLabel: label)
    }
}
