import MediaCore

/// `sidx`, the Segment Index Box (ISO/IEC 14496-12 §8.16.3), version 1 (64-bit times and offsets): one
/// reference per media segment (`styp`+`moof`+`mdat`…) of a single-file rendition, in file order.
///
/// ```
/// |sidx| version 1, flags 0
///   reference_ID(32) timescale(32) earliest_presentation_time(64) first_offset(64) reserved(16) reference_count(16)
///   per reference: reference_type(1)=0 referenced_size(31) subsegment_duration(32)
///                  starts_with_SAP(1) SAP_type(3) SAP_delta_time(28)
/// ```
/// `first_offset` counts from the first byte after the `sidx` ("the anchor point") to the first referenced byte.
public struct SegmentIndex: Sendable, Equatable {
    public static let type: FourCC = "sidx"
    /// Box header, version/flags and the fixed fields of version 1.
    public static let fixedSize = 40
    /// Bytes per reference.
    public static let referenceSize = 12

    public struct Reference: Sendable, Equatable {
        /// Bytes from the first byte of this subsegment to the first byte of the next (31 bits).
        public var referencedSize: UInt32
        /// In `timescale` ticks: the next subsegment's earliest presentation time minus this one's (for the last,
        /// the end of the stream's presentation minus it).
        public var subsegmentDuration: UInt32
        /// The subsegment starts with a stream access point of `sapType` (1: a sync sample, IDR or audio frame,
        /// that is also the first sample presented). `false` writes SAP type 0.
        public var startsWithSAP: Bool
        public var sapType: UInt8

        public init(referencedSize: UInt32, subsegmentDuration: UInt32, startsWithSAP: Bool, sapType: UInt8 = 1) {
            precondition(referencedSize < 1 << 31, "referenced_size is 31 bits")
            precondition(sapType < 8, "SAP_type is 3 bits")
            self.referencedSize = referencedSize
            self.subsegmentDuration = subsegmentDuration
            self.startsWithSAP = startsWithSAP
            self.sapType = startsWithSAP ? sapType : 0
        }
    }

    /// `track_ID` of the reference stream (the rendition's video track, else its first track).
    public var referenceID: UInt32
    /// Ticks per second of every time below: the reference track's timescale.
    public var timescale: UInt32
    /// Earliest presentation time of the reference track in the first subsegment.
    public var earliestPresentationTime: UInt64
    public var firstOffset: UInt64
    public var references: [Reference]

    public init(referenceID: UInt32, timescale: UInt32, earliestPresentationTime: UInt64, firstOffset: UInt64 = 0,
                references: [Reference]) {
        self.referenceID = referenceID
        self.timescale = timescale
        self.earliestPresentationTime = earliestPresentationTime
        self.firstOffset = firstOffset
        self.references = references
    }

    /// The box size for `count` references.
    public static func size(referenceCount count: Int) -> Int { fixedSize + referenceSize * count }

    public func write(to w: inout BoxWriter) throws {
        guard references.count <= Int(UInt16.max) else { throw MP4Error.boxTooLarge(Self.type) }
        try w.fullBox(Self.type, version: 1, flags: 0) { w in
            w.write(referenceID)
            w.write(timescale)
            w.write(earliestPresentationTime)
            w.write(firstOffset)
            w.write(UInt16(0))                                   // reserved
            w.write(UInt16(references.count))
            for r in references {
                w.write(r.referencedSize)                        // reference_type 0: media
                w.write(r.subsegmentDuration)
                w.write((r.startsWithSAP ? UInt32(1) << 31 : 0) | UInt32(r.sapType) << 28)  // SAP_delta_time 0
            }
        }
    }

    public func bytes() throws -> [UInt8] {
        var w = BoxWriter(reservingCapacity: Self.size(referenceCount: references.count))
        try write(to: &w)
        return w.bytes
    }
}

/// `free` (ISO/IEC 14496-12 §8.1.2): `size` bytes a reader skips (at least the 8-byte header).
public enum FreeSpaceBox {
    public static let type: FourCC = "free"

    public static func bytes(size: Int) throws -> [UInt8] {
        precondition(size >= 8, "a box is at least 8 bytes")
        guard let s = UInt32(exactly: size) else { throw MP4Error.boxTooLarge(type) }
        var w = BoxWriter(reservingCapacity: size)
        w.write(s)
        w.write(type)
        w.writeZeros(size - 8)
        return w.bytes
    }
}
