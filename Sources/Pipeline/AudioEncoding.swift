import FFmpegBridge
import ISOBMFF
import MediaCore

/// Wraps an audio encoder (AAC, Opus or AC-3, `AudioCodecName`): raw audio in, samples out (timescale = sample
/// rate); the track format from what the encoder says of itself (the AAC AudioSpecificConfig, libopus's OpusHead,
/// the AC-3 sync frame's fields).
final class AudioEncodeStage {
    let encoder: AudioEncoder
    let format: TrackFormat
    /// AC-3: the `dac3` fields the first frame must carry (checked once).
    private var expectedAC3: AC3Config?

    init(codec: AudioCodecName = .aac, sampleRate: Int, channelCount: Int, bitRate: Int, trackID: UInt32) throws {
        var o = AudioEncoderOptions(sampleRate: sampleRate, channelCount: channelCount, bitRate: bitRate)
        o.codec = codec
        encoder = try AudioEncoder(o)
        let config: TrackFormat.Codec
        switch codec {
        case .aac:
            config = .aac(audioSpecificConfig: encoder.extradata)
        case .opus:
            config = .opus(try Opus.config(fromOpusHead: encoder.extradata))
        case .ac3:
            // What FFmpeg's AC-3 encoder writes for these settings (bsid 8, bsmod 0 "main", stereo or mono, no LFE);
            // the first frame is checked against it.
            guard let code = AudioCodecName.ac3BitRates.firstIndex(of: bitRate / 1000), bitRate % 1000 == 0 else {
                throw PipelineError.invalidOption("AC-3 cannot be encoded at \(bitRate) bit/s (\(AudioCodecName.ac3BitRates.map { "\($0)k" }.joined(separator: ", ")))")
            }
            let fscod: UInt8 = sampleRate == 44_100 ? 1 : sampleRate == 32_000 ? 2 : 0
            let ac3 = AC3Config(fscod: fscod, bsid: 8, bsmod: 0, acmod: channelCount == 1 ? 1 : 2, lfeon: false,
                                bitRateCode: UInt8(code))
            expectedAC3 = ac3
            config = .ac3(ac3)
        }
        format = TrackFormat(trackID: trackID, kind: .audio, timescale: Int32(sampleRate), codec: config,
                             sampleRate: sampleRate, channelCount: channelCount)
    }

    func encode(_ frame: RawAudioFrame) throws -> [Sample] { try encoder.encode(frame).map(sample) }
    func flush() throws -> [Sample] { try encoder.flush().map(sample) }

    private func sample(_ p: EncodedPacket) throws -> Sample {
        if let expected = expectedAC3 {
            let written = try DolbyAudio.frames(in: p.data).first.map(DolbyAudio.ac3Config)
            guard written == expected else {
                throw PipelineError.invalidOption("the AC-3 encoder wrote \(String(describing: written)), not the announced \(expected)")
            }
            expectedAC3 = nil
        }
        return Sample(data: p.data, dts: p.dts, pts: p.pts, isSync: true, durationHint: p.duration > 0 ? p.duration : nil)
    }
}

/// Decode any audio codec, resample to s16 (the input rate when the encoder takes it, else its first rate: 48 kHz),
/// encode AAC-LC, Opus or AC-3.
final class AudioTranscodeProcessor: TrackProcessor {
    let kind = TrackFormat.Kind.audio
    var format: TrackFormat? { stage.format }
    let formatVersion = 1
    var timescale: Int32 { Int32(stage.format.sampleRate) }
    private let decoder: AudioDecoder
    private let stage: AudioEncodeStage

    init(demuxer: Demuxer, stream: StreamInfo, codec: AudioCodecName = .aac, bitRate: Int, trackID: UInt32) throws {
        let rate = codec.sampleRates.contains(stream.sampleRate) ? stream.sampleRate : codec.sampleRates[0]
        let channels = min(max(stream.channelCount, 1), 2)
        decoder = try demuxer.makeAudioDecoder(stream: stream.index, output: AudioOutputFormat(sampleRate: rate, channelCount: channels))
        stage = try AudioEncodeStage(codec: codec, sampleRate: rate, channelCount: channels, bitRate: bitRate, trackID: trackID)
    }

    func samples(for packet: Packet) throws -> [Sample] { try decoder.decode(packet).flatMap(stage.encode) }
    func flushSamples() throws -> [Sample] { try decoder.flush().flatMap(stage.encode) + stage.flush() }
}
