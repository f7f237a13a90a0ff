import MediaCore

/// Bit rates and frame rate of a rendition, measured from its segments: the one place `BANDWIDTH`,
/// `AVERAGE-BANDWIDTH` and `FRAME-RATE` are computed, live and VOD alike.
public struct VariantStatistics: Sendable, Equatable {
    /// Peak segment bit rate (bits/s, rounded up): RFC 8216bis §4.4.6.2 BANDWIDTH.
    public var peakBitRate: Int
    /// Total bits / total duration (bits/s): AVERAGE-BANDWIDTH.
    public var averageBitRate: Int
    /// Video samples / duration over the measured segments, `nil` without video samples.
    public var frameRate: Double?

    public init(peakBitRate: Int, averageBitRate: Int, frameRate: Double?) {
        self.peakBitRate = peakBitRate
        self.averageBitRate = averageBitRate
        self.frameRate = frameRate
    }

    /// One measured object: bytes, duration, and the video samples it holds.
    public struct Sample: Sendable {
        public var bytes: Int
        public var duration: MediaTime
        public var videoSamples: Int?
        public init(bytes: Int, duration: MediaTime, videoSamples: Int? = nil) {
            self.bytes = bytes
            self.duration = duration
            self.videoSamples = videoSamples
        }
    }

    /// `nil` when nothing has a positive duration.
    public static func measure(_ samples: [Sample]) -> VariantStatistics? {
        var acc = Accumulator()
        for s in samples { acc.add(s) }
        return acc.result
    }

    /// `measure` one sample at a time: a recording of a day keeps four integers per rendition, not its segments.
    public struct Accumulator: Sendable {
        var peak: Int128 = 0
        var bits: Int128 = 0
        var micros: Int128 = 0
        var frames = 0
        var frameMicros: Int128 = 0

        public init() {}

        public mutating func add(_ s: Sample) {
            guard s.duration.value > 0 && s.duration.timescale > 0 else { return }
            let b = Int128(s.bytes) * 8
            // bits × timescale / value, rounded up.
            let num = b * Int128(s.duration.timescale)
            peak = max(peak, (num + Int128(s.duration.value) - 1) / Int128(s.duration.value))
            bits += b
            let us = Int128(MediaTime.rescale(s.duration.value, from: s.duration.timescale, to: 1_000_000))
            micros += us
            if let n = s.videoSamples, n > 0 {
                frames += n
                frameMicros += us
            }
        }

        /// `nil` when nothing has a positive duration.
        public var result: VariantStatistics? {
            guard micros > 0 else { return nil }
            // The average over durations truncated to microseconds can round one above the exact peak of a window
            // of equal segments: an average is never above the peak.
            let average = min(max(1, (bits * 1_000_000 + micros / 2) / micros), max(peak, 1))
            return VariantStatistics(
                peakBitRate: Int(clamping: Int64(clamping: max(peak, 1))),
                averageBitRate: Int(clamping: Int64(clamping: average)),
                frameRate: frames > 0 && frameMicros > 0 ? Double(frames) * 1_000_000 / Double(frameMicros) : nil)
        }
    }
}
