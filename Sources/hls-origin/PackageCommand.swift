import ArgumentParser
import ContentProtection
import Foundation
import Logging
import MediaCore
import MediaPresentation
import Pipeline
import ServeConfig

struct PackageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "package",
        abstract: "Package a file as VOD HLS (fMP4) in a directory, at full speed.",
        discussion: """
            Writes OUTPUT/index.m3u8 (multivariant), OUTPUT/stream.m3u8 (EXT-X-PLAYLIST-TYPE:VOD), OUTPUT/init.mp4 and OUTPUT/seg<N>.m4s, ready for any static web server.

            With --single-file, each rendition is one CMAF file instead (OUTPUT/stream.mp4, or OUTPUT/720p.mp4 ... with --ladder): init segment, sidx, then every segment, addressed with EXT-X-BYTERANGE.

            Example: hls-origin package movie.mp4 -o out/
            """)

    @Argument(help: ArgumentHelp("File, URL, or '-' for standard input.", valueName: "input"))
    var input: String

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("Output directory (created if missing).", valueName: "dir"))
    var output: String

    @OptionGroup var media: MediaOptions

    @Flag(name: .customLong("single-file"), help: "One CMAF file per rendition (init, sidx, segments) addressed by byte ranges.")
    var singleFile = false

    @Flag(help: "No progress line.")
    var quiet = false

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .notice

    @Option(name: .customLong("log-format"), help: ArgumentHelp("text: lines for people (and a progress line on a terminal); json: one JSON object per line on standard error (time, level, stream, message, fields), no progress line.", valueName: "text|json"))
    var logFormat: LogFormat = .text

    func validate() throws {
        let o = try media.options()
        // RFC 8216 §5.2: CBC restarts on each segment boundary, so one CBC stream over a whole file cannot be cut
        // into segments by byte range; segments encrypted one by one and laid end to end would be a file of padded
        // pieces no player reads as one resource. Refused rather than written wrong. CENC fragments (cbcs, cenc) are
        // position-independent (saio counts from each moof), so they tile one file like clear ones.
        if singleFile && o.encrypt == .aes128 {
            throw ValidationError("--single-file cannot be used with --encrypt: AES-128 encrypts each segment as a file of its own")
        }
    }

    func run() async throws {
        let logger = makeLogger(level: logLevel, format: logFormat)
        if let error = InputSpec.missingFileError(input) { fail(error) }
        var stream = try media.options()
        stream.input = input
        stream.realtime = false
        var options = PipelineOptions(stream)
        // `package URL` of an HLS presentation: its subtitle renditions and default audio language, which libavformat's
        // HLS demuxer leaves out (`RemoteSelections`), fetched first into a directory of our own (made only when there
        // are some). It goes when `run` returns or throws, and before any failure ends the process (`fail` exits: the
        // `defer` would not run).
        let remoteDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("hls-origin-package-\(getpid())").path
        let removeRemote = { try? FileManager.default.removeItem(atPath: remoteDirectory) }
        let fail = { (message: String) -> Never in
            removeRemote()
            hls_origin.fail(message)
        }
        defer { removeRemote() }
        do {
            if let remote = try await RemoteSelections.read(input, into: remoteDirectory, logger: logger) {
                if !singleFile { options.subtitles += remote.subtitles }
                if stream.defaultAudio == nil, let language = remote.defaultAudio.flatMap(LanguageTag.init) {
                    options.audioTracks.defaultLanguage = language
                }
            }
        } catch {
            fail(describe(error))
        }
        let stats = PipelineStats()
        let writer: VODWriter
        do {
            let single = singleFile ? SingleFileOptions(segmentDuration: options.segmentDuration,
                                                        expectedDuration: { stats.inputDuration }) : nil
            writer = try VODWriter(directory: URL(fileURLWithPath: output), singleFile: single,
                                   thumbnails: options.thumbnails != nil ? TileSheets<[UInt8]>(retention: nil) { $0 } : nil,
                                   dashTrickMode: options.dashTrickMode)
        } catch {
            fail("cannot create '\(output)': \(error.localizedDescription)")
        }
        // The tiler goes first: the last sheet is made before the writer lists the sheets.
        let tiler = options.thumbnails.flatMap { settings in
            writer.thumbnails.map { ThumbnailTiler(settings: settings, segmentDuration: options.segmentDuration, sink: $0, logger: logger) }
        }
        let consumers: any PresentationConsumer = tiler.map { FanOut([$0, writer]) } ?? writer
        let pipeline = Pipeline(options: options, output: try EncryptionSetup(stream, contentID: URL(fileURLWithPath: output).lastPathComponent,
                                                                            waitForKeys: true, logger: logger)?.stage(consumers) ?? consumers, logger: logger,
                                stats: stats)
        let status = StatusLine.onTerminal(quiet: quiet)
        let done = PipelineOutcome()
        let statusThread = Thread {
            while case .running = done.get() {
                Thread.sleep(forTimeInterval: 0.5)
                let s = pipeline.stats.snapshot()
                status.show(String(format: "packaged %.1f s of media | speed %.0fx | segments %d", s.mediaSeconds, s.speed, s.segments))
            }
        }
        statusThread.start()
        do {
            try pipeline.run()
            done.set(.finished)
        } catch {
            done.set(.failed(describe(error)))
            status.clear()
            fail(describe(error))
        }
        status.clear()
        let count: Int
        do {
            count = try writer.finish()
        } catch {
            fail("cannot write playlists in '\(output)': \(describe(error))")
        }
        if count == 0 { fail("'\(input)' produced no segments") }
        if !quiet {
            let s = pipeline.stats.snapshot()
            Console.say(String(format: "wrote %d segments (%.1f s of media) to %@ in %.2f s",
                               count, s.mediaSeconds, output, s.wallSeconds))
        }
    }
}
