/// An uncompressed picture in planar YUV 4:2:0 (8-bit), the format the H.264 encoder takes.
public struct RawVideoFrame: Sendable {
    public var width: Int
    public var height: Int
    /// Y plane, `width * height` bytes, rows packed without padding.
    public var y: [UInt8]
    /// Cb and Cr planes, `((width + 1) / 2) * ((height + 1) / 2)` bytes each.
    public var cb: [UInt8]
    public var cr: [UInt8]
    /// Presentation time in ticks of the source's video time base.
    public var pts: Int64

    public init(width: Int, height: Int, y: [UInt8], cb: [UInt8], cr: [UInt8], pts: Int64) {
        self.width = width
        self.height = height
        self.y = y
        self.cb = cb
        self.cr = cr
        self.pts = pts
    }
}

/// Uncompressed audio: interleaved signed 16-bit samples.
public struct RawAudioFrame: Sendable {
    public var sampleRate: Int
    public var channelCount: Int
    /// Interleaved samples, `frameCount * channelCount` values.
    public var samples: [Int16]
    /// Presentation time in ticks of `sampleRate` (i.e. the index of the first sample frame).
    public var pts: Int64

    public init(sampleRate: Int, channelCount: Int, samples: [Int16], pts: Int64) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.samples = samples
        self.pts = pts
    }

    public var frameCount: Int { channelCount == 0 ? 0 : samples.count / channelCount }
}
