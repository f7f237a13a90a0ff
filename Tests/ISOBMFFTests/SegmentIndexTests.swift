import MediaCore
import TestSupport
import Testing
@testable import ISOBMFF

/// `sidx` (ISO/IEC 14496-12 §8.16.3), version 1, and `free` (§8.1.2).
@Suite struct SegmentIndexTests {
    static let box = SegmentIndex(referenceID: 1, timescale: 90_000, earliestPresentationTime: 6006, firstOffset: 0,
                                  references: [
                                      .init(referencedSize: 0x1234, subsegmentDuration: 90_000, startsWithSAP: true),
                                      .init(referencedSize: 0x7FFF_FFFF, subsegmentDuration: 45_045, startsWithSAP: false),
                                  ])

    @Test func goldenBytes() throws {
        let hex = try Self.box.bytes().map { String($0, radix: 16).leftPad() }.joined()
        #expect(hex == [
            "00000040", "73696478", "01000000",          // size 64, 'sidx', version 1, flags 0
            "00000001", "00015f90",                      // reference_ID 1, timescale 90000
            "0000000000001776", "0000000000000000",      // earliest_presentation_time 6006, first_offset 0
            "0000", "0002",                              // reserved, reference_count 2
            "00001234", "00015f90", "90000000",          // type 0 | size, duration, SAP 1 type 1 delta 0
            "7fffffff", "0000aff5", "00000000",          // no SAP: type 0
        ].joined())
        #expect(SegmentIndex.size(referenceCount: 2) == 64)
    }

    /// Read back with the test-only reader, field by field (§8.16.3.2).
    @Test func readsBack() throws {
        let bytes = try Self.box.bytes()
        let boxes = try BoxReader.walk(bytes)
        #expect(boxes.map(\.type) == ["sidx"] && boxes[0].size == bytes.count)
        let d = Bytes(bytes), c = boxes[0].contentStart
        #expect(try d.u8(c) == 1)                                  // version
        #expect(try d.u32(c + 4) == 1 && d.u32(c + 8) == 90_000)
        #expect(try d.u64(c + 12) == 6006 && d.u64(c + 20) == 0)
        #expect(try d.u16(c + 30) == 2)
        var at = c + 32
        for r in Self.box.references {
            let first = try d.u32(at), sap = try d.u32(at + 8)
            #expect(first >> 31 == 0 && first & 0x7FFF_FFFF == r.referencedSize)
            #expect(try d.u32(at + 4) == r.subsegmentDuration)
            #expect((sap >> 31 == 1) == r.startsWithSAP && (sap >> 28) & 7 == (r.startsWithSAP ? 1 : 0) && sap & 0x0FFF_FFFF == 0)
            at += 12
        }
        #expect(at == bytes.count)
    }

    @Test func freeBoxIsAllSkippableBytes() throws {
        let f = try FreeSpaceBox.bytes(size: 36)
        let boxes = try BoxReader.walk(f)
        #expect(boxes.map(\.type) == ["free"] && boxes[0].size == 36)
        #expect(f[8...].allSatisfy { $0 == 0 })
    }
}

private extension String {
    func leftPad() -> String { count < 2 ? "0" + self : self }
}
