import TestSupport
import Testing
@testable import ISOBMFF

@Suite("ADTS")
struct ADTSTests {
    /// First header of `ffmpeg -f lavfi -i sine -t 0.1 -c:a aac -f adts` (FFmpeg 5.1): 44.1 kHz mono AAC-LC.
    static let realHeader: [UInt8] = [0xFF, 0xF1, 0x50, 0x40, 0x21, 0x3F, 0xFC]

    @Test func parsesRealHeader() throws {
        let h = try ADTSHeader(Self.realHeader)
        // FF F1: sync, MPEG-4, layer 0, protection_absent 1 -> 7-byte header
        // 50: profile 01 (LC), sf index 0100 (44100), private 0, channel bit 0
        // 40 21 3F: channel 001, ..., frame_length 0 0010 0001 001 = 265
        #expect(h.profile == 1)
        #expect(h.audioObjectType == 2)
        #expect(h.samplingFrequencyIndex == 4)
        #expect(h.sampleRate == 44100)
        #expect(h.channelConfiguration == 1)
        #expect(h.frameLength == 265)
        #expect(h.headerLength == 7)
        #expect(h.rawDataBlocks == 1)
        #expect(ADTS.audioSpecificConfig(for: h) == [0x12, 0x08])
    }

    @Test func splitsARealADTSFile() throws {
        let data = try Fixture.bytes("sine_44100_mono.adts")
        #expect(ADTS.isADTS(data))
        let frames = try ADTS.frames(in: data)
        #expect(frames.count >= 5)
        #expect(frames.reduce(0) { $0 + $1.header.frameLength } == data.count)
        for f in frames {
            #expect(f.header.sampleRate == 44100)
            #expect(f.header.channelConfiguration == 1)
            #expect(f.payload.count == f.header.frameLength - 7)
        }
        // Payloads are the bytes right after each 7-byte header.
        #expect(frames[0].payload.startIndex == 7)
        #expect(frames[1].payload.startIndex == frames[0].header.frameLength + 7)
    }

    @Test func audioSpecificConfig48kStereo() throws {
        // profile 1 (LC), index 3 (48000), 2 channels, frame length 0x100.
        let h = try ADTSHeader([0xFF, 0xF1, 0x4C, 0x80, 0x20, 0x1F, 0xFC])
        #expect(h.sampleRate == 48000)
        #expect(h.channelConfiguration == 2)
        #expect(h.frameLength == 0x100)
        #expect(ADTS.audioSpecificConfig(for: h) == [0x11, 0x90])
    }

    @Test func rejectsBadInput() {
        #expect(!ADTS.isADTS([0xFF]))
        #expect(!ADTS.isADTS([0xFF, 0xF7]))                               // layer != 0
        #expect(throws: MP4Error.self) { try ADTSHeader([0xFF, 0xF1, 0x50]) }
        #expect(throws: MP4Error.self) { try ADTSHeader([0xFE, 0xF1, 0x50, 0x40, 0x21, 0x3F, 0xFC]) }
        #expect(throws: MP4Error.self) { try ADTSHeader([0xFF, 0xF1, 0x7C, 0x40, 0x21, 0x3F, 0xFC]) }  // index 15
        #expect(throws: MP4Error.self) { try ADTSHeader([0xFF, 0xF1, 0x50, 0x40, 0x00, 0x1F, 0xFC]) }  // length 0
        // A frame that claims more bytes than there are.
        #expect(throws: MP4Error.self) { try ADTS.frames(in: Self.realHeader + [1, 2, 3]) }
        // Garbage after a good frame.
        let frame = [0xFF, 0xF1, 0x50, 0x40, 0x01, 0x1F, 0xFC] + [UInt8](repeating: 0xAA, count: 1)   // length 8
        #expect((try? ADTS.frames(in: frame))?.count == 1)
        #expect(throws: MP4Error.self) { try ADTS.frames(in: frame + [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66]) }
    }
}
