import TestSupport
import Testing
import MediaCore
@testable import ISOBMFF

/// ISO/IEC 23001-7 boxes: `tenc` fields (golden, written field by field from §8.2), the protected sample entry, `pssh`,
/// and a fragment's `senc`/`saiz`/`saio` with `saio` pointing at the first entry relative to the `moof`.
@Suite("Common encryption boxes")
struct CommonEncryptionBoxTests {
    static let kid = [UInt8](0x10..<0x20)
    static let iv = [UInt8](0xA0..<0xB0)

    private func written(_ body: (inout BoxWriter) throws -> Void) throws -> [UInt8] {
        var w = BoxWriter()
        try body(&w)
        return w.bytes
    }

    @Test func tencCENC() throws {
        let got = try written { try TrackEncryptionBox.write(to: &$0, .cenc(keyID: Self.kid)) }
        #expect(hexString(got) == hexString(hex("""
            00000020 74656e63   size 32, 'tenc'
            00 000000           version 0, flags 0
            00 00               reserved, reserved (version 0: no pattern)
            01                  default_isProtected
            08                  default_Per_Sample_IV_Size 8
            101112131415161718191a1b1c1d1e1f   default_KID
            """.strippingComments)))
    }

    @Test func tencCBCSVideoAndAudio() throws {
        let video = try written { try TrackEncryptionBox.write(to: &$0, .cbcs(keyID: Self.kid, constantIV: Self.iv, video: true)) }
        #expect(hexString(video) == hexString(hex("""
            00000031 74656e63   size 49, 'tenc'
            01 000000           version 1, flags 0
            00 19               reserved, crypt 1 : skip 9
            01                  default_isProtected
            00                  default_Per_Sample_IV_Size 0: constant IV
            101112131415161718191a1b1c1d1e1f   default_KID
            10                  default_constant_IV_size 16
            a0a1a2a3a4a5a6a7a8a9aaabacadaeaf   default_constant_IV
            """.strippingComments)))
        let audio = try written { try TrackEncryptionBox.write(to: &$0, .cbcs(keyID: Self.kid, constantIV: Self.iv, video: false)) }
        #expect(audio[13] == 0x00 && audio[12] == 0x00 && audio[8] == 1, "pattern 0:0 for audio, still version 1")
    }

    @Test func pssh() throws {
        let v1 = try ProtectionSystemHeader(systemID: [UInt8](repeating: 0xEE, count: 16), keyIDs: [Self.kid]).box()
        #expect(hexString(v1) == hexString(hex("""
            00000034 70737368   size 52, 'pssh'
            01 000000           version 1
            eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee   SystemID
            00000001            KID_count
            101112131415161718191a1b1c1d1e1f   KID
            00000000            DataSize 0
            """.strippingComments)))
        let v0 = try ProtectionSystemHeader(systemID: [UInt8](repeating: 0xEE, count: 16), data: [1, 2]).box()
        #expect(v0.count == 8 + 4 + 16 + 4 + 2 && v0[8] == 0)
    }

    @Test func protectedInitSegment() throws {
        let e = TrackEncryption.cbcs(keyID: Self.kid, constantIV: Self.iv, video: true)
        let a = TrackEncryption.cbcs(keyID: Self.kid, constantIV: Self.iv, video: false)
        let clear = try InitSegment.make(tracks: [InitSegmentTests.video, InitSegmentTests.audio])
        let bytes = try InitSegment.make(tracks: [InitSegmentTests.video, InitSegmentTests.audio],
                                         protection: [1: e, 2: a],
                                         systems: [ProtectionSystemHeader(systemID: [UInt8](repeating: 1, count: 16), keyIDs: [Self.kid])])
        let moov = try #require(try BoxReader.walk(bytes).first { $0.type == "moov" })
        #expect(moov.children.map(\.type) == ["mvhd", "pssh", "trak", "trak", "mvex"])
        let stsd = try #require(moov.children[2].find(["mdia", "minf", "stbl", "stsd"]))
        let encv = try #require(stsd.child("encv"))
        // The clear entry's children first (avcC), then sinf; frma names the original format.
        #expect(encv.children.map(\.type) == ["avcC", "sinf"])
        let sinf = try #require(encv.child("sinf"))
        #expect(sinf.children.map(\.type) == ["frma", "schm", "schi"])
        let frma = try #require(sinf.child("frma"))
        #expect(Array(bytes[frma.contentStart..<frma.end]) == Array("avc1".utf8))
        let schm = try #require(sinf.child("schm"))
        #expect(hexString(Array(bytes[schm.contentStart..<schm.end])) == "00000000" + "63626373" + "00010000")
        let audioEntry = try #require(moov.children[3].find(["mdia", "minf", "stbl", "stsd", "enca"]))
        #expect(audioEntry.children.map(\.type) == ["esds", "sinf"])
        // Everything but the sample entries (and the pssh) is the clear init segment's.
        #expect(bytes.count == clear.count + 52 + 2 * (8 + 12 + 20 + 8) + 49 + 49)
    }

    static func fragment(encryption: [SampleEncryptionEntry]?) throws -> (bytes: [UInt8], payload: [UInt8]) {
        var t = TrackFragment(trackID: 1, baseMediaDecodeTime: 900, samples: [
            FragmentSample(duration: 3000, size: 40, isSync: true),
            FragmentSample(duration: 3000, size: 24, isSync: false),
        ], isVideo: true)
        t.encryption = encryption
        let header = try MediaSegmentBoxes.fragmentHeader(sequenceNumber: 3, tracks: [t])
        let payload = (0..<64).map { UInt8($0) }
        return (header + payload, payload)
    }

    @Test func sencSaizSaioOffsets() throws {
        let entries = [SampleEncryptionEntry(iv: [1, 2, 3, 4, 5, 6, 7, 8], subsamples: [SubsampleEntry(clear: 5, protected: 32), SubsampleEntry(clear: 3, protected: 0)]),
                       SampleEncryptionEntry(iv: [9, 9, 9, 9, 9, 9, 9, 9], subsamples: [SubsampleEntry(clear: 8, protected: 16)])]
        let (bytes, payload) = try Self.fragment(encryption: entries)
        let top = try BoxReader.walk(bytes)
        #expect(top.map(\.type) == ["moof", "mdat"])
        let moof = top[0]
        let traf = try #require(moof.child("traf"))
        #expect(traf.children.map(\.type) == ["tfhd", "tfdt", "trun", "senc", "saiz", "saio"])
        let d = Bytes(bytes)
        let senc = try #require(traf.child("senc"))
        #expect(try d.u32(senc.contentStart) == 2, "flags: UseSubSampleEncryption")
        #expect(try d.u32(senc.contentStart + 4) == 2)
        // saiz: sizes differ (8 + 2 + 12 = 22, 8 + 2 + 6 = 16): default 0, one size each.
        let saiz = try #require(traf.child("saiz"))
        #expect(Array(bytes[saiz.contentStart..<saiz.end]) == [0, 0, 0, 0, 0, 0, 0, 0, 2, 22, 16])
        // saio: one offset, from the moof's first byte to senc's first entry (its IV).
        let saio = try #require(traf.child("saio"))
        #expect(try d.u32(saio.contentStart + 4) == 1)
        let offset = Int(try d.u32(saio.contentStart + 8))
        #expect(moof.offset + offset == senc.contentStart + 8)
        #expect(Array(bytes[(moof.offset + offset)..<(moof.offset + offset + 8)]) == [1, 2, 3, 4, 5, 6, 7, 8])
        // The trun data offset still lands on the payload's first byte.
        let trun = try #require(traf.child("trun"))
        let dataOffset = Int(try d.i32(trun.contentStart + 8))
        #expect(dataOffset == top[1].contentStart - moof.offset)
        #expect(Array(bytes[(moof.offset + dataOffset)...]) == payload)
    }

    @Test func zeroSizeEntriesAreListed() throws {
        // cbcs audio: constant IV, no subsamples: each entry is 0 bytes, which saiz lists (a default of 0 would mean
        // "a list follows").
        let (bytes, _) = try Self.fragment(encryption: [SampleEncryptionEntry(iv: []), SampleEncryptionEntry(iv: [])])
        let traf = try #require(try BoxReader.walk(bytes)[0].child("traf"))
        let saiz = try #require(traf.child("saiz"))
        #expect(Array(bytes[saiz.contentStart..<saiz.end]) == [0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0])
        let senc = try #require(traf.child("senc"))
        #expect(senc.size == 16 && bytes[senc.contentStart + 3] == 0, "no subsample flag, two empty entries")
    }

    @Test func writtenFragmentsReadBack() throws {
        var t = TrackFragment(trackID: 2, baseMediaDecodeTime: 48_000, samples: [
            FragmentSample(duration: 1024, size: 10, isSync: true, compositionOffset: 0),
            FragmentSample(duration: 1024, size: 7, isSync: true, compositionOffset: 0),
        ], isVideo: false)
        let v = TrackFragment(trackID: 1, baseMediaDecodeTime: 90_000, samples: [
            FragmentSample(duration: 3000, size: 20, isSync: true, compositionOffset: 6000),
            FragmentSample(duration: 3000, size: 5, isSync: false, compositionOffset: -3000),
        ], isVideo: true)
        let first = try MediaSegmentBoxes.fragmentHeader(sequenceNumber: 7, tracks: [v, t]) + [UInt8](repeating: 1, count: 42)
        t.baseMediaDecodeTime += 2048
        let second = try MediaSegmentBoxes.fragmentHeader(sequenceNumber: 8, tracks: [t]) + [UInt8](repeating: 2, count: 17)
        let styp = MediaSegmentBoxes.styp()
        let read = try WrittenFragment.read(styp + first + second)
        #expect(read.count == 2)
        #expect(read[0].prefix == 0..<styp.count && read[0].sequenceNumber == 7)
        #expect(read[0].tracks.map(\.trackID) == [1, 2] && read[0].tracks[0].samples == v.samples)
        #expect(read[0].payload.count == 42 && read[1].payload.count == 17)
        #expect(read[1].tracks[0].baseMediaDecodeTime == 50_048 && read[1].prefix.isEmpty)
        // Written again from what was read, the header is the same bytes.
        var again = read[0].tracks
        again[0].isVideo = true
        #expect(try MediaSegmentBoxes.fragmentHeader(sequenceNumber: 7, tracks: again) == Array(first.prefix(first.count - 42)))
        #expect(throws: MP4Error.self) { try WrittenFragment.read(Array(first.dropLast())) }
        // An event message before a moof (ID3 timed metadata) is that fragment's prefix, kept as it is.
        let emsg: [UInt8] = [0, 0, 0, 12] + Array("emsg".utf8) + [1, 0, 0, 0]
        let withEvent = try WrittenFragment.read(styp + emsg + first)
        #expect(withEvent.count == 1 && withEvent[0].prefix == 0..<(styp.count + emsg.count))
        #expect(throws: MP4Error.self) { try WrittenFragment.read(styp + [0, 0, 0, 8] + Array("free".utf8) + first) }
    }

    @Test func seigSampleGroup() throws {
        let got = try written {
            try SampleGroupEncryptionBoxes.write(to: &$0, sampleCount: 30, encryption: .cbcs(keyID: Self.kid, constantIV: Self.iv, video: true))
        }
        #expect(hexString(got) == hexString(hex("""
            0000001c 73626770   size 28, 'sbgp'
            00 000000           version 0
            73656967            grouping_type 'seig'
            00000001            entry_count 1
            0000001e            sample_count 30
            00010001            group_description_index: this traf's entry 1
            0000003d 73677064   size 61, 'sgpd'
            01 000000           version 1
            73656967            grouping_type 'seig'
            00000025            default_length 37
            00000001            entry_count 1
            00 19 01 00         reserved, crypt 1 : skip 9, isProtected, Per_Sample_IV_Size 0
            101112131415161718191a1b1c1d1e1f   KID
            10                  constant_IV_size 16
            a0a1a2a3a4a5a6a7a8a9aaabacadaeaf   constant_IV
            """.strippingComments)))
        var t = TrackFragment(trackID: 1, baseMediaDecodeTime: 0, samples: [FragmentSample(duration: 1, size: 4, isSync: true)], isVideo: true)
        t.sampleGroupEncryption = .cenc(keyID: Self.kid)
        t.encryption = [SampleEncryptionEntry(iv: [1, 2, 3, 4, 5, 6, 7, 8])]
        let header = try MediaSegmentBoxes.fragmentHeader(sequenceNumber: 1, tracks: [t],
                                                          systems: [ProtectionSystemHeader(systemID: Self.iv, keyIDs: [Self.kid])])
        let moof = try BoxReader.walk(header + [0, 0, 0, 0])[0]
        #expect(moof.children.map(\.type) == ["mfhd", "pssh", "traf"])
        #expect(moof.children[2].children.map(\.type) == ["tfhd", "tfdt", "trun", "sbgp", "sgpd", "senc", "saiz", "saio"])
    }
}

