import Foundation
import MediaCore
import MediaPresentation
import Synchronization

/// Live figures for the status line. Written by the pipeline thread, read by anyone.
public final class PipelineStats: Sendable {
    struct Values {
        var videoFrames: Int64 = 0
        var mediaMicros: Int64 = 0
        var segments: Int = 0
        var bytesOut: Int64 = 0
        /// Sample bytes handed to the segmenter (after transcoding, if any).
        var bytesIn: Int64 = 0
        var mediaOutMicros: Int64 = 0
        var startedAt: ContinuousClock.Instant?
        var inputDurationMicros: Int64?
        /// Times a network input was taken up again after its publisher went away.
        var reconnects = 0
    }
    private let values = Mutex(Values())
    public init() {}

    /// Counts what the producer publishes (segments, output bytes and media time of the first rendition): a consumer
    /// beside the pipeline's output, so the figures come from the events themselves.
    var tap: some PresentationConsumer { Tap(stats: self) }

    private struct Tap: PresentationConsumer {
        let stats: PipelineStats
        func consume(_ event: PresentationEvent) throws {
            guard case .segment(let r, let info, _) = event else { return }
            stats.update {
                $0.bytesOut += Int64(info.byteCount)
                if r == 0 {
                    $0.segments += 1
                    $0.mediaOutMicros += MediaTime.rescale(info.duration.value, from: info.duration.timescale, to: 1_000_000)
                }
            }
        }
    }

    func update(_ f: (inout Values) -> Void) { values.withLock { f(&$0) } }

    /// The duration the input file declares (its container's), once it is open; `nil` for pipes, live URLs,
    /// looped inputs and files that do not say.
    public var inputDuration: MediaTime? {
        values.withLock { v in v.inputDurationMicros.map { MediaTime(value: $0, timescale: 1_000_000) } }
    }

    public struct Snapshot: Sendable {
        public var videoFrames: Int64
        public var mediaSeconds: Double
        public var wallSeconds: Double
        public var segments: Int
        /// Output bits per second of media.
        public var bitRate: Double
        /// Sample bytes handed to the segmenter (encoded media: after transcoding, if any).
        public var inputBytes: Int64 = 0
        /// Times a network input was taken up again.
        public var reconnects: Int = 0
        public var speed: Double { wallSeconds > 0 ? mediaSeconds / wallSeconds : 0 }
    }

    public func snapshot() -> Snapshot {
        values.withLock { v in
            let wall = v.startedAt.map { (ContinuousClock.now - $0) } ?? .zero
            let wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
            return Snapshot(videoFrames: v.videoFrames, mediaSeconds: Double(v.mediaMicros) / 1e6, wallSeconds: wallSeconds,
                            segments: v.segments,
                            bitRate: v.mediaOutMicros > 0 ? Double(v.bytesOut) * 8e6 / Double(v.mediaOutMicros) : 0,
                            inputBytes: v.bytesIn, reconnects: v.reconnects)
        }
    }
}

func micros(_ d: Duration) -> Int64 {
    d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000
}

/// Sleeps so that media time `t` is handed on no earlier than `t` after the first call (like ffmpeg's `-re`).
struct Pacer {
    let enabled: Bool
    private var origin: ContinuousClock.Instant?
    private var originMedia: Int64 = 0
    /// The latest media time paced.
    private var latest: Int64 = 0
    /// A media time this far from the latest one is a timestamp jump (the sink turns it into a discontinuity): the
    /// pace restarts from it instead of sleeping through the gap or rushing to catch up.
    static let jumpMicros: Int64 = 5_000_000

    init(enabled: Bool) { self.enabled = enabled }

    mutating func wait(untilMediaMicros t: Int64, stop: () -> Bool) {
        guard enabled else { return }
        guard let origin, abs(t - latest) <= Self.jumpMicros else {
            self.origin = .now
            originMedia = t
            latest = t
            return
        }
        latest = max(latest, t)
        let due = origin + .microseconds(t - originMedia)
        while !stop() {
            let now = ContinuousClock.now
            if now >= due { return }
            // Sleep in short steps so stop() is noticed quickly.
            let left = due - now
            Thread.sleep(forTimeInterval: min(0.1, Double(micros(left)) / 1e6))
        }
    }
}
