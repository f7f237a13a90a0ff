import CryptoPrimitives
import Testing

/// Known-answer vectors from the standards, so the wrapper's calls into libcrypto (modes, key sizes, counter
/// layout, padding, lengths) are checked against text written independently of both.
@Suite struct CryptoPrimitivesTests {
    static func hex(_ s: String) -> [UInt8] {
        let c = Array(s.utf8)
        return stride(from: 0, to: c.count, by: 2).map { UInt8(String(decoding: c[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    // NIST SP 800-38A Appendix F: the four-block plaintext of every mode's examples.
    static let plain = hex("6bc1bee22e409f96e93d7e117393172a" + "ae2d8a571e03ac9c9eb76fac45af8e51"
                           + "30c81c46a35ce411e5fbc1191a0a52ef" + "f69f2445df4f9b17ad2b417be66c3710")
    static let key128 = hex("2b7e151628aed2a6abf7158809cf4f3c")
    static let key256 = hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")

    /// F.2.1 CBC-AES128.Encrypt and F.2.5 CBC-AES256.Encrypt, then back (F.2.2, F.2.6).
    @Test func cbcVectors() throws {
        let iv = Self.hex("000102030405060708090a0b0c0d0e0f")
        var a = Self.plain
        try AES.transform(&a, mode: .cbc, key: Self.key128, iv: iv)
        #expect(a == Self.hex("7649abac8119b246cee98e9b12e9197d" + "5086cb9b507219ee95db113a917678b2"
                              + "73bed6b8e3c1743b7116e69e22229516" + "3ff1caa1681fac09120eca307586e1a7"))
        try AES.transform(&a, mode: .cbc, key: Self.key128, iv: iv, decrypt: true)
        #expect(a == Self.plain)
        var b = Self.plain
        try AES.transform(&b, mode: .cbc, key: Self.key256, iv: iv)
        #expect(b == Self.hex("f58c4c04d6e5f1ba779eabfb5f7bfbd6" + "9cfc4e967edb808d679f777bc6702c7d"
                              + "39f23369a9d9bacfa530e26304231461" + "b2eb05e2c39be9fcda6c19078c6a9d1b"))
    }

    /// F.5.1 CTR-AES128.Encrypt: the IV is the first counter block, incremented as a 128-bit number (its low bytes
    /// f0 f1 … ff, then ff00 … carried); decryption is the same call. A length that is not whole blocks is fine.
    @Test func ctrVectors() throws {
        let counter = Self.hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
        var a = Self.plain
        try AES.transform(&a, mode: .ctr, key: Self.key128, iv: counter)
        let expected = Self.hex("874d6191b620e3261bef6864990db6ce" + "9806f66b7970fdff8617187bb9fffdff"
                                + "5ae4df3edbd5d35e5b4f09020db03eab" + "1e031dda2fbe03d1792170a0f3009cee")
        #expect(a == expected)
        var odd = Array(Self.plain.prefix(37))
        try AES.transform(&odd, mode: .ctr, key: Self.key128, iv: counter)
        #expect(odd == Array(expected.prefix(37)))
        try AES.transform(&odd, mode: .ctr, key: Self.key128, iv: counter)
        #expect(odd == Array(Self.plain.prefix(37)))
    }

    /// PKCS#7 (RFC 5652 §6.3): 1 to 16 bytes added; a wrong key or an altered last block fails the padding check, and
    /// bad sizes are errors, not traps.
    @Test func paddingAndErrors() throws {
        let iv = [UInt8](repeating: 9, count: 16)
        for n in [0, 1, 15, 16, 17, 47] {
            let clear = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 13) }
            var sealed = clear
            try AES.cbcEncryptPadded(&sealed, key: Self.key128, iv: iv)
            #expect(sealed.count == (n / 16 + 1) * 16)
            #expect(try AES.cbcDecryptPadded(sealed, key: Self.key128, iv: iv) == clear)
            // Decrypted without padding, the last block ends in k bytes of value k.
            var raw = sealed
            try AES.transform(&raw, mode: .cbc, key: Self.key128, iv: iv, decrypt: true)
            let k = 16 - n % 16
            #expect(raw.suffix(k).allSatisfy { Int($0) == k })
        }
        var sealed = Array("sixteen bytes!!!".utf8)
        try AES.cbcEncryptPadded(&sealed, key: Self.key128, iv: iv)
        var wrongKey = Self.key128
        wrongKey[0] ^= 1
        #expect(throws: CryptoError.self) { try AES.cbcDecryptPadded(sealed, key: wrongKey, iv: iv) }
        var altered = sealed
        altered[altered.count - 1] ^= 0x5a
        #expect(throws: CryptoError.self) { try AES.cbcDecryptPadded(altered, key: Self.key128, iv: iv) }
        var partial = [UInt8](repeating: 0, count: 20)
        #expect(throws: CryptoError.self) { try AES.transform(&partial, mode: .cbc, key: Self.key128, iv: iv) }
        #expect(throws: CryptoError.self) { try AES.transform(&partial, mode: .ctr, key: [1, 2, 3], iv: iv) }
        #expect(throws: CryptoError.self) { try AES.transform(&partial, mode: .ctr, key: Self.key128, iv: [0]) }
        #expect(throws: CryptoError.self) { try AES.cbcDecryptPadded([], key: Self.key128, iv: iv) }
        var kept = Array("unchanged".utf8)
        #expect(throws: CryptoError.self) { try AES.cbcEncryptPadded(&kept, key: [1], iv: iv) }
        #expect(kept == Array("unchanged".utf8))
    }

    /// FIPS 180-4 examples ("abc"), and the empty message.
    @Test func sha2Vectors() {
        #expect(SHA2.sha256.hash(Array("abc".utf8)) == Self.hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        #expect(SHA2.sha256.hash([]) == Self.hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
        #expect(SHA2.sha512.hash(Array("abc".utf8)) == Self.hex(
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd"
            + "454d4423643ce80e2a9ac94fa54ca49f"))
    }

    /// RFC 4231 test cases 1 and 2 (HMAC-SHA256 and -SHA512), a key longer than the block (case 6), an empty key;
    /// the check in constant time takes only the right code.
    @Test func hmacVectors() {
        let k1 = [UInt8](repeating: 0x0b, count: 20), m1 = Array("Hi There".utf8)
        #expect(SHA2.sha256.authenticationCode(for: m1, key: k1)
                == Self.hex("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"))
        #expect(SHA2.sha512.authenticationCode(for: m1, key: k1) == Self.hex(
            "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cde"
            + "daa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"))
        let jefe = Array("Jefe".utf8), m2 = Array("what do ya want for nothing?".utf8)
        let code = SHA2.sha256.authenticationCode(for: m2, key: jefe)
        #expect(code == Self.hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
        let k6 = [UInt8](repeating: 0xaa, count: 131), m6 = Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)
        #expect(SHA2.sha256.authenticationCode(for: m6, key: k6)
                == Self.hex("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"))
        // HMAC-SHA256 with an empty key over an empty message (Python: hmac.new(b"", b"", "sha256")).
        #expect(SHA2.sha256.authenticationCode(for: [], key: [])
                == Self.hex("b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"))
        #expect(SHA2.sha256.isValidAuthenticationCode(code, for: m2, key: jefe))
        var wrong = code
        wrong[31] ^= 1
        #expect(!SHA2.sha256.isValidAuthenticationCode(wrong, for: m2, key: jefe))
        #expect(!SHA2.sha256.isValidAuthenticationCode(Array(code.prefix(16)), for: m2, key: jefe))
        #expect(constantTimeEqual([], []) && !constantTimeEqual([1], [2]) && !constantTimeEqual([1], [1, 1]))
    }

    /// A PEM that is no key, or not RSA, is one error.
    @Test func rsaKeyErrors() {
        #expect(throws: CryptoError.self) { try RSAPrivateKey(pem: "") }
        #expect(throws: CryptoError.self) { try RSAPrivateKey(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n") }
        // An Ed25519 key (RFC 8410 §10.3's example): a private key, not RSA.
        let ed25519 = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n-----END PRIVATE KEY-----\n"
        #expect(throws: CryptoError.self) { try RSAPrivateKey(pem: ed25519) }
        // A passphrase-protected key (openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:512 -aes-128-cbc): an
        // error at once, never a prompt on the terminal.
        let encrypted = """
            -----BEGIN ENCRYPTED PRIVATE KEY-----
            MIIBvTBXBgkqhkiG9w0BBQ0wSjApBgkqhkiG9w0BBQwwHAQIDzcqDVNbMd0CAggA
            MAwGCCqGSIb3DQIJBQAwHQYJYIZIAWUDBAECBBD2kz8A4JLIUxqgomrbIqOOBIIB
            YMTRWNI7nCWWwKN8nK9Q+z7Fr+O81poNQhKXeFOAR6KSgVfVcNc2PI4vctjjb6ll
            UDKZh115sPfyWATSsyZATI9SE9fxkjiAmT3brRDB0jfNz4ipk9wwmMawCEdjS2Y1
            TwdunKnWkT9YnZ9macP5TFPLaRwgfFVlh9+uw12rD2xVYyr2S1R1RLU3Ppa+u+cD
            5gmnhKLjNuZiOr7T2gwcEo/POpA3ECC3bafsSlyNjiCpq9ZGrQHcod2uxizjilLZ
            G8JhvEqpLguQS1/h+XVpfHogX4FA1fbaEI+bxacbaZCuMZM/LHtBLtOK3lYUrB1F
            dKfKhGkxpbOVDPJd4WcQEsjf8Bc/yWfo5z2WOVLfGjgRE8iKrVDQOMh9BMbQswiQ
            7LAyF/uTsTvQp+qXQd5+lcjkvnJAKa2Dq+/vn3KC6okVEaU/COeZMvMriXeMwd7L
            7PSQy5eDUi43G75NSH+YNuI=
            -----END ENCRYPTED PRIVATE KEY-----

            """
        #expect(throws: CryptoError.self) { try RSAPrivateKey(pem: encrypted) }
    }
}
