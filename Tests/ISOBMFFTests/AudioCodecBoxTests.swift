import MediaCore
import TestSupport
import Testing
@testable import ISOBMFF

/// `dOps`, `dac3`, `dec3`: golden bytes worked out by hand from the spec fields, and real headers from FFmpeg 5.1's
/// encoders (libopus, ac3, eac3), whose own mov muxer wrote the same boxes (noted per test).
@Suite("Audio codec boxes")
struct AudioCodecBoxTests {
    static func boxBytes(_ write: (inout BoxWriter) throws -> Void) rethrows -> [UInt8] {
        var w = BoxWriter()
        try write(&w)
        return w.bytes
    }

    // MARK: Opus

    /// The extradata of `ffmpeg -f lavfi -i sine -ac 2 -c:a libopus -f ogg` (RFC 7845 §5.1, little-endian).
    static let realOpusHead: [UInt8] = Array("OpusHead".utf8) + [0x01, 0x02, 0x38, 0x01, 0x80, 0xBB, 0x00, 0x00, 0x00, 0x00, 0x00]

    @Test func parsesRealOpusHead() throws {
        let c = try Opus.config(fromOpusHead: Self.realOpusHead)
        #expect(c.outputChannelCount == 2)
        #expect(c.preSkip == 312)          // 38 01 little-endian
        #expect(c.inputSampleRate == 48000) // 80 BB 00 00 little-endian
        #expect(c.outputGain == 0)
        #expect(c.channelMappingFamily == 0)
    }

    /// size 19, "dOps", Version 0, 2 channels, PreSkip 0x0138 and InputSampleRate 0x0000BB80 now big-endian, gain 0,
    /// family 0 (no table). FFmpeg's mov muxer writes the same 19 bytes for the same stream.
    @Test func dOpsGoldenStereo() throws {
        let c = try Opus.config(fromOpusHead: Self.realOpusHead)
        #expect(try Self.boxBytes { try OpusSpecificBox.write(to: &$0, config: c) }
                == [0x00, 0x00, 0x00, 0x13, 0x64, 0x4F, 0x70, 0x73, 0x00, 0x02, 0x01, 0x38, 0x00, 0x00, 0xBB, 0x80, 0x00, 0x00, 0x00])
    }

    /// 5.1 in mapping family 1: 4 streams, 2 coupled, Vorbis-order table; gain -256 (Q7.8: -1 dB) as 0xFF00.
    @Test func dOpsGoldenSurroundWithMappingTable() throws {
        let head = Array("OpusHead".utf8) + [0x01, 0x06, 0x00, 0x0F, 0x44, 0xAC, 0x00, 0x00, 0x00, 0xFF, 0x01,
                                             0x04, 0x02, 0x00, 0x04, 0x01, 0x02, 0x03, 0x05]
        let c = try Opus.config(fromOpusHead: head)
        #expect(c.preSkip == 0x0F00 && c.inputSampleRate == 44100 && c.outputGain == -256)
        #expect(c.streamCount == 4 && c.coupledCount == 2 && c.channelMapping == [0, 4, 1, 2, 3, 5])
        #expect(try Self.boxBytes { try OpusSpecificBox.write(to: &$0, config: c) }
                == [0x00, 0x00, 0x00, 0x1B, 0x64, 0x4F, 0x70, 0x73, 0x00, 0x06, 0x0F, 0x00, 0x00, 0x00, 0xAC, 0x44,
                    0xFF, 0x00, 0x01, 0x04, 0x02, 0x00, 0x04, 0x01, 0x02, 0x03, 0x05])
    }

    @Test func rejectsBadOpusHeads() {
        #expect(throws: MP4Error.self) { try Opus.config(fromOpusHead: Array("OpusTags".utf8) + [UInt8](repeating: 0, count: 11)) }
        #expect(throws: MP4Error.self) { try Opus.config(fromOpusHead: Array(Self.realOpusHead.prefix(18))) }
        var six = Self.realOpusHead
        six[9] = 6  // family 0 allows 1 or 2 channels only
        #expect(throws: MP4Error.self) { try Opus.config(fromOpusHead: six) }
    }

    /// RFC 6716 §3.1 TOC configs and §3.2 frame-count codes.
    @Test func opusPacketDurations() throws {
        #expect(try Opus.sampleCount(packet: [0xFC, 0]) == 960)           // CELT FB 20 ms, code 0
        #expect(try Opus.sampleCount(packet: [0xFD, 0]) == 1920)          // code 1: two 20 ms frames
        #expect(try Opus.sampleCount(packet: [0x80]) == 120)              // CELT NB 2.5 ms
        #expect(try Opus.sampleCount(packet: [0x18]) == 2880)             // SILK NB 60 ms
        #expect(try Opus.sampleCount(packet: [0x60]) == 480)              // Hybrid SWB 10 ms (config 12)
        #expect(try Opus.sampleCount(packet: [0xFB, 0x03]) == 2880)       // code 3: three 20 ms frames
        #expect(throws: MP4Error.self) { try Opus.sampleCount(packet: [0x1B, 0x03]) }  // 3 x 60 ms > 120 ms
        #expect(throws: MP4Error.self) { try Opus.sampleCount(packet: [0xFF]) }        // code 3 without a count
        #expect(throws: MP4Error.self) { try Opus.sampleCount(packet: []) }
    }

    // MARK: AC-3

    /// First sync frame of `ffmpeg -f lavfi -i sine -ac 2 -c:a ac3 -b:a 192k -f ac3`: 0B77 crc1, then
    /// 14 = fscod 00 frmsizecod 010100 (20: 192 kbit/s), 40 = bsid 01000 bsmod 000, 43 = acmod 010 dsurmod 00 lfeon 0.
    static let realAC3: [UInt8] = [0x0B, 0x77, 0xFE, 0x95, 0x14, 0x40, 0x43, 0xE1, 0x06, 0xF4]

    @Test func parsesRealAC3Header() throws {
        let h = try DolbyFrameHeader(Self.realAC3)
        #expect(!h.isEnhanced && h.bsid == 8 && h.fscod == 0 && h.frmsizecod == 20)
        #expect(h.bsmod == 0 && h.acmod == 2 && !h.lfeon)
        #expect(h.sampleRate == 48000 && h.sampleCount == 1536)
        #expect(h.frameSize == 768)   // 192 kbit/s x 32 ms / 8
        let c = try DolbyAudio.ac3Config(h)
        #expect(c.channelCount == 2 && c.channelMask == 0xA000)
        // 00 01000 000 010 0 01010 00000
        #expect(try Self.boxBytes { try AC3SpecificBox.write(to: &$0, config: c) }
                == [0x00, 0x00, 0x00, 0x0B, 0x64, 0x61, 0x63, 0x33, 0x10, 0x11, 0x40])
    }

    /// 5.1 at 384 kbit/s: 00 01000 000 111 1 01110 00000 = 10 3D C0, what FFmpeg's mov muxer writes for
    /// `-ac 6 -c:a ac3 -b:a 384k`.
    @Test func dac3Golden51() throws {
        let c = AC3Config(fscod: 0, bsid: 8, bsmod: 0, acmod: 7, lfeon: true, bitRateCode: 14)
        #expect(try Self.boxBytes { try AC3SpecificBox.write(to: &$0, config: c) }.suffix(3) == [0x10, 0x3D, 0xC0])
        #expect(c.channelCount == 6 && c.channelMask == 0xF801)
    }

    /// Table 4.13 frame sizes at the three rates (in 16-bit words: 48 kHz 2 x kbit/s, 32 kHz 3 x, 44.1 kHz rounded
    /// down and padded by the odd code).
    @Test func ac3FrameSizes() {
        #expect(DolbyFrameHeader.ac3FrameSize(frmsizecod: 0, fscod: 1) == 69 * 2)
        #expect(DolbyFrameHeader.ac3FrameSize(frmsizecod: 1, fscod: 1) == 70 * 2)
        #expect(DolbyFrameHeader.ac3FrameSize(frmsizecod: 37, fscod: 1) == 1394 * 2)
        #expect(DolbyFrameHeader.ac3FrameSize(frmsizecod: 37, fscod: 2) == 1920 * 2)
        #expect(DolbyFrameHeader.ac3FrameSize(frmsizecod: 36, fscod: 0) == 1280 * 2)
    }

    @Test func splitsConsecutiveFrames() throws {
        var data = Self.realAC3 + [UInt8](repeating: 0, count: 768 - Self.realAC3.count)
        data += data
        #expect(try DolbyAudio.frames(in: data).count == 2)
        #expect(try DolbyAudio.sampleCount(in: data) == 3072)
        #expect(throws: MP4Error.self) { try DolbyAudio.frames(in: Array(data.dropLast())) }
        #expect(throws: MP4Error.self) { try DolbyAudio.frames(in: [0x0B, 0x78, 0, 0, 0, 0x40]) }
    }

    // MARK: E-AC-3

    /// First sync frame of `ffmpeg -f lavfi -i sine -af pan=5.1... -c:a eac3 -b:a 384k`: 02FF = strmtyp 0,
    /// substreamid 0, frmsiz 767 (1536 bytes); 3F = fscod 00 numblkscod 11 acmod 111 lfeon 1; 87 = bsid 10000 ...
    static let realEAC3: [UInt8] = [0x0B, 0x77, 0x02, 0xFF, 0x3F, 0x87, 0xC0, 0x00, 0x20, 0xA4, 0x21, 0x08, 0x42,
                                    0x08, 0x42, 0x10, 0x82, 0xF0, 0x1F, 0xBA]

    @Test func parsesRealEAC3HeaderAndMakesFFmpegsDec3() throws {
        let h = try DolbyFrameHeader(Self.realEAC3)
        #expect(h.isEnhanced && h.bsid == 16 && h.streamType == .independent && h.substreamID == 0)
        #expect(h.frameSize == 1536 && h.blocks == 6 && h.sampleRate == 48000)
        #expect(h.acmod == 7 && h.lfeon && h.jocComplexityIndex == nil)
        let c = try DolbyAudio.eac3Config([h])
        #expect(c.dataRate == 384 && c.channelCount == 6 && c.channelMask == 0xF801)
        // data_rate 0000110000000 num_ind_sub 000 | 00 10000 0 0 000 111 1 000 0000 0: FFmpeg's mov muxer's dec3
        // for this stream is the same 5 bytes.
        #expect(try Self.boxBytes { try EC3SpecificBox.write(to: &$0, config: c) }
                == [0x00, 0x00, 0x00, 0x0D, 0x64, 0x65, 0x63, 0x33, 0x0C, 0x00, 0x20, 0x0F, 0x00])
    }

    /// An E-AC-3 bsi built field by field (Annex E.1.2.2), for what FFmpeg's encoder never writes.
    static func eac3Frame(strmtyp: UInt32, acmod: UInt32, lfeon: UInt32, chanmap: UInt32? = nil,
                          joc: UInt32? = nil, bytes: Int = 512) -> [UInt8] {
        var b = BitWriter()
        b.put(0x0B77, 16); b.put(strmtyp, 2); b.put(0, 3); b.put(UInt32(bytes / 2 - 1), 11)
        b.put(0, 2); b.put(3, 2)                                  // fscod 48 kHz, numblkscod 6 blocks
        b.put(acmod, 3); b.put(lfeon, 1); b.put(16, 5)            // acmod, lfeon, bsid
        b.put(27, 5); b.put(0, 1)                                 // dialnorm, compre
        if strmtyp == 1 {
            b.put(chanmap == nil ? 0 : 1, 1)
            if let chanmap { b.put(chanmap, 16) }
        }
        b.put(1, 1)                                               // mixmdate: exercise the skipping
        if acmod > 2 { b.put(1, 2) }                              // dmixmod
        if acmod & 1 != 0 && acmod > 2 { b.put(0b100100, 6) }
        if acmod & 4 != 0 { b.put(0b101101, 6) }
        if lfeon == 1 { b.put(1, 1); b.put(10, 5) }
        if strmtyp == 0 {
            b.put(0, 1); b.put(0, 1)                              // pgmscle, extpgmscle
            b.put(3, 2); b.put(1, 5); b.put(0xABCDEF, 24)         // mixdef 3: (1 + 2) bytes of mixdata
            b.put(0, 1)                                           // frmmixcfginfoe
        }
        b.put(1, 1); b.put(2, 3); b.put(0, 2)                     // infomdate: bsmod 2, copyrightb, origbs
        if acmod >= 6 { b.put(0, 2) }                             // dsurexmod
        b.put(0, 1); b.put(0, 1)                                  // audprodie, sourcefscod
        if let joc {
            b.put(1, 1); b.put(1, 6)                              // addbsie, addbsil: 2 bytes
            b.put(0, 7); b.put(1, 1); b.put(joc, 8)               // flag_ec3_extension_type_a, complexity index
        } else {
            b.put(0, 1)
        }
        return b.bytes + [UInt8](repeating: 0, count: bytes - b.bytes.count)
    }

    /// Dolby Atmos (JOC): `dec3` ends with reserved 0000000, flag 1, complexity_index_type_a; HLS says `16/JOC`.
    @Test func jocFromAddbsi() throws {
        let frame = Self.eac3Frame(strmtyp: 0, acmod: 7, lfeon: 1, joc: 16)
        let h = try DolbyFrameHeader(frame)
        #expect(h.bsmod == 2 && h.jocComplexityIndex == 16)
        let c = try DolbyAudio.eac3Config([h])
        #expect(c.jocComplexityIndex == 16 && c.dataRate == 128)  // 512 bytes per 32 ms
        let box = try Self.boxBytes { try EC3SpecificBox.write(to: &$0, config: c) }
        #expect(box.count == 15 && box.suffix(2) == [0x01, 0x10])
        let track = TrackFormat(trackID: 1, kind: .audio, timescale: 48000, codec: .eac3(c), sampleRate: 48000, channelCount: 6)
        #expect(track.hlsChannels == "16/JOC" && track.codecString == "ec-3")
        let plain = try DolbyAudio.eac3Config([try DolbyFrameHeader(Self.eac3Frame(strmtyp: 0, acmod: 7, lfeon: 1))])
        #expect(plain.jocComplexityIndex == nil)
        #expect(TrackFormat(trackID: 1, kind: .audio, timescale: 48000, codec: .eac3(plain), channelCount: 6).hlsChannels == "6")
    }

    /// 7.1 as 5.1 plus a dependent substream carrying Lrs/Rrs (chanmap bit 6 = 0x0200): num_dep_sub 1 and
    /// chan_loc bit 1 (0x080) in `dec3`; 8 channels; the Dolby mask gains 0x0200.
    @Test func dependentSubstreamAddsChannelLocations() throws {
        let data = Self.eac3Frame(strmtyp: 0, acmod: 7, lfeon: 1) + Self.eac3Frame(strmtyp: 1, acmod: 2, lfeon: 0, chanmap: 0xA200)
        let frames = try DolbyAudio.frames(in: data)
        #expect(frames.map(\.streamType) == [.independent, .dependent])
        #expect(frames[1].chanmap == 0xA200)
        #expect(try DolbyAudio.sampleCount(in: data) == 1536)
        let c = try DolbyAudio.eac3Config(frames)
        #expect(c.independentSubstreams.count == 1)
        #expect(c.independentSubstreams[0].dependentCount == 1 && c.independentSubstreams[0].channelLocations == 0x080)
        #expect(c.channelCount == 8 && c.channelMask == 0xFA01 && c.dataRate == 256)
        // data_rate 256 = 0000100000000, num_ind_sub 000 | fscod 00 bsid 10000 0 asvc 0 bsmod 010 acmod 111 lfeon 1
        // 000 num_dep_sub 0001 chan_loc 010000000
        #expect(try Self.boxBytes { try EC3SpecificBox.write(to: &$0, config: c) }.suffix(6)
                == [0x08, 0x00, 0x20, 0x2F, 0x02, 0x80])
    }

    // MARK: Sample entries

    @Test func initSegmentsCarryTheNewSampleEntries() throws {
        let opus = try Opus.config(fromOpusHead: Self.realOpusHead)
        let ac3 = try DolbyAudio.ac3Config(try DolbyFrameHeader(Self.realAC3))
        let eac3 = try DolbyAudio.eac3Config([try DolbyFrameHeader(Self.realEAC3)])
        for (codec, entry, child, channels) in [(TrackFormat.Codec.opus(opus), "Opus", "dOps", 2), (.ac3(ac3), "ac-3", "dac3", 2),
                                                (.eac3(eac3), "ec-3", "dec3", 6)] {
            let t = TrackFormat(trackID: 1, kind: .audio, timescale: 48000, codec: codec, sampleRate: 48000, channelCount: channels)
            let bytes = try InitSegment.make(tracks: [t])
            let moov = try BoxReader.walk(bytes)[1]
            let e = try #require(moov.find(["trak", "mdia", "minf", "stbl", "stsd", entry]))
            #expect(e.children.map(\.type) == [child])
            let d = Bytes(bytes)
            #expect(try d.u16(e.contentStart + 16) == UInt16(channels))   // channelcount
            #expect(try d.u16(e.contentStart + 18) == 16)                 // samplesize
            #expect(try d.u32(e.contentStart + 24) == 48000 << 16)        // samplerate 16.16
        }
    }

    @Test func codecStrings() {
        let opus = TrackFormat(trackID: 1, kind: .audio, timescale: 48000, codec: .opus(Opus.defaultConfig(channelCount: 2)), channelCount: 2)
        #expect(opus.codecString == "opus" && opus.hlsChannels == "2" && opus.longestAudioFrame == 2880)
        let ac3 = TrackFormat(trackID: 1, kind: .audio, timescale: 48000,
                              codec: .ac3(AC3Config(fscod: 0, bsid: 8, bsmod: 0, acmod: 7, lfeon: true, bitRateCode: 14)), channelCount: 6)
        #expect(ac3.codecString == "ac-3" && ac3.hlsChannels == "6" && ac3.longestAudioFrame == 1536)
    }
}
