import FFmpegBridge
import ISOBMFF
import MediaCore
import Testing
@testable import Pipeline

/// Opus, AC-3, E-AC-3 and FLAC copied: formats from the stream's own headers, timestamps in samples, durations from the
/// packets themselves (Opus varies per packet), no format churn from a changing E-AC-3 data rate.
@Suite struct AudioCopyProcessorTests {
    static let opusHead: [UInt8] = Array("OpusHead".utf8) + [0x01, 0x02, 0x38, 0x01, 0x80, 0xBB, 0x00, 0x00, 0x00, 0x00, 0x00]

    @Test func factoryCopiesOnlyWhatFMP4Carries() throws {
        func stream(_ codec: String, _ extra: [UInt8] = []) -> StreamInfo {
            StreamInfo(index: 0, kind: .audio, codecName: codec, timeBase: Rational(1, 48000), extradata: extra,
                       sampleRate: 48000, channelCount: 2)
        }
        #expect(try audioCopyProcessor(for: stream("opus", Self.opusHead), trackID: 1) is FrameCountedCopyProcessor)
        #expect(try audioCopyProcessor(for: stream("ac3"), trackID: 1) is DolbyCopyProcessor)
        #expect(try audioCopyProcessor(for: stream("eac3"), trackID: 1) is DolbyCopyProcessor)
        #expect(try audioCopyProcessor(for: stream("aac", [0x11, 0x90]), trackID: 1) is AACCopyProcessor)
        #expect(try audioCopyProcessor(for: stream("mp3"), trackID: 1) == nil)
        // FLAC is copied when its STREAMINFO is there (the dfLa needs it), else encoded.
        #expect(try audioCopyProcessor(for: stream("flac", Self.streamInfo), trackID: 1) is FrameCountedCopyProcessor)
        #expect(try audioCopyProcessor(for: stream("flac"), trackID: 1) == nil)
        #expect(try audioCopyProcessor(for: stream("flac", Array(Self.streamInfo.prefix(20))), trackID: 1) == nil)
    }

    /// A 48 kHz stereo 16-bit STREAMINFO of 4608-sample blocks (FFmpeg's FLAC encoder, from a Matroska file).
    static let streamInfo: [UInt8] = [0x12, 0x00, 0x12, 0x00, 0x00, 0x00, 0xCB, 0x00, 0x05, 0x1D, 0x0B, 0xB8, 0x02, 0xF0,
                                      0x00, 0x03, 0xA9, 0x80] + [UInt8](repeating: 0x5A, count: 16)

    /// Frames of 4608, 4608 and 384 samples (their headers as FFmpeg's encoder wrote them) in Matroska's 1/1000 time
    /// base, whose 96 ms steps are exact: DTS in samples, each sample's duration its own header's block size, the
    /// bytes untouched; a frame without its sync code is a corrupt packet.
    @Test func flacFramesInAMillisecondTimeBase() throws {
        let s = StreamInfo(index: 1, kind: .audio, codecName: "flac", timeBase: Rational(1, 1000), extradata: Self.streamInfo,
                           sampleRate: 48000, channelCount: 2)
        let p = try #require(try audioCopyProcessor(for: s, trackID: 2) as? FrameCountedCopyProcessor)
        guard case .flac(let c)? = p.format?.codec else { Issue.record("no FLAC format"); return }
        #expect(c.streamInfo == Self.streamInfo && p.format?.timescale == 48000 && p.format?.channelCount == 2)
        #expect(p.format?.codecString == "fLaC")
        let version = p.formatVersion
        let frames: [[UInt8]] = [[0xFF, 0xF8, 0x5A, 0x88, 0x00, 0x37, 1, 2], [0xFF, 0xF8, 0x5A, 0x88, 0x01, 0x30, 3],
                                 [0xFF, 0xF8, 0x7A, 0x88, 0x02, 0x01, 0x7F, 0x4F, 4]]
        var out: [Sample] = []
        for (k, f) in frames.enumerated() {
            out += try p.samples(for: Packet(streamIndex: 1, data: f, pts: 20 + Int64(k) * 96, dts: 20 + Int64(k) * 96))
        }
        #expect(p.formatVersion == version)   // known from the start; frames do not change it
        #expect(out.map(\.durationHint) == [4608, 4608, 384])
        #expect(out.map(\.dts) == [960, 960 + 4608, 960 + 9216])
        #expect(out.allSatisfy { $0.isSync && $0.pts == $0.dts })
        #expect(out.map(\.data) == frames)
        #expect(throws: CorruptPacket.self) { try p.samples(for: Packet(streamIndex: 1, data: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55], pts: 0, dts: 0)) }
    }

    /// Packets of 20, 60, 10 and 2 x 20 ms in a 1/1000 time base (Matroska's): the DTS are exact sample counts, each
    /// sample's duration hint is its own TOC's.
    @Test func opusVariablePacketsInAMillisecondTimeBase() throws {
        let s = StreamInfo(index: 0, kind: .audio, codecName: "opus", timeBase: Rational(1, 1000), extradata: Self.opusHead,
                           sampleRate: 48000, channelCount: 2)
        let p = try FrameCountedCopyProcessor.opus(stream: s, trackID: 2)
        guard case .opus(let c)? = p.format?.codec else { Issue.record("no Opus format"); return }
        #expect(c.preSkip == 312 && p.format?.timescale == 48000 && p.format?.channelCount == 2)
        let tocs: [[UInt8]] = [[0xFC, 1], [0x18, 2], [0xF0, 3], [0xFD, 4], [0xFC, 5]]
        var ms: Int64 = -7
        var out: [Sample] = []
        for t in tocs {
            out += try p.samples(for: Packet(streamIndex: 0, data: t, pts: ms, dts: ms))
            ms += Int64(try Opus.sampleCount(packet: t) / 48)
        }
        #expect(out.map(\.durationHint) == [960, 2880, 480, 1920, 960])
        let start: Int64 = -7 * 48
        #expect(out.map(\.dts) == [start, start + 960, start + 3840, start + 4320, start + 6240])
        #expect(out.allSatisfy { $0.isSync })
        #expect(out.map(\.data) == tocs)
        #expect(throws: CorruptPacket.self) { try p.samples(for: Packet(streamIndex: 0, data: [0xFF], pts: 0, dts: 0)) }
    }

    static func ac3Frame() -> [UInt8] {
        let header: [UInt8] = [0x0B, 0x77, 0xFE, 0x95, 0x14, 0x40, 0x43, 0xE1, 0x06, 0xF4]
        return header + [UInt8](repeating: 0, count: 768 - header.count)
    }

    @Test func ac3FormatFromTheFirstFrame() throws {
        let s = StreamInfo(index: 1, kind: .audio, codecName: "ac3", timeBase: Rational(1, 90000), sampleRate: 48000, channelCount: 2)
        let p = DolbyCopyProcessor(stream: s, trackID: 2)
        #expect(p.format == nil)
        var out: [Sample] = []
        for k in 0..<4 {
            let t = Int64(k) * 2880   // 32 ms at 90 kHz
            out += try p.samples(for: Packet(streamIndex: 1, data: Self.ac3Frame(), pts: t, dts: t))
        }
        guard case .ac3(let c)? = p.format?.codec else { Issue.record("no AC-3 format"); return }
        #expect(c == AC3Config(fscod: 0, bsid: 8, bsmod: 0, acmod: 2, lfeon: false, bitRateCode: 10))
        #expect(p.formatVersion == 1 && p.format?.timescale == 48000 && p.format?.codecString == "ac-3")
        #expect(out.map(\.dts) == [0, 1536, 3072, 4608] && out.allSatisfy { $0.durationHint == 1536 })
        #expect(throws: CorruptPacket.self) { try p.samples(for: Packet(streamIndex: 1, data: [0x0B, 0x77, 0], pts: 0, dts: 0)) }
    }

    /// E-AC-3 whose data rate moves (a bigger frame) keeps its format; a new channel layout makes a new one.
    @Test func eac3FormatChangesOnlyWithItsLayout() throws {
        let s = StreamInfo(index: 1, kind: .audio, codecName: "eac3", timeBase: Rational(1, 48000), sampleRate: 48000, channelCount: 6)
        let p = DolbyCopyProcessor(stream: s, trackID: 2)
        func frame(acmod: UInt8, bytes: Int) -> [UInt8] {
            let words = bytes / 2 - 1
            // strmtyp 0, substreamid 0, frmsiz; fscod 0, numblkscod 3, acmod, lfeon 1; bsid 16, dialnorm, no more.
            let head: [UInt8] = [0x0B, 0x77, UInt8(words >> 8), UInt8(words & 0xFF), 0x30 | acmod << 1 | 1, 0x80, 0x00, 0x00]
            return head + [UInt8](repeating: 0, count: bytes - head.count)
        }
        _ = try p.samples(for: Packet(streamIndex: 1, data: frame(acmod: 7, bytes: 1536), pts: 0, dts: 0))
        _ = try p.samples(for: Packet(streamIndex: 1, data: frame(acmod: 7, bytes: 1792), pts: 1536, dts: 1536))
        #expect(p.formatVersion == 1)
        guard case .eac3(let c)? = p.format?.codec else { Issue.record("no E-AC-3 format"); return }
        #expect(c.dataRate == 384 && c.channelCount == 6)   // the first frame's, kept
        let out = try p.samples(for: Packet(streamIndex: 1, data: frame(acmod: 2, bytes: 768), pts: 3072, dts: 3072))
        #expect(p.formatVersion == 2 && p.format?.channelCount == 3)
        #expect(out.first?.dts == 3072)
    }
}
