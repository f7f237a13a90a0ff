import ArgumentParser
import ServeConfig
import Testing

/// `serve`'s flags (its per-stream flags and the media flags) as StreamOptions.
struct ServeFlags: ParsableArguments {
    @OptionGroup var stream: StreamFlags
    @OptionGroup var media: MediaOptions

    static func options(_ arguments: [String]) throws -> StreamOptions {
        let flags = try parse(arguments)
        return try flags.stream.options(with: flags.media)
    }

    /// The one-line message of the flags' refusal.
    static func refusal(_ arguments: [String]) -> String? {
        do {
            _ = try options(arguments)
            return nil
        } catch let e as ValidationError {
            return e.message
        } catch {
            return "other: \(error)"
        }
    }
}

@Suite struct StreamOptionsTests {
    /// Every option set (as the file's everyKey sample reads).
    static var full: StreamOptions {
        get throws { try ServeConfig.parse(ServeConfigTests.everyKeyTOML, format: .toml).streams[0].options }
    }

    @Test func mergedTakesEachSetOptionOverTheDefault() throws {
        let full = try Self.full
        #expect(full.merged(over: StreamOptions()) == full)
        #expect(StreamOptions().merged(over: full) == full)
        var entry = StreamOptions()
        entry.window = 4
        entry.inputOptions = ["passphrase": "p", "probesize": "64"]
        let merged = entry.merged(over: full)
        #expect(merged.window == 4 && merged.crf == full.crf && merged.segmentDuration == full.segmentDuration)
        #expect(merged.inputOptions == ["probesize": "64", "passphrase": "p"])
    }

    /// `interstitial` and `interstitial_list` are one choice: a stream's of either kind replaces the defaults'.
    @Test func aStreamsInterstitialListReplacesTheFlagsInterstitial() throws {
        let flags = try ServeFlags.options(["--interstitial", "https://ads.example/break.m3u8"])
        var entry = StreamOptions()
        entry.interstitialList = try AssetURL(parsing: "https://ads.example/list.json")
        let merged = entry.merged(over: flags)
        #expect(merged.interstitial == nil && merged.interstitialList?.text == "https://ads.example/list.json")
        try merged.validate(naming: .stream("cam"))
        #expect(StreamOptions().merged(over: flags).interstitial?.text == "https://ads.example/break.m3u8")
        let list = try ServeFlags.options(["--interstitial-list", "https://ads.example/list.json?site=7"])
        #expect(list.interstitialList?.text == "https://ads.example/list.json?site=7" && list.interstitial == nil)
    }

    @Test func theFlagsDefaults() throws {
        let o = try ServeFlags.options([])
        #expect(o.segmentDuration == Seconds(milliseconds: 1000) && o.partDuration == Seconds(milliseconds: 333))
        #expect(o.window == 6 && o.transcode == .auto && o.preset == "veryfast" && o.tune == "zerolatency")
        #expect(o.audioBitrate == BitRate(bitsPerSecond: 128_000) && o.loop == false && o.realtime == nil)
        #expect(o.reconnect == true && o.epochFromInput == false && o.wallclockTimestamps == false)
        #expect(o.input == nil && o.ladder == nil && o.videoBitrate == nil && o.inputOptions == nil && o.hasParts)
    }

    /// The flags and a config file's stream read into the same value.
    @Test func flagsAndFileReadAlike() throws {
        let flags = try ServeFlags.options([
            "--segment-duration", "2", "--part-duration", "0.5", "--window", "10", "--loop", "--video-bitrate", "2.5M",
            "--audio-bitrate", "96000", "--size", "1280x-1", "--framerate", "30000/1001", "--transcode", "always",
            "--preset", "veryfast", "--tune", "zerolatency", "--no-realtime", "--no-reconnect", "--input-option", "a=1",
            "--input-option", "b=x=y", "--ladder", "720,360", "--crf", "20", "--video-codec", "h265", "--audio-codec", "aac",
        ])
        let file = try ServeConfig.parse("""
            [streams.s]
            input = "movie.mp4"
            segment_duration = 2
            part_duration = 0.5
            window = 10
            loop = true
            video_bitrate = "2.5M"
            audio_bitrate = 96000
            size = "1280x-1"
            framerate = "30000/1001"
            transcode = "always"
            video_codec = "hevc"
            audio_codec = "aac"
            preset = "veryfast"
            tune = "zerolatency"
            realtime = false
            reconnect = false
            input_options = { a = "1", b = "x=y" }
            ladder = "720,360"
            crf = 20
            epoch_from_input = false
            wallclock_timestamps = false
            thumbnails = false
            dash_trick_mode = false
            """, format: .toml).streams[0].options
        var expected = file
        expected.input = nil
        #expect(flags == expected)
    }

    @Test func flagValuesAreOneLineNamingTheFlag() {
        let cases: [([String], String)] = [
            (["--segment-duration", "0.05"], "--segment-duration must be between 0.1 and 60.0 seconds"),
            (["--segment-duration", "abc"], "--segment-duration takes seconds, e.g. 1 or 0.5 (got 'abc')"),
            (["--segment-duration", "1.x"], "--segment-duration: bad number '1.x'"),
            (["--part-duration", "2", "--segment-duration", "1"], "--part-duration must be shorter than --segment-duration"),
            (["--part-duration", "0.01"], "--part-duration must be between 0.05 and 5.0 seconds"),
            (["--window", "0"], "--window must be between 1 and 1000 segments"),
            (["--window", "1001"], "--window must be between 1 and 1000 segments"),
            (["--crf", "52"], "--crf must be 0-51"),
            (["--audio-codec", "ac3", "--audio-bitrate", "100k"], "--audio-bitrate must be an AC-3 rate with --audio-codec ac3 (32k, 40k, 48k, 56k, 64k, 80k, 96k, 112k, 128k, 160k, 192k, 224k, 256k, 320k, 384k, 448k, 512k, 576k, 640k)"),
            (["--video-bitrate", "abc"], "--video-bitrate takes a rate like 128k or 3M (got 'abc')"),
            (["--audio-bitrate", "0"], "--audio-bitrate takes a rate like 128k or 3M (got '0')"),
            (["--size", "0x0"], "--size: bad size '0x0'"),
            (["--size", "1280"], "--size takes WIDTHxHEIGHT, e.g. 1280x720 (got '1280')"),
            (["--video-size", "1280x-1"], "--video-size: bad size '1280x-1'"),
            (["--framerate", "0"], "--framerate takes a positive rate like 30 or 30000/1001 (got '0')"),
            (["--ladder", "abc"], "--ladder: 'abc' is not a height (use e.g. 720,480,360 or 720:3000k)"),
            (["--input-option", "foo"], "--input-option takes KEY=VALUE (got 'foo')"),
            (["--input-format", "mpegts", "--audio-format", "s16le"], "give either --input-format or --audio-format, not both"),
            (["--interstitial", "https://a.example/b.m3u8", "--interstitial-list", "https://a.example/l.json"],
             "give either --interstitial or --interstitial-list, not both"),
            (["--interstitial-list", "https://ads.example/a list.json"],
             "--interstitial-list is an http:// or https:// URL without spaces or quotes (got 'https://ads.example/a list.json')"),
            (["--interstitial-list", "/srv/list.json"],
             "--interstitial-list is an http:// or https:// URL without spaces or quotes (got '/srv/list.json')"),
            (["--input-format", "rawvideo"], "raw video input needs --video-size WxH (and --framerate, --pixel-format if not 25 fps yuv420p)"),
            (["--thumbnail-interval", "0.05"], "--thumbnail-interval must be between 0.1 and 600.0 seconds"),
            (["--thumbnail-grid", "5x0"], "--thumbnail-grid: bad size '5x0'"),
            (["--thumbnail-grid", "21x2"], "--thumbnail-grid takes COLUMNSxROWS, each 1-20 (e.g. 5x5)"),
            (["--thumbnail-grid", "5x-1"], "--thumbnail-grid takes COLUMNSxROWS, each 1-20 (e.g. 5x5)"),
            (["--thumbnail-width", "8"], "--thumbnail-width must be 16-1080 pixels"),
        ]
        for (arguments, message) in cases {
            #expect(ServeFlags.refusal(arguments) == message, "\(arguments)")
        }
        #expect(ServeFlags.refusal(["--part-duration", "0.00"]) == nil)  // any spelling of zero: no parts
        #expect(ServeFlags.refusal(["--input-format", "rawvideo", "--video-size", "320x240"]) == nil)
        #expect(ServeFlags.refusal(["--crf", "0"]) == nil && ServeFlags.refusal(["--crf", "51"]) == nil)
    }

    @Test func packageFlagsAreTheMediaFlags() throws {
        let media = try MediaOptions.parse(["--segment-duration", "2", "--ladder", "480"])
        let o = try media.options()
        #expect(o.segmentDuration == Seconds(milliseconds: 2000) && o.ladder?.text == "480" && o.window == nil && o.partDuration == nil)
        #expect(throws: ValidationError.self) { try MediaOptions.parse(["--segment-duration", "0.05"]).options() }
    }

    @Test func rulesNameTheStreamsKeysInAFile() {
        func refusal(_ o: StreamOptions) -> String? {
            do {
                try o.validate(naming: .stream("cam"))
                return nil
            } catch {
                return error.message
            }
        }
        var o = StreamOptions()
        o.segmentDuration = Seconds(milliseconds: 1000)
        o.partDuration = Seconds(milliseconds: 1000)
        #expect(refusal(o) == "streams.cam: part_duration must be shorter than segment_duration")
        o.partDuration = Seconds(milliseconds: 0)
        #expect(refusal(o) == nil)
        o.segmentDuration = Seconds(milliseconds: 60_001)
        #expect(refusal(o) == "streams.cam: segment_duration must be between 0.1 and 60.0 seconds")
        o = StreamOptions()
        o.window = 0
        #expect(refusal(o) == "streams.cam: window must be between 1 and 1000 segments")
        o = StreamOptions()
        o.crf = -1
        #expect(refusal(o) == "streams.cam: crf must be 0-51")
        o = StreamOptions()
        o.loop = true
        o.input = "-"
        #expect(refusal(o) == "streams.cam: loop needs a file: standard input cannot be rewound")
        o.input = "movie.mp4"
        #expect(refusal(o) == nil)
        o = StreamOptions()
        o.inputFormat = "rawvideo"
        #expect(refusal(o) == "streams.cam: raw video input needs video_size WxH (and framerate, pixel_format if not 25 fps yuv420p)")
        o.videoSize = PictureSize(width: nil, height: 240)
        #expect(refusal(o) == "streams.cam: video_size: bad size '-1x240'")
        o = StreamOptions()
        o.inputFormat = "mpegts"
        o.audioFormat = "s16le"
        #expect(refusal(o) == "streams.cam: give either input_format or audio_format, not both")
        o = StreamOptions()
        o.interstitial = try? AssetURL(parsing: "https://a.example/b.m3u8")
        o.interstitialList = try? AssetURL(parsing: "https://a.example/l.json")
        #expect(refusal(o) == "streams.cam: give either interstitial or interstitial_list, not both")
    }

    @Test func flagNamesFollowTheKeys() {
        #expect(StreamOptions.CodingKeys.segmentDuration.flag == "--segment-duration")
        #expect(StreamOptions.CodingKeys.realtime.flag == "--no-realtime")
        #expect(StreamOptions.CodingKeys.inputOptions.flag == "--input-option")
        // Every key but the input is a flag of `serve`.
        let help = ServeFlags.helpMessage(columns: 1000)
        for key in StreamOptions.CodingKeys.allCases where key != .input {
            #expect(help.contains(key.flag + " ") || help.contains(key.flag + "\n"), "\(key.flag)")
        }
    }

    @Test func inputs() {
        #expect(StreamInput(nil) == .testPattern && StreamInput("") == .testPattern && StreamInput("testpattern:") == .testPattern)
        #expect(StreamInput("-") == .url("-") && StreamInput("movie.mp4") == .url("movie.mp4"))
    }
}
