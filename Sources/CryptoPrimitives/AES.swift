internal import COpenSSL

/// AES in the two modes the project uses, through OpenSSL's libcrypto (`EVP_Cipher*`: AES-NI where the CPU has it,
/// never a cipher of our own). A key of 16, 24 or 32 bytes picks AES-128, -192 or -256; the IV is 16 bytes.
///
/// - CBC (NIST SP 800-38A §6.2), with or without PKCS#7 padding (RFC 5652 §6.3). Without padding the input is whole
///   16-byte blocks.
/// - CTR (NIST SP 800-38A §6.5): the IV is the first counter block, incremented as one 128-bit big-endian number;
///   encryption and decryption are the same operation.
public enum AES {
    public static let blockSize = 16

    public enum Mode: Sendable { case cbc, ctr }

    /// Encrypts (or decrypts) `bytes` in place, without padding (CBC: whole blocks only).
    public static func transform(_ bytes: inout [UInt8], mode: Mode, key: [UInt8], iv: [UInt8],
                                 decrypt: Bool = false) throws(CryptoError) {
        if mode == .cbc, bytes.count % blockSize != 0 {
            throw CryptoError(call: "AES-CBC", reason: "\(bytes.count) bytes is not a whole number of blocks")
        }
        guard !bytes.isEmpty else { return }
        let count = bytes.count
        // (Array's withUnsafe… rethrows untyped errors: the result comes out as a value.)
        let written = try bytes.withUnsafeMutableBytes { b in
            Result { () throws(CryptoError) in
                try run(mode, key: key, iv: iv, decrypt: decrypt, padding: false, input: UnsafeRawBufferPointer(b), output: b)
            }
        }.get()
        precondition(written == count, "a cipher without padding writes what it reads")
    }

    /// Encrypts `bytes` in place with AES-CBC and PKCS#7 padding: they become the ciphertext, 1 to 16 bytes longer
    /// (`paddedCount`). Reserve that capacity first and no byte moves. On an error `bytes` is left as it was.
    public static func cbcEncryptPadded(_ bytes: inout [UInt8], key: [UInt8], iv: [UInt8]) throws(CryptoError) {
        let count = bytes.count
        // EVP writes up to a block more than it reads (the padding), and needs the room before it knows.
        bytes.append(contentsOf: repeatElement(0, count: blockSize))
        let written = bytes.withUnsafeMutableBytes { b in
            Result { () throws(CryptoError) in
                try run(.cbc, key: key, iv: iv, decrypt: false, padding: true,
                        input: UnsafeRawBufferPointer(rebasing: b[0..<count]), output: b)
            }
        }
        switch written {
        case .success(let n): bytes.removeLast(bytes.count - n)
        case .failure(let e): bytes.removeLast(blockSize); throw e
        }
    }

    /// The length of `count` clear bytes once padded: PKCS#7 always adds 1 to 16 bytes (RFC 5652 §6.3).
    public static func paddedCount(_ count: Int) -> Int { (count / blockSize + 1) * blockSize }

    /// The clear bytes of an AES-CBC ciphertext with PKCS#7 padding; a wrong key or an altered last block fails the
    /// padding check.
    public static func cbcDecryptPadded(_ bytes: [UInt8], key: [UInt8], iv: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard !bytes.isEmpty, bytes.count % blockSize == 0 else {
            throw CryptoError(call: "AES-CBC", reason: "\(bytes.count) bytes is not a whole, non-zero number of blocks")
        }
        var out = [UInt8](repeating: 0, count: bytes.count + blockSize)
        let written = try bytes.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { output in
                Result { () throws(CryptoError) in
                    try run(.cbc, key: key, iv: iv, decrypt: true, padding: true, input: input, output: output)
                }
            }
        }.get()
        out.removeLast(out.count - written)
        return out
    }

    private static func cipher(_ mode: Mode, keyCount: Int) -> OpaquePointer? {
        switch (mode, keyCount) {
        case (.cbc, 16): EVP_aes_128_cbc()
        case (.cbc, 24): EVP_aes_192_cbc()
        case (.cbc, 32): EVP_aes_256_cbc()
        case (.ctr, 16): EVP_aes_128_ctr()
        case (.ctr, 24): EVP_aes_192_ctr()
        case (.ctr, 32): EVP_aes_256_ctr()
        default: nil
        }
    }

    /// One cipher context from init to final over `input` into `output` (which may be the same memory: EVP allows
    /// it); returns the bytes written.
    private static func run(_ mode: Mode, key: [UInt8], iv: [UInt8], decrypt: Bool, padding: Bool,
                            input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer) throws(CryptoError) -> Int {
        guard let evp = cipher(mode, keyCount: key.count) else {
            throw CryptoError(call: "AES", reason: "a key of \(key.count) bytes (16, 24 or 32)")
        }
        guard iv.count == blockSize else { throw CryptoError(call: "AES", reason: "an IV of \(iv.count) bytes (16)") }
        guard let length = Int32(exactly: input.count), output.count >= input.count + (padding ? blockSize : 0) else {
            throw CryptoError(call: "AES", reason: "\(input.count) bytes in one call")
        }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw CryptoError(call: "EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        let ok = key.withUnsafeBufferPointer { k in
            iv.withUnsafeBufferPointer { v in EVP_CipherInit_ex(ctx, evp, nil, k.baseAddress, v.baseAddress, decrypt ? 0 : 1) }
        }
        guard ok == 1 else { throw CryptoError(call: "EVP_CipherInit_ex") }
        EVP_CIPHER_CTX_set_padding(ctx, padding ? 1 : 0)
        let src = input.bindMemory(to: UInt8.self).baseAddress
        let dst = output.bindMemory(to: UInt8.self).baseAddress!
        var updated: Int32 = 0
        guard EVP_CipherUpdate(ctx, dst, &updated, src, length) == 1 else { throw CryptoError(call: "EVP_CipherUpdate") }
        var finished: Int32 = 0
        guard EVP_CipherFinal_ex(ctx, dst + Int(updated), &finished) == 1 else {
            throw CryptoError(call: "EVP_CipherFinal_ex", reason: decrypt && padding ? "bad padding (a wrong key, or altered bytes)" : nil)
        }
        return Int(updated) + Int(finished)
    }
}
