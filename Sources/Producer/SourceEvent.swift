import MediaCore
import MediaPresentation

/// What a source hands the producer chain, in order: a track's format before its first samples, and again when it
/// changes. The processor that made the samples knows when their codec parameters change (new SPS/PPS, a new
/// AudioSpecificConfig) and says so once; nothing downstream compares formats per sample.
public enum SourceEvent: Sendable {
    case format(track: Int, TrackFormat)
    /// Samples of one track, in decode order; `wallClock`: when they arrived (program date-time, part metrics).
    case samples(track: Int, [Sample], wallClock: WallClock?)
    /// A timed event (an SCTE-35 cue), in the input's timeline like the samples around it.
    case event(TimedEvent)
    /// Subtitle cues of subtitle rendition `subtitle` (an index into `RenditionPlan.subtitles`), in the input's
    /// timeline: an input text track's as they are read, a sidecar file's all at once before the media.
    case cues(subtitle: Int, [SubtitleCue])
}

/// The renditions a producer makes and which output tracks each one carries, planned once per input.
public struct RenditionPlan: Sendable, Equatable {
    public var renditions: [Rendition]
    /// Output track indices per rendition.
    public var groups: [[Int]]
    /// Subtitle renditions (`Rendition.subtitles`): no tracks, their segments made from cues on the segments of the
    /// first rendition; announced after `renditions`.
    public var subtitles: [Rendition] = []

    public init(renditions: [Rendition], groups: [[Int]]) {
        self.renditions = renditions
        self.groups = groups
    }

    /// Every rendition the layout announces: `renditions`, then `subtitles` (WebVTT, for HLS), then each subtitle
    /// rendition's `textTrackForm` (fMP4 `wvtt`, for DASH), in the same order.
    public var layout: [Rendition] { renditions + subtitles + subtitles.map(\.textTrackForm) }

    /// The default: one muxed rendition at the root with every track.
    public static func muxed(trackCount: Int) -> RenditionPlan {
        RenditionPlan(renditions: [.muxed()], groups: [Array(0..<trackCount)])
    }

    /// A ladder: one video rendition per rung (one track each, `rungs` in track order from `firstVideoTrack`), and the
    /// audio, when there is one, as its own rendition in group `audioGroup` (CMAF style: one track per rendition).
    public static func ladder(_ rungs: [(name: String, bitRate: Int?)], frameRate: Double?, audio: (bitRate: Int?, track: Int)?)
        -> RenditionPlan {
        ladder(rungs, frameRate: frameRate, audio: audio.map { [AudioRendition(name: "audio", bitRate: $0.bitRate)] } ?? [])
    }

    /// A ladder with one audio rendition per audio track (`audio`, in track order after the rungs), all in group
    /// `audioGroup`, shared by every rung.
    public static func ladder(_ rungs: [(name: String, bitRate: Int?)], frameRate: Double?, audio: [AudioRendition])
        -> RenditionPlan {
        var renditions = rungs.map {
            Rendition(name: $0.name, kind: .video, scheme: .nested($0.name), audioGroup: audio.isEmpty ? nil : audioGroup,
                      declaredBitRate: $0.bitRate, declaredFrameRate: frameRate)
        }
        renditions += audio.map { $0.rendition(group: audioGroup) }
        return RenditionPlan(renditions: renditions, groups: renditions.indices.map { [$0] })
    }

    /// The muxed default with more than one audio track: the muxed rendition (tracks `0..<trackCount`: the video and
    /// the `main` audio, what a plain client plays) is a member of group `audioGroup` through its own audio, and each
    /// of `alternates` is an audio rendition of that group, one track each, in track order after the muxed ones.
    public static func muxed(trackCount: Int, main: AudioRendition, alternates: [AudioRendition]) -> RenditionPlan {
        guard !alternates.isEmpty else { return .muxed(trackCount: trackCount) }
        var stream = Rendition.muxed()
        stream.audioGroup = audioGroup
        stream.language = main.language
        stream.audioLabel = main.label
        let renditions = [stream] + alternates.map { $0.rendition(group: audioGroup) }
        return RenditionPlan(renditions: renditions,
                             groups: [Array(0..<trackCount)] + alternates.indices.map { [trackCount + $0] })
    }

    /// The `GROUP-ID` of a ladder's audio rendition.
    public static let audioGroup = "audio"
}

