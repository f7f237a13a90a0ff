// Test-only ISO-BMFF reader. It deliberately shares no code with the writer in Sources/ISOBMFF:
// its own big-endian decoding, its own box walker, its own trun/tfdt/tfhd parsing straight from
// ISO/IEC 14496-12 (§4.2 boxes, §8.8.7 tfhd, §8.8.8 trun, §8.8.12 tfdt).

public struct ReadError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

/// Big-endian reads at absolute offsets, bounds-checked.
public struct Bytes {
    public let b: [UInt8]
    public init(_ b: [UInt8]) { self.b = b }

    public func u(_ at: Int, _ width: Int) throws -> UInt64 {
        guard at >= 0, width > 0, at + width <= b.count else { throw ReadError("read \(width) bytes at \(at) past \(b.count)") }
        var v: UInt64 = 0
        for i in 0..<width { v = v * 256 + UInt64(b[at + i]) }
        return v
    }
    public func u8(_ at: Int) throws -> UInt8 { UInt8(try u(at, 1)) }
    public func u16(_ at: Int) throws -> UInt16 { UInt16(try u(at, 2)) }
    public func u32(_ at: Int) throws -> UInt32 { UInt32(try u(at, 4)) }
    public func i32(_ at: Int) throws -> Int32 { Int32(bitPattern: try u32(at)) }
    public func u64(_ at: Int) throws -> UInt64 { try u(at, 8) }
    public func type(_ at: Int) throws -> String {
        guard at + 4 <= b.count else { throw ReadError("type at \(at) past end") }
        return String(decoding: b[at..<at + 4], as: UTF8.self)
    }
}

/// One box found in a buffer: where it starts, its total size, where its content starts, its children.
public struct ParsedBox {
    public var type: String
    public var offset: Int
    public var size: Int
    public var headerSize: Int
    public var children: [ParsedBox]
    public var contentStart: Int { offset + headerSize }
    public var end: Int { offset + size }

    public func child(_ t: String) -> ParsedBox? { children.first { $0.type == t } }
    public func all(_ t: String) -> [ParsedBox] { children.filter { $0.type == t } }
    /// Depth-first search below this box.
    public func find(_ path: [String]) -> ParsedBox? {
        guard let first = path.first else { return self }
        for c in children where c.type == first {
            if let r = c.find(Array(path.dropFirst())) { return r }
        }
        return nil
    }
    /// All box types in depth-first order, indented by depth (for structure assertions).
    public func outline(depth: Int = 0) -> [String] {
        [String(repeating: " ", count: depth) + type] + children.flatMap { $0.outline(depth: depth + 1) }
    }
}

public enum BoxReader {
    /// Boxes whose content is only child boxes.
    public static let pureContainers: Set<String> = ["moov", "trak", "mdia", "minf", "dinf", "stbl", "mvex", "moof", "traf", "edts",
                                                    "sinf", "schi", "vttc"]
    /// Boxes with a fixed-length prefix before child boxes: type -> bytes of prefix after the 8-byte header.
    public static let prefixedContainers: [String: Int] = [
        "stsd": 8,   // FullBox header + entry_count
        "dref": 8,   // FullBox header + entry_count
        "avc1": 78,  // VisualSampleEntry fields
        "encv": 78, "enca": 28,  // protected sample entries (ISO/IEC 14496-12 §8.12)
        "mp4a": 28,  // AudioSampleEntry fields
        "Opus": 28, "ac-3": 28, "ec-3": 28, "fLaC": 28,  // AudioSampleEntry fields
        "wvtt": 8,   // PlainTextSampleEntry: SampleEntry's reserved + data_reference_index (ISO/IEC 14496-30 §7.5)
    ]

    /// Walks `range` of `bytes` as a sequence of boxes; every size must fit and the boxes must tile the range exactly.
    /// `mdat` payload beyond the buffer is allowed only when `allowTruncatedMdat` (header-only buffers).
    public static func walk(_ bytes: [UInt8], range: Range<Int>? = nil, allowTruncatedMdat: Bool = false) throws -> [ParsedBox] {
        let r = range ?? 0..<bytes.count
        let d = Bytes(bytes)
        var boxes: [ParsedBox] = []
        var at = r.lowerBound
        while at < r.upperBound {
            guard r.upperBound - at >= 8 else { throw ReadError("\(r.upperBound - at) stray bytes at \(at)") }
            var size = Int(try d.u32(at))
            let type = try d.type(at + 4)
            var header = 8
            if size == 1 {
                // A 64-bit largesize beyond Int.max cannot fit in any buffer (found by scripts/fuzz, boxreader).
                let large = try d.u64(at + 8)
                guard let s = Int(exactly: large) else { throw ReadError("\(type) at \(at): largesize \(large)") }
                size = s
                header = 16
            } else if size == 0 {
                size = r.upperBound - at
            }
            guard size >= header else { throw ReadError("\(type) at \(at): size \(size) < header") }
            if size > r.upperBound - at {          // not `at + size`, which overflows for a largesize near Int.max
                // A truncated mdat may run past the buffer, but its end must still be a number (`ParsedBox.end`
                // trapped for a largesize near Int.max after another box; seen while fixing the largesize finding).
                guard allowTruncatedMdat, type == "mdat", size <= Int.max - at else {
                    throw ReadError("\(type) at \(at): size \(size) overruns parent end \(r.upperBound)")
                }
                boxes.append(ParsedBox(type: type, offset: at, size: size, headerSize: header, children: []))
                return boxes
            }
            var children: [ParsedBox] = []
            if pureContainers.contains(type) {
                children = try walk(bytes, range: (at + header)..<(at + size))
            } else if let prefix = prefixedContainers[type] {
                guard header + prefix <= size else { throw ReadError("\(type) too small for its fields") }
                children = try walk(bytes, range: (at + header + prefix)..<(at + size))
            }
            // Children tile the content exactly (walk throws otherwise): their sizes add up to the parent's.
            if !children.isEmpty {
                let sum = children.reduce(0) { $0 + $1.size }
                let prefix = prefixedContainers[type] ?? 0
                guard sum == size - header - prefix else { throw ReadError("\(type): children \(sum) != content") }
            }
            boxes.append(ParsedBox(type: type, offset: at, size: size, headerSize: header, children: children))
            at += size
        }
        return boxes
    }
}

/// One sample as read back from `trun`.
public struct ReadSample: Equatable {
    public var duration: UInt32
    public var size: UInt32
    public var flags: UInt32
    public var cts: Int32
    public init(duration: UInt32, size: UInt32, flags: UInt32, cts: Int32) {
        self.duration = duration
        self.size = size
        self.flags = flags
        self.cts = cts
    }
}

public struct ReadTrackFragment {
    public var durations: [UInt32] { samples.map(\.duration) }
    public var trackID: UInt32
    public var tfhdFlags: UInt32
    public var baseMediaDecodeTime: UInt64
    public var trunVersion: UInt8
    public var dataOffset: Int32
    public var samples: [ReadSample]
    /// Byte ranges of each sample in the segment buffer.
    public var sampleRanges: [Range<Int>]
}

public struct ReadFragment {
    public var sequenceNumber: UInt32
    public var tracks: [ReadTrackFragment]
    public var mdatPayload: Range<Int>
    public var topLevel: [ParsedBox]
}

public enum FragmentReader {
    /// Every `moof`+`mdat` pair of a segment (`styp` then one fragment per LL-HLS part), each read and checked
    /// as `read(_:)` does.
    public static func readSegment(_ bytes: [UInt8]) throws -> [ReadFragment] {
        let top = try BoxReader.walk(bytes)
        var out: [ReadFragment] = []
        for (i, box) in top.enumerated() where box.type == "moof" {
            guard i + 1 < top.count, top[i + 1].type == "mdat" else { throw ReadError("moof without mdat") }
            let start = i > 0 && top[i - 1].type == "styp" && out.isEmpty ? top[i - 1].offset : box.offset
            out.append(try read(Array(bytes[start..<top[i + 1].end])))
        }
        return out
    }

    /// Parses `styp? moof mdat` in `bytes` (a complete media segment including payload) and checks every
    /// trun data_offset lands inside the mdat payload and that the payload is exactly the samples.
    public static func read(_ bytes: [UInt8]) throws -> ReadFragment {
        let top = try BoxReader.walk(bytes)
        let d = Bytes(bytes)
        guard let moof = top.first(where: { $0.type == "moof" }) else { throw ReadError("no moof") }
        guard let mdat = top.first(where: { $0.type == "mdat" }) else { throw ReadError("no mdat") }
        guard mdat.offset == moof.end else { throw ReadError("mdat does not follow moof") }
        let payload = mdat.contentStart..<mdat.end
        guard let mfhd = moof.child("mfhd") else { throw ReadError("no mfhd") }
        let seq = try d.u32(mfhd.contentStart + 4)
        var tracks: [ReadTrackFragment] = []
        var total = 0
        var covered: [Range<Int>] = []
        for traf in moof.all("traf") {
            guard let tfhd = traf.child("tfhd"), let tfdt = traf.child("tfdt"), let trun = traf.child("trun") else {
                throw ReadError("traf lacks tfhd/tfdt/trun")
            }
            let tfhdFlags = try d.u32(tfhd.contentStart) & 0xFF_FFFF
            let trackID = try d.u32(tfhd.contentStart + 4)
            guard tfhdFlags & 0x020000 != 0, tfhdFlags & 0x000001 == 0 else {
                throw ReadError("tfhd is not default-base-is-moof")
            }
            let tfdtVersion = try d.u8(tfdt.contentStart)
            let bmdt = tfdtVersion == 1 ? try d.u64(tfdt.contentStart + 4) : UInt64(try d.u32(tfdt.contentStart + 4))
            guard tfdt.size == (tfdtVersion == 1 ? 20 : 16) else { throw ReadError("tfdt size") }

            let trunVersion = try d.u8(trun.contentStart)
            let trFlags = try d.u32(trun.contentStart) & 0xFF_FFFF
            var p = trun.contentStart + 4
            let count = Int(try d.u32(p)); p += 4
            guard trFlags & 0x1 != 0 else { throw ReadError("trun without data_offset") }
            let dataOffset = try d.i32(p); p += 4
            var firstFlags: UInt32?
            if trFlags & 0x4 != 0 { firstFlags = try d.u32(p); p += 4 }
            // §8.8.8.2: sample_count entries of the fields tr_flags selects fill the rest of the box. Checked before the
            // loop, so a count of 4 billion in a small box is an error rather than 4 billion appends (seen reading
            // this reader for scripts/fuzz; its boxreader binary ran out of memory on such a trun). This reader takes sample sizes only from trun.
            let perSample = 4 * (trFlags & 0xF00).nonzeroBitCount
            guard count == 0 || trFlags & 0x200 != 0 else { throw ReadError("trun without sample_size_present") }
            guard count * perSample == trun.end - p else {
                throw ReadError("trun of \(count) samples x \(perSample) bytes does not fit its \(trun.end - p) bytes")
            }
            var samples: [ReadSample] = []
            var ranges: [Range<Int>] = []
            var cursor = moof.offset + Int(dataOffset)
            guard (payload.lowerBound...payload.upperBound).contains(cursor) else {
                throw ReadError("track \(trackID) data_offset \(dataOffset) outside mdat payload \(payload)")
            }
            for i in 0..<count {
                var s = ReadSample(duration: 0, size: 0, flags: 0, cts: 0)
                if trFlags & 0x100 != 0 { s.duration = try d.u32(p); p += 4 }
                if trFlags & 0x200 != 0 { s.size = try d.u32(p); p += 4 }
                if trFlags & 0x400 != 0 { s.flags = try d.u32(p); p += 4 } else if i == 0, let f = firstFlags { s.flags = f }
                if trFlags & 0x800 != 0 {
                    s.cts = trunVersion == 1 ? try d.i32(p) : Int32(clamping: Int64(try d.u32(p))); p += 4
                }
                let r = cursor..<(cursor + Int(s.size))
                guard r.lowerBound >= payload.lowerBound, r.upperBound <= payload.upperBound else {
                    throw ReadError("track \(trackID) sample \(i) \(r) outside mdat payload \(payload)")
                }
                samples.append(s)
                ranges.append(r)
                covered.append(r)
                cursor = r.upperBound
                total += Int(s.size)
            }
            guard p == trun.end else { throw ReadError("trun has \(trun.end - p) bytes left over") }
            tracks.append(ReadTrackFragment(trackID: trackID, tfhdFlags: tfhdFlags, baseMediaDecodeTime: bmdt,
                                            trunVersion: trunVersion, dataOffset: dataOffset,
                                            samples: samples, sampleRanges: ranges))
        }
        guard total == payload.count else { throw ReadError("mdat payload \(payload.count) != sum of sample sizes \(total)") }
        // No two samples share bytes.
        let sorted = covered.filter { !$0.isEmpty }.sorted { $0.lowerBound < $1.lowerBound }
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.upperBound > b.lowerBound {
            throw ReadError("samples overlap at \(b.lowerBound)")
        }
        return ReadFragment(sequenceNumber: seq, tracks: tracks, mdatPayload: payload, topLevel: top)
    }
}

/// "0a 0b ..." or "0a0b" -> bytes; whitespace and `|` separators are ignored.
public func hex(_ s: String) -> [UInt8] {
    let digits = s.unicodeScalars.filter { !$0.properties.isWhitespace && $0 != "|" }
    precondition(digits.count % 2 == 0, "odd hex literal")
    var out: [UInt8] = []
    var it = digits.makeIterator()
    while let hi = it.next(), let lo = it.next() {
        guard let v = UInt8(String(hi) + String(lo), radix: 16) else { preconditionFailure("bad hex \(hi)\(lo)") }
        out.append(v)
    }
    return out
}

public func hexString(_ b: some Sequence<UInt8>) -> String {
    b.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

