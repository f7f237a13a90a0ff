import MediaCore

/// Forces a keyframe at each segment boundary, by timestamp, so encoded segments are exact; with `startup`, one
/// more at that offset from the first frame (the end of the short first segment that LL-HLS starts with).
///
/// A frame up to `tolerance` (half a frame) before a grid point takes the keyframe: an input whose frame rate is
/// not exactly what its time base suggests (30 fps stamped as 1000000/33333) puts its frames a hair before the
/// grid, and the keyframe belongs on the frame nearest to it, not one frame later.
public struct KeyframeGrid: Sendable {
    /// Ticks between grid points (one segment duration).
    public let interval: Int64
    public private(set) var startup: Int64?
    /// The next grid point, once the first frame was seen.
    public private(set) var next: Int64?
    public let tolerance: Int64
    private var startupAt: Int64?

    public init(interval: Int64, startup: Int64? = nil, tolerance: Int64 = 0) {
        self.interval = max(1, interval)
        self.startup = startup
        self.tolerance = max(0, min(tolerance, interval / 2))
    }

    /// Whether the frame at `pts` (increasing from call to call) must be a keyframe.
    public mutating func isBoundary(_ pts: Int64) -> Bool {
        // Int128: no timestamp, however far out, overflows the grid arithmetic.
        let p = Int128(pts) + Int128(tolerance)
        guard let n = next else {
            next = Int64(clamping: Int128(pts) + Int128(interval))
            startupAt = startup.map { Int64(clamping: Int128(pts) + Int128($0)) }
            return true
        }
        if let s = startupAt, p >= Int128(s) {
            startupAt = nil
            if p < Int128(n) { return true }
        }
        if p >= Int128(n) {
            // Skip boundaries that fell in a gap.
            let k = Int128(n) + (p - Int128(n)) / Int128(interval) * Int128(interval)
            next = Int64(clamping: k + Int128(interval))
            return true
        }
        return false
    }
}
