import Foundation
import Logging
import MediaCore
import Producer
import TestPattern

/// The built-in test pattern, encoded live: one muxed rendition, or with a ladder one video rendition per rung (the
/// pattern drawn at each rung's size, every rung with IDRs on the same segment grid) and an audio rendition. Frame
/// `index` is due `index / fps` after the start; each read makes one frame per rung and the audio up to its end.
final class TestPatternSource: MediaSource {
    private struct VideoRung {
        let generator: TestPatternGenerator
        let stage: VideoEncodeStage
    }
    private let rungs: [VideoRung]
    private let audioStage: AudioEncodeStage
    let plan: RenditionPlan
    let kinds: [TrackFormat.Kind]
    let keyframes: TimingPlanner.Keyframes? = .onGrid
    let pacedByDefault = true
    let reconnect: ReconnectPolicy? = nil
    let endIsDisconnect = false
    private let timeBase: Rational
    /// The rungs' lanes (`RungLanes`): pictures 2 apart when the input is not paced (the `--no-realtime` ladder's
    /// speed), in step when it is (no added latency).
    private let lanes: RungLanes<[Sample]>
    /// Per picture handed to the lanes and not back yet: its wall clock, media position and audio.
    private var inFlight: [(wall: WallClock, position: Int64, audio: [Sample])] = []
    private let wallStart = Date()
    private var index: Int64 = 0
    private var audioPosition: Int64 = 0
    private var announced = false

    init(width: Int, height: Int, frameRate: Rational, options: PipelineOptions, logger: Logger) throws {
        func generator(_ w: Int, _ h: Int) -> TestPatternGenerator {
            TestPatternGenerator(TestPatternConfiguration(width: w, height: h, frameRate: frameRate, sampleRate: 48_000,
                                                          channelCount: 2))
        }
        var rungs: [VideoRung] = []
        if let spec = options.ladder {
            let planned = try Ladder.plan(spec, sourceWidth: width, sourceHeight: height, sourceSampleAspectRatio: Rational(1, 1),
                                          sourceCopyable: false, sourceBitRate: nil, segmentDuration: options.segmentDuration,
                                          codec: options.video.codec)
            planned.notices.forEach { logger.notice("\($0)") }
            for (i, r) in planned.rungs.enumerated() {
                rungs.append(VideoRung(generator: generator(r.width, r.height),
                                       stage: try VideoEncodeStage(width: r.width, height: r.height, frameRate: frameRate,
                                                                   settings: r.settings(options.video),
                                                                   segmentDuration: options.segmentDuration,
                                                                   trackID: UInt32(i + 1), startupKeyframe: options.partDuration,
                                                                   encoderThreads: planned.rungs.count > 1 ? 1 : 0)))
            }
            plan = Ladder.renditions(planned.rungs, frameRate: frameRate, audioBitRate: options.audioBitRate)
            logger.info("test pattern ladder: \(planned.rungs.map(\.description).joined(separator: ", "))")
        } else {
            rungs.append(VideoRung(generator: generator(width, height),
                                   stage: try VideoEncodeStage(width: width, height: height, frameRate: frameRate,
                                                               settings: options.video, segmentDuration: options.segmentDuration,
                                                               trackID: 1, startupKeyframe: options.partDuration)))
            plan = .muxed(trackCount: 2)
        }
        self.rungs = rungs
        lanes = RungLanes(count: rungs.count, depth: RungLanes<[Sample]>.depth(readAsFastAsItGoes: !(options.realtime ?? pacedByDefault)))
        audioStage = try AudioEncodeStage(codec: options.audioCodec, sampleRate: 48_000, channelCount: 2, bitRate: options.audioBitRate,
                                          trackID: UInt32(rungs.count + 1))
        kinds = rungs.map { _ in .video } + [.audio]
        timeBase = rungs[0].generator.videoTimeBase
    }

    func next() throws -> SourceBatch? {
        var batch = SourceBatch()
        if !announced {
            announced = true
            // (The test pattern's encoders give their configuration at open: SVT-AV1, not libaom-av1.)
            for (t, r) in rungs.enumerated() { if let f = r.stage.format { batch.events.append(.format(track: t, f)) } }
            batch.events.append(.format(track: rungs.count, audioStage.format))
        }
        let dueMicros = MediaTime.rescale(index, timeBase: timeBase, to: 1_000_000)
        let wall = WallClock(millisecondsSince1970: Int64(wallStart.timeIntervalSince1970 * 1000) + dueMicros / 1000)
        // Audio up to the end of this frame's interval, kept with its picture.
        var audio: [Sample] = []
        let audioEnd = MediaTime.rescale(index + 1, timeBase: timeBase, to: 48_000)
        if audioEnd > audioPosition {
            let chunk = rungs[0].generator.audioFrame(start: audioPosition, count: Int(audioEnd - audioPosition))
            audioPosition = audioEnd
            audio = try audioStage.encode(chunk)
        }
        inFlight.append((wall, dueMicros, audio))
        // Each rung draws and encodes its picture on a lane of its own (`RungLanes`).
        let done = try lanes.submit { [rungs, index, timeBase] t in
            var frame = rungs[t].generator.videoFrame(index: index, wallClock: wall)
            frame.pts = MediaTime.rescale(index, timeBase: timeBase, to: rungs[t].stage.timescale)
            return try rungs[t].stage.encode(frame)
        }
        index += 1
        var events = batch.events
        for encoded in done { add(encoded, to: &events, batch: &batch) }
        batch.events = events
        return batch
    }

    /// A picture back from the lanes: its rungs' samples and its audio, with its wall clock.
    private func add(_ encoded: [[Sample]], to events: inout [SourceEvent], batch: inout SourceBatch) {
        let p = inFlight.removeFirst()
        for (t, samples) in encoded.enumerated() { events.append(.samples(track: t, samples, wallClock: p.wall)) }
        if !p.audio.isEmpty { events.append(.samples(track: rungs.count, p.audio, wallClock: p.wall)) }
        batch.position = p.position
        batch.videoFrames += 1
    }

    func flush() throws -> [SourceEvent] {
        var events: [SourceEvent] = []
        var batch = SourceBatch()
        for encoded in try lanes.drain() { add(encoded, to: &events, batch: &batch) }
        for (t, r) in rungs.enumerated() { events.append(.samples(track: t, try r.stage.flush(), wallClock: nil)) }
        events.append(.samples(track: rungs.count, try audioStage.flush(), wallClock: nil))
        return events
    }

    func reopen() -> Bool { false }

    deinit { lanes.stop() }
}
