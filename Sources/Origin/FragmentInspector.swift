/// Reads just enough of an fMP4 media segment to count samples per track (`moof/traf/tfhd` + `trun`),
/// so the origin can *measure* the frame rate it advertises. Defensive: malformed input yields what was
/// read so far, never a crash.
///
/// ```
/// |styp| |moof| |mfhd|
///              |traf| |tfhd| track_ID
///                     |tfdt|
///                     |trun| sample_count
/// |mdat|
/// ```
enum FragmentInspector {
    /// `track_ID -> total trun sample_count` over every `moof` in the segment.
    static func sampleCounts(in bytes: [UInt8]) -> [UInt32: Int] {
        var counts: [UInt32: Int] = [:]
        forEachBox(bytes, 0, bytes.count) { type, body in
            guard type == fourcc("moof") else { return }
            forEachBox(bytes, body.lowerBound, body.upperBound) { type, traf in
                guard type == fourcc("traf") else { return }
                var trackID: UInt32?
                var samples = 0
                forEachBox(bytes, traf.lowerBound, traf.upperBound) { type, b in
                    if type == fourcc("tfhd"), b.count >= 8 {
                        trackID = be32(bytes, b.lowerBound + 4)
                    } else if type == fourcc("trun"), b.count >= 8 {
                        samples += Int(be32(bytes, b.lowerBound + 4))
                    }
                }
                if let trackID { counts[trackID, default: 0] += samples }
            }
        }
        return counts
    }

    private static func fourcc(_ s: StaticString) -> UInt32 {
        s.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
    }

    private static func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }

    /// Calls `body(type, payloadRange)` for each box in `start..<end`; stops at the first malformed header.
    private static func forEachBox(_ b: [UInt8], _ start: Int, _ end: Int, _ body: (UInt32, Range<Int>) -> Void) {
        var i = start
        while end - i >= 8 {
            var size = Int(be32(b, i))
            let type = be32(b, i + 4)
            var header = 8
            if size == 1 {
                guard end - i >= 16 else { return }
                let large = UInt64(be32(b, i + 8)) << 32 | UInt64(be32(b, i + 12))
                guard large <= UInt64(end - i) else { return }
                size = Int(large)
                header = 16
            } else if size == 0 {
                size = end - i
            }
            guard size >= header, size <= end - i else { return }
            body(type, (i + header)..<(i + size))
            i += size
        }
    }
}
