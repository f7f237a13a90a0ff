import ArgumentParser
import Foundation
import Logging
import MediaCore
import MediaPresentation
import Origin
import Pipeline
import Push
import ServeConfig

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a file, a pipe or the test pattern as live HLS.",
        discussion: """
            INPUT is a file, a URL libavformat can open, or '-' for standard input. Without INPUT, a test pattern (moving bars, frame counter, clock, and a tone with a beep each second) is encoded and served. Files are sent at real-time speed; pipes are taken as they come. Low-Latency HLS parts are on by default; clients that do not know LL-HLS read whole segments.

            Network inputs: an SRT listener (srt://0.0.0.0:9000?mode=listener) or caller, an RTMP listener (rtmp://0.0.0.0:1935/live/KEY?listen) or pull, RTSP pull, UDP/RTP MPEG-TS (multicast too), an upstream HLS URL. When the publisher goes away, the stream goes on: a listener waits for the next publisher, a caller reconnects with back-off (1 s to 10 s), viewers keep the current window meanwhile, and the new connection continues it after EXT-X-DISCONTINUITY (--no-reconnect: the stream ends instead).

            Examples:
              hls-origin serve movie.mp4 --loop
              ffmpeg -f v4l2 -i /dev/video0 -f nut - | hls-origin serve -
              cat capture.ts | hls-origin serve -
              hls-origin serve 'srt://0.0.0.0:9000?mode=listener'    then: ffmpeg -re -i in.mp4 -c copy -f mpegts srt://127.0.0.1:9000
              hls-origin serve 'rtmp://0.0.0.0:1935/live/cam?listen'  then: ffmpeg -re -i in.mp4 -c copy -f flv rtmp://127.0.0.1/live/cam
              hls-origin serve movie.mp4 --loop --no-serve --push http://ingest.example/live/ --push-delete
              ffmpeg -i in.mkv -f rawvideo -pix_fmt yuv420p - | hls-origin serve - --input-format rawvideo --video-size 1280x720 --framerate 30

            Several streams in one process: name each input (NAME=INPUT, NAME is 1-32 of A-Z a-z 0-9 _ -; 'testpattern:' is the test pattern). Each is served under /NAME/ (/NAME/index.m3u8, /NAME/manifest.mpd, its player page at /NAME/); / lists them and /streams.json describes them. The flags apply to every stream; with --record DIR each records to DIR/NAME.
              hls-origin serve cam1='srt://0.0.0.0:9000?mode=listener' movie=movie.mp4 clock=testpattern: --loop
            """)


    @Argument(help: ArgumentHelp("File, URL, or '-' for standard input; or several NAME=INPUT. Omit for the test pattern.", valueName: "input"))
    var inputs: [String] = []

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free port).")
    var port = 8080

    @Option(name: .customLong("config"), help: ArgumentHelp("Streams to serve, with options per stream, from a TOML or YAML file ([streams.NAME] input = ..., \(StreamOptions.CodingKeys.allNames.filter { $0 != "input" }.joined(separator: ", "))). The flags are every stream's defaults.", valueName: "file"))
    var configPath: String?

    // Per-stream flags (each also a key of a config stream): --window, --loop, --no-realtime, --no-reconnect,
    // --epoch-from-input, --part-duration.
    @OptionGroup var stream: StreamFlags

    @Option(name: .customLong("record"), help: ArgumentHelp("Record every init segment, segment and playlist to this directory as they are published (the layout 'package' writes). Its playlists grow (EXT-X-PLAYLIST-TYPE:EVENT) and become VOD with EXT-X-ENDLIST at the end of input or on Ctrl-C; after a crash they play up to the last complete segment. The directory must be empty or absent.", valueName: "dir"))
    var record: String?

    @Option(name: .customLong("dvr-window"), help: ArgumentHelp("Time-shift: the live playlists list this much history to seek back in (90s, 10m, 2h). Needs --record: only the newest --window segments stay in memory, older ones are read back from the recording.", valueName: "duration"))
    var dvrWindow: String?

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("Serve HTTPS with this PEM certificate (chain); HTTP/2 and HTTP/1.1 are offered by ALPN. Needs --tls-key.", valueName: "file"))
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "file"))
    var tlsKey: String?

    // MARK: Hostile clients (limits; see ConnectionLimits)

    @Option(name: .customLong("max-connections"), help: ArgumentHelp("Open connections at once; one more is answered 503 and closed (on the TLS port: closed before its handshake), the others are not disturbed. The file-descriptor limit is raised to fit.", valueName: "n"))
    var maxConnections = ConnectionLimits().maxConnections

    @Option(name: .customLong("max-header-size"), help: ArgumentHelp("Request line plus header fields, in bytes: a longer request line is answered 414, a larger header block 431.", valueName: "bytes"))
    var maxHeaderSize = ConnectionLimits().maxHeaderBytes

    @Option(name: .customLong("header-timeout"), help: ArgumentHelp("Seconds a request head may take to arrive (from its first byte; from the connection's opening for the first request); then 408 and close.", valueName: "seconds"))
    var headerTimeout = "10"

    @Option(name: .customLong("idle-timeout"), help: ArgumentHelp("Seconds a keep-alive connection may wait for its next request.", valueName: "seconds"))
    var idleTimeout = "60"

    @Option(name: .customLong("send-timeout"), help: ArgumentHelp("Seconds a client may leave a response unread (its socket full) before the connection is dropped.", valueName: "seconds"))
    var sendTimeout = "30"

    @Option(name: .customLong("send-buffer"), help: ArgumentHelp("Kernel send buffer per connection in bytes (SO_SNDBUF); 0 leaves it to the kernel's autotuning, which lets a client that does not read pin up to 4 MiB of kernel memory.", valueName: "bytes"))
    var sendBuffer = ConnectionLimits().sendBufferBytes ?? 0

    @Option(name: .customLong("max-blocked-per-client"), help: ArgumentHelp("LL-HLS requests one client address may have waiting at once (blocking reloads, parts not yet out); beyond it 429.", valueName: "n"))
    var maxBlockedPerClient = ConnectionLimits().maxBlockedPerClient

    @Option(name: .customLong("max-blocked"), help: ArgumentHelp("LL-HLS requests waiting at once for all clients; beyond it 503.", valueName: "n"))
    var maxBlocked = ConnectionLimits().maxBlocked

    @Option(name: .customLong("h2-max-resets"), help: ArgumentHelp("RST_STREAM frames one HTTP/2 client may send in 30 s; one more closes its connection with GOAWAY ENHANCE_YOUR_CALM (rapid reset, CVE-2023-44487).", valueName: "n"))
    var h2MaxResets = ConnectionLimits().maxStreamResets

    /// The limits the flags give, or a one-line error.
    func connectionLimits() throws -> ConnectionLimits {
        var l = ConnectionLimits()
        guard (1...1_000_000).contains(maxConnections) else { throw ValidationError("--max-connections must be 1-1000000") }
        guard (1024...16 << 20).contains(maxHeaderSize) else { throw ValidationError("--max-header-size must be 1024-16777216 bytes") }
        guard (1...1_000_000).contains(maxBlockedPerClient) else { throw ValidationError("--max-blocked-per-client must be 1-1000000") }
        guard (1...10_000_000).contains(maxBlocked) else { throw ValidationError("--max-blocked must be 1-10000000") }
        l.maxConnections = maxConnections
        l.maxHeaderBytes = maxHeaderSize
        l.maxBlockedPerClient = maxBlockedPerClient
        l.maxBlocked = maxBlocked
        guard (1...100_000).contains(h2MaxResets) else { throw ValidationError("--h2-max-resets must be 1-100000") }
        l.maxStreamResets = h2MaxResets
        guard sendBuffer == 0 || (4096...64 << 20).contains(sendBuffer) else {
            throw ValidationError("--send-buffer must be 0 (kernel autotuning) or 4096-67108864 bytes")
        }
        l.sendBufferBytes = sendBuffer == 0 ? nil : sendBuffer
        l.headerTimeout = try seconds(headerTimeout, flag: "--header-timeout")
        l.idleTimeout = try seconds(idleTimeout, flag: "--idle-timeout")
        l.sendTimeout = try seconds(sendTimeout, flag: "--send-timeout")
        return l
    }

    private func seconds(_ text: String, flag: String) throws -> Duration {
        guard let v = Double(text), v.isFinite, v >= 0.1, v <= 86_400 else {
            throw ValidationError("\(flag) takes seconds between 0.1 and 86400 (got '\(text)')")
        }
        return .milliseconds(Int64((v * 1000).rounded()))
    }

    @Option(name: .customLong("test-pattern-size"), help: ArgumentHelp("Size of the test pattern.", valueName: "WxH"))
    var testPatternSize = "1280x720"

    @Option(name: .customLong("hlsjs"), help: ArgumentHelp("Local hls.js ES module for the player page (default: .cache/hlsjs/hls.mjs next to the binary's checkout, or $HLS_ORIGIN_HLSJS).", valueName: "path"))
    var hlsjs: String?

    @OptionGroup var media: MediaOptions

    // Access control (issue 12 §4): --auth-token, --auth-expires, --auth-cdn, --auth-basic, --cors-origin.
    @OptionGroup var access: AccessOptions

    // Push to an ingest (issue 10 §4): --push, --push-method, --push-delete, --no-serve.
    @OptionGroup var pushing: PushOptions

    @Flag(help: "No status line.")
    var quiet = false

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .notice

    @Option(name: .customLong("log-format"), help: ArgumentHelp("text: lines for people (and a status line on a terminal); json: one JSON object per line on standard error (time, level, stream, message, fields), no status line.", valueName: "text|json"))
    var logFormat: LogFormat = .text

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0-65535") }
        _ = try flags()
        _ = try testPatternFrame()
        _ = try connectionLimits()
        if pushing.noServe, dvrWindow != nil {
            throw ValidationError("--dvr-window is for the local server; it does nothing with --no-serve")
        }
        if dvrWindow != nil {
            _ = try timeShift()
            if record == nil {
                throw ValidationError("--dvr-window needs --record DIR: history beyond --window is read back from the recording")
            }
        }
    }

    /// The options every stream starts from.
    func flags() throws -> StreamOptions { try stream.options(with: media) }

    /// `--test-pattern-size`: both sides.
    func testPatternFrame() throws -> (width: Int, height: Int) {
        do {
            return try PictureSize(flag: "--test-pattern-size", testPatternSize).exact()
        } catch let error as OptionError {
            throw ValidationError(error.message(option: "--test-pattern-size"))
        }
    }

    /// `--dvr-window`: 1 second to 7 days.
    func timeShift() throws -> MediaTime? {
        guard let dvrWindow else { return nil }
        let history = try LongDuration(flag: "--dvr-window", dvrWindow)
        guard (1_000...7 * 86_400_000).contains(history.milliseconds) else {
            throw ValidationError("--dvr-window must be between 1 second and 7 days")
        }
        return history.time
    }

    func run() async throws {
        let signals = SignalWatcher()
        MemoryTuning.applyForServe()
        // SIGHUP reloads --config (or says it has none): it never ends the process.
        let reloads = ReloadSignal()
        let logger = makeLogger(level: logLevel, format: logFormat)
        let plan = try makePlan()
        // A pulled HLS presentation's subtitle renditions become the stream's own, followed while it runs.
        var served = plan
        let subtitles = await LiveSubtitles.plan(&served, logger: logger)
        let factory = try streamFactory(logger: logger)
        let streams = openStreams(served, factory: factory)
        let following = streams.flatMap { LiveSubtitles.start(subtitles.follows[$0.name] ?? [], for: $0, logger: logger) }
        defer { following.forEach { $0.cancel() } }
        if pushing.noServe {
            let hups = Task { for await _ in reloads.signals { Self.reloadRefused() } }
            await pushOnly(streams, signals: signals)
            hups.cancel()
            return
        }
        let registry = PresentationRegistry()
        let manager = StreamManager(registry: registry, metrics: OriginMetrics(), factory: factory, flags: try flags(),
                                    environment: Self.planEnvironment)
        manager.adopt(streams, plan: plan)
        observeInputs(of: manager)
        var config = try originConfiguration(lowLatency: plan.lowLatency, metrics: manager.metrics)
        config.streams = manager
        config.apiToken = access.apiSecret
        raiseFileLimit(toFit: config.limits.maxConnections)
        let signedPage = try access.signedPage()
        let server = OriginServer(registry: registry, configuration: config, logger: logger)

        let scheme = config.tls == nil ? "http" : "https"
        let started = StartOnce(Thread { streams.forEach { $0.start() } })
        let serverTask = Task {
            try await server.run(onStarted: { boundPort in
                announce(streams, scheme: scheme, port: boundPort, signedPage: signedPage)
                started.start()
            })
        }
        signals.onShutdown { serverTask.cancel() }
        let configPath = self.configPath
        let reloading = Task { for await _ in reloads.signals { await manager.reload(configPath: configPath) } }
        let status = StatusLine.onTerminal(quiet: quiet)
        let statusTask = Task { await reportStatus(manager, initial: streams, server: server, on: status) }

        do {
            try await serverTask.value
        } catch is CancellationError {
        } catch {
            status.clear()
            fail("cannot serve on \(host):\(port): \(describe(error))")
        }
        statusTask.cancel()
        reloading.cancel()
        status.clear()
        // The pipelines flush their last segments on stop; each recording and push ends after it (or without it, if
        // the input is stuck).
        let running = manager.running()
        running.forEach { $0.pipeline.stop() }
        running.forEach { $0.stop() }
        for stream in running { if let pusher = stream.pusher { await finishPush(pusher, stream: stream.name) } }
        _ = signals
        Console.say("stopped")
    }

    /// What `ServePlan.make` asks of the disk, at the start and on a reload.
    static let planEnvironment = ServePlan.Environment(loadConfig: ServeConfig.load, missingFileError: InputSpec.missingFileError,
                                                       isLocalPath: InputSpec.isLocalPath)

    /// SIGHUP with --no-serve.
    private static func reloadRefused() {
        Console.say("reload: streams change at run time only while serving (not with --no-serve); nothing changed")
    }

    /// The streams the arguments, `--config` and the flags ask for; a refusal is one line (exit 64 with the usage for
    /// a mistake in the command line, 1 for one in the config file or the inputs).
    func makePlan() throws -> ServePlan {
        let flags = try flags()
        do {
            return try ServePlan.make(flags: flags, arguments: inputs, configPath: configPath, environment: Self.planEnvironment)
        } catch .usage(let message) {
            throw ValidationError(message)
        } catch .failure(let message) {
            fail(message)
        }
    }

    /// The origin's settings from the flags.
    func originConfiguration(lowLatency: Bool, metrics: OriginMetrics) throws -> OriginConfiguration {
        var config = OriginConfiguration()
        config.host = host
        config.port = port
        config.hlsJSPath = resolveHLSJS()
        config.lowLatencyPage = lowLatency
        config.limits = try connectionLimits()
        config.metrics = metrics
        switch (tlsCert, tlsKey) {
        case let (cert?, key?):
            let files = OriginConfiguration.TLSFiles(certificatePath: cert, privateKeyPath: key)
            do { try files.validate() } catch { fail(describe(error)) }
            config.tls = files
        case (nil, nil): break
        default: throw ValidationError("--tls-cert and --tls-key go together")
        }
        // Access control (issue 12 §4).
        config.access = access.accessControl()
        return config
    }

    private func resolveHLSJS() -> String? {
        var candidates: [String] = []
        if let hlsjs { candidates.append(hlsjs) }
        if let env = ProcessInfo.processInfo.environment["HLS_ORIGIN_HLSJS"] { candidates.append(env) }
        // The checkout that built this binary: .build/<config>/hls-origin -> .cache/hlsjs/hls.mjs
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(dir.appendingPathComponent(".cache/hlsjs/hls.mjs").path)
            dir = dir.deletingLastPathComponent()
        }
        candidates.append(FileManager.default.currentDirectoryPath + "/.cache/hlsjs/hls.mjs")
        if let home = ProcessInfo.processInfo.environment["HOME"] { candidates.append(home + "/.cache/hls-origin/hls.mjs") }
        return candidates.first { FileManager.default.isReadableFile(atPath: $0) }
    }
}
