/// FNV-1a (Fowler–Noll–Vo), the stable hash the origin names things with: the same bytes give the same value in any
/// process and on any origin (an `ETag`, an event's id), which Swift's seeded `Hasher` does not. Not a cryptographic
/// hash: nothing here is a secret or an integrity check.
public enum FNV1a {
    public static let offset64: UInt64 = 0xcbf2_9ce4_8422_2325

    /// 64 bits, continued from `h` (`offset64` to start).
    @inlinable
    public static func hash64<Bytes: Sequence<UInt8>>(_ bytes: Bytes, from h: UInt64 = offset64) -> UInt64 {
        var h = h
        for byte in bytes {
            h ^= UInt64(byte)
            h = h &* 0x0000_0100_0000_01b3
        }
        return h
    }

    /// 32 bits.
    @inlinable
    public static func hash32<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
        var h: UInt32 = 0x811C_9DC5
        for byte in bytes { h = (h ^ UInt32(byte)) &* 0x0100_0193 }
        return h
    }
}
