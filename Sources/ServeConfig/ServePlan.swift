import MediaPresentation

/// What `serve` runs: its streams, each with its name and effective options. `make` is pure: reading the config
/// file and looking at the disk are injected (`Environment`), and every refusal is one line.
public struct ServePlan: Equatable, Sendable {
    public struct Stream: Equatable, Sendable {
        /// `""`: the root (a single unnamed input); otherwise served under `/NAME/`.
        public var name: String
        /// The flags' options with the config file's entry over them; `input` set unless it is the test pattern.
        public var options: StreamOptions

        public init(name: String, options: StreamOptions) {
            self.name = name
            self.options = options
        }

        public var input: StreamInput { options.source }
        public var window: Int { options.window ?? StreamOptions.defaultWindow }
        /// `"cam1: "` for messages about a named stream, `""` for the root one.
        public var label: String { name.isEmpty ? "" : "\(name): " }
    }

    public var streams: [Stream]

    /// Whether any stream has Low-Latency HLS parts.
    public var lowLatency: Bool { streams.contains { $0.options.hasParts } }

    /// A refusal: `.usage` is a mistake in the command line (exit 64, with the usage), `.failure` one in the config
    /// file or the inputs (exit 1).
    public enum Failure: Error, Equatable, Sendable {
        case usage(String)
        case failure(String)
    }

    /// The little `make` needs from outside.
    public struct Environment: Sendable {
        /// Reads `--config FILE` (`ServeConfig.load`).
        public var loadConfig: @Sendable (String) throws -> ServeConfig
        /// One line for an input that is a local file that does not exist; `nil` for any other input.
        public var missingFileError: @Sendable (String) -> String?
        /// Whether an input is a path on disk (which has no clock for `--epoch-from-input`).
        public var isLocalPath: @Sendable (String) -> Bool

        public init(loadConfig: @escaping @Sendable (String) throws -> ServeConfig,
                    missingFileError: @escaping @Sendable (String) -> String?,
                    isLocalPath: @escaping @Sendable (String) -> Bool) {
            self.loadConfig = loadConfig
            self.missingFileError = missingFileError
            self.isLocalPath = isLocalPath
        }
    }

    /// The streams of `serve [arguments] [--config configPath]`, each with the flags' options (`flags`, checked
    /// already: `StreamFlags.options(with:)`) under its own.
    ///
    /// Arguments: none (the test pattern at the root), one bare input (at the root), or any number of `NAME=INPUT`
    /// (each under `/NAME/`). A name is 1-32 of `[A-Za-z0-9_-]`, not `time` (the clock endpoint) or `metrics` (the
    /// scrape path); anything before the first `=` that is not a name (`srt://host?mode=listener`) makes the argument
    /// a bare input.
    public static func make(flags: StreamOptions, arguments: [String], configPath: String?,
                            environment: Environment) throws(Failure) -> ServePlan {
        let streams: [Stream]
        if let configPath {
            guard arguments.isEmpty else { throw .usage("give the inputs either as arguments or in --config, not both") }
            streams = try fromFile(configPath, flags: flags, environment)
        } else {
            streams = try fromArguments(arguments, flags: flags)
        }
        try checkInputs(streams, environment)
        return ServePlan(streams: streams)
    }

    static func fromArguments(_ arguments: [String], flags: StreamOptions) throws(Failure) -> [Stream] {
        func stream(_ name: String, _ input: String?) throws(Failure) -> Stream {
            var o = flags
            o.input = input
            do {
                try o.validate(naming: .flags)
            } catch {
                throw .usage(error.message)
            }
            return Stream(name: name, options: o)
        }
        if arguments.isEmpty { return [try stream("", nil)] }
        var streams: [Stream] = []
        for arg in arguments {
            if let eq = arg.firstIndex(of: "="), Rendition.isValidName(String(arg[..<eq])) {
                streams.append(try stream(String(arg[..<eq]), String(arg[arg.index(after: eq)...])))
            } else {
                streams.append(try stream("", arg))
            }
        }
        if streams.count == 1 { return streams }
        if let i = streams.firstIndex(where: \.name.isEmpty) {
            throw .usage("with several inputs, name each one: NAME=INPUT (e.g. cam1=srt://0.0.0.0:9000?mode=listener); '\(arguments[i])' has no name")
        }
        var seen = Set<String>()
        for s in streams where !seen.insert(s.name).inserted {
            throw .usage("the stream name '\(s.name)' is given twice")
        }
        if let taken = reservedNames.first(where: { seen.contains($0) }) { throw .usage("'\(taken)' cannot name a stream") }
        return streams
    }

    static func fromFile(_ path: String, flags: StreamOptions, _ environment: Environment) throws(Failure) -> [Stream] {
        let file: ServeConfig
        do {
            file = try environment.loadConfig(path)
        } catch {
            throw .failure(String(describing: error))
        }
        var streams: [Stream] = []
        for entry in file.streams {
            do {
                streams.append(try stream(entry.name, entry: entry.options, flags: flags))
            } catch {
                throw .failure(error.message)
            }
        }
        return streams
    }

    /// Paths of the origin's own that a stream's `/NAME/` would hide: the clock endpoint (`/time`), the Prometheus
    /// scrape path, the control API and the health checks. (A name cannot contain the dot of `/hls.mjs` or
    /// `/streams.json`.)
    public static let reservedNames = ["time", "metrics", "api", "healthz", "readyz"]

    /// What a stream name may be, for the refusal of one that is not.
    public static let nameRule = "a stream name is 1-32 of A-Z a-z 0-9 _ - (and not \(reservedNames.map { "'\($0)'" }.joined(separator: ", ")))"

    /// Whether `name` can name a stream served under `/NAME/`.
    public static func isValidStreamName(_ name: String) -> Bool {
        Rendition.isValidName(name) && !reservedNames.contains(name)
    }

    /// One named stream of a config file (or of the control API): its entry's options over the flags', checked by
    /// every rule; the error names its key (`field`).
    public static func stream(_ name: String, entry: StreamOptions, flags: StreamOptions) throws(ConfigError) -> Stream {
        guard isValidStreamName(name) else {
            throw ConfigError("streams.\(name): \(nameRule)", field: "name")
        }
        let options = entry.merged(over: flags)
        try options.validate(naming: .stream(name))
        return Stream(name: name, options: options)
    }

    /// What the inputs themselves allow: files that exist, a clock for `--epoch-from-input`, one standard input.
    static func checkInputs(_ streams: [Stream], _ environment: Environment) throws(Failure) {
        for s in streams {
            if case .url(let url) = s.input, let error = environment.missingFileError(url) {
                throw .failure(s.label + error)
            }
            if s.options.epochFromInput == true {
                // A file or the test pattern starts its timestamps at zero: there is no clock to share.
                guard case .url(let url) = s.input, !environment.isLocalPath(url) else {
                    throw .usage(s.label + "--epoch-from-input takes the timeline from a live input's clock (MPEG-TS over UDP, RTP, SRT or a pipe); a file or the test pattern has none")
                }
            }
        }
        if streams.filter({ $0.input == .url("-") }).count > 1 {
            throw .usage("only one input can be standard input ('-')")
        }
    }
}
