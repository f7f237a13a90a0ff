import CryptoPrimitives
import MediaCore

/// Whole-object AES-128-CBC with PKCS#7 padding (RFC 8216 §5.2), through libcrypto (`CryptoPrimitives.AES`, with
/// AES-NI where the CPU has it): never a cipher of our own.
///
/// RFC 8216 §5.2: "An encryption method of AES-128 signals that Media Segments are completely encrypted using the
/// Advanced Encryption Standard (AES) with a 128-bit key, Cipher Block Chaining (CBC), and Public-Key Cryptography
/// Standards #7 (PKCS7) padding. CBC is restarted on each segment boundary". Each object (a segment, or an LL-HLS part,
/// which is a resource of its own) is one CBC stream from the IV, so the ciphertext is 1 to 16 bytes longer than the
/// clear bytes.
public enum SegmentCipher {
    public static let blockSize = 16

    /// The ciphertext of `bytes`. The chunks are joined once (CBC chains across the whole object) into a buffer with
    /// room for the padding, which libcrypto encrypts and pads in place: it becomes the object's one chunk.
    public static func encrypt(_ bytes: MediaBytes, key: [UInt8], iv: [UInt8]) throws -> [UInt8] {
        var sealed: [UInt8] = []
        sealed.reserveCapacity(paddedCount(bytes.count))
        for chunk in bytes.chunks { sealed.append(contentsOf: chunk) }
        try AES.cbcEncryptPadded(&sealed, key: key, iv: iv)
        return sealed
    }

    /// The clear bytes of `ciphertext` (tests, and a checker of what was served).
    public static func decrypt(_ ciphertext: [UInt8], key: [UInt8], iv: [UInt8]) throws -> [UInt8] {
        try AES.cbcDecryptPadded(ciphertext, key: key, iv: iv)
    }

    /// The length of `count` clear bytes once padded: PKCS#7 always adds 1 to 16 bytes (RFC 5652 §6.3).
    public static func paddedCount(_ count: Int) -> Int { AES.paddedCount(count) }
}
