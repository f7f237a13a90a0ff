import ServeConfig
import Testing

/// Config files by path, and the local files that exist.
private func environment(files: [String: String] = [:], existing: Set<String> = ["movie.mp4"]) -> ServePlan.Environment {
    ServePlan.Environment(
        loadConfig: { path in
            guard let text = files[path] else { throw ConfigError("cannot read \(path): No such file or directory") }
            return try ServeConfig.parse(text, format: path.hasSuffix(".toml") ? .toml : .yaml)
        },
        missingFileError: { url in
            isLocal(url) && !existing.contains(url) ? "cannot open '\(url)': No such file or directory" : nil
        },
        isLocalPath: isLocal)
}

@Sendable private func isLocal(_ url: String) -> Bool { !(url.contains("://") || url == "-" || url.hasPrefix("pipe:")) }

private func plan(_ arguments: [String], flags: [String] = [], config: String? = nil,
                  files: [String: String] = [:]) throws(ServePlan.Failure) -> ServePlan {
    let options: StreamOptions
    do {
        options = try ServeFlags.options(flags)
    } catch {
        fatalError("flags \(flags): \(error)")
    }
    return try ServePlan.make(flags: options, arguments: arguments, configPath: config, environment: environment(files: files))
}

@Suite struct ServePlanTests {
    @Test func noInputIsTheTestPatternAtTheRoot() throws {
        let p = try plan([])
        #expect(p.streams.map(\.name) == [""] && p.streams[0].input == .testPattern && p.streams[0].window == 6)
        #expect(p.lowLatency && p.streams[0].label == "")
        #expect(try !plan([], flags: ["--part-duration", "0"]).lowLatency)
    }

    @Test func oneBareInput() throws {
        let p = try plan(["movie.mp4"], flags: ["--loop", "--window", "3"])
        #expect(p.streams.count == 1 && p.streams[0].name == "" && p.streams[0].input == .url("movie.mp4"))
        #expect(p.streams[0].options.loop == true && p.streams[0].window == 3)
        // A URL with '=' in its query is a bare input, not a name.
        #expect(try plan(["srt://0.0.0.0:9000?mode=listener"]).streams[0].input == .url("srt://0.0.0.0:9000?mode=listener"))
    }

    @Test func namedInputs() throws {
        let p = try plan(["cam1=srt://0.0.0.0:9000?mode=listener", "movie=movie.mp4", "clock=testpattern:"])
        #expect(p.streams.map(\.name) == ["cam1", "movie", "clock"])
        #expect(p.streams.map(\.input) == [.url("srt://0.0.0.0:9000?mode=listener"), .url("movie.mp4"), .testPattern])
        #expect(p.streams[1].label == "movie: ")
    }

    @Test func argumentErrorsAreUsage() {
        let cases: [([String], [String], String)] = [
            (["a.mp4", "b.mp4"], [], "with several inputs, name each one: NAME=INPUT (e.g. cam1=srt://0.0.0.0:9000?mode=listener); 'a.mp4' has no name"),
            (["x=testpattern:", "x=testpattern:"], [], "the stream name 'x' is given twice"),
            (["time=testpattern:", "b=testpattern:"], [], "'time' cannot name a stream"),
            (["metrics=testpattern:", "b=testpattern:"], [], "'metrics' cannot name a stream"),
            (["a=-", "b=-"], [], "only one input can be standard input ('-')"),
            (["-"], ["--loop"], "--loop needs a file: standard input cannot be rewound"),
            ([], ["--epoch-from-input"], "--epoch-from-input takes the timeline from a live input's clock (MPEG-TS over UDP, RTP, SRT or a pipe); a file or the test pattern has none"),
            (["a=movie.mp4", "b=udp://239.0.0.1:5000"], ["--epoch-from-input"], "a: --epoch-from-input takes the timeline from a live input's clock (MPEG-TS over UDP, RTP, SRT or a pipe); a file or the test pattern has none"),
            (["x.mp4"], [], "cannot open 'x.mp4': No such file or directory"),
        ]
        for (arguments, flags, message) in cases {
            #expect(throws: message.hasPrefix("cannot open") ? ServePlan.Failure.failure(message) : .usage(message), "\(arguments) \(flags)") {
                try plan(arguments, flags: flags)
            }
        }
        #expect(throws: Never.self) { try plan(["udp://239.0.0.1:5000"], flags: ["--epoch-from-input"]) }
    }

    static let streams = """
    [streams.movie]
    input = "movie.mp4"
    loop = true
    segment_duration = 2

    [streams.clock]
    input = "testpattern:"
    part_duration = 0
    window = 4
    input_options = { b = "2" }
    """

    @Test func configFileStreamsGoOverTheFlags() throws {
        let p = try plan([], flags: ["--window", "8", "--preset", "fast", "--input-option", "a=1"], config: "s.toml",
                         files: ["s.toml": Self.streams])
        #expect(p.streams.map(\.name) == ["clock", "movie"])
        let clock = p.streams[0], movie = p.streams[1]
        #expect(clock.input == .testPattern && clock.window == 4 && !clock.options.hasParts)
        #expect(clock.options.inputOptions == ["a": "1", "b": "2"] && clock.options.preset == "fast")
        #expect(movie.input == .url("movie.mp4") && movie.window == 8 && movie.options.loop == true)
        #expect(movie.options.segmentDuration == Seconds(milliseconds: 2000) && movie.options.partDuration == Seconds(milliseconds: 333))
        #expect(p.lowLatency)
    }

    @Test func configErrors() {
        let cases: [(String, String)] = [
            ("[streams.a]\ninput = \"testpattern:\"\nsegment_duration = 0.05\n", "streams.a: segment_duration must be between 0.1 and 60.0 seconds"),
            ("[streams.a]\ninput = \"testpattern:\"\npart_duration = 2\n", "streams.a: part_duration must be shorter than segment_duration"),
            ("[streams.a]\ninput = \"testpattern:\"\nwindow = 0\n", "streams.a: window must be between 1 and 1000 segments"),
            ("[streams.a]\ninput = \"testpattern:\"\ncrf = 60\n", "streams.a: crf must be 0-51"),
            ("[streams.a]\ninput = \"-\"\nloop = true\n", "streams.a: loop needs a file: standard input cannot be rewound"),
            ("[streams.a]\ninput = \"testpattern:\"\nladder = \"abc\"\n", "streams.a: --ladder: 'abc' is not a height (use e.g. 720,480,360 or 720:3000k)"),
            ("[streams.a]\ninput = \"nothere.mp4\"\n", "a: cannot open 'nothere.mp4': No such file or directory"),
            ("[streams.a]\nloop = true\n", "streams.a.input: missing"),
            ("[\"streams\".\"a b\"]\ninput = \"testpattern:\"\n", "streams.a b: a stream name is 1-32 of A-Z a-z 0-9 _ - (and not 'time', 'metrics', 'api', 'healthz', 'readyz')"),
            ("[streams.time]\ninput = \"testpattern:\"\n", "streams.time: a stream name is 1-32 of A-Z a-z 0-9 _ - (and not 'time', 'metrics', 'api', 'healthz', 'readyz')"),
        ]
        for (text, message) in cases {
            #expect(throws: ServePlan.Failure.failure(message), "\(text)") {
                try plan([], config: "c.toml", files: ["c.toml": text])
            }
        }
        #expect(throws: ServePlan.Failure.failure("cannot read absent.toml: No such file or directory")) {
            try plan([], config: "absent.toml")
        }
        // The flags under a stream: a part the flags set that a stream's segment is too short for.
        #expect(throws: ServePlan.Failure.failure("streams.a: part_duration must be shorter than segment_duration")) {
            try plan([], flags: ["--part-duration", "0.9"], config: "c.toml",
                     files: ["c.toml": "[streams.a]\ninput = \"testpattern:\"\nsegment_duration = 0.5\n"])
        }
    }

    @Test func configUsageErrors() {
        // Checked before the file is read: the typo in it is not the problem.
        #expect(throws: ServePlan.Failure.usage("give the inputs either as arguments or in --config, not both")) {
            try plan(["x.mp4"], config: "typo.toml", files: ["typo.toml": "[streams.a]\ninput = \"x\"\nladr = 1\n"])
        }
        #expect(throws: ServePlan.Failure.usage("only one input can be standard input ('-')")) {
            try plan([], config: "c.yaml", files: ["c.yaml": "streams:\n  a: { input: \"-\" }\n  b: { input: \"-\" }\n"])
        }
        #expect(throws: ServePlan.Failure.usage("a: --epoch-from-input takes the timeline from a live input's clock (MPEG-TS over UDP, RTP, SRT or a pipe); a file or the test pattern has none")) {
            try plan([], config: "c.yaml", files: ["c.yaml": "streams:\n  a: { input: \"testpattern:\", epoch_from_input: true }\n"])
        }
    }
}
