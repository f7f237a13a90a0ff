import MediaCore
import Testing
@testable import ISOBMFF

/// ATSC A/53 closed captions in H.264/H.265 SEI: finding them in an access unit, and writing the H.265 prefix SEI
/// that carries them into a re-encoded picture.
@Suite("Closed captions in SEI") struct CaptionSEITests {
    /// cc_data constructs: field 1 "HE" (valid), field 2 padding (not valid), field 2 null pair (valid), a DTVCC start.
    static let ccData: [UInt8] = [0xFC, 0xC8, 0xC5, 0xF9, 0x80, 0x80, 0xFD, 0x80, 0x80, 0xFF, 0x02, 0x21]

    /// A length-prefixed H.264 access unit: an SEI NAL with a `user_data_registered_itu_t_t35` A/53 message, then an
    /// IDR slice header stub.
    static func h264AccessUnit(_ cc: [UInt8]) -> [UInt8] {
        let payload: [UInt8] = [0xB5, 0x00, 0x31, 0x47, 0x41, 0x39, 0x34, 0x03, 0x40 | UInt8(cc.count / 3), 0xFF] + cc + [0xFF]
        let sei: [UInt8] = [0x06, 0x04, UInt8(payload.count)] + payload + [0x80]
        let idr: [UInt8] = [0x65, 0x88, 0x84, 0x00]
        return lengthPrefixed(sei) + lengthPrefixed(idr)
    }

    static func lengthPrefixed(_ nal: [UInt8]) -> [UInt8] {
        [0, 0, UInt8(nal.count >> 8), UInt8(nal.count & 0xFF)] + nal
    }

    @Test func findsTheServicesOfValidConstructs() {
        let p = SEI.captions(inAccessUnit: Self.h264AccessUnit(Self.ccData), hevc: false)
        #expect(p == CaptionPresence(field1: true, field2: false, dtvcc: true))
        #expect(p.services.map(\.instreamID) == ["CC1", "SERVICE1"])
    }

    @Test func otherUserDataAndInvalidConstructsAreNoCaptions() {
        // Only padding with cc_valid 0.
        #expect(SEI.captions(inAccessUnit: Self.h264AccessUnit([0xF8, 0x80, 0x80, 0xF9, 0x80, 0x80]), hevc: false).isEmpty)
        // Another provider's T.35 payload (AFD, 'DTG1') is not A/53 captions.
        var au = Self.h264AccessUnit(Self.ccData)
        au[4 + 3 + 3] = 0x44          // 'G' of GA94 → 'D'
        #expect(SEI.captions(inAccessUnit: au, hevc: false).isEmpty)
        // Truncated: the message runs past its NAL unit.
        #expect(SEI.captions(inAccessUnit: Array(Self.h264AccessUnit(Self.ccData).prefix(14)), hevc: false).isEmpty)
        // An access unit without SEI.
        #expect(SEI.captions(inAccessUnit: Self.lengthPrefixed([0x65, 0x88, 0x84, 0x00]), hevc: false).isEmpty)
        // Field 2 with data is CC3.
        #expect(SEI.captions(inAccessUnit: Self.h264AccessUnit([0xFD, 0x94, 0x20]), hevc: false) == CaptionPresence(field2: true))
    }

    @Test func hevcPrefixSEIRoundTrips() throws {
        let nal = try #require(SEI.hevcCaptionNAL(ccData: Self.ccData))
        #expect(Array(nal.prefix(2)) == [0x4E, 0x01])          // nal_unit_type 39, layer 0, temporal id 1
        let sample = HEVC.sample(from: Self.lengthPrefixed([0x26, 0x01, 0xAF, 0x00]), prefixSEI: nal)
        // The SEI comes first, then the slice, both length-prefixed.
        #expect(Array(sample[4..<(4 + nal.count)]) == nal)
        #expect(SEI.captions(inAccessUnit: sample, hevc: true) == CaptionPresence(field1: true, dtvcc: true))
        #expect(SEI.hevcCaptionNAL(ccData: []) == nil)
    }

    /// An MPEG-2 picture as a transport stream's PES carries it: picture start code and header, then `user_data()`
    /// (0x000001B2) with A/53 Part 4 §6.2.2 `GA94` / `user_data_type_code` 3 / `cc_data()`, then a slice start code.
    static func mpeg2Picture(_ userData: [UInt8]) -> [UInt8] {
        [0, 0, 1, 0x00, 0x00, 0x0F, 0xFF, 0xF8]            // picture_start_code, temporal_reference, I picture
            + [0, 0, 1, 0xB5, 0x8F, 0xFF, 0xF3, 0x41, 0x80] // picture coding extension
            + [0, 0, 1, 0xB2] + userData
            + [0, 0, 1, 0x01, 0x12, 0x34]                   // slice 1
    }

    static func ga94(_ cc: [UInt8]) -> [UInt8] {
        [0x47, 0x41, 0x39, 0x34, 0x03, 0x40 | UInt8(cc.count / 3), 0xFF] + cc + [0xFF]
    }

    @Test func mpeg2PictureUserDataCarriesTheSameConstructs() {
        #expect(MPEG2Video.captions(inPicture: Self.mpeg2Picture(Self.ga94(Self.ccData)))
                == CaptionPresence(field1: true, field2: false, dtvcc: true))
        #expect(MPEG2Video.captions(inPicture: Self.mpeg2Picture(Self.ga94([0xFD, 0x94, 0x20]))) == CaptionPresence(field2: true))
        // Other user data (AFD's 'DTG1'), padding only, no user data, cut short: no captions, no crash.
        var other = Self.ga94(Self.ccData)
        other[0] = 0x44
        #expect(MPEG2Video.captions(inPicture: Self.mpeg2Picture(other)).isEmpty)
        #expect(MPEG2Video.captions(inPicture: Self.mpeg2Picture(Self.ga94([0xF8, 0x80, 0x80]))).isEmpty)
        #expect(MPEG2Video.captions(inPicture: Self.mpeg2Picture([])).isEmpty)
        let whole = Self.mpeg2Picture(Self.ga94(Self.ccData))
        for n in [0, 3, 20, 26, 30] { _ = MPEG2Video.captions(inPicture: Array(whole.prefix(n))) }
        // User data running to the end of the packet (no slice after it).
        #expect(MPEG2Video.captions(inPicture: [0, 0, 1, 0xB2] + Self.ga94(Self.ccData)).field1)
    }

    @Test func emulationPreventionAfterTwoZeros() {
        #expect(SEI.emulationPrevented([0, 0, 1, 0, 0, 0, 0, 0, 4]) == [0, 0, 3, 1, 0, 0, 3, 0, 0, 3, 0, 4])
        // And what the reader removes again.
        #expect(SPSInfo.rbsp(SEI.emulationPrevented([0, 0, 2, 0, 0, 3])) == [0, 0, 2, 0, 0, 3])
    }
}
