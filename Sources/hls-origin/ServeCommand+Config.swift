import ArgumentParser
import MediaCore
import MediaPresentation
import Pipeline
import ServeConfig

/// One stream to serve: its name, pipeline options and window.
struct PlannedStream {
    var spec: StreamSpec
    var options: PipelineOptions
    var window: Int
}

extension StreamEntry {
    /// The command line's options with this entry's values over them; errors name the entry (`streams.cam1: ...`).
    func apply(to base: PipelineOptions, window baseWindow: Int, name: String, testPattern: InputSpec) throws -> PlannedStream {
        func fail(_ message: String) -> ValidationError { ValidationError("streams.\(name): \(message)") }
        guard Rendition.isValidName(name), name != "time", name != "metrics" else {
            throw fail("a stream name is 1-32 of A-Z a-z 0-9 _ - (and not 'time' or 'metrics')")
        }
        var o = base
        o.input = input == StreamSpec.testPatternInput || input.isEmpty ? testPattern : .url(input)
        if let loop { o.loop = loop }
        if let realtime { o.realtime = realtime }
        if let reconnect { o.reconnect = reconnect }
        if let epochFromInput { o.epochFromInput = epochFromInput }
        do {
            if let ladder {
                _ = try Ladder.parse(ladder)
                o.ladder = ladder
            }
            if let segmentDuration { o.segmentDuration = try parseDuration(segmentDuration, flag: "segment_duration", range: 100...60_000) }
            if let partDuration {
                o.partDuration = partDuration == "0" || partDuration == "0.0"
                    ? nil : try parseDuration(partDuration, flag: "part_duration", range: 50...5_000)
            }
            if let p = o.partDuration, p >= o.segmentDuration { throw fail("part_duration must be shorter than segment_duration") }
            if let transcode {
                guard let mode = TranscodeMode(rawValue: transcode) else { throw fail("transcode is auto, always or never (got '\(transcode)')") }
                o.transcode = mode
            }
            if let videoBitrate { o.video.bitRate = try parseBitRate(videoBitrate, flag: "video_bitrate") }
            if let audioBitrate { o.audioBitRate = try parseBitRate(audioBitrate, flag: "audio_bitrate") }
            if let crf {
                guard (0...51).contains(crf) else { throw fail("crf must be 0-51") }
                o.video.crf = crf
            }
            if let preset { o.video.preset = preset }
            if let size {
                let (w, h) = try parseSize(size, flag: "size", allowAuto: true)
                o.video.width = w
                o.video.height = h
            }
            if let inputFormat { o.inputFormat = inputFormat }
            if let inputOptions { o.demuxerOptions.merge(inputOptions) { $1 } }
        } catch let e as ValidationError where !e.message.hasPrefix("streams.") {
            throw fail(e.message)
        } catch let e as LadderError {
            throw fail(e.description)
        }
        if let window, !(1...1000).contains(window) { throw fail("window must be between 1 and 1000 segments") }
        if o.loop, case .url("-") = o.input { throw fail("loop needs a file: standard input cannot be rewound") }
        return PlannedStream(spec: StreamSpec(name: name, input: o.input), options: o, window: window ?? baseWindow)
    }
}
