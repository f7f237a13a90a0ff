import FFmpegBridge
import ISOBMFF
import MediaCore
import Segmenter
import Synchronization

/// What to do with input codecs that an HLS fMP4 track cannot carry as they are.
public enum TranscodeMode: String, Sendable, CaseIterable {
    /// Copy H.264 and AAC, Opus, AC-3, E-AC-3, FLAC untouched; encode anything else (video to H.264, audio to AAC).
    case auto
    /// Always decode and encode.
    case always
    /// Never encode: fail when the input cannot be copied.
    case never
}

public struct VideoSettings: Sendable {
    /// What to encode to (`--video-codec`).
    public var codec = VideoCodecName.h264
    public var preset = "veryfast"
    public var tune: String? = "zerolatency"
    public var crf: Int?
    public var bitRate: Int?
    /// VBV peak rate and buffer (bits/s, bits), for ladder rungs.
    public var maxBitRate: Int?
    public var bufferSize: Int?
    /// Keyframes exactly where forced, off the segment grid too (a ladder rung beside a copied `source` rung, which
    /// takes an IDR at each of the input's keyframes): AV1 is then encoded with libaom-av1, not SVT-AV1.
    public var exactKeyframes = false
    /// Output size; nil keeps the input size.
    public var width: Int?
    public var height: Int?
    public init() {}
}

public enum PipelineError: Error, CustomStringConvertible, Equatable {
    case noMediaStreams(String)
    case cannotCopy(kind: String, codec: String)
    case missingCodecConfiguration(String)
    case invalidOption(String)

    public var description: String {
        switch self {
        case .noMediaStreams(let url): "'\(url)' has no video or audio stream"
        case .cannotCopy(let kind, let codec):
            "the input \(kind) is \(codec), which HLS fMP4 cannot carry as is, and --transcode never forbids encoding it (use --transcode auto)"
        case .missingCodecConfiguration(let what): what
        case .invalidOption(let what): what
        }
    }
}

/// One input packet whose data cannot be read (a damaged ADTS frame, ...): the pipeline skips it with a warning and
/// goes on, as it does for a decoder's error on a corrupt packet.
struct CorruptPacket: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// Turns the packets of one input stream into samples of one or more output tracks (a ladder: one decode,
/// several encodes).
protocol StreamProcessor: AnyObject {
    var outputKinds: [TrackFormat.Kind] { get }
    /// Per output: known once the codec configuration has been seen; may change mid-stream (new SPS/PPS).
    var outputFormats: [TrackFormat?] { get }
    /// Counts the changes of `outputFormats` (a format that became known or changed): the source announces the formats
    /// when it moves, and compares nothing else.
    var formatVersion: Int { get }
    /// Samples per output.
    func process(_ packet: Packet) throws -> [[Sample]]
    func flush() throws -> [[Sample]]
    /// A splice at `time` (the input's clock): an encoder puts an IDR on the frame there. Copying processors ignore it.
    func splice(at time: MediaTime)
}

extension StreamProcessor {
    func splice(at time: MediaTime) {}
}

/// A processor with one output track.
protocol TrackProcessor: StreamProcessor {
    var kind: TrackFormat.Kind { get }
    var formatVersion: Int { get }
    /// Known once the codec configuration has been seen (at once, or after the first keyframe for in-band SPS/PPS).
    var format: TrackFormat? { get }
    var timescale: Int32 { get }
    func samples(for packet: Packet) throws -> [Sample]
    func flushSamples() throws -> [Sample]
}

extension TrackProcessor {
    var outputKinds: [TrackFormat.Kind] { [kind] }
    var outputFormats: [TrackFormat?] { [format] }
    func process(_ packet: Packet) throws -> [[Sample]] { [try samples(for: packet)] }
    func flush() throws -> [[Sample]] { [try flushSamples()] }
}

// MARK: - Copy

/// AAC copied as it is: ADTS headers are stripped (the AudioSpecificConfig is built from them: a different one
/// mid-stream, such as a new sample rate or channel layout, is a new format), and timestamps are re-expressed in
/// samples, smoothed to exact frame counts where the input's are close.
final class AACCopyProcessor: TrackProcessor {
    let kind = TrackFormat.Kind.audio
    private(set) var format: TrackFormat? { didSet { formatVersion += 1 } }
    private(set) var formatVersion = 0
    /// The sample rate: it follows the AudioSpecificConfig.
    private(set) var timescale: Int32
    private let stream: StreamInfo
    private let trackID: UInt32
    private var nextDTS: Int64?
    static let samplesPerFrame: Int64 = 1024

    init(stream: StreamInfo, trackID: UInt32) throws {
        self.stream = stream
        self.trackID = trackID
        timescale = Int32(clamping: stream.sampleRate > 0 ? stream.sampleRate : 48_000)
        if stream.extradata.count >= 2 {
            format = makeFormat(asc: stream.extradata)
        }
    }

    private func makeFormat(asc: [UInt8], channels: Int? = nil) -> TrackFormat {
        TrackFormat(trackID: trackID, kind: .audio, timescale: timescale, codec: .aac(audioSpecificConfig: asc),
                    sampleRate: Int(timescale), channelCount: max(1, channels ?? stream.channelCount))
    }

    func samples(for packet: Packet) throws -> [Sample] {
        var payloads: [[UInt8]]
        if ADTS.isADTS(packet.data) {
            let frames: [(header: ADTSHeader, payload: ArraySlice<UInt8>)]
            do {
                frames = try ADTS.frames(in: packet.data)
            } catch {
                throw CorruptPacket(reason: "damaged AAC (ADTS) data: \(error)")
            }
            if let first = frames.first?.header {
                let asc = ADTS.audioSpecificConfig(for: first)
                if case .aac(let current)? = format?.codec, current == asc {
                } else {
                    if format != nil, first.sampleRate != Int(timescale) { nextDTS = nil }
                    timescale = Int32(clamping: first.sampleRate)
                    format = makeFormat(asc: asc, channels: first.channelConfiguration > 0 ? Int(first.channelConfiguration) : nil)
                }
            }
            payloads = frames.map { Array($0.payload) }
        } else {
            payloads = [packet.data]
        }
        payloads.removeAll { $0.isEmpty }
        guard !payloads.isEmpty else { return [] }
        let tb = stream.timeBase
        var dts: Int64
        if let t = packet.dts ?? packet.pts {
            dts = MediaTime.rescale(t, timeBase: tb, to: timescale)
            // Keep the exact sample count while the input agrees within half a frame, or within one tick of a time
            // base coarser than that (ms time bases round; a 1001/30000 one cannot say better than 33 ms).
            let tolerance = max(Self.samplesPerFrame / 2, MediaTime.rescale(1, timeBase: tb, to: timescale, rounding: .up))
            if let expected = nextDTS, abs(dts - expected) <= tolerance { dts = expected }
        } else {
            dts = nextDTS ?? 0
        }
        var out: [Sample] = []
        for p in payloads {
            out.append(Sample(data: p, dts: dts, pts: dts, isSync: true, durationHint: Self.samplesPerFrame))
            dts += Self.samplesPerFrame
        }
        nextDTS = dts
        return out
    }

    func flushSamples() throws -> [Sample] { [] }
}

/// A time base's denominator when it is a fine enough tick (1/90000, 1/15360, 1/48000), else `fallback`.
func outputTimescale(for tb: Rational, minimum: Int32, fallback: Int32) -> Int32 {
    if tb.numerator == 1 && tb.denominator >= minimum { return tb.denominator }
    return fallback
}

// MARK: - Transcode

/// Wraps the H.264 encoder: raw frames in, length-prefixed H.264 samples out (timescale 90 kHz unless told).
/// Keyframes are forced on the segment grid by timestamp, so every stage with the same grid (every rung of a
/// ladder) puts its IDRs at the same media times.
final class VideoEncodeStage {
    static let defaultTimescale: Int32 = 90_000
    let timescale: Int32
    let encoder: VideoEncoder
    /// The track's format; `nil` until the first packet when the encoder gives its configuration only with it
    /// (libaom-av1 through FFmpeg 5.1: its sequence header comes with the first keyframe, not at open).
    var format: TrackFormat? { openedFormat ?? firstPacketFormat.withLock { $0 } }
    private let openedFormat: TrackFormat?
    private let firstPacketFormat = Mutex<TrackFormat?>(nil)
    private let trackID: UInt32
    private var schedule: KeyframeGrid
    /// Splice points (ticks, ascending) still to come: the frame at each is an IDR whatever the grid says.
    private var splices: [Int64] = []
    private var lastPTS: Int64?
    private let frameTicks: Int64
    private let codec: VideoCodecName
    /// H.265: the A/53 caption data of frames sent to the encoder and not out yet, by presentation time.
    private var pendingCaptions: [Int64: [UInt8]] = [:]

    /// - Parameter startupKeyframe: an extra IDR this long after the first frame (the LL-HLS part duration: the
    ///   first segment is one part long, see `Segmenter`).
    init(width: Int, height: Int, frameRate: Rational, settings: VideoSettings, segmentDuration: MediaTime,
         trackID: UInt32, timescale: Int32 = VideoEncodeStage.defaultTimescale, startupKeyframe: MediaTime? = nil,
         encoderThreads: Int = 0) throws {
        self.timescale = timescale
        let fr = frameRate.isValid ? frameRate : Rational(30, 1)
        frameTicks = fr.frameDuration(timescale: timescale)
        // Frames in one segment, rounded up: x264's keyint (the forced IDRs on the segment grid are what count).
        let gopFrames = Int(clamping: max(1, fr.frames(in: segmentDuration, rounding: .up)))
        var o = VideoEncoderOptions(width: width, height: height, timeBase: Rational(1, timescale),
                                    frameRate: fr, gopFrames: gopFrames)
        o.codec = settings.codec
        o.preset = settings.preset
        o.tune = settings.tune
        o.crf = settings.crf
        o.bitRate = settings.bitRate
        o.maxBitRate = settings.maxBitRate
        o.bufferSize = settings.bufferSize
        o.threads = encoderThreads
        o.exactKeyframes = settings.exactKeyframes
        encoder = try VideoEncoder(o)
        codec = settings.codec
        self.trackID = trackID
        let record: TrackFormat.Codec? = switch settings.codec {
        case .h264: .h264(avcC: try AVC.avcC(fromExtradata: encoder.extradata))
        case .hevc: .hevc(hvcC: try HEVC.hvcC(fromExtradata: encoder.extradata))
        case .av1: encoder.extradata.isEmpty ? nil : .av1(av1C: try AV1.av1C(fromExtradata: encoder.extradata))
        }
        openedFormat = record.map { TrackFormat(trackID: trackID, kind: .video, timescale: timescale, codec: $0,
                                                width: width, height: height) }
        schedule = KeyframeGrid(interval: segmentDuration.converted(to: timescale).value,
                                    startup: startupKeyframe.map { $0.converted(to: timescale).value },
                                    tolerance: frameTicks / 2)
    }

    /// `frame.pts` must already be in `timescale` ticks.
    func encode(_ frame: RawVideoFrame) throws -> [Sample] {
        var f = frame
        f.pts = nextPTS(frame.pts)
        let grid = schedule.isBoundary(f.pts)
        return try encoder.encode(f, forceKeyframe: spliceDue(f.pts) || grid).map(sample)
    }

    /// An IDR on the frame at (or half a frame before) `time`, off the grid: a splice.
    func splice(at time: MediaTime) {
        let t = time.converted(to: timescale, rounding: .nearest).value
        guard !splices.contains(t), lastPTS.map({ t > $0 }) ?? true else { return }
        splices.append(t)
        splices.sort()
    }

    /// Whether the frame at `pts` reaches the next splice point (and takes it).
    private func spliceDue(_ pts: Int64) -> Bool {
        guard let s = splices.first, pts + frameTicks / 2 >= s else { return false }
        splices.removeAll { $0 <= pts + frameTicks / 2 }
        return true
    }

    /// A decoded frame as it is (no copy); `pts` in `timescale` ticks. `forceKeyframe` adds an IDR off the
    /// segment grid (a ladder following a copied source's keyframes passes `true` there and `false` elsewhere).
    func encode(_ frame: VideoFrame, pts: Int64, forceKeyframe: Bool? = nil) throws -> [Sample] {
        let t = nextPTS(pts)
        let key = forceKeyframe ?? schedule.isBoundary(t)
        if codec == .hevc, let cc = frame.a53Captions {
            // libx265 (FFmpeg 5.1) drops the frame's caption side data, which libx264 writes back itself: the picture
            // gets its SEI from us when it comes out (a frame never comes out: the table stays bounded).
            if pendingCaptions.count > 512 { pendingCaptions.removeAll() }
            pendingCaptions[t] = cc
        }
        return try encoder.encode(frame, pts: t, forceKeyframe: spliceDue(t) || key).map(sample)
    }

    private func nextPTS(_ pts: Int64) -> Int64 {
        var t = pts
        if let last = lastPTS, t <= last {
            // Duplicate or backwards timestamp from the source: place it one frame later.
            t = last + frameTicks
        }
        lastPTS = t
        return t
    }

    func flush() throws -> [Sample] { try encoder.flush().map(sample) }

    func sample(_ p: EncodedPacket) -> Sample {
        let data = switch codec {
        case .h264: AVC.isAnnexB(p.data) ? AVC.lengthPrefixed(fromAnnexB: p.data) : p.data
        case .hevc: HEVC.sample(from: p.data, prefixSEI: pendingCaptions.removeValue(forKey: p.pts).flatMap(SEI.hevcCaptionNAL))
        case .av1: AV1.sample(from: p.data)
        }
        if openedFormat == nil, p.isKeyframe {
            // The configuration the encoder did not give at open: its sequence header, in this first keyframe.
            firstPacketFormat.withLock { f in
                guard f == nil, let record = (try? AV1.av1C(fromExtradata: encoder.extradata)) ?? (try? AV1.av1C(inBand: p.data)) ?? nil
                else { return }
                f = TrackFormat(trackID: trackID, kind: .video, timescale: timescale, codec: .av1(av1C: record),
                                width: encoder.options.width, height: encoder.options.height)
            }
        }
        return Sample(data: data, dts: p.dts, pts: p.pts, isSync: p.isKeyframe, durationHint: p.duration > 0 ? p.duration : nil)
    }
}

/// Decode any video codec, convert/scale to yuv420p, encode H.264 with IDRs on segment boundaries.
final class VideoTranscodeProcessor: TrackProcessor {
    let kind = TrackFormat.Kind.video
    var format: TrackFormat? { stage.format?.carrying(captions.found) }
    private(set) var formatVersion = 1
    private var captions: CaptionProbe
    var timescale: Int32 { stage.timescale }
    private let decoder: VideoDecoder
    private let stage: VideoEncodeStage
    private let timeBase: Rational

    init(demuxer: Demuxer, stream: StreamInfo, settings: VideoSettings, segmentDuration: MediaTime, trackID: UInt32,
         startupKeyframe: MediaTime? = nil) throws {
        guard stream.width > 0, stream.height > 0 else {
            throw PipelineError.missingCodecConfiguration(
                "the input's video stream (\(stream.codecName)) has no picture size: the data is not a valid stream (raw video needs --video-size)")
        }
        var width = settings.width ?? stream.width
        var height = settings.height ?? stream.height
        if settings.width != nil && settings.height == nil { height = stream.height * width / stream.width }
        if settings.height != nil && settings.width == nil { width = stream.width * height / stream.height }
        width = max(2, width & ~1)  // 4:2:0 wants even sizes
        height = max(2, height & ~1)
        decoder = try demuxer.makeVideoDecoder(stream: stream.index, output: VideoOutputFormat(width: width, height: height))
        stage = try VideoEncodeStage(width: width, height: height, frameRate: stream.frameRate ?? Rational(30, 1),
                                     settings: settings, segmentDuration: segmentDuration, trackID: trackID,
                                     startupKeyframe: startupKeyframe)
        timeBase = stream.timeBase
        captions = CaptionProbe(stream: stream)
    }

    // Decoded frames stay in FFmpeg memory from the decoder to x264 (no copy when already yuv420p at the output size);
    // so does their A/53 caption side data, which the encoder writes back into the pictures.
    func samples(for packet: Packet) throws -> [Sample] {
        if captions.look(at: packet) { formatVersion += 1 }
        return try decoder.decodeFrames(packet).flatMap(encode)
    }

    func flushSamples() throws -> [Sample] {
        try decoder.flushFrames().flatMap(encode) + stage.flush()
    }

    private func encode(_ frame: VideoFrame) throws -> [Sample] {
        let pts = MediaTime.rescale(frame.pts, timeBase: timeBase, to: stage.timescale)
        return try stage.encode(frame, pts: pts)
    }

    func splice(at time: MediaTime) { stage.splice(at: time) }
}
