import TestSupport
import Testing
import MediaCore
@testable import ISOBMFF

@Suite("AV1 sequence header and av1C")
struct AV1Tests {
    /// `av1C` FFmpeg 5.1's mov muxer wrote for SVT-AV1 1.4 output (`-c:v libsvtav1 -preset 12`, 640x360 8-bit, and
    /// the same in 10-bit with BT.2020/PQ/BT.2020nc signalled): an independent writer of the same record.
    static let sdr = hex("81010c000a0b0000000cc4ff6700be0010")
    static let hdr = hex("81014c000a0e0000000cc4ff6700be1424402410")

    @Test func parsesSVTAV1SequenceHeaders() throws {
        let h = try #require(AV1.sequenceHeader(av1C: Self.sdr))
        #expect(h.profile == 0 && h.levelIndex0 == 1 && h.tier0 == 0)
        #expect(h.maxWidth == 640 && h.maxHeight == 360)
        #expect(!h.highBitDepth && !h.monochrome && h.subsamplingX == 1 && h.subsamplingY == 1)
        let p = try #require(AV1.sequenceHeader(av1C: Self.hdr))
        #expect(p.highBitDepth && !p.twelveBit)
        #expect(p.colour == ColourInfo(primaries: 9, transfer: 16, matrix: 9))
    }

    /// Built from the sequence header OBU alone (an IVF/OBU stream or an encoder's extradata), the record equals
    /// FFmpeg's byte for byte.
    @Test func buildsTheRecordFFmpegWrites() throws {
        #expect(try AV1.av1C(inBand: Array(Self.sdr[4...])) == Self.sdr)
        #expect(try AV1.av1C(inBand: Array(Self.hdr[4...])) == Self.hdr)
        #expect(try AV1.av1C(fromExtradata: Self.sdr) == Self.sdr)           // a container's record as it is
        #expect(try AV1.av1C(inBand: [0x12, 0x00]) == nil)                   // a temporal delimiter alone
        #expect(throws: MP4Error.self) { try AV1.av1C(fromExtradata: [0x12, 0x00]) }
        #expect(throws: MP4Error.self) { try AV1.av1C(inBand: [0x0A, 0x03, 0x00, 0x00, 0x00]) }   // truncated header
        #expect(VideoCodecStrings.av1(av1C: Self.hdr, colour: ColourInfo(primaries: 9, transfer: 16, matrix: 9))
                == "av01.0.01M.10.0.110.09.16.09.0")
    }

    @Test func temporalDelimitersLeaveTheSamples() {
        let frame: [UInt8] = [0x32, 0x03, 0xAA, 0xBB, 0xCC]           // OBU_FRAME (6), 3 bytes
        #expect(AV1.sample(from: [0x12, 0x00] + frame) == frame)
        #expect(AV1.sample(from: frame) == frame)
        #expect(AV1.obus(in: [0x12, 0x00] + frame).map(\.type) == [2, 6])
        #expect(AV1.obus(in: [0x32, 0x09, 0xAA]).isEmpty)              // a size past the end: nothing
    }
}
