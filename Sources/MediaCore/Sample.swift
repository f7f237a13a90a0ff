/// One access unit ready for an MP4 track: a video frame or an audio frame.
public struct Sample: Sendable {
    /// H.264: NAL units each preceded by a 4-byte big-endian length (never Annex-B start codes).
    /// AAC: one raw access unit (no ADTS header).
    public var data: [UInt8]
    /// Decode timestamp in ticks of the track timescale.
    public var dts: Int64
    /// Presentation timestamp in ticks of the track timescale (`pts - dts` is the composition offset).
    public var pts: Int64
    /// A sync sample (IDR for H.264; every AAC frame).
    public var isSync: Bool
    /// The source's own duration in ticks, if known. Used only where no next sample exists (end of input).
    public var durationHint: Int64?

    public init(data: [UInt8], dts: Int64, pts: Int64, isSync: Bool, durationHint: Int64? = nil) {
        self.data = data
        self.dts = dts
        self.pts = pts
        self.isSync = isSync
        self.durationHint = durationHint
    }
}

/// Wall-clock time in milliseconds since the Unix epoch (for `EXT-X-PROGRAM-DATE-TIME`).
public struct WallClock: Sendable, Hashable, Comparable {
    public var millisecondsSince1970: Int64
    public init(millisecondsSince1970: Int64) { self.millisecondsSince1970 = millisecondsSince1970 }
    public static func < (a: WallClock, b: WallClock) -> Bool { a.millisecondsSince1970 < b.millisecondsSince1970 }
}
