import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
public import MediaCore

/// Input and encoding flags shared by `serve` and `package`: each stream's defaults (`serve`), or the one stream
/// (`package`). They read into a `StreamOptions`, as a config file's stream does.
public struct MediaOptions: ParsableArguments, Sendable {
    public init() {}

    @Option(name: .customLong("input-format"), help: ArgumentHelp("Force the input format (mpegts, nut, matroska, flv, yuv4mpegpipe, mjpeg, h264, rawvideo, s16le...).", valueName: "name"))
    public var inputFormat: String?

    @Option(name: .customLong("input-option"), help: ArgumentHelp("An option for libavformat's demuxer or protocol, as ffmpeg's input options (repeatable): rtsp_transport=tcp, timeout=5000000, passphrase=..., listen_timeout=...", valueName: "key=value"))
    public var inputOptions: [String] = []

    @Option(name: .customLong("video-size"), help: ArgumentHelp("Raw video frame size.", valueName: "WxH"))
    public var videoSize: String?

    @Option(name: .customLong("pixel-format"), help: ArgumentHelp("Raw video pixel format (default yuv420p).", valueName: "fmt"))
    public var pixelFormat: String?

    @Option(help: ArgumentHelp("Frame rate of raw input or of the test pattern (e.g. 30, 30000/1001).", valueName: "rate"))
    public var framerate: String?

    @Option(name: .customLong("audio-format"), help: ArgumentHelp("Raw audio input format (s16le, f32le, ...), with --sample-rate and --channels.", valueName: "fmt"))
    public var audioFormat: String?

    @Option(name: .customLong("sample-rate"), help: ArgumentHelp("Raw audio sample rate.", valueName: "Hz"))
    public var sampleRate: Int?

    @Option(help: ArgumentHelp("Raw audio channel count.", valueName: "n"))
    public var channels: Int?

    @Option(name: .customLong("segment-duration"), help: ArgumentHelp("Target segment duration in seconds (segments start on keyframes).", valueName: "seconds"))
    public var segmentDuration: String = "1"

    @Option(help: ArgumentHelp("auto: copy H.264, H.265, AV1 and AAC/Opus/AC-3/E-AC-3/FLAC, encode anything else; always; never.", valueName: "mode"))
    public var transcode: Transcode = .auto

    @Option(name: .customLong("video-codec"), help: ArgumentHelp("What video is encoded to: h264 (libx264), hevc (libx265, hvc1) or av1 (SVT-AV1). A ladder rung can say its own (1080:hevc).", valueName: "codec"))
    public var videoCodec: VideoCodecName = .h264

    @Option(help: ArgumentHelp("x264/x265 preset when encoding.", valueName: "name"))
    public var preset: String = "veryfast"

    @Option(help: ArgumentHelp("x264/x265 tune when encoding ('none' for no tune).", valueName: "name"))
    public var tune: String = "zerolatency"

    @Option(name: .customLong("video-bitrate"), help: ArgumentHelp("Video bit rate when encoding (e.g. 3M, 2500k). Default: --crf 23.", valueName: "rate"))
    public var videoBitrate: String?

    @Option(help: ArgumentHelp("Constant rate factor when encoding (0-51).", valueName: "n"))
    public var crf: Int?

    @Option(help: ArgumentHelp("Scale encoded video to this size (WxH, or Wx-1 to keep the aspect ratio).", valueName: "WxH"))
    public var size: String?

    @Option(name: .customLong("audio-bitrate"), help: ArgumentHelp("Audio bit rate when encoding.", valueName: "rate"))
    public var audioBitrate: String = "128k"

    @Option(name: .customLong("audio-codec"), help: ArgumentHelp("What audio is encoded to: aac, opus (libopus, 48 kHz) or ac3.", valueName: "codec"))
    public var audioCodec: AudioCodecName = .aac

    @Option(help: ArgumentHelp("Adaptive bit rate: one video rendition per rung, plus the audio as its own rendition. Rungs are heights, optionally with a bit rate (720:3000k) and a codec (1080:5M:hevc), or 'source' to copy the input's H.264, H.265 or AV1. Default rates: 1080p 5000k, 720p 2800k, 480p 1400k, 360p 800k, 240p 400k.", valueName: "rungs"))
    public var ladder: String?

    @Flag(name: .customLong("wallclock-timestamps"), help: "Ignore input timestamps and stamp frames with their arrival time.")
    public var wallclockTimestamps = false

    @Flag(help: "Thumbnail tiles for trick play: JPEG sheets of tiles (thumbnails/N.jpg), an HLS image playlist (EXT-X-IMAGE-STREAM-INF), a DASH thumbnail AdaptationSet and a WebVTT sprite list (thumbnails.vtt).")
    public var thumbnails = false

    @Option(name: .customLong("thumbnail-interval"), help: ArgumentHelp("Seconds per thumbnail tile (default: the segment duration).", valueName: "seconds"))
    public var thumbnailInterval: String?

    @Option(name: .customLong("thumbnail-grid"), help: ArgumentHelp("Tiles per sheet, columns x rows (default 5x5).", valueName: "CxR"))
    public var thumbnailGrid: String?

    @Option(name: .customLong("thumbnail-width"), help: ArgumentHelp("Thumbnail tile width in pixels (default 160).", valueName: "pixels"))
    public var thumbnailWidth: Int?

    @Flag(name: .customLong("dash-trick-mode"), help: "DASH trick-mode AdaptationSets: the keyframes of each video set's segments, by byte range.")
    public var dashTrickMode = false

    @Option(name: .customLong("audio-tracks"), help: ArgumentHelp("Which input audio tracks become audio renditions, in order: positions among the input's audio tracks (0,2) or languages (fr,en). Default: every audio track.", valueName: "list"))
    public var audioTracks: String?

    @Option(name: .customLong("audio-name"), help: ArgumentHelp("The NAME of an audio track, by its position among the input's audio tracks (repeatable): 1=\"Français (VF)\". Default: the language's own name.", valueName: "idx=name"))
    public var audioNames: [String] = []

    @Option(name: .customLong("audio-language"), help: ArgumentHelp("The language of an audio track, by position (repeatable), instead of the input's tag: 1=fr.", valueName: "idx=lang"))
    public var audioLanguages: [String] = []

    @Option(name: .customLong("default-audio"), help: ArgumentHelp("The language of the default audio track (DEFAULT=YES). Default: the first one.", valueName: "lang"))
    public var defaultAudio: String?

    @Option(help: ArgumentHelp("Closed captions (CEA-608/708 in the video's SEI) to signal: auto (those found in the input), none, or named: CC1=en,CC3=es,SERVICE1=en.", valueName: "list"))
    public var captions: String?

    @Option(help: ArgumentHelp("A subtitle rendition in language LANG (repeatable; AUTOSELECT=YES, DEFAULT=NO) from a sidecar file (WebVTT .vtt or SubRip .srt), or, as LANG alone, from cues posted to POST /NAME/subtitles (with --api-token): WebVTT segments on the video's segments (EXT-X-MEDIA TYPE=SUBTITLES) and a DASH wvtt text set. See docs/subtitles.md.", valueName: "LANG[=PATH]"))
    public var subtitles: [String] = []

    @Option(help: ArgumentHelp("Encrypt every segment and part: aes-128 (whole-segment AES-128-CBC, EXT-X-KEY; the origin serves the key at /NAME/keys/N.key to requests that pass its access control), cbcs (ISO/IEC 23001-7 sample encryption, AES-CBC 1:9 pattern, METHOD=SAMPLE-AES) or cenc (AES-CTR, METHOD=SAMPLE-AES-CTR); cbcs/cenc keys come from a DRM licence server, not the origin. See docs/encryption.md.", valueName: "scheme"))
    public var encrypt: String?

    @Option(help: ArgumentHelp("The key, 32 hexadecimal digits. aes-128: default a random key made at start. cbcs/cenc need one (or --cpix): KID:KEY, or the key alone and its KID derived from it. Prefer $HLS_ORIGIN_KEY, which keeps it out of ps.", valueName: "hex"))
    public var key: String?

    @Option(help: ArgumentHelp("With cbcs/cenc: the DRM systems signalled, comma-separated: widevine, playready, fairplay, clearkey (pssh boxes, EXT-X-KEY KEYFORMATs, DASH ContentProtection). ClearKey is always signalled.", valueName: "systems"))
    public var drm: String?

    @Option(help: ArgumentHelp("With cbcs/cenc: a DASH-IF CPIX 2.3 document giving the content keys (each ContentKey's kid and PlainValue; several: per-track keys by their ContentKeyUsageRules) and, unless --drm is given, the DRM systems to signal (its DRMSystemList).", valueName: "file"))
    public var cpix: String?

    @Option(name: .customLong("track-keys"), help: ArgumentHelp("With cbcs/cenc: per-track keys, a key of its own for each track type listed: sd, hd, uhd (video up to 768x576, up to 1920x1080, above), video, audio. Asked of --key-server (SPEKE v2 usage rules), or derived from --key.", valueName: "types"))
    public var trackKeys: String?

    @Option(name: .customLong("cpix-key"), help: ArgumentHelp("The PEM RSA private key of the recipient the --cpix document's (or --key-server's) content keys are encrypted for (its DeliveryData: document key and MAC key sealed with RSA-OAEP, the content key with AES-256-CBC and an HMAC-SHA512).", valueName: "file"))
    public var cpixKey: String?

    @Option(name: .customLong("cpix-cert"), help: ArgumentHelp("With --key-server and --cpix-key: the recipient's PEM certificate, sent in the request's DeliveryDataList so that the server encrypts the keys for it.", valueName: "file"))
    public var cpixCert: String?

    @Option(name: .customLong("clear-lead"), help: ArgumentHelp("With cbcs/cenc: leave the first segments covering this much media clear (e.g. 4s), for a faster start; their samples are marked unprotected.", valueName: "duration"))
    public var clearLead: String?

    @Option(name: .customLong("key-period"), help: ArgumentHelp("A new key every this much media (e.g. 60s, 10m), changed on a segment boundary; keys (and for cbcs/cenc their KIDs) derived from --key.", valueName: "duration"))
    public var keyPeriod: String?

    @Option(name: .customLong("key-server"), help: ArgumentHelp("Fetch the keys (aes-128, cbcs or cenc) from this CPIX 2.3 key server (https://, or http:// with a warning), one per --key-period, ahead of time, with retries; refused at start when it does not answer. Instead of --key/--cpix. See docs/encryption.md.", valueName: "url"))
    public var keyServer: String?

    @Option(name: .customLong("key-server-ca"), help: ArgumentHelp("A PEM file of the CA (or self-signed certificate) to trust for --key-server, besides the system's.", valueName: "pem"))
    public var keyServerCa: String?

    @Option(name: .customLong("key-server-header"), help: ArgumentHelp("A header sent with each key request (repeatable), e.g. 'Authorization: Bearer TOKEN'. Its value is never shown.", valueName: "'Name: value'"))
    public var keyServerHeader: [String] = []

    @Option(name: .customLong("cue-tags"), help: ArgumentHelp("How SCTE-35 breaks are signalled besides EXT-X-DATERANGE: legacy adds EXT-X-CUE-OUT/EXT-X-CUE-OUT-CONT/EXT-X-CUE-IN (docs/events.md).", valueName: "daterange|legacy"))
    public var cueTags: String?

    @Option(help: ArgumentHelp("Make every ad break an HLS interstitial (CLASS=\"com.apple.hls.interstitial\") that plays this asset (an http(s) URL of a playlist, X-ASSET-URI; a stitching service can be the URL). Or --interstitial-list.", valueName: "url"))
    public var interstitial: String?

    @Option(name: .customLong("interstitial-list"), help: ArgumentHelp("Instead of --interstitial: make every ad break an HLS interstitial whose assets the JSON asset list at this http(s) URL names (X-ASSET-LIST; an ad decision service can answer it per break and viewer), with break=ID and duration=SECONDS added to its query (docs/events.md).", valueName: "url"))
    public var interstitialList: String?

    @Option(help: ArgumentHelp("Where DASH carries SCTE-35 events: the MPD's EventStream, or inband: an emsg (urn:scte:scte35:2013:bin) in the segments of every rendition (docs/events.md).", valueName: "eventstream|inband"))
    public var events: String?

    /// These flags as stream options, checked: a bad value or a broken rule is one line naming its flag.
    public func options() throws(ValidationError) -> StreamOptions {
        try parsed().checkedAsFlags()
    }

    /// Each flag's value read by its type (the rules between them are `StreamOptions.validate`'s).
    func parsed() throws(ValidationError) -> StreamOptions {
        var o = StreamOptions()
        o.inputFormat = inputFormat
        o.audioFormat = audioFormat
        o.inputOptions = try Self.keyValues(inputOptions)
        o.videoSize = try read(videoSize, .videoSize)
        o.pixelFormat = pixelFormat
        o.framerate = try read(framerate, .framerate)
        o.sampleRate = sampleRate
        o.channels = channels
        o.segmentDuration = try read(segmentDuration, .segmentDuration)
        o.transcode = transcode
        o.videoCodec = videoCodec
        o.preset = preset
        o.tune = tune
        o.videoBitrate = try read(videoBitrate, .videoBitrate)
        o.crf = crf
        o.size = try read(size, .size)
        o.audioBitrate = try read(audioBitrate, .audioBitrate)
        o.audioCodec = audioCodec
        o.ladder = try read(ladder, .ladder)
        o.wallclockTimestamps = wallclockTimestamps
        o.dashTrickMode = dashTrickMode
        o.thumbnails = thumbnails
        o.thumbnailInterval = try read(thumbnailInterval, .thumbnailInterval)
        o.thumbnailGrid = try read(thumbnailGrid, .thumbnailGrid)
        o.thumbnailWidth = thumbnailWidth
        o.audioTracks = try read(audioTracks, .audioTracks)
        o.audioName = try Self.keyValues(audioNames, flag: StreamOptions.CodingKeys.audioName.flag)
        o.audioLanguage = try Self.keyValues(audioLanguages, flag: StreamOptions.CodingKeys.audioLanguage.flag)
        o.defaultAudio = defaultAudio
        o.captions = try read(captions, .captions)
        o.subtitles = subtitles.isEmpty ? nil : try subtitles.map { text throws(ValidationError) in
            try SubtitleSidecar(flag: StreamOptions.CodingKeys.subtitles.flag, text)
        }
        o.encrypt = try read(encrypt, .encrypt)
        o.key = try read(key ?? (encrypt != nil ? environmentKey() : nil), .key)
        o.keyPeriod = try read(keyPeriod, .keyPeriod)
        o.cueTags = try read(cueTags, .cueTags)
        o.interstitial = try read(interstitial, .interstitial)
        o.interstitialList = try read(interstitialList, .interstitialList)
        o.events = try read(events, .events)
        o.drm = try read(drm, .drm)
        o.cpix = cpix
        o.cpixKey = cpixKey
        o.cpixCert = cpixCert
        o.clearLead = try read(clearLead, .clearLead)
        o.trackKeys = try read(trackKeys, .trackKeys)
        o.keyServer = try read(keyServer, .keyServer)
        o.keyServerCa = keyServerCa
        o.keyServerHeader = keyServerHeader.isEmpty ? nil : try keyServerHeader.map { text throws(ValidationError) in
            try HeaderLine(flag: StreamOptions.CodingKeys.keyServerHeader.flag, text)
        }
        return o
    }

    /// `--input-option KEY=VALUE`, repeated (the last value of a key wins); `nil` for none.
    static func keyValues(_ items: [String], flag: String = StreamOptions.CodingKeys.inputOptions.flag)
        throws(ValidationError) -> [String: String]? {
        var options: [String: String] = [:]
        for item in items {
            let kv = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2, !kv[0].isEmpty else {
                throw ValidationError("\(flag) takes KEY=VALUE (got '\(item)')")
            }
            options[kv[0]] = kv[1]
        }
        return options.isEmpty ? nil : options
    }
}

/// The per-stream flags only `serve` has (a config file's stream may set each of them too).
public struct StreamFlags: ParsableArguments, Sendable {
    public init() {}

    @Option(help: "Segments in the live playlist.")
    public var window = StreamOptions.defaultWindow

    @Flag(help: "Restart the file at its end, forever, with continuous timestamps.")
    public var loop = false

    @Flag(name: .customLong("no-realtime"), help: "Read a file as fast as possible instead of at real-time speed.")
    public var noRealtime = false

    @Flag(name: .customLong("no-reconnect"), help: "End the stream when a network input's publisher goes away, instead of waiting for (or reconnecting to) the next one.")
    public var noReconnect = false

    @Flag(name: .customLong("epoch-from-input"), help: "Redundant origins: take the timeline, segment numbers and EXT-X-PROGRAM-DATE-TIME from the input's timestamps, read as the encoder's UTC clock (MPEG-TS: modulo 26.5 h), with segments cut on a grid of whole segment durations since 1970. Origins fed the same input then serve byte-identical playlists and segments whenever they started. Needs a keyframe at least every segment duration.")
    public var epochFromInput = false

    @Option(name: .customLong("part-duration"), help: ArgumentHelp("Low-Latency HLS part duration in seconds (0 turns LL-HLS off). Clients that don't know LL-HLS read whole segments as usual.", valueName: "seconds"))
    public var partDuration = "0.333"

    /// `serve`'s flags as the options every stream starts from, checked: a bad value or a broken rule is one line
    /// naming its flag.
    public func options(with media: MediaOptions) throws(ValidationError) -> StreamOptions {
        var o = try media.parsed()
        o.window = window
        o.loop = loop
        o.realtime = noRealtime ? false : nil
        o.reconnect = !noReconnect
        o.epochFromInput = epochFromInput
        o.partDuration = try read(partDuration, .partDuration)
        return try o.checkedAsFlags()
    }
}

/// `$HLS_ORIGIN_KEY`: `--key` without showing it in the process list.
private func environmentKey() -> String? {
    guard let p = getenv("HLS_ORIGIN_KEY") else { return nil }
    let text = String(cString: p)
    return text.isEmpty ? nil : text
}

/// A flag's text read by the option's type; its error names the flag.
private func read<V: OptionValue>(_ text: String?, _ key: StreamOptions.CodingKeys) throws(ValidationError) -> V? {
    guard let text else { return nil }
    return try V(flag: key.flag, text)
}

extension StreamOptions {
    /// These options, as flags give them, after `validate(naming: .flags)`.
    func checkedAsFlags() throws(ValidationError) -> StreamOptions {
        do {
            try validate(naming: .flags)
        } catch {
            throw ValidationError(error.message)
        }
        return self
    }
}
