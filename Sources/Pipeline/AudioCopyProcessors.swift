import FFmpegBridge
import ISOBMFF
import MediaCore

/// The copy processor for an input audio stream HLS fMP4 can carry as it is (AAC, Opus, AC-3, E-AC-3, FLAC), else
/// nil. FLAC without a valid STREAMINFO in its extradata (which the `dfLa` must carry) is not copied: FFmpeg's
/// decoder reads its frames without one, so it is encoded.
func audioCopyProcessor(for stream: StreamInfo, trackID: UInt32) throws -> (any TrackProcessor)? {
    switch stream.codecName {
    case "aac": try AACCopyProcessor(stream: stream, trackID: trackID)
    case "opus": try FrameCountedCopyProcessor.opus(stream: stream, trackID: trackID)
    case "ac3", "eac3": DolbyCopyProcessor(stream: stream, trackID: trackID)
    case "flac": (try? FLAC.config(fromExtradata: stream.extradata)).map {
        FrameCountedCopyProcessor.flac(stream: stream, config: $0, trackID: trackID)
    }
    default: nil
    }
}

/// Timestamps of copied audio in samples: the input's, re-expressed in the track timescale and kept on the exact
/// sample count while they agree within half a frame (or one tick of a coarser time base), so durations stay whole
/// frames (the same rule as `AACCopyProcessor`).
struct AudioSampleClock {
    private var nextDTS: Int64?

    mutating func reset() { nextDTS = nil }

    /// The DTS of a packet's first sample in `timescale` ticks; `frameTicks` is that packet's own duration.
    mutating func place(_ packet: Packet, timeBase tb: Rational, timescale: Int32, frameTicks: Int64) -> Int64 {
        guard let t = packet.dts ?? packet.pts else { return nextDTS ?? 0 }
        let dts = MediaTime.rescale(t, timeBase: tb, to: timescale)
        let tolerance = max(frameTicks / 2, MediaTime.rescale(1, timeBase: tb, to: timescale, rounding: .up))
        if let expected = nextDTS, abs(dts - expected) <= tolerance { return expected }
        return dts
    }

    mutating func advance(to next: Int64) { nextDTS = next }
}

/// Audio whose packets each are one sample lasting what the packet's own header says, copied as it is:
/// - Opus ("Encapsulation of Opus in ISO Base Media File Format" v0.6.8): `dOps` from the OpusHead in the input's
///   extradata, timescale 48 kHz (§4.3.1), a packet's duration from its TOC (RFC 6716 §3.1: 2.5 to 120 ms, variable
///   within one stream);
/// - FLAC ("Encapsulation of FLAC in ISO Base Media File Format" v0.0.3): `dfLa` from the STREAMINFO (and other
///   metadata) in the input's extradata, timescale the sample rate, a frame's duration its header's block size
///   (§3.3.3, §3.3.4: fixed or variable within one stream).
final class FrameCountedCopyProcessor: TrackProcessor {
    let kind = TrackFormat.Kind.audio
    private(set) var format: TrackFormat? { didSet { formatVersion += 1 } }
    private(set) var formatVersion = 0
    let timescale: Int32
    private let stream: StreamInfo
    /// What a packet is called in an error ("Opus packet"), and how many samples its header says it holds.
    private let unit: String
    private let sampleCount: ([UInt8]) throws -> Int
    private var clock = AudioSampleClock()

    private init(stream: StreamInfo, format: TrackFormat, unit: String, sampleCount: @escaping ([UInt8]) throws -> Int) {
        self.stream = stream
        self.format = format
        timescale = format.timescale
        self.unit = unit
        self.sampleCount = sampleCount
    }

    static func opus(stream: StreamInfo, trackID: UInt32) throws -> FrameCountedCopyProcessor {
        let config = stream.extradata.isEmpty ? Opus.defaultConfig(channelCount: stream.channelCount)
            : try Opus.config(fromOpusHead: stream.extradata)
        let format = TrackFormat(trackID: trackID, kind: .audio, timescale: Int32(OpusConfig.sampleRate), codec: .opus(config),
                                 sampleRate: OpusConfig.sampleRate, channelCount: Int(config.outputChannelCount))
        return FrameCountedCopyProcessor(stream: stream, format: format, unit: "Opus packet") { try Opus.sampleCount(packet: $0) }
    }

    static func flac(stream: StreamInfo, config: FLACConfig, trackID: UInt32) -> FrameCountedCopyProcessor {
        let format = TrackFormat(trackID: trackID, kind: .audio, timescale: Int32(clamping: config.sampleRate),
                                 codec: .flac(config), sampleRate: config.sampleRate, channelCount: config.channelCount)
        return FrameCountedCopyProcessor(stream: stream, format: format, unit: "FLAC frame") { try FLAC.blockSize(frame: $0) }
    }

    func samples(for packet: Packet) throws -> [Sample] {
        guard !packet.data.isEmpty else { return [] }
        let count: Int
        do {
            count = try sampleCount(packet.data)
        } catch {
            throw CorruptPacket(reason: "damaged \(unit): \(error)")
        }
        let ticks = Int64(count)
        let dts = clock.place(packet, timeBase: stream.timeBase, timescale: timescale, frameTicks: ticks)
        clock.advance(to: dts + ticks)
        return [Sample(data: packet.data, dts: dts, pts: dts, isSync: true, durationHint: ticks)]
    }

    func flushSamples() throws -> [Sample] { [] }
}

/// AC-3 and E-AC-3 copied as they are (ETSI TS 102 366 Annex F): the `dac3`/`dec3` fields come from the first
/// packet's sync frames, a sample is one packet (the frames of six blocks: 1536 samples for AC-3), timescale the
/// sample rate. Other fields in a later packet (a new channel layout or sample rate) make a new format; a new
/// E-AC-3 `data_rate` alone does not (it is informative, and a variable-rate stream would otherwise change it often).
final class DolbyCopyProcessor: TrackProcessor {
    let kind = TrackFormat.Kind.audio
    private(set) var format: TrackFormat? { didSet { formatVersion += 1 } }
    private(set) var formatVersion = 0
    private(set) var timescale: Int32
    private let stream: StreamInfo
    private let trackID: UInt32
    private var clock = AudioSampleClock()

    init(stream: StreamInfo, trackID: UInt32) {
        self.stream = stream
        self.trackID = trackID
        timescale = Int32(clamping: stream.sampleRate > 0 ? stream.sampleRate : 48_000)
    }

    func samples(for packet: Packet) throws -> [Sample] {
        guard !packet.data.isEmpty else { return [] }
        let frames: [DolbyFrameHeader]
        do {
            frames = try DolbyAudio.frames(in: packet.data)
            try update(frames)
        } catch {
            throw CorruptPacket(reason: "damaged \(stream.codecName == "eac3" ? "E-AC-3" : "AC-3") frame: \(error)")
        }
        let main = frames.filter { $0.streamType != .dependent && $0.substreamID == 0 }
        let ticks = Int64(main.reduce(0) { $0 + $1.sampleCount })
        guard ticks > 0 else { return [] }
        let dts = clock.place(packet, timeBase: stream.timeBase, timescale: timescale, frameTicks: ticks)
        clock.advance(to: dts + ticks)
        return [Sample(data: packet.data, dts: dts, pts: dts, isSync: true, durationHint: ticks)]
    }

    private func update(_ frames: [DolbyFrameHeader]) throws {
        guard let first = frames.first else { return }
        let codec: TrackFormat.Codec
        let rate: Int, channels: Int
        if first.isEnhanced {
            var c = try DolbyAudio.eac3Config(frames)
            if case .eac3(let current)? = format?.codec {
                var same = current
                same.dataRate = c.dataRate
                if same == c { return }
                c.dataRate = max(c.dataRate, current.dataRate)
            }
            codec = .eac3(c)
            (rate, channels) = (first.sampleRate, c.channelCount)
        } else {
            let c = try DolbyAudio.ac3Config(first)
            if case .ac3(let current)? = format?.codec, current == c { return }
            codec = .ac3(c)
            (rate, channels) = (first.sampleRate, c.channelCount)
        }
        if format != nil, rate != Int(timescale) { clock.reset() }
        timescale = Int32(rate)
        format = TrackFormat(trackID: trackID, kind: .audio, timescale: timescale, codec: codec,
                             sampleRate: rate, channelCount: channels)
    }

    func flushSamples() throws -> [Sample] { [] }
}
