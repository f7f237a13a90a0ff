import FFmpegBridge
import MediaCore

/// The encoded video rungs of a ladder from one input stream: one decode, then per rung one libswscale pass and
/// one encode (no decode per rung), each rung on a lane of its own (`RungLanes`): up to `laneDepth` pictures apart
/// when the input is read as fast as it goes, so that a lane done early starts on the next picture while a bigger
/// rung still encodes this one; together (depth 0) when paced or live. Every rung forces its IDRs at the same media times, so segment N and
/// part N.i start at the same time in every rung: on the segment grid, or — when a `source` rung copies the
/// input — at the source's keyframe times.
final class LadderVideoProcessor: StreamProcessor {
    private struct Rung {
        let scaler: VideoScaler
        let stage: VideoEncodeStage
    }
    private let rungs: [Rung]
    private let lanes: RungLanes<[Sample]>
    /// Samples that came back from the lanes while `splice` waited for them, or a lane's error: the next call's.
    private var held: Result<[[Sample]], any Error>
    private let decoder: VideoDecoder
    private let timeBase: Rational
    private let followSourceKeyframes: Bool
    /// PTS (stream time base) of the input's keyframes not decoded yet.
    private var sourceKeyframes: Set<Int64> = []

    var outputKinds: [TrackFormat.Kind] { rungs.map { _ in .video } }
    var outputFormats: [TrackFormat?] { rungs.map { $0.stage.format?.carrying(captions.found) } }
    /// Changes with the captions found and with each rung whose format became known at its first packet.
    var formatVersion: Int { captionChanges + rungs.filter { $0.stage.format != nil }.count }
    private var captionChanges = 1
    /// The input's closed captions: the decoded frames keep them as side data through the scalers to every encoder.
    private var captions: CaptionProbe

    init(demuxer: Demuxer, stream: StreamInfo, rungs: [LadderRung], settings: VideoSettings, segmentDuration: MediaTime,
         firstTrackID: UInt32, timescale: Int32, followSourceKeyframes: Bool, startupKeyframe: MediaTime?,
         laneDepth: Int = 0) throws {
        guard stream.width > 0, stream.height > 0 else {
            throw PipelineError.missingCodecConfiguration(
                "the input's video stream (\(stream.codecName)) has no picture size: the data is not a valid stream (raw video needs --video-size)")
        }
        decoder = try demuxer.makeVideoDecoder(stream: stream.index, output: VideoOutputFormat())
        timeBase = stream.timeBase
        self.followSourceKeyframes = followSourceKeyframes
        captions = CaptionProbe(stream: stream)
        let rate = stream.frameRate ?? Rational(30, 1)
        self.rungs = try rungs.enumerated().map { i, r in
            Rung(scaler: VideoScaler(width: r.width, height: r.height),
                        stage: try VideoEncodeStage(width: r.width, height: r.height, frameRate: rate,
                                                    settings: r.settings(settings, exactKeyframes: followSourceKeyframes),
                                                    segmentDuration: segmentDuration, trackID: firstTrackID + UInt32(i),
                                                    timescale: timescale, startupKeyframe: startupKeyframe))
        }
        lanes = RungLanes(count: rungs.count, depth: laneDepth)
        held = .success(rungs.map { _ in [] })
    }

    deinit { lanes.stop() }

    func process(_ packet: Packet) throws -> [[Sample]] {
        if captions.look(at: packet) { captionChanges += 1 }
        if followSourceKeyframes, packet.isKeyframe, let pts = packet.pts ?? packet.dts { sourceKeyframes.insert(pts) }
        var out = try takeHeld()
        for frame in try decoder.decodeFrames(packet) { try encode(frame, into: &out) }
        return out
    }

    /// Every rung gets its IDR on the same frame: the pictures in flight are finished first (the stages are the
    /// lanes' while they encode), their samples held for the next call.
    func splice(at time: MediaTime) {
        held = held.flatMap { out in Result { try lanes.drain() }.map { pictures in
            var out = out
            add(pictures, to: &out)
            return out
        } }
        rungs.forEach { $0.stage.splice(at: time) }
    }

    func flush() throws -> [[Sample]] {
        var out = try takeHeld()
        for frame in try decoder.flushFrames() { try encode(frame, into: &out) }
        add(try lanes.drain(), to: &out)
        for (i, r) in rungs.enumerated() { out[i] += try r.stage.flush() }
        return out
    }

    private func takeHeld() throws -> [[Sample]] {
        defer { held = .success(rungs.map { _ in [] }) }
        return try held.get()
    }

    private func add(_ pictures: [[[Sample]]], to out: inout [[Sample]]) {
        for encoded in pictures { for (i, samples) in encoded.enumerated() { out[i] += samples } }
    }

    private func encode(_ frame: VideoFrame, into out: inout [[Sample]]) throws {
        let timescale = rungs[0].stage.timescale
        let pts = MediaTime.rescale(frame.pts, timeBase: timeBase, to: timescale)
        let key: Bool? = followSourceKeyframes ? sourceKeyframes.remove(frame.pts) != nil : nil
        if followSourceKeyframes, sourceKeyframes.count > 64 {
            // Keyframes whose frame never came out of the decoder (corrupt input): forget the old ones.
            sourceKeyframes = sourceKeyframes.filter { $0 > frame.pts }
        }
        // Each lane scales and encodes for its own rung only; the frame is read-only and kept by the closure.
        let done = try lanes.submit { [rungs] i in
            try rungs[i].stage.encode(try rungs[i].scaler.scale(frame), pts: pts, forceKeyframe: key)
        }
        add(done, to: &out)
    }
}
