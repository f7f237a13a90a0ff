import MediaCore

/// The first stage of the producer chain: holds samples until every track's format is known, then opens the stream
/// (`start`) and lets samples through; afterwards it turns a track's new format into a `formatChange`.
///
/// - Copied live video (`measureGOP`): the stream also waits for the first two keyframes, whose distance sets
///   `EXT-X-TARGETDURATION` (or 10 s of video without a second one: nothing measured).
/// - After `reconnect()` (a publisher went away; the next connection's samples follow), it holds the new connection's
///   samples until its formats are known, then starts at its first video keyframe: what came before cannot be decoded
///   (a pull joins mid-GOP), and other tracks' samples before it would start the continued timeline early. Gives up
///   waiting after 10 s of video without a keyframe.
/// - More than `holdLimit` samples without every format known (H.264 without SPS/PPS) is an error.
public struct FormatGate {
    public enum Output: Sendable {
        /// The formats are known: the stream starts (or, after a reconnect, resumes). `frameDurations`: per track, the
        /// spacing of its first samples (PART-TARGET); `gop`: the first GOP, when it was measured.
        case start([TrackFormat], frameDurations: [Int64?], gop: MediaTime?, resuming: Bool)
        case sample(track: Int, Sample, wallClock: WallClock?)
        /// A track's codec parameters changed after the start (all formats as they are now).
        case formatChange(track: Int, [TrackFormat])
    }

    public let kinds: [TrackFormat.Kind]
    public let measureGOP: Bool
    public static let holdLimit = 2000
    /// Seconds of video after which a missing second keyframe (or, resuming, a first one) is no longer waited for.
    static let keyframeWaitSeconds: Int64 = 10

    public private(set) var formats: [TrackFormat?]
    /// Samples pass through (formats known, the stream started or resumed).
    public private(set) var isOpen = false
    private var held: [(track: Int, sample: Sample, wallClock: WallClock?)] = []
    private var resuming = false
    /// Frames dropped before the new connection's first keyframe (for the log).
    public private(set) var droppedBeforeKeyframe = 0

    public init(kinds: [TrackFormat.Kind], measureGOP: Bool) {
        self.kinds = kinds
        self.measureGOP = measureGOP
        formats = Array(repeating: nil, count: kinds.count)
    }

    private var video: Int? { kinds.firstIndex(of: .video) }

    public mutating func accept(_ event: SourceEvent) throws -> [Output] {
        switch event {
        case .format(let t, let f):
            guard formats.indices.contains(t) else { throw ProducerError.unknownTrack(t) }
            let changed = formats[t] != nil && formats[t] != f
            formats[t] = f
            // The stream opens with samples (their spacing tells the frame durations), not with a format alone.
            if isOpen { return changed ? [.formatChange(track: t, formats.map { $0! })] : [] }
            return []
        case .samples(let t, let samples, let wallClock):
            guard formats.indices.contains(t) else { throw ProducerError.unknownTrack(t) }
            if isOpen { return samples.map { .sample(track: t, $0, wallClock: wallClock) } }
            held += samples.map { (t, $0, wallClock) }
            return try open()
        case .event, .cues:
            return []  // taken by the chain before the gate (`ProducerChain.accept`)
        }
    }

    /// The input is being opened again: what the old connection sent before its formats were known is dropped; the
    /// next connection's formats come anew and, when the stream had started (`resume`), it resumes at its first keyframe.
    public mutating func reconnect(resume: Bool) {
        held = []
        isOpen = false
        resuming = resume
        formats = Array(repeating: nil, count: kinds.count)
    }

    /// The end of input: a stream whose formats are known starts with what is held (whatever keyframes it lacks).
    public mutating func finish() -> [Output] {
        guard !isOpen, !held.isEmpty, formats.allSatisfy({ $0 != nil }) else { return [] }
        return release(gop: measuredGOP())
    }

    private mutating func open() throws -> [Output] {
        guard formats.allSatisfy({ $0 != nil }) else {
            if held.count > Self.holdLimit {
                throw ProducerError.missingCodecConfiguration(
                    "no codec configuration found in the first \(held.count) frames (H.264 without SPS/PPS?)")
            }
            return []
        }
        if resuming {
            guard startsAtKeyframe() else { return [] }
            return release(gop: nil)
        }
        var gop: MediaTime?
        if measureGOP {
            switch gopMeasurement() {
            case .waiting: return []
            case .measured(let g): gop = g
            case .gaveUp: gop = nil
            }
        }
        return release(gop: gop)
    }

    private mutating func release(gop: MediaTime?) -> [Output] {
        isOpen = true
        let known = formats.map { $0! }
        var out: [Output] = [.start(known, frameDurations: kinds.indices.map(frameDuration), gop: gop, resuming: resuming)]
        resuming = false
        out += held.map { .sample(track: $0.track, $0.sample, wallClock: $0.wallClock) }
        held = []
        return out
    }

    private enum GOPMeasurement { case waiting, measured(MediaTime), gaveUp }

    /// The first two keyframes tell the GOP length (or 10 s pass without a second one).
    private func gopMeasurement() -> GOPMeasurement {
        guard let v = video, let ts = formats[v]?.timescale else { return .gaveUp }
        let keys = held.filter { $0.track == v && $0.sample.isSync }.map(\.sample.dts)
        if keys.count >= 2 { return .measured(MediaTime(value: keys[1] - keys[0], timescale: ts)) }
        let all = held.filter { $0.track == v }.map(\.sample.dts)
        guard let first = all.first, let last = all.last else { return .waiting }
        return last - first > Int64(ts) * Self.keyframeWaitSeconds ? .gaveUp : .waiting
    }

    private func measuredGOP() -> MediaTime? {
        if case .measured(let g) = gopMeasurement() { return g }
        return nil
    }

    /// Resuming: whether the held samples reach the new connection's first video keyframe, and if so drops what came
    /// before it (video before it; other tracks' samples presented before it).
    private mutating func startsAtKeyframe() -> Bool {
        guard let v = video, let ts = formats[v]?.timescale else { return true }
        guard let k = held.firstIndex(where: { $0.track == v && $0.sample.isSync }) else {
            let dts = held.filter { $0.track == v }.map(\.sample.dts)
            guard let first = dts.first, let last = dts.last else { return false }
            return last - first > Int64(ts) * Self.keyframeWaitSeconds
        }
        let key = MediaTime(value: held[k].sample.pts, timescale: ts)
        let before = held.count
        held = held.enumerated().filter { i, h in
            h.track == v ? i >= k : MediaTime(value: h.sample.pts, timescale: formats[h.track]!.timescale) >= key
        }.map(\.element)
        droppedBeforeKeyframe = before - held.count
        return true
    }

    /// A track's frame duration in its ticks: the spacing of its first held samples, else a sample's own duration.
    private func frameDuration(_ track: Int) -> Int64? {
        let samples = held.filter { $0.track == track }.map(\.sample)
        let dts = samples.map(\.dts).sorted()
        let spacings = zip(dts, dts.dropFirst()).map { $1 - $0 } + samples.compactMap(\.durationHint)
        return spacings.filter { $0 > 0 }.min()
    }
}

public enum ProducerError: Error, Equatable, CustomStringConvertible {
    case unknownTrack(Int)
    case missingCodecConfiguration(String)
    case invalidOption(String)

    public var description: String {
        switch self {
        case .unknownTrack(let t): "no track \(t)"
        case .missingCodecConfiguration(let what): what
        case .invalidOption(let what): what
        }
    }
}
