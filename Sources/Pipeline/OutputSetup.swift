import FFmpegBridge
import Logging
import MediaCore
import MediaPresentation
import Producer

/// One processor and where its outputs go among the output tracks.
struct ProcessorSlot {
    let streamIndex: Int
    let processor: any StreamProcessor
    /// Output track index of the processor's first output.
    let firstTrack: Int
}

/// What a demuxed input becomes: processors per input stream, output tracks, and the renditions they form.
///
/// - Without a ladder: one muxed rendition (video and audio tracks in the same fragments), H.264 and AAC, Opus,
///   AC-3, E-AC-3 or FLAC copied when `--transcode` allows, anything else encoded. With several audio tracks the muxed
///   rendition carries the default one (what a plain client plays) and each other is an audio rendition of group
///   `audio`, which the muxed variant names.
/// - With a ladder: one video rendition per rung (a `source` rung copies the input's H.264; the others are one
///   decode, one scale and one libx264 encode each), and each audio track as its own rendition in group `audio`
///   (`Ladder.renditions`, the same plan the test pattern uses), shared by every rung.
///
/// Which audio tracks, in which order and with which labels: `AudioTrackPlan`.
struct OutputSetup {
    var processors: [ProcessorSlot] = []
    var plan: RenditionPlan
    /// The reference video track is copied (its keyframes decide the cuts).
    var copiesVideo: Bool
    var videoStream: StreamInfo?
    /// The processor whose packets are counted as input video frames for the status line.
    var statsProcessor: Int?
    /// The `mdhd` language (ISO 639-2/T) of output tracks whose input says one, by output track.
    var trackLanguages: [Int: String] = [:]
    /// Which of the closed captions found in the video are signalled, and their languages (`--captions`).
    var captions = CaptionPlan.auto

    /// The output tracks' kinds, in order.
    var kinds: [TrackFormat.Kind] { processors.flatMap(\.processor.outputKinds) }

    /// The output track index of the next processor's first output.
    private var nextTrack: Int { processors.last.map { $0.firstTrack + $0.processor.outputKinds.count } ?? 0 }

    private mutating func add(_ stream: StreamInfo, _ p: any StreamProcessor) {
        processors.append(ProcessorSlot(streamIndex: stream.index, processor: p, firstTrack: nextTrack))
    }

    /// A planned audio track's processor (copy or encode), its output track tagged with its language.
    private mutating func addAudio(_ a: PlannedAudio, demuxer: Demuxer, options: PipelineOptions, logger: Logger) throws {
        guard let stream = demuxer.streams.first(where: { $0.index == a.streamIndex }) else { return }
        if a.iso639T != "und" { trackLanguages[nextTrack] = a.iso639T }
        add(stream, try Self.audioProcessor(stream, demuxer: demuxer, options: options, trackID: UInt32(nextTrack + 1),
                                            logger: logger))
    }

    /// - Parameter rungLaneDepth: how many pictures apart the encoded rungs may run (`RungLanes`): 0 for a paced or
    ///   live input (no added latency), more when the input is read as fast as it goes (`package`, `--no-realtime`).
    static func make(demuxer: Demuxer, url: String, options: PipelineOptions, rungLaneDepth: Int = 0,
                     logger: Logger) throws -> OutputSetup {
        let video = demuxer.streams.first { $0.kind == .video && $0.width > 0 && !isAttachedPicture($0) }
            ?? demuxer.streams.first { $0.kind == .video }
        let audioStreams = demuxer.streams.filter { $0.kind == .audio }
        guard video != nil || !audioStreams.isEmpty else { throw PipelineError.noMediaStreams(url) }
        var setup = OutputSetup(plan: RenditionPlan(renditions: [], groups: []), copiesVideo: false, videoStream: video)
        setup.captions = options.captions
        var ladder: [LadderRung]?
        if let spec = options.ladder {
            if let v = video {
                let planned = try Ladder.plan(spec, sourceWidth: v.width, sourceHeight: v.height,
                                              sourceSampleAspectRatio: v.sampleAspectRatio, sourceCopyable: canCopyVideo(v),
                                              sourceBitRate: v.bitRate > 0 ? v.bitRate : nil,
                                              segmentDuration: options.segmentDuration, codec: options.video.codec)
                planned.notices.forEach { logger.notice("\($0)") }
                ladder = planned.rungs
            } else {
                logger.notice("--ladder: the input has no video; serving its audio as one rendition")
            }
        }
        let (audio, audioNotices) = try AudioTrackPlan.make(audioStreams.map(AudioTrackFacts.init),
                                                            options: options.audioTracks, muxed: ladder == nil)
        audioNotices.forEach { logger.notice("\($0)") }
        if let v = video, let rungs = ladder {
            try setup.addLadder(v, rungs, audio: audio, demuxer: demuxer, options: options, laneDepth: rungLaneDepth,
                                logger: logger)
        } else {
            try setup.addMuxed(video, audio: audio, demuxer: demuxer, options: options, logger: logger)
        }
        return setup
    }

    /// A ladder: the copied `source` rung and one decode for the encoded rungs, then each audio track.
    private mutating func addLadder(_ v: StreamInfo, _ rungs: [LadderRung], audio: [PlannedAudio], demuxer: Demuxer,
                                    options: PipelineOptions, laneDepth: Int, logger: Logger) throws {
        let source = rungs.first(where: \.isSource)
        let encoded = rungs.filter { !$0.isSource }
        if source != nil {
            guard let copy = try videoCopyProcessor(for: v, trackID: UInt32(nextTrack + 1)) else {
                throw PipelineError.cannotCopy(kind: "video", codec: v.codecName)
            }
            add(v, copy)
            copiesVideo = true
            statsProcessor = 0
        }
        if !encoded.isEmpty {
            // Encoded rungs share the copied source's timescale, so segment N has the same tfdt in every rung.
            let timescale = source != nil ? outputTimescale(for: v.timeBase, minimum: 10_000, fallback: 90_000)
                : VideoEncodeStage.defaultTimescale
            let p = try LadderVideoProcessor(demuxer: demuxer, stream: v, rungs: encoded, settings: options.video,
                                             segmentDuration: options.segmentDuration,
                                             firstTrackID: UInt32(nextTrack + 1), timescale: timescale,
                                             followSourceKeyframes: source != nil,
                                             startupKeyframe: source != nil ? nil : options.partDuration,
                                             laneDepth: laneDepth)
            if statsProcessor == nil { statsProcessor = processors.count }
            add(v, p)
        }
        logger.info("video: \(v.codecName) \(v.width)x\(v.height) -> ladder \(rungs.map(\.description).joined(separator: ", "))")
        for a in audio { try addAudio(a, demuxer: demuxer, options: options, logger: logger) }
        plan = Ladder.renditions(rungs, frameRate: v.frameRate, audio: audio, audioBitRate: options.audioBitRate)
    }

    /// The muxed default: the video and the default audio track in one rendition, the other tracks as renditions of
    /// its audio group.
    private mutating func addMuxed(_ video: StreamInfo?, audio: [PlannedAudio], demuxer: Demuxer, options: PipelineOptions,
                                   logger: Logger) throws {
        if let v = video {
            let p: any TrackProcessor
            let copy = options.transcode == .always ? nil : try videoCopyProcessor(for: v, trackID: UInt32(nextTrack + 1))
            if let copy {
                p = copy
                copiesVideo = true
            } else if options.transcode == .never {
                throw PipelineError.cannotCopy(kind: "video", codec: v.codecName)
            } else {
                p = try VideoTranscodeProcessor(demuxer: demuxer, stream: v, settings: options.video,
                                                segmentDuration: options.segmentDuration, trackID: UInt32(nextTrack + 1),
                                                startupKeyframe: options.partDuration)
            }
            statsProcessor = 0
            add(v, p)
            logger.info("video: \(v.codecName) \(v.width)x\(v.height) \(copiesVideo ? "copied" : "encoded to \(options.video.codec)")")
        }
        let main = audio.first(where: \.isDefault)
        if let main { try addAudio(main, demuxer: demuxer, options: options, logger: logger) }
        let muxedTracks = nextTrack
        let alternates = audio.filter { $0 != main }
        for a in alternates { try addAudio(a, demuxer: demuxer, options: options, logger: logger) }
        plan = main.map { main in
            .muxed(trackCount: muxedTracks, main: main.rendition, alternates: alternates.map {
                var r = $0.rendition
                r.bitRate = options.audioBitRate
                return r
            })
        } ?? .muxed(trackCount: muxedTracks)
    }

    private static func audioProcessor(_ a: StreamInfo, demuxer: Demuxer, options: PipelineOptions, trackID: UInt32,
                                       logger: Logger) throws -> any TrackProcessor {
        let p: any TrackProcessor
        if options.transcode != .always, let copy = try audioCopyProcessor(for: a, trackID: trackID) {
            p = copy
        } else if options.transcode == .never {
            throw PipelineError.cannotCopy(kind: "audio", codec: a.codecName)
        } else {
            p = try AudioTranscodeProcessor(demuxer: demuxer, stream: a, codec: options.audioCodec, bitRate: options.audioBitRate,
                                            trackID: trackID)
        }
        let what = p.format.map { "copied (\($0.codecString))" } ?? "copied"
        logger.info("audio: \(a.codecName) \(a.sampleRate) Hz \(a.channelCount) ch \(p is AudioTranscodeProcessor ? "encoded to \(options.audioCodec)" : what)")
        return p
    }

    static func isAttachedPicture(_ s: StreamInfo) -> Bool { s.codecName == "mjpeg" && s.frameRate == nil && s.duration == nil }
}
