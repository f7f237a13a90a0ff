import FFmpegBridge
import MediaCore

/// The encoded video rungs of a ladder from one input stream: one decode, then per rung one libswscale pass and
/// one encode (no decode per rung), the rungs of a picture at the same time on every core (`RungWork`). Every rung forces its IDRs at the same media times, so segment N and
/// part N.i start at the same time in every rung: on the segment grid, or — when a `source` rung copies the
/// input — at the source's keyframe times.
final class LadderVideoProcessor: StreamProcessor {
    private struct Rung {
        let scaler: VideoScaler
        let stage: VideoEncodeStage
    }
    private let rungs: [Rung]
    private let decoder: VideoDecoder
    private let timeBase: Rational
    private let followSourceKeyframes: Bool
    /// PTS (stream time base) of the input's keyframes not decoded yet.
    private var sourceKeyframes: Set<Int64> = []

    var outputKinds: [TrackFormat.Kind] { rungs.map { _ in .video } }
    var outputFormats: [TrackFormat?] { rungs.map { $0.stage.format.carrying(captions.found) } }
    private(set) var formatVersion = 1
    /// The input's closed captions: the decoded frames keep them as side data through the scalers to every encoder.
    private var captions: CaptionProbe

    init(demuxer: Demuxer, stream: StreamInfo, rungs: [LadderRung], settings: VideoSettings, segmentDuration: MediaTime,
         firstTrackID: UInt32, timescale: Int32, followSourceKeyframes: Bool, startupKeyframe: MediaTime?) throws {
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
                        stage: try VideoEncodeStage(width: r.width, height: r.height, frameRate: rate, settings: r.settings(settings),
                                                    segmentDuration: segmentDuration, trackID: firstTrackID + UInt32(i),
                                                    timescale: timescale, startupKeyframe: startupKeyframe))
        }
    }

    func process(_ packet: Packet) throws -> [[Sample]] {
        if captions.look(at: packet) { formatVersion += 1 }
        if followSourceKeyframes, packet.isKeyframe, let pts = packet.pts ?? packet.dts { sourceKeyframes.insert(pts) }
        var out = rungs.map { _ in [Sample]() }
        for frame in try decoder.decodeFrames(packet) { try encode(frame, into: &out) }
        return out
    }

    /// Every rung gets its IDR on the same frame.
    func splice(at time: MediaTime) { rungs.forEach { $0.stage.splice(at: time) } }

    func flush() throws -> [[Sample]] {
        var out = rungs.map { _ in [Sample]() }
        for frame in try decoder.flushFrames() { try encode(frame, into: &out) }
        for (i, r) in rungs.enumerated() { out[i] += try r.stage.flush() }
        return out
    }

    private func encode(_ frame: VideoFrame, into out: inout [[Sample]]) throws {
        let timescale = rungs[0].stage.timescale
        let pts = MediaTime.rescale(frame.pts, timeBase: timeBase, to: timescale)
        let key: Bool? = followSourceKeyframes ? sourceKeyframes.remove(frame.pts) != nil : nil
        if followSourceKeyframes, sourceKeyframes.count > 64 {
            // Keyframes whose frame never came out of the decoder (corrupt input): forget the old ones.
            sourceKeyframes = sourceKeyframes.filter { $0 > frame.pts }
        }
        let encoded = try RungWork.map(rungs.count) { i in
            try rungs[i].stage.encode(try rungs[i].scaler.scale(frame), pts: pts, forceKeyframe: key)
        }
        for (i, samples) in encoded.enumerated() { out[i] += samples }
    }
}
