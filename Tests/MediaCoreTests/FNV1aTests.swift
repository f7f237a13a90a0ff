import MediaCore
import Testing

/// FNV-1a against the reference values of its authors' test suite (draft-eastlake-fnv, "a" and "foobar").
@Suite struct FNV1aTests {
    @Test func referenceValues() {
        #expect(FNV1a.hash32([UInt8]()) == 0x811C_9DC5)
        #expect(FNV1a.hash32("a".utf8) == 0xE40C_292C)
        #expect(FNV1a.hash32("foobar".utf8) == 0xBF9C_F968)
        #expect(FNV1a.hash64([UInt8]()) == 0xCBF2_9CE4_8422_2325)
        #expect(FNV1a.hash64("a".utf8) == 0xAF63_DC4C_8601_EC8C)
        #expect(FNV1a.hash64("foobar".utf8) == 0x8594_4171_F739_67E8)
        // Continued over pieces: the same as over the whole.
        #expect(FNV1a.hash64("bar".utf8, from: FNV1a.hash64("foo".utf8)) == FNV1a.hash64("foobar".utf8))
    }
}
