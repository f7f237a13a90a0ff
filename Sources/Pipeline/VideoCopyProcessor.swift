import FFmpegBridge
import ISOBMFF
import MediaCore

/// What differs between the video codecs a track copies untouched: where the configuration record comes from, what
/// a sample must look like in the track, and which samples are sync samples. The rest (timestamps, format changes
/// on new parameter sets) is `VideoCopyProcessor`'s, once for all of them.
protocol CopiedVideoCodec {
    /// The record the container's extradata gives; nil when there is none yet (in-band parameter sets come later).
    static func record(fromExtradata data: [UInt8]) -> [UInt8]?
    /// The record built from the parameter sets inside one access unit, if it carries a complete set.
    static func record(inBand data: [UInt8]) -> [UInt8]?
    /// Whether two records describe the same stream configuration (a repeat is not a change).
    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool
    /// The sample as the track stores it (length-prefixed NAL units, without what lives in the record).
    static func sample(from data: [UInt8]) -> [UInt8]
    /// Whether the sample starts a picture a decoder can begin at, when the container did not say.
    static func isSync(_ sample: [UInt8]) -> Bool
    /// The track's codec and picture size for a record; the size is nil when the record does not say.
    static func describe(_ record: [UInt8]) -> (codec: TrackFormat.Codec, width: Int?, height: Int?, sar: Rational?)
    /// Static metadata found in a keyframe's own bytes (HEVC's HDR SEI), folded into the colour description.
    static func colour(_ base: ColourInfo?, keyframe data: [UInt8]) -> ColourInfo?
}

extension CopiedVideoCodec {
    static func colour(_ base: ColourInfo?, keyframe data: [UInt8]) -> ColourInfo? { base }
}

/// H.264: Annex-B becomes length-prefixed; `avcC` from extradata or in-band SPS/PPS (kept in the samples too, as
/// `avc1` allows and players expect from a broadcast source).
enum H264Copy: CopiedVideoCodec {
    static func record(fromExtradata data: [UInt8]) -> [UInt8]? {
        data.isEmpty ? nil : try? AVC.avcC(fromExtradata: data)
    }
    static func record(inBand data: [UInt8]) -> [UInt8]? {
        let sets = AVC.parameterSets(in: data)
        guard !sets.sps.isEmpty, !sets.pps.isEmpty else { return nil }
        return try? AVC.makeAVCC(sps: sets.sps, pps: sets.pps)
    }
    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool { AVC.sameParameterSets(a, b) }
    static func sample(from data: [UInt8]) -> [UInt8] { AVC.isAnnexB(data) ? AVC.lengthPrefixed(fromAnnexB: data) : data }
    static func isSync(_ sample: [UInt8]) -> Bool { AVC.containsIDR(sample) }
    static func describe(_ record: [UInt8]) -> (codec: TrackFormat.Codec, width: Int?, height: Int?, sar: Rational?) {
        // The picture size comes from the SPS when it parses (it changes with the SPS), else from the probe.
        let sps = AVC.parameterSets(avcC: record).sps.first.flatMap { try? SPSInfo(nal: $0) }
        return (.h264(avcC: record), sps?.width, sps?.height, sps?.sampleAspectRatio)
    }
}

/// H.265 as `hvc1`: VPS/SPS/PPS only in `hvcC` (dropped from the samples), HDR static metadata from the SEI.
enum HEVCCopy: CopiedVideoCodec {
    static func record(fromExtradata data: [UInt8]) -> [UInt8]? {
        data.isEmpty ? nil : try? HEVC.hvcC(fromExtradata: data)
    }
    static func record(inBand data: [UInt8]) -> [UInt8]? {
        let sets = HEVC.parameterSets(in: data)
        guard !sets.vps.isEmpty, !sets.sps.isEmpty, !sets.pps.isEmpty else { return nil }
        return try? HEVC.makeHVCC(vps: sets.vps, sps: sets.sps, pps: sets.pps)
    }
    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool { HEVC.sameParameterSets(a, b) }
    static func sample(from data: [UInt8]) -> [UInt8] { HEVC.sample(from: data) }
    static func isSync(_ sample: [UInt8]) -> Bool { HEVC.containsIRAP(sample) }
    static func describe(_ record: [UInt8]) -> (codec: TrackFormat.Codec, width: Int?, height: Int?, sar: Rational?) {
        let sps = HEVC.parameterSets(hvcC: record)[HEVC.NALType.sps]?.first.flatMap { try? HEVCSPSInfo(nal: $0) }
        return (.hevc(hvcC: record), sps?.width, sps?.height, nil)
    }
    static func colour(_ base: ColourInfo?, keyframe data: [UInt8]) -> ColourInfo? {
        guard var c = base, c.masteringDisplay == nil || c.contentLightLevel == nil else { return base }
        let found = HEVC.hdrMetadata(in: data)
        c.masteringDisplay = c.masteringDisplay ?? found.masteringDisplay
        c.contentLightLevel = c.contentLightLevel ?? found.contentLightLevel
        return c
    }
}

/// AV1 as `av01`: the container's `av1C` (MP4, Matroska, WebM) or one built from the sequence header OBU (an OBU or
/// IVF stream's extradata, or in-band); temporal delimiters leave the samples (AV1-ISOBMFF §2.4).
enum AV1Copy: CopiedVideoCodec {
    static func record(fromExtradata data: [UInt8]) -> [UInt8]? { data.isEmpty ? nil : try? AV1.av1C(fromExtradata: data) }
    static func record(inBand data: [UInt8]) -> [UInt8]? { (try? AV1.av1C(inBand: data)) ?? nil }
    /// Two records are the same configuration when their sequence headers say the same (a keyframe repeating the
    /// container's sequence header is no change); without configOBUs, their four fixed bytes.
    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        if a == b { return true }
        let sa = AV1.sequenceHeader(av1C: a), sb = AV1.sequenceHeader(av1C: b)
        if let sa, let sb { return sa == sb }
        return a.prefix(4) == b.prefix(4)
    }
    static func sample(from data: [UInt8]) -> [UInt8] { AV1.sample(from: data) }
    static func isSync(_ sample: [UInt8]) -> Bool { false }
    /// The picture size is the sequence header's maximum (what encoders write for a stream of one size).
    static func describe(_ record: [UInt8]) -> (codec: TrackFormat.Codec, width: Int?, height: Int?, sar: Rational?) {
        let header = AV1.sequenceHeader(av1C: record)
        return (.av1(av1C: record), header?.maxWidth, header?.maxHeight, nil)
    }
}

/// A video stream copied as it is into one track: the configuration record from extradata or from in-band
/// parameter sets (a different one on a keyframe is a new format: a new init segment and a discontinuity follow),
/// timestamps re-expressed in the output timescale.
final class VideoCopyProcessor<Codec: CopiedVideoCodec>: TrackProcessor {
    let kind = TrackFormat.Kind.video
    private(set) var format: TrackFormat? { didSet { formatVersion += 1 } }
    private(set) var formatVersion = 0
    let timescale: Int32
    private let stream: StreamInfo
    private let trackID: UInt32
    private var lastDTS: Int64?
    private let frameTicks: Int64
    private var colour: ColourInfo?
    /// The `formatVersion` whose first keyframe was read for static metadata: once per format, not every keyframe.
    private var colourReadAt: Int?
    /// The closed captions in the pictures (copied as they are, with the SEI that carries them).
    private var captions: CaptionProbe

    init(stream: StreamInfo, trackID: UInt32) throws {
        self.stream = stream
        self.trackID = trackID
        colour = stream.colour
        captions = CaptionProbe(stream: stream)
        timescale = outputTimescale(for: stream.timeBase, minimum: 10_000, fallback: 90_000)
        let rate = stream.frameRate ?? Rational(30, 1)
        frameTicks = rate.frameDuration(timescale: timescale)
        if let record = Codec.record(fromExtradata: stream.extradata) { format = makeFormat(record) }
    }

    private func makeFormat(_ record: [UInt8]) -> TrackFormat {
        let d = Codec.describe(record)
        let probed = stream.sampleAspectRatio.isValid ? stream.sampleAspectRatio : Rational(1, 1)
        let sar = d.sar ?? probed
        var format = TrackFormat(trackID: trackID, kind: .video, timescale: timescale, codec: d.codec,
                                 width: d.width ?? stream.width, height: d.height ?? stream.height,
                                 sampleAspectRatio: sar.isValid ? sar : Rational(1, 1), colour: colour)
        // Dolby Vision profile 8 rides on an hvc1 track (its base layer plays anywhere); other profiles are not copied
        // as Dolby Vision (their signalling would need a dvh1 sample entry).
        if case .hevc = d.codec, stream.dolbyVision?.profile == 8 { format.dolbyVision = stream.dolbyVision }
        return format.carrying(captions.found)
    }

    /// Takes a configuration record; a different one replaces the format.
    private func update(_ record: [UInt8]) {
        if let current = format, Codec.same(Self.record(of: current.codec), record), current.colour == colour { return }
        format = makeFormat(record)
    }

    private static func record(of codec: TrackFormat.Codec) -> [UInt8] {
        switch codec {
        case .h264(let r), .hevc(let r), .av1(let r): r
        default: []
        }
    }

    func samples(for packet: Packet) throws -> [Sample] {
        if let extra = packet.newExtradata, let record = Codec.record(fromExtradata: extra) { update(record) }
        if format == nil || packet.isKeyframe {
            // In-band parameter sets: the first ones give the format; different ones on a keyframe change it.
            if let record = Codec.record(inBand: packet.data) { update(record) }
            if let current = format, colourReadAt != formatVersion {
                colourReadAt = formatVersion
                let found = Codec.colour(colour, keyframe: packet.data)
                if found != colour {
                    colour = found
                    update(Self.record(of: current.codec))
                }
            }
        }
        if captions.look(at: packet), let current = format { format = makeFormat(Self.record(of: current.codec)) }
        let data = Codec.sample(from: packet.data)
        guard !data.isEmpty else { return [] }
        let dts = packet.dts.map { rescale($0) } ?? (lastDTS.map { $0 + frameTicks } ?? 0)
        let pts = packet.pts.map { rescale($0) } ?? dts
        lastDTS = dts
        let isSync = packet.isKeyframe || Codec.isSync(data)
        let hint = packet.duration > 0 ? rescale(packet.duration) : frameTicks
        return [Sample(data: data, dts: dts, pts: pts, isSync: isSync, durationHint: hint)]
    }

    private func rescale(_ t: Int64) -> Int64 { MediaTime.rescale(t, timeBase: stream.timeBase, to: timescale) }

    func flushSamples() throws -> [Sample] { [] }
}

/// The copy processor for a video stream whose codec a track can carry as it is (H.264, H.265, AV1); nil for any
/// other codec.
func videoCopyProcessor(for stream: StreamInfo, trackID: UInt32) throws -> (any TrackProcessor)? {
    if stream.isH264 { return try VideoCopyProcessor<H264Copy>(stream: stream, trackID: trackID) }
    if stream.isHEVC { return try VideoCopyProcessor<HEVCCopy>(stream: stream, trackID: trackID) }
    if stream.isAV1 { return try VideoCopyProcessor<AV1Copy>(stream: stream, trackID: trackID) }
    return nil
}

/// The codecs `videoCopyProcessor` copies.
func canCopyVideo(_ stream: StreamInfo) -> Bool {
    stream.isH264 || stream.isHEVC || stream.isAV1
}
