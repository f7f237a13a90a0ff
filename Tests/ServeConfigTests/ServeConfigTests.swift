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
    """

    static let yaml = """
    streams:
      cam1:
        input: "srt://0.0.0.0:9000?mode=listener"
        ladder: "720,480,360"
        input_options: { passphrase: "0123456789" }
      movie: { input: movie.mp4, loop: true, segment_duration: 2, part_duration: 0.5, window: 10 }
    """

    @Test(arguments: [(toml, ServeConfig.Format.toml), (yaml, .yaml)])
    func readsStreamsInNameOrder(text: String, format: ServeConfig.Format) throws {
        let config = try ServeConfig.parse(text, format: format)
        #expect(config.streams.map(\.name) == ["cam1", "movie"])
        let cam = config.streams[0].entry
        #expect(cam.input == "srt://0.0.0.0:9000?mode=listener" && cam.ladder == "720,480,360")
        #expect(cam.inputOptions == ["passphrase": "0123456789"])
        #expect(cam.loop == nil && cam.segmentDuration == nil)
        let movie = config.streams[1].entry
        #expect(movie.loop == true && movie.window == 10)
        #expect(movie.segmentDuration == "2" && movie.partDuration == "0.5")
    }

    @Test func epochFromInputIsAPerStreamKey() throws {
        let config = try ServeConfig.parse("[streams.a]\ninput = \"udp://239.0.0.1:5000\"\nepoch_from_input = true\n", format: .toml)
        #expect(config.streams[0].entry.epochFromInput == true)
    }

    @Test func typosAndMissingInputsAreErrors() {
        #expect(throws: ConfigError("streams.a: unknown key 'ladr' (known: \(["input", "loop", "realtime", "reconnect", "ladder", "window", "transcode", "crf", "preset", "size", "segment_duration", "part_duration", "video_bitrate", "audio_bitrate", "input_format", "input_options", "epoch_from_input"].joined(separator: ", ")))")) {
            try ServeConfig.parse("[streams.a]\ninput = \"x.mp4\"\nladr = \"720\"\n", format: .toml)
        }
        #expect(throws: ConfigError("streams.a.input: missing")) {
            try ServeConfig.parse("[streams.a]\nloop = true\n", format: .toml)
        }
        #expect(throws: ConfigError("streams.a.loop: expected true or false")) {
            try ServeConfig.parse("streams:\n  a: { input: x.mp4, loop: 3 }\n", format: .yaml)
        }
        #expect(throws: ConfigError("no streams: give at least one [streams.NAME] with an input")) {
            try ServeConfig.parse("streams: {}\n", format: .yaml)
        }
        #expect(throws: ConfigError.self) { try ServeConfig.parse("[streams.a\ninput = 1", format: .toml) }
        #expect(throws: ConfigError.self) { try ServeConfig.parse("streams: [1, 2", format: .yaml) }
    }
}
