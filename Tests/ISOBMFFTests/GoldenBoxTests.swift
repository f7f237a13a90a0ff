import TestSupport
import Testing
import MediaCore
@testable import ISOBMFF

/// Each expected literal was written field by field from ISO/IEC 14496-12 (and -14, -15), not copied from output.
@Suite("Golden boxes")
struct GoldenBoxTests {
    private func written(_ body: (inout BoxWriter) throws -> Void) throws -> [UInt8] {
        var w = BoxWriter()
        try body(&w)
        return w.bytes
    }

    @Test func mfhd() throws {
        let got = try written { try MovieFragmentHeaderBox.write(to: &$0, sequenceNumber: 7) }
        #expect(hexString(got) == hexString(hex("""
            00000010 6d666864   size 16, 'mfhd'
            00 000000           version 0, flags 0
            00000007            sequence_number 7
            """.strippingComments)))
    }

    @Test func tfhd() throws {
        let got = try written { try TrackFragmentHeaderBox.write(to: &$0, trackID: 2) }
        #expect(hexString(got) == hexString(hex("""
            00000010 74666864   size 16, 'tfhd'
            00 020000           version 0, flags default-base-is-moof (0x020000)
            00000002            track_ID 2
            """.strippingComments)))
    }

    @Test func tfdt() throws {
        let got = try written { try TrackFragmentBaseMediaDecodeTimeBox.write(to: &$0, baseMediaDecodeTime: 0x1_0000_0001) }
        #expect(hexString(got) == hexString(hex("""
            00000014 74666474   size 20, 'tfdt'
            01 000000           version 1 (64-bit time), flags 0
            0000000100000001    baseMediaDecodeTime 2^32 + 1
            """.strippingComments)))
    }

    @Test func trunVersion1WithNegativeCompositionOffset() throws {
        let samples = [FragmentSample(duration: 3000, size: 0x100, isSync: true, compositionOffset: 3000),
                       FragmentSample(duration: 3000, size: 0x80, isSync: false, compositionOffset: -3000)]
        var w = BoxWriter()
        let at = try TrackRunBox.write(to: &w, samples: samples, isVideo: true)
        #expect(at == 16)
        #expect(hexString(w.bytes) == hexString(hex("""
            00000034 7472756e   size 52 = 8 + 4 + 4 + 4 + 2 * 16, 'trun'
            01 000f01           version 1 (signed cts), flags data-offset|duration|size|flags|cts
            00000002            sample_count 2
            00000000            data_offset (patched later by fragmentHeader)
            00000bb8 00000100   duration 3000, size 256
            02000000            flags: sample_depends_on 2 (no others), sync
            00000bb8            composition offset +3000
            00000bb8 00000080   duration 3000, size 128
            01010000            flags: sample_depends_on 1, sample_is_non_sync_sample 1
            fffff448            composition offset -3000 (two's complement)
            """.strippingComments)))
    }

    @Test func audioSamplesAreAlwaysIndependent() throws {
        var w = BoxWriter()
        try TrackRunBox.write(to: &w, samples: [FragmentSample(duration: 1024, size: 9, isSync: false)], isVideo: false)
        #expect(Array(w.bytes[28..<32]) == [0x02, 0, 0, 0])
    }

    @Test func wholeMoofPatchesDataOffset() throws {
        let t = TrackFragment(trackID: 1, baseMediaDecodeTime: 900_000, samples: [
            FragmentSample(duration: 3000, size: 0x100, isSync: true, compositionOffset: 3000),
            FragmentSample(duration: 3000, size: 0x80, isSync: false, compositionOffset: -3000),
        ], isVideo: true)
        let got = try MediaSegmentBoxes.fragmentHeader(sequenceNumber: 1, tracks: [t])
        #expect(hexString(got) == hexString(hex("""
            00000078 6d6f6f66                     moof 120 = 8 + 16 + 96
            00000010 6d666864 00000000 00000001   mfhd seq 1
            00000060 74726166                     traf 96 = 8 + 16 + 20 + 52
            00000010 74666864 00020000 00000001   tfhd track 1
            00000014 74666474 01000000 00000000000dbba0      tfdt v1 900000
            00000034 7472756e 01000f01 00000002   trun v1, 2 samples
            00000080                              data_offset 128 = moof 120 + mdat header 8
            00000bb8 00000100 02000000 00000bb8
            00000bb8 00000080 01010000 fffff448
            00000188 6d646174                     mdat 8 + 384
            """.strippingComments)))
    }

    @Test func mvhd() throws {
        let got = try written { try MovieHeaderBox.write(to: &$0, nextTrackID: 3) }
        #expect(hexString(got) == hexString(hex("""
            0000006c 6d766864   size 108, 'mvhd'
            00 000000           version 0, flags 0
            00000000 00000000   creation_time, modification_time
            000003e8            timescale 1000
            00000000            duration 0 (fragmented)
            00010000            rate 1.0
            0100 0000           volume 1.0, reserved
            00000000 00000000   reserved
            00010000 00000000 00000000   matrix a b u
            00000000 00010000 00000000   matrix c d v
            00000000 00000000 40000000   matrix x y w
            000000000000000000000000000000000000000000000000   pre_defined 6 x 32
            00000003            next_track_ID
            """.strippingComments)))
    }

    @Test func tkhdVideoWithNonSquarePixels() throws {
        let t = TrackFormat(trackID: 1, kind: .video, timescale: 90000, codec: .h264(avcC: [1, 0x64, 0, 0x1f, 0xff, 0xe0, 0]),
                            width: 160, height: 90, sampleAspectRatio: Rational(4, 3))
        let got = try written { try TrackHeaderBox.write(to: &$0, track: t) }
        #expect(hexString(got) == hexString(hex("""
            0000005c 746b6864   size 92, 'tkhd'
            00 000003           version 0, flags enabled|in_movie|in_preview
            00000000 00000000   creation/modification time
            00000001 00000000   track_ID 1, reserved
            00000000            duration
            00000000 00000000   reserved
            0000 0000           layer, alternate_group
            0000 0000           volume 0 (video), reserved
            00010000 00000000 00000000 00000000 00010000 00000000 00000000 00000000 40000000   matrix
            00d55555            width 160 * 4/3 = 213.3333 in 16.16 (0xd5.5555)
            005a0000            height 90.0
            """.strippingComments)))
    }

    @Test func tkhdAudio() throws {
        let t = TrackFormat(trackID: 2, kind: .audio, timescale: 48000, codec: .aac(audioSpecificConfig: [0x11, 0x90]),
                            sampleRate: 48000, channelCount: 2)
        let got = try written { try TrackHeaderBox.write(to: &$0, track: t) }
        #expect(Array(got[20..<24]) == [0, 0, 0, 2])            // track_ID
        #expect(Array(got[44..<48]) == [0x01, 0x00, 0, 0])      // volume 1.0, reserved
        #expect(Array(got[84..<92]) == [0, 0, 0, 0, 0, 0, 0, 0]) // width, height 0
    }

    @Test func mdhd() throws {
        let got = try written { try MediaHeaderBox.write(to: &$0, timescale: 90000, language: "eng") }
        #expect(hexString(got) == hexString(hex("""
            00000020 6d646864   size 32, 'mdhd'
            00 000000           version 0, flags 0
            00000000 00000000   creation/modification time
            00015f90            timescale 90000
            00000000            duration 0
            15c7                pad 0, 'e'=5 'n'=14 'g'=7 -> 00101 01110 00111
            0000                pre_defined
            """.strippingComments)))
        #expect(MediaHeaderBox.packedLanguage("und") == 0x55C4)
        #expect(MediaHeaderBox.packedLanguage("English") == 0x55C4)  // not ISO-639-2: falls back to und
    }

    @Test func hdlr() throws {
        let got = try written { try HandlerBox.write(to: &$0, handler: "vide", name: "VideoHandler") }
        #expect(hexString(got) == hexString(hex("""
            0000002d 68646c72   size 45, 'hdlr'
            00 000000           version 0, flags 0
            00000000            pre_defined
            76696465            handler_type 'vide'
            000000000000000000000000   reserved 3 x 32
            566964656f48616e646c6572 00   "VideoHandler" + NUL
            """.strippingComments)))
    }

    /// SPS/PPS of libx264 (core 164) for testsrc 1280x720 yuv420p, see AVCTests.
    @Test func avcCFromKnownParameterSets() throws {
        let got = try AVC.makeAVCC(sps: [AVCTests.x264SPS720p], pps: [AVCTests.x264PPS720p])
        #expect(hexString(got) == hexString(hex("""
            01                  configurationVersion
            64 00 1f            profile 100 (High), compatibility 0, level 3.1 (copied from SPS bytes 1-3)
            ff                  reserved 111111 + lengthSizeMinusOne 3
            e1                  reserved 111 + numOfSequenceParameterSets 1
            001a 6764001facd9405005bb0110000003001000000303c0f1831960   SPS length 26 + SPS
            01                  numOfPictureParameterSets 1
            0006 68ebe3cb22c0   PPS length 6 + PPS
            fd                  reserved 111111 + chroma_format 1 (4:2:0)      (High profile extension)
            f8 f8               reserved 11111 + bit_depth_luma_minus8 0, bit_depth_chroma_minus8 0
            00                  numOfSequenceParameterSetExt 0
            """.strippingComments)))
    }

    @Test func esdsForAACLC48kStereo() throws {
        let got = try written {
            try ElementaryStreamDescriptorBox.write(to: &$0, audioSpecificConfig: [0x11, 0x90], channelCount: 2, sampleRate: 48000)
        }
        #expect(hexString(got) == hexString(hex("""
            00000027 65736473   size 39, 'esds'
            00 000000           version 0, flags 0
            03 19               ES_DescrTag, length 25
            0000 00             ES_ID 0, flags 0
            04 11               DecoderConfigDescrTag, length 17
            40                  objectTypeIndication 0x40 = Audio ISO/IEC 14496-3
            15                  streamType 5 (audio) << 2 | upStream 0 | reserved 1
            000600              bufferSizeDB 1536 = 6144 bits / 8 x 2 channels
            0008ca00            maxBitrate 576000 = 6144 x 2 x 48000 / 1024
            00000000            avgBitrate 0 (variable)
            05 02 1190          DecSpecificInfoTag, length 2, ASC: AOT 2, 48 kHz (index 3), 2 channels
            06 01 02            SLConfigDescrTag, length 1, predefined 2
            """.strippingComments)))
    }

    @Test func styp() {
        #expect(hexString(MediaSegmentBoxes.styp()) == hexString(hex("""
            0000001c 73747970   size 28, 'styp'
            6d736468            major_brand 'msdh'
            00000000            minor_version 0
            6d736468 636d6673 69736f36   compatible 'msdh' 'cmfs' 'iso6'
            """.strippingComments)))
    }

    @Test func ftyp() throws {
        let got = try written { try FileTypeBox.write(to: &$0) }
        #expect(hexString(got) == hexString(hex("""
            00000020 66747970   size 32, 'ftyp'
            69736f36 00000000   major 'iso6', minor 0
            69736f36 636d6663 69736f35 6d703431   'iso6' 'cmfc' 'iso5' 'mp41'
            """.strippingComments)))
    }

    @Test func largeMdatUsesLargesize() throws {
        let t = TrackFragment(trackID: 1, baseMediaDecodeTime: 0,
                              samples: [FragmentSample(duration: 1, size: UInt32.max - 4, isSync: true)], isVideo: true)
        let got = try MediaSegmentBoxes.fragmentHeader(sequenceNumber: 1, tracks: [t])
        let moofSize = Int(got[0]) << 24 | Int(got[1]) << 16 | Int(got[2]) << 8 | Int(got[3])
        #expect(got.count == moofSize + 16)
        #expect(moofSize == 104)
        #expect(hexString(got[moofSize...]) == hexString(hex("""
            00000001 6d646174   size 1 = largesize follows, 'mdat'
            000000010000000b    largesize = payload (2^32 - 5) + 16
            """.strippingComments)))
        // data_offset = moof + 16-byte header.
        let dataOffsetAt = 8 + 16 + 8 + 16 + 20 + 16
        #expect(Array(got[dataOffsetAt..<dataOffsetAt + 4]) == [0, 0, 0, UInt8(moofSize + 16)])
    }

    @Test func dataOffsetOverflowThrows() {
        let big = TrackFragment(trackID: 1, baseMediaDecodeTime: 0,
                                samples: [FragmentSample(duration: 1, size: 0x8000_0000, isSync: true)], isVideo: true)
        let small = TrackFragment(trackID: 2, baseMediaDecodeTime: 0,
                                  samples: [FragmentSample(duration: 1, size: 1, isSync: true)], isVideo: false)
        #expect(throws: MP4Error.dataOffsetOutOfRange(trackID: 2)) {
            try MediaSegmentBoxes.fragmentHeader(sequenceNumber: 1, tracks: [big, small])
        }
    }
}

extension String {
    /// Keeps only the leading hex groups of each line: everything after two spaces of a field comment is dropped.
    var strippingComments: String {
        split(separator: "\n").map { line -> Substring in
            var parts: [Substring] = []
            for word in line.split(separator: " ", omittingEmptySubsequences: true) {
                guard word.allSatisfy({ $0.isHexDigit }) else { break }
                parts.append(word)
            }
            return parts.joined(separator: "")[...]
        }.joined()
    }
}
