import ServeConfig
import Testing

/// The control API's bodies (`StreamRequest`) and a reload's diff (`ReloadPlan`): the config file's keys and rules,
/// read from JSON; every refusal one line naming its field.
@Suite struct StreamRequestTests {
    static let environment = ServePlan.Environment(
        loadConfig: { throw ConfigError("no config file here: \($0)") },
        missingFileError: { url in url == "movie.mp4" || url.contains("://") ? nil : "cannot open '\(url)': No such file or directory" },
        isLocalPath: { !$0.contains("://") })

    static func add(_ json: String, flags: [String] = []) throws(ConfigError) -> ServePlan.Stream {
        let options: StreamOptions
        do { options = try ServeFlags.options(flags) } catch { fatalError("\(error)") }
        return try StreamRequest.add(Array(json.utf8), flags: options, environment: environment)
    }

    static func refusal(_ json: String) -> ConfigError? {
        do {
            _ = try add(json)
            return nil
        } catch {
            return error
        }
    }

    @Test func aBodyReadsAsTheConfigFileDoes() throws {
        let s = try Self.add(#"{"name": "cam4", "input": "movie.mp4", "loop": true, "segment_duration": 2, "window": 4, "input_options": {"probesize": "64"}}"#,
                             flags: ["--window", "8", "--crf", "20"])
        #expect(s.name == "cam4" && s.input == .url("movie.mp4") && s.options.loop == true && s.window == 4)
        #expect(s.options.segmentDuration == Seconds(milliseconds: 2000) && s.options.crf == 20, "the flags are the defaults")
        #expect(s.options.inputOptions == ["probesize": "64"])
        // The same entry in a config file plans to the same stream.
        let file = try ServeConfig.parse("[streams.cam4]\ninput = \"movie.mp4\"\nloop = true\nsegment_duration = 2\nwindow = 4\ninput_options = { probesize = \"64\" }\n", format: .toml)
        let planned = try ServePlan.stream("cam4", entry: file.streams[0].options, flags: try ServeFlags.options(["--window", "8", "--crf", "20"]))
        #expect(planned == s)
        #expect(try Self.add(#"{"name": "clock", "input": "testpattern:"}"#).input == .testPattern)
    }

    @Test func refusalsNameTheirField() {
        let cases: [(String, String?, String)] = [
            (#"{"name": "a", "input": "movie.mp4", "segment_duration": "x"}"#, "segment_duration", "streams.a: segment_duration takes seconds"),
            (#"{"name": "a", "input": "movie.mp4", "segment_duration": 0.05}"#, "segment_duration", "streams.a: segment_duration must be between 0.1 and 60.0 seconds"),
            (#"{"name": "a", "input": "movie.mp4", "part_duration": 2}"#, "part_duration", "streams.a: part_duration must be shorter than segment_duration"),
            (#"{"name": "a", "input": "movie.mp4", "window": 0}"#, "window", "streams.a: window must be between 1 and 1000 segments"),
            (#"{"name": "a", "input": "movie.mp4", "window": "six"}"#, "window", "streams.a.window: expected an integer"),
            (#"{"name": "a", "input": "movie.mp4", "loop": "yes"}"#, "loop", "streams.a.loop: expected true or false"),
            (#"{"name": "a", "input": "movie.mp4", "ladr": "720"}"#, "ladr", "streams.a: unknown key 'ladr' (known: input, loop"),
            (#"{"name": "a", "input": "movie.mp4", "<x>": 1}"#, nil, "streams.a: unknown key (not shown)"),
            (#"{"name": "a", "loop": true}"#, "input", "streams.a.input: missing"),
            (#"{"name": "a", "input": "nothere.mp4"}"#, "input", "a: cannot open 'nothere.mp4': No such file or directory"),
            (#"{"name": "a", "input": "-"}"#, "input", "streams.a: input '-' (standard input) can only be given when the process starts"),
            (#"{"name": "a", "input": "movie.mp4", "epoch_from_input": true}"#, "epoch_from_input", "streams.a: epoch_from_input takes"),
            (#"{"input": "movie.mp4"}"#, "name", "name: missing"),
            (#"{"name": 4, "input": "movie.mp4"}"#, "name", "name: expected a string"),
            (#"{"name": "a b", "input": "movie.mp4"}"#, "name", "name: a stream name is 1-32 of A-Z a-z 0-9 _ -"),
            (#"{"name": "api", "input": "movie.mp4"}"#, "name", "name: a stream name is 1-32"),
            (#"{"name": "readyz", "input": "movie.mp4"}"#, "name", "name: a stream name is 1-32"),
            (#"[1, 2]"#, nil, "the body is not a JSON object"),
            (#"{"name": "a""#, nil, "the body is not a JSON object"),
            ("", nil, "the body is empty"),
            ("null", nil, "the body is not a JSON object"),
        ]
        for (json, field, message) in cases {
            let error = Self.refusal(json)
            #expect(error?.field == field, "\(json): \(String(describing: error))")
            #expect(error?.message.hasPrefix(message) == true, "\(json): \(String(describing: error))")
            #expect(error?.message.contains("\n") == false, "one line")
        }
    }

    @Test func hostileBodiesAreRefusedNotCrashedOn() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        for json in [deep, "{\"name\": \"\u{0}\"}", String(repeating: "x", count: StreamRequest.maxBody + 1),
                     "{\"name\": \"a\", \"input\": \"movie.mp4\", \"window\": 1e400}", "\u{FEFF}{}"] {
            #expect(Self.refusal(json) != nil)
        }
    }

    @Test func aPatchListsWhatWouldChange() throws {
        let current = try Self.add(#"{"name": "cam4", "input": "movie.mp4", "window": 4}"#)
        func changed(_ json: String) throws(ConfigError) -> [String] { try StreamRequest.patch(Array(json.utf8), current: current).changed }
        #expect(try changed(#"{"window": 4}"#) == [], "the current value")
        #expect(try changed(#"{"window": 5, "loop": false, "input": "movie.mp4"}"#) == ["window"])
        #expect(try changed(#"{"segment_duration": "2", "window": 5}"#) == ["segment_duration", "window"])
        #expect(throws: ConfigError("streams.cam4: window must be between 1 and 1000 segments")) { try changed(#"{"window": 0}"#) }
        #expect(try StreamRequest.patch(Array(#"{"window": 9}"#.utf8), current: current).options.window == 9)
        #expect((try? changed(#"{"name": "other"}"#)) == nil)
        #expect((try? changed(#"{"ladr": 1}"#)) == nil)
    }
}

@Suite struct ReloadPlanTests {
    static func stream(_ name: String, _ input: String, window: Int? = nil) -> ServePlan.Stream {
        var o = StreamOptions()
        o.input = input
        o.window = window
        return ServePlan.Stream(name: name, options: o)
    }

    @Test func theDiffByNameAndOptions() {
        let running = [Self.stream("a", "a.mp4"), Self.stream("b", "b.mp4"), Self.stream("c", "c.mp4", window: 6)]
        let planned = [Self.stream("d", "d.mp4"), Self.stream("c", "c.mp4", window: 3), Self.stream("a", "a.mp4")]
        let diff = ReloadPlan.diff(running: running, planned: planned)
        #expect(diff == ReloadPlan(add: [Self.stream("d", "d.mp4")], remove: ["b"], replace: [Self.stream("c", "c.mp4", window: 3)], keep: ["a"]))
        #expect(diff.summary == "added d; removed b; replaced c; 1 unchanged")
        #expect(!diff.changesNothing)
        let same = ReloadPlan.diff(running: running, planned: running.reversed())
        #expect(same.changesNothing && same.keep == ["a", "b", "c"] && same.summary == "3 unchanged")
        #expect(ReloadPlan.diff(running: [], planned: running).add.map(\.name) == ["a", "b", "c"])
        #expect(ReloadPlan.diff(running: running, planned: []).remove == ["a", "b", "c"])
    }
}
