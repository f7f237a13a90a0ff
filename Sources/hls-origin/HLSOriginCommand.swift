import ArgumentParser
import Foundation
import Logging
import MediaCore
import Pipeline

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

/// Input and encoding flags shared by `serve` and `package`.
struct MediaOptions: ParsableArguments {
    @Option(name: .customLong("input-format"), help: ArgumentHelp("Force the input format (mpegts, nut, matroska, flv, yuv4mpegpipe, mjpeg, h264, rawvideo, s16le...).", valueName: "name"))
    var inputFormat: String?

    @Option(name: .customLong("input-option"), help: ArgumentHelp("An option for libavformat's demuxer or protocol, as ffmpeg's input options (repeatable): rtsp_transport=tcp, timeout=5000000, passphrase=..., listen_timeout=...", valueName: "key=value"))
    var inputOptions: [String] = []

    @Option(name: .customLong("video-size"), help: ArgumentHelp("Raw video frame size.", valueName: "WxH"))
    var videoSize: String?

    @Option(name: .customLong("pixel-format"), help: ArgumentHelp("Raw video pixel format (default yuv420p).", valueName: "fmt"))
    var pixelFormat: String?

    @Option(help: ArgumentHelp("Frame rate of raw input or of the test pattern (e.g. 30, 30000/1001).", valueName: "rate"))
    var framerate: String?

    @Option(name: .customLong("audio-format"), help: ArgumentHelp("Raw audio input format (s16le, f32le, ...), with --sample-rate and --channels.", valueName: "fmt"))
    var audioFormat: String?

    @Option(name: .customLong("sample-rate"), help: ArgumentHelp("Raw audio sample rate.", valueName: "Hz"))
    var sampleRate: Int?

    @Option(help: ArgumentHelp("Raw audio channel count.", valueName: "n"))
    var channels: Int?

    @Option(name: .customLong("segment-duration"), help: ArgumentHelp("Target segment duration in seconds (segments start on keyframes).", valueName: "seconds"))
    var segmentDuration: String = "1"

    @Option(help: ArgumentHelp("auto: copy H.264/AAC, encode anything else; always; never.", valueName: "mode"))
    var transcode: TranscodeMode = .auto

    @Option(help: ArgumentHelp("x264 preset when encoding.", valueName: "name"))
    var preset: String = "veryfast"

    @Option(help: ArgumentHelp("x264 tune when encoding ('none' for no tune).", valueName: "name"))
    var tune: String = "zerolatency"

    @Option(name: .customLong("video-bitrate"), help: ArgumentHelp("Video bit rate when encoding (e.g. 3M, 2500k). Default: --crf 23.", valueName: "rate"))
    var videoBitrate: String?

    @Option(help: ArgumentHelp("Constant rate factor when encoding (0-51).", valueName: "n"))
    var crf: Int?

    @Option(help: ArgumentHelp("Scale encoded video to this size (WxH, or Wx-1 to keep the aspect ratio).", valueName: "WxH"))
    var size: String?

    @Option(name: .customLong("audio-bitrate"), help: ArgumentHelp("AAC bit rate when encoding.", valueName: "rate"))
    var audioBitrate: String = "128k"

    @Option(help: ArgumentHelp("Adaptive bit rate: one video rendition per rung, plus the audio as its own rendition. Rungs are heights, optionally with a bit rate (720:3000k), or 'source' to copy the input's H.264. Default rates: 1080p 5000k, 720p 2800k, 480p 1400k, 360p 800k, 240p 400k.", valueName: "rungs"))
    var ladder: String?

    @Flag(name: .customLong("wallclock-timestamps"), help: "Ignore input timestamps and stamp frames with their arrival time.")
    var wallclockTimestamps = false

    func pipelineOptions(input: InputSpec) throws -> PipelineOptions {
        var o = PipelineOptions(input: input)
        if inputFormat != nil && audioFormat != nil && inputFormat != audioFormat {
            throw ValidationError("give either --input-format or --audio-format, not both")
        }
        o.inputFormat = inputFormat ?? audioFormat
        for item in inputOptions {
            let kv = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2, !kv[0].isEmpty else { throw ValidationError("--input-option takes KEY=VALUE (got '\(item)')") }
            o.demuxerOptions[kv[0]] = kv[1]
        }
        if let videoSize {
            _ = try parseSize(videoSize, flag: "--video-size")
            o.demuxerOptions["video_size"] = videoSize
        }
        if let pixelFormat { o.demuxerOptions["pixel_format"] = pixelFormat }
        if let framerate {
            _ = try parseRate(framerate)
            o.demuxerOptions["framerate"] = framerate
        }
        if let sampleRate { o.demuxerOptions["sample_rate"] = String(sampleRate) }
        if let channels { o.demuxerOptions["ch_layout"] = channels == 1 ? "mono" : channels == 2 ? "stereo" : "\(channels)c" }
        if inputFormat == "rawvideo" && videoSize == nil {
            throw ValidationError("raw video input needs --video-size WxH (and --framerate, --pixel-format if not 25 fps yuv420p)")
        }
        o.segmentDuration = try parseDuration(segmentDuration, flag: "--segment-duration", range: 100...60_000)
        o.transcode = transcode
        o.video.preset = preset
        o.video.tune = tune == "none" ? nil : tune
        o.video.crf = crf
        if let videoBitrate { o.video.bitRate = try parseBitRate(videoBitrate, flag: "--video-bitrate") }
        if let size {
            let (w, h) = try parseSize(size, flag: "--size", allowAuto: true)
            o.video.width = w
            o.video.height = h
        }
        o.audioBitRate = try parseBitRate(audioBitrate, flag: "--audio-bitrate")
        o.wallclockTimestamps = wallclockTimestamps
        if let ladder {
            do {
                _ = try Ladder.parse(ladder)
            } catch {
                throw ValidationError(error.description)
            }
            o.ladder = ladder
        }
        return o
    }

    var testPatternRate: Rational {
        get throws { try framerate.map(parseRate) ?? Rational(30, 1) }
    }
}

extension TranscodeMode: ExpressibleByArgument {}

func parseSize(_ s: String, flag: String, allowAuto: Bool = false) throws -> (Int?, Int?) {
    let parts = s.lowercased().split(separator: "x")
    guard parts.count == 2 else { throw ValidationError("\(flag) takes WIDTHxHEIGHT, e.g. 1280x720 (got '\(s)')") }
    func dim(_ p: Substring) throws -> Int? {
        if allowAuto && p == "-1" { return nil }
        guard let v = Int(p), v > 0, v <= 16384 else { throw ValidationError("\(flag): bad size '\(s)'") }
        return v
    }
    let w = try dim(parts[0]), h = try dim(parts[1])
    if w == nil && h == nil { throw ValidationError("\(flag): give at least one of width and height") }
    return (w, h)
}

func parseRate(_ s: String) throws -> Rational {
    let parts = s.split(separator: "/")
    if parts.count == 2, let n = Int32(parts[0]), let d = Int32(parts[1]), n > 0, d > 0 { return Rational(n, d) }
    if parts.count == 1, let n = Int32(s), n > 0, n <= 240 { return Rational(n, 1) }
    throw ValidationError("--framerate takes a positive rate like 30 or 30000/1001 (got '\(s)')")
}

/// Seconds as a decimal string ("1", "0.5", "2.002") -> exact milliseconds.
func parseDuration(_ s: String, flag: String, range: ClosedRange<Int64>) throws -> MediaTime {
    let parts = s.split(separator: ".", omittingEmptySubsequences: false)
    guard (1...2).contains(parts.count), let whole = Int64(parts[0].isEmpty ? "0" : parts[0]), whole >= 0, whole < 1000 else {
        throw ValidationError("\(flag) takes seconds, e.g. 1 or 0.5 (got '\(s)')")
    }
    var ms = whole * 1000
    if parts.count == 2 {
        let frac = String(parts[1].prefix(3)).padding(toLength: 3, withPad: "0", startingAt: 0)
        guard let f = Int64(frac) else { throw ValidationError("\(flag): bad number '\(s)'") }
        ms += f
    }
    guard range.contains(ms) else {
        throw ValidationError("\(flag) must be between \(Double(range.lowerBound) / 1000) and \(Double(range.upperBound) / 1000) seconds")
    }
    return MediaTime(value: ms, timescale: 1000)
}

func parseBitRate(_ s: String, flag: String) throws -> Int {
    let lower = s.lowercased()
    var mult = 1
    var digits = Substring(lower)
    if lower.hasSuffix("k") { mult = 1000; digits = digits.dropLast() } else if lower.hasSuffix("m") { mult = 1_000_000; digits = digits.dropLast() }
    guard let v = Double(digits), v > 0 else { throw ValidationError("\(flag) takes a rate like 128k or 3M (got '\(s)')") }
    return Int(v * Double(mult))
}

/// One line on standard error, then exit: for errors a user can act on.
func fail(_ message: String, code: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("hls-origin: error: \(message)\n".utf8))
    exit(code)
}

func makeLogger(level: Logger.Level) -> Logger {
    Pipeline.configureLibraryLogging(level)
    LoggingSystem.bootstrap { label in
        var h = StreamLogHandler.standardError(label: label)
        h.logLevel = level
        return h
    }
    return Logger(label: "hls-origin")
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// A human description of an error: FFmpeg and pipeline errors already read as one line.
func describe(_ error: Error) -> String {
    String(describing: error)
}
