public import MediaCore

/// One stream's options, as the flags of `serve` and `package` give them and as a config file's `[streams.NAME]`
/// entry gives them: the same value either way. `nil`: not set here (an entry's unset option is the flag's; a flag's
/// unset option is the pipeline's default). `merged(over:)` gives the effective options, `validate(naming:)` holds
/// every rule between them.
///
/// A new per-stream option is a property and its `CodingKeys` case (the file's key; the flag is `--` plus the key
/// with dashes, `CodingKeys.flag`), then its flag and its use.
public struct StreamOptions: Codable, Equatable, Sendable {
    /// A file, a URL, `-`, or `testpattern:` (also `nil` or empty: the built-in test pattern).
    public var input: String?
    public var loop: Bool?
    /// Pace reading at real time; `nil`: files yes, pipes and live URLs no.
    public var realtime: Bool?
    /// Take a network input up again when its publisher goes away.
    public var reconnect: Bool?
    /// `--epoch-from-input`: the timeline and numbering from the input's clock (redundant origins).
    public var epochFromInput: Bool?
    public var ladder: LadderSpec?
    public var segmentDuration: Seconds?
    /// Low-Latency HLS parts; zero: none.
    public var partDuration: Seconds?
    /// Segments in the live playlist.
    public var window: Int?
    public var transcode: Transcode?
    /// What encoded video becomes (the ladder's rungs without a codec of their own too).
    public var videoCodec: VideoCodecName?
    public var videoBitrate: BitRate?
    public var audioBitrate: BitRate?
    /// What encoded audio becomes.
    public var audioCodec: AudioCodecName?
    public var crf: Int?
    public var preset: String?
    /// x264 tune; "none": no tune.
    public var tune: String?
    /// Scale encoded video to this size.
    public var size: PictureSize?
    public var inputFormat: String?
    /// libavformat options, as `--input-option KEY=VALUE`.
    public var inputOptions: [String: String]?
    /// Raw video input: frame size, pixel format, frame rate (also the test pattern's rate).
    public var videoSize: PictureSize?
    public var pixelFormat: String?
    public var framerate: FrameRate?
    /// Raw audio input: sample format (the input format), sample rate, channels.
    public var audioFormat: String?
    public var sampleRate: Int?
    public var channels: Int?
    /// Ignore input timestamps; stamp frames with their arrival time.
    public var wallclockTimestamps: Bool?
    /// Thumbnail tiles (trick play): JPEG sheets, an HLS image playlist, a DASH thumbnail set, a WebVTT sprite list.
    public var thumbnails: Bool?
    /// One tile's time span (default: the segment duration).
    public var thumbnailInterval: Seconds?
    /// Tiles per sheet, columns x rows.
    public var thumbnailGrid: PictureSize?
    /// One tile's width in pixels (its height keeps the picture's aspect).
    public var thumbnailWidth: Int?
    /// DASH trick-mode AdaptationSets (the keyframes of the video sets' segments).
    public var dashTrickMode: Bool?
    /// Which input audio tracks become renditions, in order.
    public var audioTracks: AudioTrackList?
    /// A track's `NAME` by its position among the input's audio tracks (`"1" = "Français (VF)"`).
    public var audioName: [String: String]?
    /// A track's language by its position, instead of the container's tag.
    public var audioLanguage: [String: String]?
    /// The language of the default audio track (`DEFAULT=YES`).
    public var defaultAudio: String?
    /// The closed captions to signal: found in the input (`auto`), `none`, or named (`CC1=en,CC3=es`).
    public var captions: CaptionPlan?
    /// Sidecar subtitle files (WebVTT or SubRip), each a subtitle rendition in its language, the first the default.
    public var subtitles: [SubtitleSidecar]?
    /// Encrypt segments and parts (`aes-128`), with `key` (else a random key made at start), a new key every
    /// `keyPeriod` of media (docs/encryption.md).
    public var encrypt: EncryptionScheme?
    public var key: ContentKeyText?
    public var keyPeriod: LongDuration?
    /// `legacy`: EXT-X-CUE-OUT/-CONT/EXT-X-CUE-IN beside the dateranges of SCTE-35 breaks (docs/events.md).
    public var cueTags: CueTagStyle?
    /// Every ad break becomes an HLS interstitial playing this asset (an http(s) URL of a playlist: `X-ASSET-URI`)…
    public var interstitial: AssetURL?
    /// … or the assets of the JSON asset list at this URL (`X-ASSET-LIST`), asked per break; one of the two.
    public var interstitialList: AssetURL?
    /// SCTE-35 events in DASH: the MPD's `EventStream` (default) or `emsg` in the segments (`inband`).
    public var events: EventCarriage?
    /// The DRM systems a `cbcs`/`cenc` stream is signalled for (ClearKey always).
    public var drm: DRMSystemList?
    /// A DASH-IF CPIX document (a path) giving the `cbcs`/`cenc` content key, instead of `key`.
    public var cpix: String?
    /// The PEM RSA private key of the recipient `cpix`'s (or `keyServer`'s) content keys are encrypted for (its
    /// `DeliveryData`); `cpixCert` that recipient's PEM certificate, sent to `keyServer` so that it encrypts them.
    public var cpixKey: String?
    public var cpixCert: String?
    /// `cbcs`/`cenc`: the track types that each get a key of their own (per-track keys: from the key server, or
    /// derived from `key`).
    public var trackKeys: TrackKeyClasses?
    /// `cbcs`/`cenc`: the first segments covering this much media stay clear (faster startup).
    public var clearLead: LongDuration?
    /// A CPIX key server (an http(s) URL) the `cbcs`/`cenc` keys are fetched from, one per key period, instead of
    /// `key` or `cpix`; `keyServerCa` a PEM file of the CA (or self-signed certificate) to trust besides the system's,
    /// `keyServerHeader` extra request headers (`Name: value`, e.g. an authorization) (docs/encryption.md).
    public var keyServer: KeyServerURL?
    public var keyServerCa: String?
    public var keyServerHeader: [HeaderLine]?

    /// The config file's keys, in the order `--config`'s help and the unknown-key message list them.
    public enum CodingKeys: String, CodingKey, CaseIterable, Sendable {
        case input, loop, realtime, reconnect
        case epochFromInput = "epoch_from_input"
        case ladder
        case segmentDuration = "segment_duration", partDuration = "part_duration"
        case window, transcode
        case videoCodec = "video_codec"
        case videoBitrate = "video_bitrate", audioBitrate = "audio_bitrate"
        case audioCodec = "audio_codec"
        case crf, preset, tune, size
        case inputFormat = "input_format", inputOptions = "input_options"
        case videoSize = "video_size", pixelFormat = "pixel_format", framerate
        case audioFormat = "audio_format", sampleRate = "sample_rate", channels
        case wallclockTimestamps = "wallclock_timestamps"
        case thumbnails, thumbnailInterval = "thumbnail_interval", thumbnailGrid = "thumbnail_grid"
        case thumbnailWidth = "thumbnail_width"
        case dashTrickMode = "dash_trick_mode"
        case audioTracks = "audio_tracks", audioName = "audio_name", audioLanguage = "audio_language"
        case defaultAudio = "default_audio"
        case captions, subtitles
        case encrypt, key
        case keyPeriod = "key_period"
        case cueTags = "cue_tags", interstitial, interstitialList = "interstitial_list", events
        case drm, cpix, cpixKey = "cpix_key", cpixCert = "cpix_cert", trackKeys = "track_keys"
        case clearLead = "clear_lead"
        case keyServer = "key_server", keyServerCa = "key_server_ca", keyServerHeader = "key_server_header"

        public static var allNames: [String] { allCases.map(\.rawValue) }

        /// The flag that sets it: `--segment-duration`; `realtime` and `reconnect` are turned off by `--no-...`.
        public var flag: String {
            switch self {
            case .input: return "INPUT"
            case .realtime, .reconnect: return "--no-" + rawValue
            case .inputOptions: return "--input-option"
            default: return "--" + rawValue.replacingOccurrences(of: "_", with: "-")
            }
        }
    }

    public init() {}

    /// Segment durations, milliseconds.
    public static let segmentDurations: ClosedRange<Int64> = 100...60_000
    /// Part durations, milliseconds (or zero: no parts).
    public static let partDurations: ClosedRange<Int64> = 50...5_000
    public static let windows = 1...1000
    /// `--window`'s default.
    public static let defaultWindow = 6
    /// The pipeline's segment duration when none is set.
    public static let defaultSegmentDuration = Seconds(milliseconds: 1000)
    public static let crfs = 0...51
    /// Thumbnail tile intervals, milliseconds; tiles per side of a sheet; tile widths (DASH-IF IOP 4.3 §6.2.6: a
    /// tile at most 1080 wide).
    public static let thumbnailIntervals: ClosedRange<Int64> = 100...600_000
    public static let thumbnailGridSides = 1...20
    public static let thumbnailWidths = 16...1080
    /// The input that stands for the built-in test pattern among several named inputs (`clock=testpattern:`).
    public static let testPatternInput = "testpattern:"

    /// These options over `defaults`: each option set here, else the default's; `input_options` merge key by key.
    public func merged(over defaults: StreamOptions) -> StreamOptions {
        var o = self
        o.input = input ?? defaults.input
        o.loop = loop ?? defaults.loop
        o.realtime = realtime ?? defaults.realtime
        o.reconnect = reconnect ?? defaults.reconnect
        o.epochFromInput = epochFromInput ?? defaults.epochFromInput
        o.ladder = ladder ?? defaults.ladder
        o.segmentDuration = segmentDuration ?? defaults.segmentDuration
        o.partDuration = partDuration ?? defaults.partDuration
        o.window = window ?? defaults.window
        o.transcode = transcode ?? defaults.transcode
        o.videoCodec = videoCodec ?? defaults.videoCodec
        o.videoBitrate = videoBitrate ?? defaults.videoBitrate
        o.audioBitrate = audioBitrate ?? defaults.audioBitrate
        o.audioCodec = audioCodec ?? defaults.audioCodec
        o.crf = crf ?? defaults.crf
        o.preset = preset ?? defaults.preset
        o.tune = tune ?? defaults.tune
        o.size = size ?? defaults.size
        o.inputFormat = inputFormat ?? defaults.inputFormat
        o.inputOptions = defaults.inputOptions.map { $0.merging(inputOptions ?? [:]) { $1 } } ?? inputOptions
        o.videoSize = videoSize ?? defaults.videoSize
        o.pixelFormat = pixelFormat ?? defaults.pixelFormat
        o.framerate = framerate ?? defaults.framerate
        o.audioFormat = audioFormat ?? defaults.audioFormat
        o.sampleRate = sampleRate ?? defaults.sampleRate
        o.channels = channels ?? defaults.channels
        o.wallclockTimestamps = wallclockTimestamps ?? defaults.wallclockTimestamps
        o.thumbnails = thumbnails ?? defaults.thumbnails
        o.thumbnailInterval = thumbnailInterval ?? defaults.thumbnailInterval
        o.thumbnailGrid = thumbnailGrid ?? defaults.thumbnailGrid
        o.thumbnailWidth = thumbnailWidth ?? defaults.thumbnailWidth
        o.dashTrickMode = dashTrickMode ?? defaults.dashTrickMode
        o.audioTracks = audioTracks ?? defaults.audioTracks
        o.audioName = defaults.audioName.map { $0.merging(audioName ?? [:]) { $1 } } ?? audioName
        o.audioLanguage = defaults.audioLanguage.map { $0.merging(audioLanguage ?? [:]) { $1 } } ?? audioLanguage
        o.defaultAudio = defaultAudio ?? defaults.defaultAudio
        o.captions = captions ?? defaults.captions
        o.subtitles = subtitles ?? defaults.subtitles
        o.encrypt = encrypt ?? defaults.encrypt
        o.key = key ?? defaults.key
        o.keyPeriod = keyPeriod ?? defaults.keyPeriod
        o.cueTags = cueTags ?? defaults.cueTags
        o.events = events ?? defaults.events
        // One choice of two keys: a stream's interstitial of either kind replaces the defaults' of either kind.
        let ownInterstitial = interstitial != nil || interstitialList != nil
        o.interstitial = ownInterstitial ? interstitial : defaults.interstitial
        o.interstitialList = ownInterstitial ? interstitialList : defaults.interstitialList
        o.drm = drm ?? defaults.drm
        o.cpix = cpix ?? defaults.cpix
        o.cpixKey = cpixKey ?? defaults.cpixKey
        o.cpixCert = cpixCert ?? defaults.cpixCert
        o.clearLead = clearLead ?? defaults.clearLead
        o.trackKeys = trackKeys ?? defaults.trackKeys
        o.keyServer = keyServer ?? defaults.keyServer
        o.keyServerCa = keyServerCa ?? defaults.keyServerCa
        o.keyServerHeader = keyServerHeader ?? defaults.keyServerHeader
        return o
    }

    /// The test pattern, or a file or URL.
    public var source: StreamInput { StreamInput(input) }

    /// Whether the stream has Low-Latency HLS parts.
    public var hasParts: Bool { partDuration.map { !$0.isZero } ?? false }

    /// `streams.NAME: unknown key 'ladr' (known: ...)` for the first of `keys` (sorted) that is no option: a config
    /// file's typo or a control API body's. `showAny: false` shows a key only when it is short and plain (a client's
    /// text), otherwise `(not shown)`.
    static func checkKnown(_ keys: some Collection<String>, stream name: String, showAny: Bool) throws(ConfigError) {
        let known = CodingKeys.allNames
        guard let unknown = keys.sorted().first(where: { !known.contains($0) }) else { return }
        let shown = showAny || (unknown.count <= 64
            && unknown.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
        throw ConfigError("streams.\(name): unknown key \(shown ? "'\(unknown)'" : "(not shown)") (known: \(known.joined(separator: ", ")))",
                          field: shown ? unknown : nil)
    }
}

/// How messages name the options: by their flags (`--segment-duration`), or by their keys in a config file's stream
/// (`streams.cam1: segment_duration`).
public enum OptionNaming: Sendable, Equatable {
    case flags
    case stream(String)

    public func name(_ key: StreamOptions.CodingKeys) -> String {
        if case .flags = self { return key.flag }
        return key.rawValue
    }

    /// `key`: the option the message is about (the control API names it as the error's `field`).
    public func error(_ message: String, key: StreamOptions.CodingKeys? = nil) -> ConfigError {
        switch self {
        case .flags: return ConfigError(message, field: key?.rawValue)
        case .stream(let name): return ConfigError("streams.\(name): \(message)", field: key?.rawValue)
        }
    }
}

/// Where a stream's media comes from.
public enum StreamInput: Equatable, Sendable {
    /// The built-in test pattern (`testpattern:`, or no input).
    case testPattern
    /// A path, a URL, or `-` for standard input.
    case url(String)

    public init(_ text: String?) {
        guard let text, !text.isEmpty, text != StreamOptions.testPatternInput else {
            self = .testPattern
            return
        }
        self = .url(text)
    }
}
