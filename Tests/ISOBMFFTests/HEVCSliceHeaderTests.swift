import TestSupport
import Testing
import MediaCore
@testable import ISOBMFF

/// The H.265 slice segment header sizes common encryption keeps clear (§7.3.6.1), on x265's own slices (its default
/// wavefront parallel processing: entry points in every header; IDR, CRA, TRAIL and B pictures with slice-level
/// RPS): the reader checks `byte_alignment()` (a one bit, then zeros to the byte), so a miscount fails it.
@Suite("HEVC slice headers")
struct HEVCSliceHeaderTests {
    static let vps = hex("40010c01ffff01600000030090000003000003003f959409")
    static let sps = hex("42010101600000030090000003000003003fa005020171f2e595952930bc05a020000003002000000303c1")
    static let pps = hex("4401c073c189")
    /// The first 96 bytes of slices of x265 3.5's 640x360 test file (types 21 CRA, 8 RASL, 1 TRAIL_R, 0 TRAIL_N).
    static let slices: [(type: UInt8, bytes: [UInt8])] = [
        (21, hex("2a01ac785a22246460bb7c7f47a8140ce60d5d648eb2cad8d49a195e3b79587633bf3fc9a57e2d1f402d87acd38a221d981caa46dcbead872be119b01fe9fcde5a77ca39acfc51b1c3863b0b830c7760d61ab433a23672b5197d39fcfffce0b9")),
        (8, hex("1001e3a22d49e08140c12750800c080802809e77c5202eb42095c2369e58f43f0f27b51bc142aa76aad54812873f8397e15865faf3fb7a2aa6c55bdea31865d2226e586c44b1ff54c1da59bb6509e32ae7fcf8a7586b81b18b1ef7207d295713")),
        (1, hex("0201d1114988100c14ca0d0118042001087ecbe751d27cb43fa37600030a68bdb925161b8c071bdb5c38bac7be2c4459fc5525d1553ef514409ebf493f1fcf923f3b03bdf639e4c441e762dabbfdeaec6a5983fdea4dfd806a95193910e6d1b7")),
        (1, hex("0201e40495608128c12b004060047804032fd9e64962b1b335e1c7fe5f59a0b419142e0025333fb18f544aa56486496b4854414559edee79da8b434d7dc628fdf0a8d5b959771a1ba44dbef3e72a7043edbcd8bb72bab5e24d325b69a8064890")),
        (0, hex("0001e3e4fd7a240a46093002c080203010050597364190b2dcf6f8db69a6561cba6adea93d17899f19da6089d36fe8ad2d708027672c369af6642b9e651497bb6f965a44690cfc720254dd1c7b22970d09c04f1fc4e9c5457049b18ac1797641")),
        (0, hex("0001e426b5e08140c128c0281004060280aab163e092b429233f5017ce3d0e78296ddf89bdb405bc2c29716a511a9a844077283d98ffbee3f672ec5648b4817e159cb7552409de927fb2a48d2d2e4cf2db7ca2175125e6b44293b2f05618c3de")),
    ]

    @Test func x265SlicesEndOnTheirAlignment() throws {
        let hvcC = try HEVC.makeHVCC(vps: [Self.vps], sps: [Self.sps], pps: [Self.pps])
        let reader = try #require(HEVCSliceHeaderReader(hvcC: hvcC))
        for (type, bytes) in Self.slices {
            #expect(HEVC.type(bytes[0]) == type)
            let size = try #require(reader.headerSize(nal: bytes[...]), "type \(type)")
            #expect((22...25).contains(size), "type \(type): \(size)")     // 11 WPP entry points each
        }
        #expect(reader.headerSize(nal: Self.slices[2].bytes.prefix(6)) == nil, "truncated: not sized, not guessed")
        #expect(reader.headerSize(nal: [0x40, 0x01, 0x0C][...]) == nil, "a VPS is no slice")
    }
}
