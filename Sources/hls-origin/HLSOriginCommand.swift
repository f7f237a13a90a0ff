import ArgumentParser
import Foundation
import Logging

@main
struct HLSOriginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hls-origin",
        abstract: "A fragmented-MP4 segmenter and live HLS origin.",
        discussion: """
            Serve a file, a pipe or a camera as live HLS (fMP4, 1-second segments) and watch it in a browser:
              hls-origin serve                         built-in test pattern
              hls-origin serve movie.mp4 --loop        a file, paced at real time, forever
              ffmpeg -f v4l2 -i /dev/video0 -f nut - | hls-origin serve -
            Then open http://127.0.0.1:8080/ (player) or http://127.0.0.1:8080/index.m3u8 (any HLS client).

            Package a file as VOD HLS for a static web server:
              hls-origin package movie.mp4 -o out/
            """,
        version: "0.1.0",
        subcommands: [ServeCommand.self, PackageCommand.self, SignCommand.self],
        defaultSubcommand: nil)
}

/// One line on standard error (a JSON line with `--log-format json`), then exit: for errors a user can act on.
func fail(_ message: String, code: Int32 = 1) -> Never {
    Console.say(message, level: .error)
    exit(code)
}

func makeLogger(level: Logger.Level, format: LogFormat) -> Logger {
    Console.bootstrap(format, level: level)
    return Logger(label: "hls-origin")
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// A human description of an error: FFmpeg and pipeline errors already read as one line.
func describe(_ error: Error) -> String {
    String(describing: error)
}
