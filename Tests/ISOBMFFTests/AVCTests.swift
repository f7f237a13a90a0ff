import TestSupport
import Testing
import MediaCore
@testable import ISOBMFF

@Suite("H.264 bitstream")
struct AVCTests {
    /// From `ffmpeg -f lavfi -i testsrc=size=1280x720:rate=30 -t 1 -pix_fmt yuv420p -c:v libx264
    /// -bsf:v h264_mp4toannexb -f h264` (FFmpeg 5.1, x264 core 164): the first NAL units of the stream.
    /// The SPS holds two emulation prevention bytes (`00 00 03`).
    static let x264SPS720p: [UInt8] = hex("""
        6764001f acd94050 05bb0110 00000300 10000003 03c0f183 1960
        """)
    static let x264PPS720p: [UInt8] = hex("68ebe3cb22c0")

    @Test func parsesRealX264SPSWithEmulationPrevention() throws {
        let info = try SPSInfo(nal: Self.x264SPS720p)
        #expect(info.profileIdc == 100)
        #expect(info.constraintFlags == 0)
        #expect(info.levelIdc == 31)
        #expect(info.chromaFormatIdc == 1)
        #expect(info.bitDepthLuma == 8)
        #expect(info.bitDepthChroma == 8)
        #expect(info.width == 1280)
        #expect(info.height == 720)
        #expect(info.sampleAspectRatio == Rational(1, 1))   // x264 signals aspect_ratio_idc 1
    }

    @Test func removesEmulationPreventionBytes() {
        #expect(SPSInfo.rbsp([0x00, 0x00, 0x03, 0x01, 0x00, 0x00, 0x03, 0x00, 0x03]) == [0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03])
        // The counter restarts after a removed byte: 00 00 03 00 00 03 -> 00 00 00 00.
        #expect(SPSInfo.rbsp([0x00, 0x00, 0x03, 0x00, 0x00, 0x03]) == [0x00, 0x00, 0x00, 0x00])
    }

    /// The fixture's SPS: 160x90 (coded as 10x6 macroblocks = 160x96, cropped by 6 rows) with VUI SAR 4:3.
    @Test func parsesFixtureSPSCroppingAndAspectRatio() throws {
        let avcC = try Fixture.bytes("h264_aac_avcC.bin")
        let (sps, _) = try Self.parameterSets(ofAVCC: avcC)
        let info = try SPSInfo(nal: sps[0])
        #expect(info.width == 160)
        #expect(info.height == 90)
        #expect(info.profileIdc == 100)
        #expect(info.sampleAspectRatio == Rational(4, 3))
    }

    /// FFmpeg's own MP4 muxer wrote the fixture's avcC: rebuilding it from its SPS/PPS must give the same bytes.
    @Test func makeAVCCMatchesFFmpeg() throws {
        let avcC = try Fixture.bytes("h264_aac_avcC.bin")
        let (sps, pps) = try Self.parameterSets(ofAVCC: avcC)
        #expect(try AVC.makeAVCC(sps: sps, pps: pps) == avcC)
        // Annex-B extradata (as libx264 produces) gives the same record; avcC extradata passes through.
        let annexB = [0, 0, 0, 1] + sps[0] + [0, 0, 1] + pps[0]
        #expect(try AVC.avcC(fromExtradata: annexB) == avcC)
        #expect(try AVC.avcC(fromExtradata: avcC) == avcC)
    }

    @Test func avcCErrors() {
        #expect(throws: MP4Error.self) { try AVC.avcC(fromExtradata: [0x42, 0x42]) }
        #expect(throws: MP4Error.self) { try AVC.makeAVCC(sps: [], pps: [Self.x264PPS720p]) }
        #expect(throws: MP4Error.self) { try AVC.makeAVCC(sps: [Self.x264SPS720p], pps: []) }
        #expect(throws: MP4Error.self) { try AVC.makeAVCC(sps: [Self.x264PPS720p], pps: [Self.x264PPS720p]) }
    }

    @Test func truncatedOrGarbageSPSThrowsInsteadOfTrapping() {
        // Cut before the picture size is complete: an error. Cut inside the VUI: the size still parses.
        for n in 1...7 {
            #expect(throws: MP4Error.self) { try SPSInfo(nal: Self.x264SPS720p.prefix(n)) }
        }
        for n in 8...Self.x264SPS720p.count {
            let info = try? SPSInfo(nal: Self.x264SPS720p.prefix(n))
            #expect(info == nil || (info?.width == 1280 && info?.height == 720))
        }
        var rng = SplitMix64(seed: 42)
        for _ in 0..<2000 {
            let len = Int.random(in: 1...40, using: &rng)
            let nal = [UInt8(0x67)] + (0..<len).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = try? SPSInfo(nal: nal)   // must not crash
        }
    }

    // Annex-B ----------------------------------------------------------------------------------------------

    static let aud: [UInt8] = [0x09, 0xF0]
    static let idr: [UInt8] = [0x65, 0x88, 0x84, 0x00, 0x00, 0x03, 0x00, 0x21, 0x7F]  // ends in a non-zero byte
    static let slice: [UInt8] = [0x41, 0x9A, 0x00, 0x02]

    @Test func annexBToLengthPrefixedRoundTrip() {
        // AUD with a 4-byte start code, SPS with 3, PPS with 4, IDR with 3 plus trailing_zero_8bits.
        let annexB = [0, 0, 0, 1] + Self.aud + [0, 0, 1] + Self.x264SPS720p + [0, 0, 0, 1] + Self.x264PPS720p
            + [0, 0, 1] + Self.idr + [0, 0, 0]
        #expect(AVC.isAnnexB(annexB))
        #expect(AVC.nalUnits(annexB: annexB).map(Array.init) == [Self.aud, Self.x264SPS720p, Self.x264PPS720p, Self.idr])

        let lp = AVC.lengthPrefixed(fromAnnexB: annexB)
        #expect(!AVC.isAnnexB(lp))
        #expect(lp == [0, 0, 0, 26] + Self.x264SPS720p + [0, 0, 0, 6] + Self.x264PPS720p + [0, 0, 0, 9] + Self.idr)
        #expect(AVC.nalUnits(lengthPrefixed: lp).map(Array.init) == [Self.x264SPS720p, Self.x264PPS720p, Self.idr])

        let dropped = AVC.lengthPrefixed(fromAnnexB: annexB, dropParameterSets: true)
        #expect(dropped == [0, 0, 0, 9] + Self.idr)
    }

    @Test func threeByteStartCodesOnly() {
        let annexB: [UInt8] = [0, 0, 1] + Self.slice + [0, 0, 1] + Self.slice
        #expect(AVC.isAnnexB(annexB))
        #expect(AVC.nalUnits(annexB: annexB).map(Array.init) == [Self.slice, Self.slice])
        #expect(AVC.lengthPrefixed(fromAnnexB: annexB) == [0, 0, 0, 4] + Self.slice + [0, 0, 0, 4] + Self.slice)
    }

    /// A length-prefixed sample whose first NAL unit is 256-511 bytes long begins 00 00 01 xx, like a 3-byte start
    /// code (FLV from an RTMP publisher, MP4, MKV): it stays length-prefixed, and its NAL units are found.
    @Test func lengthOf256To511IsNotAStartCode() {
        let slice: [UInt8] = [0x41] + [UInt8](repeating: 0x9A, count: 299)
        let lp: [UInt8] = [0, 0, 1, 44] + slice + [0, 0, 0, 9] + Self.idr
        #expect(!AVC.isAnnexB(lp))
        #expect(AVC.containsIDR(lp))
        var seen: [Int] = []
        AVC.forEachNAL(in: lp) { seen.append($0.count); return true }
        #expect(seen == [300, 9])
        // A length of 1 begins 00 00 00 01.
        #expect(!AVC.isAnnexB([0, 0, 0, 1, 0x09, 0, 0, 0, 9] + Self.idr))
    }

    @Test func edgeCases() {
        #expect(!AVC.isAnnexB([]))
        #expect(!AVC.isAnnexB([0, 0]))
        #expect(!AVC.isAnnexB([0, 0, 0, 0, 1]))       // leading zero_byte beyond the 4-byte code: not at offset 0
        #expect(AVC.nalUnits(annexB: []).isEmpty)
        #expect(AVC.nalUnits(annexB: [0, 0, 1]).isEmpty)
        #expect(AVC.lengthPrefixed(fromAnnexB: []) == [])
        #expect(AVC.lengthPrefixed(fromAnnexB: [0, 0, 0, 1, 0x09, 0xF0]) == [])   // only an AUD
        // Leading garbage before the first start code is ignored.
        #expect(AVC.nalUnits(annexB: [7, 7, 0, 0, 1] + Self.slice).map(Array.init) == [Self.slice])
    }

    @Test func lengthPrefixedIsTolerant() {
        let good: [UInt8] = [0, 0, 0, 4] + Self.slice
        #expect(AVC.nalUnits(lengthPrefixed: good + [0, 0, 0, 99, 1, 2]).map(Array.init) == [Self.slice])
        #expect(AVC.nalUnits(lengthPrefixed: good + [0, 0]).map(Array.init) == [Self.slice])
        #expect(AVC.nalUnits(lengthPrefixed: [0xFF, 0xFF, 0xFF, 0xFF]).isEmpty)
    }

    @Test func idrAndParameterSetsInBothForms() {
        let annexB = [0, 0, 0, 1] + Self.x264SPS720p + [0, 0, 0, 1] + Self.x264PPS720p + [0, 0, 1] + Self.idr
        let lp = AVC.lengthPrefixed(fromAnnexB: annexB)
        for au in [annexB, lp] {
            #expect(AVC.containsIDR(au))
            let ps = AVC.parameterSets(in: au)
            #expect(ps.sps == [Self.x264SPS720p])
            #expect(ps.pps == [Self.x264PPS720p])
        }
        let nonIDR = AVC.lengthPrefixed(fromAnnexB: [0, 0, 1] + Self.slice)
        #expect(!AVC.containsIDR(nonIDR))
        #expect(!AVC.containsIDR([0, 0, 1] + Self.slice))
        #expect(AVC.parameterSets(in: nonIDR).sps.isEmpty)
    }

    /// Random NAL units joined with random 3/4-byte start codes survive Annex-B -> length-prefixed -> NAL units.
    @Test func randomAnnexBRoundTrip() {
        var rng = SplitMix64(seed: 0x5EED)
        for _ in 0..<300 {
            var nals: [[UInt8]] = []
            var annexB: [UInt8] = []
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                // A NAL unit: header (not AUD), body free of start-code emulation, last byte non-zero.
                var nal: [UInt8] = [[0x41, 0x65, 0x06, 0x67, 0x68].randomElement(using: &rng)!]
                for _ in 0..<Int.random(in: 0...300, using: &rng) {
                    var b = UInt8.random(in: 0...255, using: &rng)
                    if b <= 3, nal.count >= 2, nal[nal.count - 1] == 0, nal[nal.count - 2] == 0 { b = 0x03 + 1 }
                    nal.append(b)
                }
                if nal.last == 0 { nal.append(0x80) }
                nals.append(nal)
                annexB += Bool.random(using: &rng) ? [0, 0, 1] : [0, 0, 0, 1]
                annexB += nal
            }
            let lp = AVC.lengthPrefixed(fromAnnexB: annexB)
            #expect(AVC.nalUnits(lengthPrefixed: lp).map(Array.init) == nals)
            #expect(AVC.nalUnits(annexB: annexB).map(Array.init) == nals)
        }
    }

    /// Property on arbitrary bytes (zero-heavy, so start codes and trailing zeros are common): converting to
    /// length-prefixed and splitting again gives exactly the Annex-B NAL units minus AUDs; nothing traps.
    @Test func arbitraryBytesNeverTrapAndConvertConsistently() throws {
        var rng = SplitMix64(seed: 99)
        for _ in 0..<500 {
            let data = (0..<Int.random(in: 0...200, using: &rng)).map { _ -> UInt8 in
                switch UInt8.random(in: 0...9, using: &rng) {
                case 0...4: 0
                case 5...6: 1
                case 7: 9
                default: UInt8.random(in: 0...255, using: &rng)
                }
            }
            let nals = AVC.nalUnits(annexB: data).map(Array.init).filter { $0[0] & 0x1F != 9 }
            let lp = AVC.lengthPrefixed(fromAnnexB: data)
            #expect(AVC.nalUnits(lengthPrefixed: lp).map(Array.init) == nals)
            #expect(lp.count == nals.reduce(0) { $0 + 4 + $1.count })
            _ = AVC.containsIDR(data)
            _ = AVC.parameterSets(in: data)
            _ = try? ADTS.frames(in: [0xFF, 0xF1] + data)
        }
    }

    /// Splits an avcC record into its SPS and PPS (test-side parser, ISO/IEC 14496-15 §5.3.3.1).
    static func parameterSets(ofAVCC a: [UInt8]) throws -> (sps: [[UInt8]], pps: [[UInt8]]) {
        var p = 5
        func take() throws -> [UInt8] {
            guard p + 2 <= a.count else { throw ReadError("avcC truncated") }
            let n = Int(a[p]) << 8 | Int(a[p + 1]); p += 2
            guard p + n <= a.count else { throw ReadError("avcC truncated") }
            defer { p += n }
            return Array(a[p..<p + n])
        }
        let nsps = Int(a[p] & 0x1F); p += 1
        let sps = try (0..<nsps).map { _ in try take() }
        let npps = Int(a[p]); p += 1
        let pps = try (0..<npps).map { _ in try take() }
        return (sps, pps)
    }
}
