import TestSupport
import Testing
import MediaCore
@testable import ISOBMFF

/// The slice header sizes common encryption keeps clear (H.264 §7.3.3), on x264's own High-profile CABAC slices
/// (I, P and B, with B-frames) from the fixture: each ends where `cabac_alignment_one_bit`s end, which the reader
/// checks (all ones up to a byte boundary), so a miscount of one field would fail it on most slices.
@Suite("AVC slice headers")
struct AVCSliceHeaderTests {
    @Test func x264SlicesEndOnTheirAlignmentBits() throws {
        let avcC = try Fixture.bytes("h264_aac_avcC.bin")
        let reader = try #require(AVCSliceHeaderReader(avcC: avcC))
        let video = try Fixture.bytes("h264_aac_video.bin")
        let sizes = try Fixture.text("h264_aac_packets.csv").split(separator: "\n").compactMap { line -> Int? in
            let f = line.split(separator: ",")
            return f.first == "0" ? Int(f[4]) : nil
        }
        #expect(sizes.reduce(0, +) == video.count)
        var at = 0, slices = 0, types: Set<UInt8> = []
        for size in sizes {
            var i = at
            while i + 4 <= at + size {
                let length = Int(video[i]) << 24 | Int(video[i + 1]) << 16 | Int(video[i + 2]) << 8 | Int(video[i + 3])
                let nal = video[(i + 4)..<(i + 4 + length)]
                if (1...5).contains(nal.first! & 0x1F) {
                    let header = try #require(reader.headerSize(nal: nal), "slice \(slices)")
                    #expect(header > 1 && header < length)
                    slices += 1
                    types.insert(nal.first! & 0x1F)
                }
                i += 4 + length
            }
            at += size
        }
        #expect(slices == sizes.count && types == [1, 5])
    }

    @Test func whatItCannotSizeIsNil() throws {
        let reader = try #require(AVCSliceHeaderReader(avcC: try Fixture.bytes("h264_aac_avcC.bin")))
        #expect(reader.headerSize(nal: [0x06, 0x05, 0x01][...]) == nil, "not a slice (SEI)")
        #expect(reader.headerSize(nal: [0x65, 0x88][...]) == nil, "truncated")
        #expect(AVCSliceHeaderReader(avcC: [1, 2, 3]) == nil)
    }
}
