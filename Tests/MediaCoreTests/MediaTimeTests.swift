import Testing
@testable import MediaCore

@Suite struct MediaTimeTests {
    @Test func rescaleRoundsAsNamed() {
        #expect(MediaTime.rescale(1001, from: 30000, to: 90000) == 3003)
        #expect(MediaTime.rescale(1, from: 3, to: 2, rounding: .down) == 0)
        #expect(MediaTime.rescale(1, from: 3, to: 2, rounding: .up) == 1)
        #expect(MediaTime.rescale(1, from: 2, to: 1, rounding: .nearest) == 1)
        #expect(MediaTime.rescale(-1, from: 2, to: 1, rounding: .nearest) == -1)
        #expect(MediaTime.rescale(-1, from: 3, to: 2, rounding: .down) == -1)
        #expect(MediaTime.rescale(Int64.max / 2, from: 1, to: 1) == Int64.max / 2)
        // No overflow through the Int128 intermediate.
        #expect(MediaTime.rescale(1 << 50, from: 90000, to: 90000 * 4) == 1 << 52)
    }

    @Test func compareAcrossTimescales() {
        #expect(MediaTime(value: 3003, timescale: 90000) == MediaTime(value: 1001, timescale: 30000))
        #expect(MediaTime(value: 1, timescale: 48000) < MediaTime(value: 1, timescale: 44100))
        let a = MediaTime(value: 90000, timescale: 90000), b = MediaTime(value: 1, timescale: 1)
        #expect(Set([a, b]).count == 1)
    }

    @Test func fourCC() {
        let t: FourCC = "moof"
        #expect(t.rawValue == 0x6D6F_6F66)
        #expect(t.description == "moof")
    }

    @Test func codecStrings() {
        let v = TrackFormat(trackID: 1, kind: .video, timescale: 90000,
                            codec: .h264(avcC: [1, 0x64, 0x00, 0x1F, 0xFF]))
        #expect(v.codecString == "avc1.64001f")
        let a = TrackFormat(trackID: 2, kind: .audio, timescale: 48000,
                            codec: .aac(audioSpecificConfig: [0x11, 0x90]))
        #expect(a.codecString == "mp4a.40.2")
        let he = TrackFormat(trackID: 2, kind: .audio, timescale: 48000,
                             codec: .aac(audioSpecificConfig: [0x2B, 0x92, 0x08, 0x00]))
        #expect(he.codecString == "mp4a.40.5")
    }
}
