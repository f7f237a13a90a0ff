import FFmpegBridge
import Foundation
import HLS
import MediaCore
import MediaPresentation
import TestPattern

extension Pipeline {
    /// The built-in test pattern, encoded live: one muxed rendition, or with a ladder one video rendition per rung
    /// (the pattern drawn at each rung's size, every rung with IDRs on the same segment grid) and an audio rendition.
    func runTestPattern(width: Int, height: Int, frameRate: Rational) throws {
        struct VideoRung {
            let generator: TestPatternGenerator
            let stage: VideoEncodeStage
        }
        var rungs: [VideoRung] = []
        var renditions: [Rendition] = []
        let fps = Double(frameRate.numerator) / Double(frameRate.denominator)
        func generator(_ w: Int, _ h: Int) -> TestPatternGenerator {
            TestPatternGenerator(TestPatternConfiguration(width: w, height: h, frameRate: frameRate, sampleRate: 48_000,
                                                          channelCount: 2))
        }
        if let spec = options.ladder {
            let planned = try Ladder.plan(spec, sourceWidth: width, sourceHeight: height, sourceSampleAspectRatio: Rational(1, 1),
                                          sourceIsH264: false, sourceBitRate: nil, segmentDuration: options.segmentDuration)
            planned.notices.forEach { logger.notice("\($0)") }
            for (i, r) in planned.rungs.enumerated() {
                var s = options.video
                s.crf = nil
                s.bitRate = r.bitRate
                s.maxBitRate = r.maxBitRate
                s.bufferSize = r.bufferSize
                rungs.append(VideoRung(generator: generator(r.width, r.height),
                                       stage: try VideoEncodeStage(width: r.width, height: r.height, frameRate: frameRate,
                                                                   settings: s, segmentDuration: options.segmentDuration,
                                                                   trackID: UInt32(i + 1),
                                                                   startupKeyframe: options.partDuration)))
                renditions.append(Rendition(name: r.name, kind: .video, scheme: .nested(r.name),
                                            audioGroup: OutputSetup.audioGroup, declaredBitRate: r.bitRate,
                                            declaredFrameRate: fps))
            }
            renditions.append(Rendition(name: "audio", kind: .audio, scheme: .nested("audio"), audioGroup: OutputSetup.audioGroup,
                                        declaredBitRate: options.audioBitRate))
            logger.info("test pattern ladder: \(planned.rungs.map(\.description).joined(separator: ", "))")
        } else {
            rungs.append(VideoRung(generator: generator(width, height),
                                   stage: try VideoEncodeStage(width: width, height: height, frameRate: frameRate,
                                                               settings: options.video,
                                                               segmentDuration: options.segmentDuration, trackID: 1,
                                                               startupKeyframe: options.partDuration)))
        }
        let audioTrack = rungs.count
        let audioStage = try AudioEncodeStage(sampleRate: 48_000, channelCount: 2, bitRate: options.audioBitRate,
                                              trackID: UInt32(audioTrack + 1))
        let plan = renditions.isEmpty ? RenditionPlan.muxed(trackCount: 2)
            : RenditionPlan(renditions: renditions, groups: (0...audioTrack).map { [$0] })
        var sink = SegmentingSink(output: output, stats: stats, segmentDuration: options.segmentDuration,
                                  partDuration: options.partDuration,
                                  targetDuration: MediaPlaylist.targetDuration(for: [options.segmentDuration]),
                                  waitForSecondKeyframe: false, plan: plan,
                                  kinds: rungs.map { _ in .video } + [.audio], logger: logger, keyframes: keyframes)
        let formats: [TrackFormat?] = rungs.map(\.stage.format) + [audioStage.format]
        let wallStart = Date()
        var pace = Pacer(enabled: options.realtime ?? true)
        var index: Int64 = 0
        var audioPosition: Int64 = 0
        let tb = rungs[0].generator.videoTimeBase
        while !stopped {
            // Frame `index` is due at index * tb seconds after the start.
            let dueMicros = MediaTime.rescale(index, timeBase: tb, to: 1_000_000)
            pace.wait(untilMediaMicros: dueMicros, stop: { self.stopped })
            let wall = WallClock(millisecondsSince1970: Int64(wallStart.timeIntervalSince1970 * 1000) + dueMicros / 1000)
            for (t, rung) in rungs.enumerated() {
                var frame = rung.generator.videoFrame(index: index, wallClock: wall)
                frame.pts = MediaTime.rescale(index, timeBase: tb, to: rung.stage.timescale)
                try sink.accept(try rung.stage.encode(frame), track: t, formats: formats, wallClock: wall)
            }
            // Audio up to the end of this frame's interval.
            let audioEnd = MediaTime.rescale(index + 1, timeBase: tb, to: 48_000)
            if audioEnd > audioPosition {
                let chunk = rungs[0].generator.audioFrame(start: audioPosition, count: Int(audioEnd - audioPosition))
                audioPosition = audioEnd
                try sink.accept(try audioStage.encode(chunk), track: audioTrack, formats: formats, wallClock: wall)
            }
            index += 1
            stats.update {
                $0.videoFrames = index
                $0.mediaMicros = dueMicros
            }
        }
        for (t, rung) in rungs.enumerated() { try sink.accept(try rung.stage.flush(), track: t, formats: formats, wallClock: nil) }
        try sink.accept(try audioStage.flush(), track: audioTrack, formats: formats, wallClock: nil)
        try sink.finish(formats: formats)
    }
}
