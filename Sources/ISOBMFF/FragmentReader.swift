import MediaCore

/// Reads back the fragments this module writes (`MediaSegmentBoxes.fragmentHeader`), and only those: the sample
/// tables that common encryption needs to find each sample in `mdat` and to write the fragment again with `senc`,
/// `saiz` and `saio`. Anything else (another writer's `tfhd` defaults, a `trun` without sizes) is an error, not a
/// guess.
///
/// ```
/// (|styp|)
/// |moof| |mfhd| |traf| |tfhd| |tfdt| |trun| …      the layout fragmentHeader writes
/// |mdat|                                         each track's samples in turn
/// ```
public struct WrittenFragment: Sendable {
    /// Bytes before the `moof` that belong to this fragment (a `styp`).
    public var prefix: Range<Int>
    /// The `moof` and the `mdat` header.
    public var header: Range<Int>
    /// The `mdat` payload.
    public var payload: Range<Int>
    public var sequenceNumber: UInt32
    /// The track fragments, in order; `isVideo` is not stored in the boxes and is `false` here (the caller knows it).
    public var tracks: [TrackFragment]

    /// The fragments of `bytes` (a part or a segment), in order.
    public static func read(_ bytes: [UInt8]) throws -> [WrittenFragment] {
        var r = Reader(bytes: bytes)
        var out: [WrittenFragment] = []
        var prefixStart = 0
        while r.offset < bytes.count {
            let (type, start, end) = try r.box()
            switch type {
            case "styp", "emsg", "prft":
                // Boxes a segment may carry before its moof (an event message: ID3 timed metadata) belong to the next
                // fragment's prefix, passed on as they are.
                r.offset = end
            case "moof":
                var f = WrittenFragment(prefix: prefixStart..<start, header: start..<start, payload: 0..<0, sequenceNumber: 0, tracks: [])
                try f.readMoof(&r, end: end)
                let (mdat, mdatStart, mdatEnd) = try r.box()
                guard mdat == "mdat" else { throw Self.error("a moof not followed by mdat") }
                f.header = start..<r.offset
                f.payload = r.offset..<mdatEnd
                guard f.tracks.reduce(0, { $0 + $1.payloadSize }) == mdatEnd - r.offset, mdatStart == end else {
                    throw Self.error("the samples do not fill mdat")
                }
                r.offset = mdatEnd
                prefixStart = mdatEnd
                out.append(f)
            default:
                throw Self.error("unexpected '\(type)' box")
            }
        }
        return out
    }

    private mutating func readMoof(_ r: inout Reader, end: Int) throws {
        while r.offset < end {
            let (type, _, boxEnd) = try r.box()
            switch type {
            case "mfhd":
                r.offset += 4
                sequenceNumber = try r.u32()
            case "traf":
                tracks.append(try Self.readTraf(&r, end: boxEnd))
            default:
                throw Self.error("unexpected '\(type)' in moof")
            }
            r.offset = boxEnd
        }
    }

    private static func readTraf(_ r: inout Reader, end: Int) throws -> TrackFragment {
        var trackID: UInt32?
        var decodeTime: UInt64?
        var samples: [FragmentSample]?
        while r.offset < end {
            let (type, _, boxEnd) = try r.box()
            let versionFlags = try r.u32()
            switch type {
            case "tfhd":
                guard versionFlags & 0xFF_FFFF == TrackFragmentHeaderFlags.defaultBaseIsMoof.rawValue else { throw error("tfhd flags") }
                trackID = try r.u32()
            case "tfdt":
                guard versionFlags >> 24 == 1 else { throw error("tfdt version") }
                decodeTime = try r.u64()
            case "trun":
                guard versionFlags & 0xFF_FFFF == TrackRunBox.flags.rawValue else { throw error("trun flags") }
                let count = Int(try r.u32())
                r.offset += 4                                   // data_offset: the samples follow in track order
                guard count <= (boxEnd - r.offset) / 16 else { throw error("trun sample count") }
                var list: [FragmentSample] = []
                list.reserveCapacity(count)
                for _ in 0..<count {
                    let duration = try r.u32(), size = try r.u32(), flags = try r.u32(), cts = Int32(bitPattern: try r.u32())
                    list.append(FragmentSample(duration: duration, size: size,
                                               isSync: flags & SampleFlags.isNonSync.rawValue == 0, compositionOffset: cts))
                }
                samples = list
            default:
                throw error("unexpected '\(type)' in traf")
            }
            r.offset = boxEnd
        }
        guard let trackID, let decodeTime, let samples else { throw error("traf without tfhd, tfdt or trun") }
        return TrackFragment(trackID: trackID, baseMediaDecodeTime: decodeTime, samples: samples, isVideo: false)
    }

    static func error(_ what: String) -> MP4Error { .invalidConfiguration("not a fragment this writer made: " + what) }

    struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func u32() throws -> UInt32 {
            guard offset + 4 <= bytes.count else { throw WrittenFragment.error("truncated") }
            defer { offset += 4 }
            return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
        }

        mutating func u64() throws -> UInt64 { UInt64(try u32()) << 32 | UInt64(try u32()) }

        /// A box header: its type, start and end; `offset` is left after the header.
        mutating func box() throws -> (FourCC, Int, Int) {
            let start = offset
            var size = UInt64(try u32())
            let type = FourCC(rawValue: try u32())
            if size == 1 { size = try u64() }
            guard size >= UInt64(offset - start), start + Int(size) <= bytes.count else { throw WrittenFragment.error("box size") }
            return (type, start, start + Int(size))
        }
    }
}
