import Foundation
import ServeConfig
import Testing

@Suite struct ServeConfigTests {
    static let toml = """
    [streams.cam1]
    input = "srt://0.0.0.0:9000?mode=listener"
    ladder = "720,480,360"
    input_options = { passphrase = "0123456789" }

    [streams.movie]
    input = "movie.mp4"
    loop = true
    segment_duration = 2
    part_duration = 0.5
    window = 10
    video_bitrate = "2.5M"
    audio_bitrate = 96000
    size = "1280x-1"
    framerate = "30000/1001"
    transcode = "always"
    video_codec = "hevc"
    """

    static let yaml = """
    streams:
      cam1:
        input: "srt://0.0.0.0:9000?mode=listener"
        ladder: "720,480,360"
        input_options: { passphrase: "0123456789" }
      movie: { input: movie.mp4, loop: true, segment_duration: 2, part_duration: 0.5, window: 10, video_bitrate: 2.5M,
               audio_bitrate: 96000, size: 1280x-1, framerate: 30000/1001, transcode: always,
               video_codec: hevc }
    """

    static var movie: StreamOptions {
        var o = StreamOptions()
        o.input = "movie.mp4"
        o.loop = true
        o.segmentDuration = Seconds(milliseconds: 2000)
        o.partDuration = Seconds(milliseconds: 500)
        o.window = 10
        o.videoBitrate = BitRate(bitsPerSecond: 2_500_000)
        o.audioBitrate = BitRate(bitsPerSecond: 96_000)
        o.size = PictureSize(width: 1280, height: nil)
        o.framerate = try? FrameRate(parsing: "30000/1001")
        o.transcode = .always
        o.videoCodec = .hevc
        return o
    }

    @Test(arguments: [(toml, ServeConfig.Format.toml), (yaml, .yaml)])
    func readsStreamsInNameOrder(text: String, format: ServeConfig.Format) throws {
        let config = try ServeConfig.parse(text, format: format)
        #expect(config.streams.map(\.name) == ["cam1", "movie"])
        let cam = config.streams[0].options
        #expect(cam.input == "srt://0.0.0.0:9000?mode=listener" && cam.ladder?.text == "720,480,360")
        #expect(cam.ladder?.rungs == [.height(720, bitRate: nil), .height(480, bitRate: nil), .height(360, bitRate: nil)])
        #expect(cam.inputOptions == ["passphrase": "0123456789"])
        #expect(cam.loop == nil && cam.segmentDuration == nil)
        #expect(config.streams[1].options == Self.movie)
    }

    @Test func tomlAndYAMLGiveTheSameOptions() throws {
        #expect(try ServeConfig.parse(Self.toml, format: .toml) == ServeConfig.parse(Self.yaml, format: .yaml))
    }

    @Test func everyKeyReadsFromBothFormats() throws {
        let toml = try ServeConfig.parse(Self.everyKeyTOML, format: .toml)
        let yaml = try ServeConfig.parse(Self.everyKeyYAML, format: .yaml)
        #expect(toml == yaml)
        // Every key was set: encoding the options gives every key back.
        let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(toml.streams[0].options)) as? [String: Any]
        #expect(Set(encoded?.keys.map { $0 } ?? []) == Set(StreamOptions.CodingKeys.allNames))
    }

    static let everyKeyTOML = """
    [streams.a]
    input = "-"
    loop = false
    realtime = false
    reconnect = false
    epoch_from_input = true
    ladder = 720
    segment_duration = "2.002"
    part_duration = 0
    window = 3
    transcode = "never"
    video_codec = "hevc"
    audio_codec = "opus"
    video_bitrate = 3000000
    audio_bitrate = "128k"
    crf = 20
    preset = "fast"
    tune = "none"
    size = "640x360"
    input_format = "rawvideo"
    input_options = { probesize = "32" }
    video_size = "320x240"
    pixel_format = "rgb24"
    framerate = 25
    audio_format = "rawvideo"
    sample_rate = 48000
    channels = 2
    wallclock_timestamps = true
    thumbnails = true
    dash_trick_mode = true
    thumbnail_interval = 2
    thumbnail_grid = "4x3"
    thumbnail_width = 192
    audio_tracks = "fr,0"
    audio_name = { "0" = "English (original)" }
    audio_language = { "1" = "fr" }
    default_audio = "fr"
    captions = "CC1=en,CC3=fr"
    subtitles = ["en=movie.en.srt", "fra=movie.fr.vtt"]
    encrypt = "aes-128"
    key = "00112233445566778899aabbccddeeff"
    key_period = "60s"
    cue_tags = "legacy"
    interstitial = "https://ads.example/break.m3u8"
    interstitial_list = "https://ads.example/list.json"
    events = "inband"
    drm = "widevine,playready"
    cpix = "keys.cpix.xml"
    cpix_key = "recipient.key.pem"
    cpix_cert = "recipient.cert.pem"
    track_keys = "sd,hd,audio"
    clear_lead = "4s"
    key_server = "https://keys.example/cpix"
    key_server_ca = "ca.pem"
    key_server_header = ["Authorization: Bearer t"]
    """

    static let everyKeyYAML = """
    streams:
      a:
        input: "-"
        loop: false
        realtime: false
        reconnect: false
        epoch_from_input: true
        ladder: 720
        segment_duration: 2.002
        part_duration: 0
        window: 3
        transcode: never
        video_codec: hevc
        audio_codec: opus
        video_bitrate: 3M
        audio_bitrate: 128000
        crf: 20
        preset: fast
        tune: none
        size: 640x360
        input_format: rawvideo
        input_options: { probesize: "32" }
        video_size: 320x240
        pixel_format: rgb24
        framerate: "25"
        audio_format: rawvideo
        sample_rate: 48000
        channels: 2
        wallclock_timestamps: true
        thumbnails: true
        dash_trick_mode: true
        thumbnail_interval: 2
        thumbnail_grid: 4x3
        thumbnail_width: 192
        audio_tracks: fr,0
        audio_name: { "0": "English (original)" }
        audio_language: { "1": fr }
        default_audio: fr
        captions: CC1=en,CC3=fr
        subtitles: [en=movie.en.srt, fra=movie.fr.vtt]
        encrypt: aes-128
        key: "00112233445566778899aabbccddeeff"
        key_period: 1m
        cue_tags: legacy
        interstitial: "https://ads.example/break.m3u8"
        interstitial_list: "https://ads.example/list.json"
        events: inband
        drm: widevine,playready
        cpix: keys.cpix.xml
        cpix_key: recipient.key.pem
        cpix_cert: recipient.cert.pem
        track_keys: sd,hd,audio
        clear_lead: 4s
        key_server: https://keys.example/cpix
        key_server_ca: ca.pem
        key_server_header: ["Authorization: Bearer t"]
    """

    @Test func epochFromInputIsAPerStreamKey() throws {
        let config = try ServeConfig.parse("[streams.a]\ninput = \"udp://239.0.0.1:5000\"\nepoch_from_input = true\n", format: .toml)
        #expect(config.streams[0].options.epochFromInput == true)
    }

    @Test func typosAndMissingInputsAreErrors() {
        let known = StreamOptions.CodingKeys.allNames.joined(separator: ", ")
        #expect(throws: ConfigError("streams.a: unknown key 'ladr' (known: \(known))")) {
            try ServeConfig.parse("[streams.a]\ninput = \"x.mp4\"\nladr = \"720\"\n", format: .toml)
        }
        #expect(throws: ConfigError("streams.a.input: missing")) {
            try ServeConfig.parse("[streams.a]\nloop = true\n", format: .toml)
        }
        #expect(throws: ConfigError("streams.a.loop: expected true or false")) {
            try ServeConfig.parse("streams:\n  a: { input: x.mp4, loop: 3 }\n", format: .yaml)
        }
        #expect(throws: ConfigError("streams.a.window: expected an integer")) {
            try ServeConfig.parse("streams:\n  a: { input: x.mp4, window: many }\n", format: .yaml)
        }
        #expect(throws: ConfigError("streams.a.segment_duration: expected a string")) {
            try ServeConfig.parse("[streams.a]\ninput = \"x.mp4\"\nsegment_duration = true\n", format: .toml)
        }
        #expect(throws: ConfigError("no streams: give at least one [streams.NAME] with an input")) {
            try ServeConfig.parse("streams: {}\n", format: .yaml)
        }
        #expect(throws: ConfigError.self) { try ServeConfig.parse("[streams.a\ninput = 1", format: .toml) }
        #expect(throws: ConfigError.self) { try ServeConfig.parse("streams: [1, 2", format: .yaml) }
    }

    /// The list of known keys in the message is the declaration (`StreamOptions.CodingKeys`), and the declaration
    /// covers every stored option: a property without its key (or a key without its property) fails here.
    @Test func knownKeysAreTheDeclaration() throws {
        let properties = Mirror(reflecting: StreamOptions()).children.compactMap(\.label)
        let snake = properties.map { name in
            name.reduce(into: "") { out, c in out += c.isUppercase ? "_" + c.lowercased() : String(c) }
        }
        #expect(snake == StreamOptions.CodingKeys.allNames)
        do {
            _ = try ServeConfig.parse("[streams.a]\ninput = \"x\"\nnope = 1\n", format: .toml)
            Issue.record("no error")
        } catch let e as ConfigError {
            let listed = e.message.split(separator: "(known: ").last.map { $0.dropLast() }.map(String.init) ?? ""
            #expect(listed.components(separatedBy: ", ") == StreamOptions.CodingKeys.allNames)
        }
    }

    @Test func badValuesNameTheStreamAndTheKey() {
        let cases: [(String, String)] = [
            ("segment_duration = \"abc\"", "streams.a: segment_duration takes seconds, e.g. 1 or 0.5 (got 'abc')"),
            ("segment_duration = \"1.x\"", "streams.a: segment_duration: bad number '1.x'"),
            ("video_bitrate = \"fast\"", "streams.a: video_bitrate takes a rate like 128k or 3M (got 'fast')"),
            ("audio_bitrate = 0", "streams.a: audio_bitrate takes a rate like 128k or 3M (got '0')"),
            ("size = \"0x0\"", "streams.a: size: bad size '0x0'"),
            ("size = \"1280\"", "streams.a: size takes WIDTHxHEIGHT, e.g. 1280x720 (got '1280')"),
            ("framerate = 0", "streams.a: framerate takes a positive rate like 30 or 30000/1001 (got '0')"),
            ("ladder = \"abc\"", "streams.a: --ladder: 'abc' is not a height (use e.g. 720,480,360 or 720:3000k)"),
            ("transcode = \"sometimes\"", "streams.a: transcode is auto, always or never (got 'sometimes')"),
            ("video_codec = \"vp9\"", "streams.a: video_codec is h264, hevc or av1 (got 'vp9')"),
            ("audio_codec = \"mp3\"", "streams.a: audio_codec is aac, opus or ac3 (got 'mp3')"),
            ("interstitial_list = \"ftp://ads.example/l\"", "streams.a: interstitial_list is an http:// or https:// URL without spaces or quotes (got 'ftp://ads.example/l')"),
        ]
        for (line, message) in cases {
            #expect(throws: ConfigError(message), "\(line)") {
                try ServeConfig.parse("[streams.a]\ninput = \"x.mp4\"\n\(line)\n", format: .toml)
            }
            // The same line in YAML (key: value).
            let yaml = line.replacingOccurrences(of: " = ", with: ": ")
            #expect(throws: ConfigError(message), "\(yaml)") {
                try ServeConfig.parse("streams:\n  a:\n    input: x.mp4\n    \(yaml)\n", format: .yaml)
            }
        }
    }

    @Test func loadNamesTheFileExceptForValues() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serveconfig-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let typo = dir.appendingPathComponent("typo.toml").path
        try "[streams.a]\ninput = \"x\"\nladr = 1\n".write(toFile: typo, atomically: true, encoding: .utf8)
        #expect(throws: ConfigError("\(typo): streams.a: unknown key 'ladr' (known: \(StreamOptions.CodingKeys.allNames.joined(separator: ", ")))")) {
            try ServeConfig.load(path: typo)
        }
        let value = dir.appendingPathComponent("value.yml").path
        try "streams:\n  a: { input: x, segment_duration: abc }\n".write(toFile: value, atomically: true, encoding: .utf8)
        #expect(throws: ConfigError("streams.a: segment_duration takes seconds, e.g. 1 or 0.5 (got 'abc')")) {
            try ServeConfig.load(path: value)
        }
        #expect(throws: ConfigError("cannot read \(dir.path)/absent.toml: No such file or directory")) {
            try ServeConfig.load(path: dir.path + "/absent.toml")
        }
        #expect(throws: ConfigError("x.json: the config file must end in .toml, .yaml or .yml")) {
            try ServeConfig.load(path: "x.json")
        }
    }
}
