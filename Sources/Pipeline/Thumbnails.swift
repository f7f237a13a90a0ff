import FFmpegBridge
import Foundation
import MediaCore
import Synchronization

/// The newest H.264 keyframe of each output video track, kept as it passes to the segmenter (the sample's bytes are
/// shared, not copied), for thumbnails. Written by the pipeline's thread, read by any.
public final class LatestKeyframes: Sendable {
    public struct Keyframe: Sendable {
        public var sample: [UInt8]
        public var format: TrackFormat
        /// Decode time in the track's timescale: tells a new keyframe from the one already made into a thumbnail.
        public var dts: Int64
    }
    private let byTrack = Mutex<[Int: Keyframe]>([:])

    public init() {}

    func record(_ sample: Sample, track: Int, format: TrackFormat?) {
        guard sample.isSync, let format, format.kind == .video, case .h264 = format.codec else { return }
        byTrack.withLock { $0[track] = Keyframe(sample: sample.data, format: format, dts: sample.dts) }
    }

    /// The newest keyframe of the smallest video track (a ladder's lowest rung decodes fastest), if any.
    public var smallest: Keyframe? {
        byTrack.withLock { k in k.values.min { $0.format.width * $0.format.height < $1.format.width * $1.format.height } }
    }
}

/// A JPEG of a stream's newest keyframe, made on request and kept until a newer keyframe is at least `minInterval`
/// old, so any number of viewers of the stream list cost one decode per stream every few seconds.
public final class Thumbnailer: Sendable {
    private struct Made {
        var track: TrackFormat
        var dts: Int64
        var jpeg: [UInt8]
        var at: ContinuousClock.Instant
    }
    private let keyframes: LatestKeyframes
    private let maxWidth: Int
    private let minInterval: Duration
    /// Serializes the making (one decoder at a time per stream) and holds the last result.
    private let made = Mutex<Made?>(nil)

    public init(keyframes: LatestKeyframes, maxWidth: Int = 320, minInterval: Duration = .seconds(2)) {
        self.keyframes = keyframes
        self.maxWidth = maxWidth
        self.minInterval = minInterval
    }

    /// The current thumbnail; `nil` before the first keyframe. Blocks while one is made (a few milliseconds).
    public func jpeg() throws -> [UInt8]? {
        try made.withLock { made in
            let now = ContinuousClock.now
            if let m = made, now - m.at < minInterval { return m.jpeg }
            guard let k = keyframes.smallest else { return made?.jpeg }
            if let m = made, m.dts == k.dts, m.track == k.format { return m.jpeg }
            guard case .h264(let avcC) = k.format.codec else { return made?.jpeg }
            let jpeg = try JPEGThumbnail.make(avcC: avcC, sample: k.sample, sampleAspect: k.format.sampleAspectRatio,
                                              maxWidth: maxWidth)
            made = Made(track: k.format, dts: k.dts, jpeg: jpeg, at: now)
            return jpeg
        }
    }
}
