import TestSupport
import Testing
import MediaCore
@testable import ISOBMFF

@Suite("H.265 and AV1 configuration")
struct HEVCTests {
    /// The parameter sets of `ffmpeg -f lavfi -i testsrc2=size=640x360:rate=30 -t 6 -c:v libx265 -preset ultrafast
    /// -tag:v hvc1 sdr.mp4` (FFmpeg 5.1, x265 3.5): the arrays of the `hvcC` FFmpeg's mov muxer wrote.
    static let vps = hex("40010c01ffff01600000030090000003000003003f959409")
    static let sps = hex("42010101600000030090000003000003003fa005020171f2e595952930bc05a020000003002000000303c1a2")
    static let pps = hex("4401c073c189")
    /// The first 22 bytes of that `hvcC` (FFmpeg's hevc.c writer: profile, tier, level, chroma, bit depths, …).
    static let ffmpegHeader = hex("0101600000009000000000003ff000fcfdf8f800000f")

    @Test func parsesX265SPS() throws {
        let info = try HEVCSPSInfo(nal: Self.sps)
        #expect(info.profileSpace == 0 && info.tier == 0 && info.profileIDC == 1)
        #expect(info.compatibility == 0x6000_0000)
        #expect(info.constraints == [0x90, 0, 0, 0, 0, 0])
        #expect(info.levelIDC == 63)
        #expect(info.chromaFormat == 1 && info.bitDepthLuma == 8 && info.bitDepthChroma == 8)
        #expect(info.width == 640 && info.height == 360)   // 640x368 coded, cropped by the conformance window
        #expect(info.maxSubLayers == 1 && info.temporalIDNesting)
    }

    /// Our record's header equals the one FFmpeg wrote for the same parameter sets, and its arrays hold them.
    @Test func buildsTheRecordFFmpegWrites() throws {
        let record = try HEVC.makeHVCC(vps: [Self.vps], sps: [Self.sps], pps: [Self.pps])
        #expect(Array(record[0..<22]) == Self.ffmpegHeader)
        #expect(record[22] == 3)
        let arrays = HEVC.parameterSets(hvcC: record)
        #expect(arrays[32] == [Self.vps] && arrays[33] == [Self.sps] && arrays[34] == [Self.pps])
        #expect(record[23] == 0x80 | 32)   // array_completeness 1: hvc1 keeps no parameter set in the samples
        #expect(HEVC.sameParameterSets(record, try HEVC.hvcC(fromExtradata: [0, 0, 0, 1] + Self.vps + [0, 0, 1] + Self.sps
                                                                              + [0, 0, 0, 1] + Self.pps)))
        #expect(throws: MP4Error.invalidHEVC("no VPS")) { try HEVC.makeHVCC(vps: [], sps: [Self.sps], pps: [Self.pps]) }
        #expect(throws: MP4Error.self) { try HEVCSPSInfo(nal: Array(Self.sps.prefix(12))) }
    }

    /// ISO/IEC 14496-15 Annex E.3: profile space letter, profile, bit-reversed compatibility flags in hex, tier and
    /// level, constraint bytes without trailing zeros.
    @Test func codecStrings() throws {
        let main = try HEVC.makeHVCC(vps: [Self.vps], sps: [Self.sps], pps: [Self.pps])
        #expect(VideoCodecStrings.hevc(hvcC: main) == "hvc1.1.6.L63.90")
        var main10 = main
        main10[1] = 2; main10[2...5] = [0x20, 0, 0, 0]; main10[6] = 0xB0; main10[12] = 123
        #expect(VideoCodecStrings.hevc(hvcC: main10) == "hvc1.2.4.L123.B0")     // Apple's HLS authoring example
        var high = main10
        high[1] = 1 << 6 | 1 << 5 | 4; high[7] = 0x23
        #expect(VideoCodecStrings.hevc(hvcC: high) == "hvc1.A4.4.H123.B0.23")
        // AV1 binding §5: "av01.0.04M.10.0.112.09.16.09.0" (10-bit HDR10, level 3.0, 4:2:0 colocated)
        let av1C: [UInt8] = [0x81, 0x04, 0x4E, 0x00]
        let hdr10 = ColourInfo(primaries: 9, transfer: 16, matrix: 9)
        #expect(VideoCodecStrings.av1(av1C: av1C, colour: hdr10) == "av01.0.04M.10.0.112.09.16.09.0")
        #expect(VideoCodecStrings.av1(av1C: [0x81, 0x01, 0x0C, 0x00], colour: nil) == "av01.0.01M.08")
        #expect(VideoCodecStrings.av1(av1C: [0x81, 0x01, 0x0C, 0x00], colour: ColourInfo(primaries: 1, transfer: 1, matrix: 1))
                == "av01.0.01M.08")
    }

    /// hvc1 samples: length-prefixed, no AUD, VPS, SPS or PPS; a clean length-prefixed sample is returned as it is.
    @Test func samplesLoseTheirParameterSets() {
        let slice: [UInt8] = [0x26, 0x01, 0xAF, 0x12, 0x34]       // IDR_W_RADL (19)
        let aud: [UInt8] = [0x46, 0x01, 0x50]
        let annexB = [0, 0, 0, 1] + aud + [0, 0, 0, 1] + Self.vps + [0, 0, 1] + Self.sps + [0, 0, 1] + Self.pps
            + [0, 0, 0, 1] + slice
        let out = HEVC.sample(from: annexB)
        #expect(out == [0, 0, 0, 5] + slice)
        #expect(HEVC.containsIRAP(out))
        #expect(!HEVC.containsIRAP([0, 0, 0, 3, 0x02, 0x01, 0xAA]))   // TRAIL_R (1)
        #expect(HEVC.sample(from: out) == out)
        let lengthPrefixedWithSets = [0, 0, 0, UInt8(Self.pps.count)] + Self.pps + [0, 0, 0, 5] + slice
        #expect(HEVC.sample(from: lengthPrefixedWithSets) == out)
        #expect(HEVC.parameterSets(in: annexB).pps == [Self.pps])
    }

    /// Mastering display (137) and content light level (144) SEI payloads, read through emulation prevention.
    @Test func readsHDRMetadataFromPrefixSEI() {
        let mdcv = hex("33c286c41d4c0bb884d03e803d1340420098968000000001")
        let clli = hex("03e80190")
        let rbsp = [137, 24] + mdcv + [144, 4] + clli + [0x80]
        var nal: [UInt8] = [0x4E, 0x01]
        var zeros = 0
        for b in rbsp {
            if zeros >= 2 && b <= 3 { nal.append(3); zeros = 0 }
            nal.append(b)
            zeros = b == 0 ? zeros + 1 : 0
        }
        #expect(nal.count > rbsp.count + 2)   // the payload needed emulation prevention
        let found = HEVC.hdrMetadata(in: [0, 0, 0, 1] + nal + [0, 0, 0, 1, 0x26, 0x01, 0xAF])
        #expect(found.masteringDisplay == mdcv && found.contentLightLevel == clli)
        #expect(HEVC.hdrMetadata(in: [0, 0, 0, 1, 0x26, 0x01, 0xAF]).masteringDisplay == nil)
    }

    /// `hvc1` with `hvcC`, then `colr` (nclx), `mdcv`, `clli` (ISO/IEC 14496-12 §12.1.5-§12.1.7).
    @Test func initSegmentCarriesTheColourBoxes() throws {
        let record = try HEVC.makeHVCC(vps: [Self.vps], sps: [Self.sps], pps: [Self.pps])
        let mdcv = hex("33c286c41d4c0bb884d03e803d1340420098968000000001")
        var track = TrackFormat(trackID: 1, kind: .video, timescale: 15360, codec: .hevc(hvcC: record), width: 640, height: 360)
        track.colour = ColourInfo(primaries: 9, transfer: 16, matrix: 9, masteringDisplay: mdcv, contentLightLevel: hex("03e80190"))
        let bytes = try InitSegment.make(tracks: [track])
        let text = hexString(bytes)
        #expect(text.contains(hexString(Array("hvc1".utf8))))
        #expect(text.contains("00000013" + hexString(Array("colrnclx".utf8)) + "000900100009" + "00"))
        #expect(text.contains("00000020" + hexString(Array("mdcv".utf8)) + hexString(mdcv)))
        #expect(text.contains("0000000c" + hexString(Array("clli".utf8)) + "03e80190"))
        track.colour = nil
        #expect(!hexString(try InitSegment.make(tracks: [track])).contains(hexString(Array("colr".utf8))))
        #expect(track.codecString == "hvc1.1.6.L63.90")
        let av1 = TrackFormat(trackID: 1, kind: .video, timescale: 15360, codec: .av1(av1C: [0x81, 0x01, 0x0C, 0x00]),
                              width: 640, height: 360)
        #expect(hexString(try InitSegment.make(tracks: [av1])).contains(hexString(Array("av01".utf8))))
        #expect(throws: MP4Error.self) {
            try InitSegment.make(tracks: [TrackFormat(trackID: 1, kind: .video, timescale: 1, codec: .av1(av1C: [0x81]),
                                                      width: 640, height: 360)])
        }
    }

    /// "Dolby Vision Streams Within the ISO Base Media File Format" §3.2: the dvvC record FFmpeg's mov muxer also
    /// writes (ff_isom_put_dvcc_dvvc: 8+8 bits of version, profile 7, level 6, three flags, compatibility 4, 28+128
    /// reserved), in the hvc1 entry after the colour boxes; SUPPLEMENTAL-CODECS per base-layer brand.
    @Test func dolbyVisionProfile8() throws {
        let dv = DolbyVisionConfig(profile: 8, level: 6, compatibilityID: 1)
        #expect(dv.record == [1, 0, 0x10, 0x35, 0x10, 0, 0, 0] + [UInt8](repeating: 0, count: 16))
        #expect(dv.boxType == "dvvC" && DolbyVisionConfig(profile: 5, level: 6, compatibilityID: 0).boxType == "dvcC")
        #expect(dv.supplementalCodecs == "dvh1.08.06/db1p")
        #expect(DolbyVisionConfig(profile: 8, level: 10, compatibilityID: 4).supplementalCodecs == "dvh1.08.10/db4h")
        #expect(DolbyVisionConfig(profile: 8, level: 6, compatibilityID: 2).supplementalCodecs == "dvh1.08.06/db2g")
        #expect(DolbyVisionConfig(profile: 5, level: 6, compatibilityID: 0).supplementalCodecs == nil)
        var track = TrackFormat(trackID: 1, kind: .video, timescale: 15360,
                                codec: .hevc(hvcC: try HEVC.makeHVCC(vps: [Self.vps], sps: [Self.sps], pps: [Self.pps])),
                                width: 640, height: 360)
        track.dolbyVision = dv
        let text = hexString(try InitSegment.make(tracks: [track]))
        #expect(text.contains("00000020" + hexString(Array("dvvC".utf8)) + hexString(dv.record)))
    }
}
