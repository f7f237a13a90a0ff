import MediaCore
import MediaPresentation

/// What a source hands the producer chain, in order: a track's format before its first samples, and again when it
/// changes. The processor that made the samples knows when their codec parameters change (new SPS/PPS, a new
/// AudioSpecificConfig) and says so once; nothing downstream compares formats per sample.
public enum SourceEvent: Sendable {
    case format(track: Int, TrackFormat)
    /// Samples of one track, in decode order; `wallClock`: when they arrived (program date-time, part metrics).
    case samples(track: Int, [Sample], wallClock: WallClock?)
}

/// The renditions a producer makes and which output tracks each one carries, planned once per input.
public struct RenditionPlan: Sendable, Equatable {
    public var renditions: [Rendition]
    /// Output track indices per rendition.
    public var groups: [[Int]]

    public init(renditions: [Rendition], groups: [[Int]]) {
        self.renditions = renditions
        self.groups = groups
    }

    /// The default: one muxed rendition at the root with every track.
    public static func muxed(trackCount: Int) -> RenditionPlan {
        RenditionPlan(renditions: [.muxed()], groups: [Array(0..<trackCount)])
    }

    /// A ladder: one video rendition per rung (one track each, `rungs` in track order from `firstVideoTrack`), and the
    /// audio, when there is one, as its own rendition in group `audioGroup` (CMAF style: one track per rendition).
    public static func ladder(_ rungs: [(name: String, bitRate: Int?)], frameRate: Double?, audio: (bitRate: Int?, track: Int)?)
        -> RenditionPlan {
        var renditions = rungs.map {
            Rendition(name: $0.name, kind: .video, scheme: .nested($0.name), audioGroup: audio != nil ? audioGroup : nil,
                      declaredBitRate: $0.bitRate, declaredFrameRate: frameRate)
        }
        if let audio {
            renditions.append(Rendition(name: "audio", kind: .audio, scheme: .nested("audio"), audioGroup: audioGroup,
                                        declaredBitRate: audio.bitRate))
        }
        return RenditionPlan(renditions: renditions, groups: renditions.indices.map { [$0] })
    }

    /// The `GROUP-ID` of a ladder's audio rendition.
    public static let audioGroup = "audio"
}
