import Testing
import TestSupport
@testable import MediaCore

/// SCTE-35 sections checked against threefive 3.1.5 (PyPI), the independent decoder.
@Suite struct SCTE35Tests {
    /// threefive's documentation example (base64 `/DA0AAAAAAAA///wBQb+cr0AUAAeAhxDVUVJSAAAjn/PAAGlmbAICAAAAAAsoKGKNAIAmsnRfg==`):
    /// a time_signal at pts 21388.766756 s with a segmentation descriptor, Provider Placement Opportunity Start (0x34),
    /// event id 0x4800008e, duration 307.0 s, AiringID upid 0x2ca0a18a, segment 2 of 0 (threefive's decode).
    static let timeSignal = hex("fc3034000000000000fffff00506fe72bd0050001e021c435545494800008e7fcf0001a599b00808000000002ca0a18a3402009ac9d17e")
    /// Made with threefive: splice_insert event 1, out of network, pts_time 10.0, break_duration 30.0 auto-return,
    /// unique_program_id 1.
    static let spliceInsert = hex("fc302500000000000000fff01405000000017feffe000dbba0fe002932e00001000000001fe7080c")

    static func hex(_ s: String) -> [UInt8] { TestSupport.hex(s) }

    @Test func timeSignalWithSegmentationDescriptor() throws {
        let s = try SpliceInfoSection(Self.timeSignal)
        #expect(s.ptsAdjustment == 0)
        #expect(s.tier == 0xFFF)
        #expect(s.command == .timeSignal(Int64((21388.766756 * 90_000).rounded())))
        #expect(s.segmentations.count == 1)
        let d = try #require(s.segmentations.first)
        #expect(d.eventID == 0x4800_008E)
        #expect(d.typeID == 0x34)
        #expect(d.duration == Int64(307 * 90_000))
        #expect(d.upidType == 8)
        #expect(d.upid == [0x00, 0x00, 0x00, 0x00, 0x2C, 0xA0, 0xA1, 0x8A])
        #expect(d.segmentNum == 2 && d.segmentsExpected == 0)
        #expect(d.startsBreak && !d.endsBreak)
        #expect(s.bytes == Self.timeSignal)
        let e = try #require(TimedEvent(s, packetTime: nil))
        #expect(e.kind == .spliceOut && e.id == "seg-\(0x4800_008E)")
        #expect(e.plannedDuration == MediaTime(value: 307 * 90_000, timescale: 90_000))
    }

    @Test func spliceInsertOut() throws {
        let s = try SpliceInfoSection(Self.spliceInsert)
        guard case .insert(let i) = s.command else { Issue.record("not a splice_insert"); return }
        #expect(i.eventID == 1 && i.outOfNetwork && !i.immediate && !i.cancel)
        #expect(i.spliceTime == 900_000)
        #expect(i.breakDuration == 2_700_000 && i.autoReturn)
        #expect(i.uniqueProgramID == 1)
        #expect(s.spliceTime == 900_000)
        let e = try #require(TimedEvent(s, packetTime: nil))
        #expect(e.kind == .spliceOut && e.id == "splice-1" && e.time == .input(MediaTime(value: 900_000, timescale: 90_000)))
    }

    /// The writer gives threefive's bytes for the same splice_insert (CRC included).
    @Test func writerMatchesThreefive() {
        let s = SpliceInfoSection(command: .insert(SpliceInsert(eventID: 1, outOfNetwork: true, spliceTime: 900_000,
                                                                breakDuration: 2_700_000, uniqueProgramID: 1)))
        #expect(s.bytes == Self.spliceInsert)
    }

    @Test func writtenSectionsParseBack() throws {
        let d = SegmentationDescriptor(eventID: 7, typeID: 0x30, duration: 90_000 * 15, upidType: 9, upid: Array("abc".utf8))
        let written = SpliceInfoSection(command: .timeSignal(123_456), segmentations: [d])
        let parsed = try SpliceInfoSection(written.bytes)
        #expect(parsed.command == .timeSignal(123_456))
        #expect(parsed.segmentations == [d])
        let immediate = SpliceInfoSection(command: .insert(SpliceInsert(eventID: 9, outOfNetwork: false, immediate: true, spliceTime: nil)))
        let back = try SpliceInfoSection(immediate.bytes)
        #expect(back.spliceTime == nil)
        guard case .insert(let i) = back.command else { Issue.record("not a splice_insert"); return }
        #expect(i.immediate && !i.outOfNetwork && i.eventID == 9)
        // An immediate splice happens at its packet's time.
        let e = try #require(TimedEvent(back, packetTime: MediaTime(value: 42, timescale: 90_000)))
        #expect(e.kind == .spliceIn && e.time == .input(MediaTime(value: 42, timescale: 90_000)))
    }

    @Test func ptsAdjustmentWrapsAt33Bits() throws {
        var bytes = Self.spliceInsert
        // pts_adjustment = 2^33 − 1 (bits 39..7 of bytes 4...8), CRC recomputed.
        bytes[4] = 0x01; bytes[5] = 0xFF; bytes[6] = 0xFF; bytes[7] = 0xFF; bytes[8] = 0xFF
        bytes.removeLast(4)
        let crc = SpliceInfoSection.crc32(bytes)
        bytes += [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
        let s = try SpliceInfoSection(bytes)
        #expect(s.ptsAdjustment == (1 << 33) - 1)
        #expect(s.spliceTime == Int64(900_000 - 1))
    }

    @Test func malformedSectionsThrow() {
        var bad = Self.spliceInsert
        bad[20] ^= 0x01
        #expect(throws: SCTE35Error.badCRC) { try SpliceInfoSection(bad) }
        #expect(throws: SCTE35Error.truncated) { try SpliceInfoSection(Array(Self.spliceInsert.prefix(20))) }
        var notSCTE = Self.spliceInsert
        notSCTE[0] = 0x02
        #expect(throws: SCTE35Error.notASpliceInfoSection) { try SpliceInfoSection(notSCTE) }
        #expect(throws: SCTE35Error.truncated) { try SpliceInfoSection([]) }
    }

    /// Random bytes (and every truncation of real sections) throw or parse; nothing traps.
    @Test func noInputTraps() {
        var state: UInt64 = 0x5EED
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        for _ in 0..<2_000 {
            var bytes = (0..<Int(next() % 64)).map { _ in UInt8(truncatingIfNeeded: next()) }
            if !bytes.isEmpty { bytes[0] = 0xFC }
            _ = try? SpliceInfoSection(bytes)
        }
        for section in [Self.timeSignal, Self.spliceInsert] {
            for n in 0..<section.count { _ = try? SpliceInfoSection(Array(section.prefix(n))) }
        }
    }
}
