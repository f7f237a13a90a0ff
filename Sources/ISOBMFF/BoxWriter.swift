import MediaCore

/// Appends ISO-BMFF boxes (ISO/IEC 14496-12 §4.2) to a byte buffer.
///
/// Every box is written as a size placeholder, the type, the body, and a back-patched 32-bit size, so nested
/// writers never have to pre-compute sizes.
public struct BoxWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(reservingCapacity capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Current length of the buffer: the offset the next write lands at.
    public var count: Int { bytes.count }

    /// Appends `v` big-endian.
    public mutating func write<T: FixedWidthInteger>(_ v: T) {
        withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends the four bytes of a FourCC.
    public mutating func write(_ fourCC: FourCC) { write(fourCC.rawValue) }

    /// Appends raw bytes.
    public mutating func write(bytes other: some Sequence<UInt8>) { bytes.append(contentsOf: other) }

    /// Appends `count` zero bytes (reserved fields).
    public mutating func writeZeros(_ count: Int) { bytes.append(contentsOf: repeatElement(0, count: count)) }

    /// Overwrites four bytes at `offset` with `v` big-endian.
    public mutating func patch(_ v: UInt32, at offset: Int) {
        precondition(offset >= 0 && offset + 4 <= bytes.count, "patch outside the buffer")
        let be = v.bigEndian
        withUnsafeBytes(of: be) { src in
            for i in 0..<4 { bytes[offset + i] = src[i] }
        }
    }

    /// Overwrites four bytes at `offset` with the two's-complement of `v` big-endian.
    public mutating func patch(_ v: Int32, at offset: Int) { patch(UInt32(bitPattern: v), at: offset) }

    /// Writes a box: 32-bit size, type, body. Returns the offset of the box start.
    @discardableResult
    public mutating func box(_ type: FourCC, _ body: (inout BoxWriter) throws -> Void) throws -> Int {
        let start = bytes.count
        write(UInt32(0))
        write(type.rawValue)
        try body(&self)
        guard let size = UInt32(exactly: bytes.count - start) else { throw MP4Error.boxTooLarge(type) }
        patch(size, at: start)
        return start
    }

    /// Writes a FullBox (ISO/IEC 14496-12 §4.2): a box whose body starts with an 8-bit version and 24-bit flags.
    @discardableResult
    public mutating func fullBox(_ type: FourCC, version: UInt8, flags: UInt32,
                                 _ body: (inout BoxWriter) throws -> Void) throws -> Int {
        precondition(flags <= 0xFF_FFFF, "FullBox flags are 24 bits")
        return try box(type) { w in
            w.write(UInt32(version) << 24 | flags)
            try body(&w)
        }
    }
}
