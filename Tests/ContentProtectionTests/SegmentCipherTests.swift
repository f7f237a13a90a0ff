import ContentProtection
import MediaCore
import MediaPresentation
import Testing

/// The cipher (AES-128-CBC + PKCS#7) and the key schedule (IVs and key periods from the timeline).
@Suite struct SegmentCipherTests {
    static func hex(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = s.startIndex
        while i < s.endIndex {
            let j = s.index(i, offsetBy: 2)
            out.append(UInt8(s[i..<j], radix: 16)!)
            i = j
        }
        return out
    }

    /// NIST SP 800-38A F.2.1 (CBC-AES128.Encrypt), first block; PKCS#7 then adds a block of sixteen 16s.
    @Test func nistVectorAndPadding() throws {
        let key = Self.hex("2b7e151628aed2a6abf7158809cf4f3c")
        let iv = Self.hex("000102030405060708090a0b0c0d0e0f")
        let plain = Self.hex("6bc1bee22e409f96e93d7e117393172a")
        let sealed = try SegmentCipher.encrypt(MediaBytes(plain), key: key, iv: iv)
        #expect(sealed.count == 32)
        #expect(Array(sealed.prefix(16)) == Self.hex("7649abac8119b246cee98e9b12e9197d"))
        let opened = try SegmentCipher.decrypt(sealed, key: key, iv: iv)
        #expect(opened == plain)
        // The padding block really is sixteen 16s: decrypted without removing it.
        #expect(SegmentCipher.paddedCount(0) == 16 && SegmentCipher.paddedCount(15) == 16 && SegmentCipher.paddedCount(16) == 32)
    }

    /// However the bytes are chunked, the ciphertext is that of the joined bytes; lengths 0...40 round-trip.
    @Test func chunksAndLengths() throws {
        let key = [UInt8](repeating: 7, count: 16), iv = KeySchedule.iv(42)
        for n in 0...40 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let whole = try SegmentCipher.encrypt(MediaBytes(bytes), key: key, iv: iv)
            let chunked = try SegmentCipher.encrypt(MediaBytes(chunks: [Array(bytes.prefix(n / 3)), Array(bytes.dropFirst(n / 3))]),
                                                    key: key, iv: iv)
            #expect(whole == chunked)
            #expect(whole.count == SegmentCipher.paddedCount(n))
            #expect(try SegmentCipher.decrypt(whole, key: key, iv: iv) == bytes)
        }
    }

    /// A wrong IV does not give the clear bytes back (the checker can fail).
    @Test func wrongIVDoesNotDecrypt() throws {
        let key = [UInt8](repeating: 1, count: 16)
        let bytes = [UInt8](repeating: 0xAB, count: 100)
        let sealed = try SegmentCipher.encrypt(MediaBytes(bytes), key: key, iv: KeySchedule.iv(5))
        let wrong = try? SegmentCipher.decrypt(sealed, key: key, iv: KeySchedule.iv(6))
        #expect(wrong != bytes)
    }

    /// RFC 8216 §5.2: the Media Sequence Number, big-endian, zero-padded on the left to 16 bytes.
    @Test func ivFromTheMediaSequenceNumber() {
        #expect(KeySchedule.iv(0) == [UInt8](repeating: 0, count: 16))
        #expect(KeySchedule.iv(0x0102) == [UInt8](repeating: 0, count: 14) + [1, 2])
        #expect(KeySchedule.iv(UInt64.max) == [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0xFF, count: 8))
    }

    /// Key periods in whole segments; keys derived from the master key, the same for every origin that has it.
    @Test func keyPeriods() {
        let master = [UInt8](0..<16)
        let one = KeySchedule(master: master)
        #expect(one.segmentsPerPeriod(segmentDuration: .seconds(2)) == UInt64(Int64.max))
        #expect(one.encryption(segment: 1000, segmentsPerPeriod: UInt64(Int64.max)).key == ContentKey(id: 0, bytes: master))
        let rotating = KeySchedule(master: master, period: .seconds(10))
        #expect(rotating.segmentsPerPeriod(segmentDuration: .seconds(2)) == 5)
        #expect(rotating.segmentsPerPeriod(segmentDuration: MediaTime(value: 3003, timescale: 1000)) == 3)
        #expect(rotating.segmentsPerPeriod(segmentDuration: .seconds(60)) == 1)
        let keys = (0..<12).map { rotating.encryption(segment: UInt64($0), segmentsPerPeriod: 5).key }
        #expect(keys.map(\.id) == [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2])
        #expect(keys[0].bytes != keys[5].bytes && keys[5].bytes != keys[10].bytes && keys[0].bytes != master)
        #expect(KeySchedule(master: master, period: .seconds(10)).key(1) == rotating.key(1))
        #expect(KeySchedule(master: [UInt8](repeating: 9, count: 16), period: .seconds(10)).key(1) != rotating.key(1))
        // A key never shows its bytes in text.
        #expect(!"\(keys[0])".contains("0, 1, 2") && "\(keys[0])" == "content key 0")
        var dumped = ""
        dump(ContentKey(id: 3, bytes: master), to: &dumped)
        #expect(!dumped.contains("15") && dumped.contains("3"), "\(dumped)")
        let info = "\(SegmentEncryption(key: ContentKey(id: 3, bytes: master), iv: KeySchedule.iv(1)))"
        #expect(info == "AES-128 with content key 3")
        #expect(KeySchedule.randomKey() != KeySchedule.randomKey())
    }
}
