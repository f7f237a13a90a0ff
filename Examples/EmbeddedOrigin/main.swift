// An app with its own Hummingbird routes and a live HLS stream inside it, through the HLSOrigin library:
//
//   swift run EmbeddedOriginExample [port]
//   curl http://127.0.0.1:8090/hello                 the app's own route
//   open http://127.0.0.1:8090/live/                 the origin's player page
//   ffmpeg -i http://127.0.0.1:8090/live/index.m3u8 …
//
// The stream is the built-in test pattern handed to a Pipeline; an app with its own encoder would publish its
// samples with a SamplePublisher into the same presentation instead.
import Foundation
import HLSOrigin
import Hummingbird
import Logging

@main
struct EmbeddedOriginExample {
    static func main() async throws {
        let port = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 8090
        let logger = {
            var l = Logger(label: "embedded-origin")
            l.logLevel = .notice
            return l
        }()

        Pipeline.configureLibraryLogging(.notice)  // FFmpeg's own log lines only at debug

        // 1. A presentation: one muxed rendition at the root of the mount point, a 6-segment window.
        let presentation = LivePresentation.live(windowSize: 6)

        // 2. A producer: the test pattern at 640x360, LL-HLS parts of 1/3 s, on its own thread (it blocks).
        var options = PipelineOptions(input: .testPattern(width: 640, height: 360, frameRate: Rational(30, 1)))
        options.partDuration = MediaTime(value: 333, timescale: 1000)
        let pipeline = Pipeline(options: options, output: presentation, logger: logger)
        let producer = Thread {
            do { try pipeline.run() } catch { logger.error("pipeline: \(error)") }
            presentation.finish()
        }
        producer.start()

        // 3. The app's router: its own routes, and the origin mounted at /live.
        let router = Router()
        router.get("/hello") { _, _ in "an app with a live stream at /live/index.m3u8\n" }
        var origin = OriginConfiguration()
        origin.hlsJSPath = ProcessInfo.processInfo.environment["HLS_ORIGIN_HLSJS"]  // else the page imports hls.js from a CDN
        router.add(middleware: OriginMiddleware(registry: PresentationRegistry(root: presentation), mountedAt: "/live",
                                                configuration: origin, logger: logger))
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                              onServerRunning: { channel in
                                  let line = "listening on http://127.0.0.1:\(channel.localAddress?.port ?? port)/\n"
                                  FileHandle.standardOutput.write(Data(line.utf8))
                              }, logger: logger)
        try await app.runService()
        pipeline.stop()
    }
}
