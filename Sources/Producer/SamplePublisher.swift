import Logging
import MediaCore
import MediaPresentation

/// Publishes an application's own encoded samples (H.264 and AAC from its capture and encoders) into a
/// presentation, a VOD writer, or any consumer: the segmenter cuts them into segments and LL-HLS parts exactly as
/// it does for `hls-origin serve`.
///
/// ```swift
/// let presentation = LivePresentation.live()
/// let publisher = try SamplePublisher(tracks: [video, audio], output: presentation)
/// try publisher.append(sample, track: 0)          // DTS order within each track
/// ```
/// Not `Sendable`: feed it from one task or thread.
public final class SamplePublisher {
    public private(set) var tracks: [TrackFormat]
    private var chain: ProducerChain
    private var finished = false

    /// - Parameters:
    ///   - tracks: the output tracks (video timescale e.g. 90 000, audio the sample rate; `trackID` 1-based).
    ///   - renditions: how tracks form renditions: `nil` for one muxed rendition at the root, or one rendition per
    ///     entry with the indices of its tracks (a ladder: one per video track, one for the audio).
    ///   - partDuration: LL-HLS part duration (`nil`: no parts).
    public init(tracks: [TrackFormat], renditions: [(Rendition, [Int])]? = nil, segmentDuration: MediaTime = .seconds(1),
                partDuration: MediaTime? = MediaTime(value: 333, timescale: 1000), output: any PresentationConsumer,
                logger: Logger = Logger(label: "hls-origin")) throws {
        guard !tracks.isEmpty else { throw ProducerError.invalidOption("a publisher needs at least one track") }
        let plan = renditions.map { RenditionPlan(renditions: $0.map(\.0), groups: $0.map(\.1)) }
            ?? .muxed(trackCount: tracks.count)
        self.tracks = tracks
        chain = ProducerChain(plan: plan, kinds: tracks.map(\.kind),
                              settings: .init(segmentDuration: segmentDuration, partDuration: partDuration),
                              output: output, logger: logger)
        for (t, f) in tracks.enumerated() { try chain.accept(.format(track: t, f)) }
    }

    /// Appends one sample of `track` (an index into `tracks`), in decode order within the track. `wallClock` is when
    /// it was captured (for `EXT-X-PROGRAM-DATE-TIME`).
    public func append(_ sample: Sample, track: Int, wallClock: WallClock = .now) throws {
        guard !finished else { return }
        guard tracks.indices.contains(track) else { throw ProducerError.invalidOption("no track \(track)") }
        try chain.accept(.samples(track: track, [sample], wallClock: wallClock))
    }

    /// New codec parameters for a track (the app's encoder was reconfigured: a new size, new SPS/PPS). From the
    /// next sample on, which should be a keyframe, the renditions get a new init segment and a discontinuity.
    public func update(_ format: TrackFormat, track: Int) throws {
        guard tracks.indices.contains(track), tracks[track].kind == format.kind else {
            throw ProducerError.invalidOption("track \(track) cannot become a \(format.kind.rawValue) track")
        }
        tracks[track] = format
        try chain.accept(.format(track: track, format))
    }

    /// The app's source started over (a camera or an encoder reconnected): the segment in progress ends now, and the
    /// next samples, whatever their timestamps, continue the timeline after `EXT-X-DISCONTINUITY`, from their first
    /// video keyframe (earlier samples are dropped). What `serve` does when a network publisher comes back.
    public func restart() throws {
        guard !finished else { return }
        try chain.reconnect()
        for (t, f) in tracks.enumerated() { try chain.accept(.format(track: t, f)) }
    }

    /// Ends the stream: the last segment is written and the playlists get `EXT-X-ENDLIST`.
    public func finish() throws {
        guard !finished else { return }
        finished = true
        try chain.finish()
    }
}
