import DASH
import MediaCore

/// DASH trick mode (DASH-IF IOP 4.3 §3.2.9; ISO/IEC 23009-1 §5.3.7.2 `@maxPlayoutRate`, `@codingDependency`): for
/// each video AdaptationSet, a second one marked `EssentialProperty schemeIdUri="http://dashif.org/guidelines/trickmode"`
/// with `@value` the main set's `@id`, whose Representations list the keyframe fragments of the main ones' segments —
/// the same byte ranges the HLS I-frame playlists list (`PlaylistBuilder.iFrames`) — as a `SegmentList` of
/// `SegmentURL@mediaRange`s (§5.3.9.3), so no byte is stored twice. Only separate video renditions (a ladder) get
/// one: a muxed rendition's fragments carry its audio too.
extension ManifestBuilder {
    static func trickModeSets<P>(_ renditions: [Rendition], _ snapshots: [WindowSnapshot<P>], main: [MPD.AdaptationSet],
                                 uriQuery: String) -> [MPD.AdaptationSet] {
        var nextID = (main.map(\.id).max() ?? -1) + 1
        var out: [MPD.AdaptationSet] = []
        for set in main where set.contentType == .video {
            let members = set.representations.compactMap { rep in renditions.firstIndex { $0.name == rep.id } }
            let reps = members.compactMap { trickRepresentation(renditions[$0], snapshots[$0], uriQuery: uriQuery) }
            guard !reps.isEmpty else { continue }
            var trick = MPD.AdaptationSet(id: nextID, contentType: .video, mimeType: "video/mp4", representations: reps)
            trick.trickModeOf = set.id
            trick.contentProtection = set.contentProtection
            out.append(trick)
            nextID += 1
        }
        return out
    }

    /// One rendition's keyframe fragments of its current init segment, or nil when it lists none.
    static func trickRepresentation<P>(_ r: Rendition, _ snap: WindowSnapshot<P>, uriQuery: String) -> MPD.Representation? {
        guard r.kind == .video, let video = snap.inits.last?.tracks.first(where: { $0.kind == .video }),
              let stream = PlaylistBuilder.iFrameStream(snap, scheme: r.scheme, uriQuery: uriQuery) else { return nil }
        let current = snap.inits.last?.index
        let frames = PlaylistBuilder.iFrames(snap).filter { $0.segment.initIndex == current }
        guard let first = frames.first else { return nil }
        let timescale = first.segment.info.startTime.timescale
        let suffix = uriQuery.isEmpty ? "" : "?" + uriQuery
        let list = MPD.SegmentList(
            timescale: timescale, initialization: r.scheme.initURI(current ?? 0) + suffix, startNumber: first.segment.sequence,
            timeline: MPD.TimelineEntry.compress(frames.map {
                (start: $0.segment.info.startTime.converted(to: timescale).value,
                 duration: $0.segment.info.duration.converted(to: timescale).value)
            }),
            urls: frames.map { MPD.SegmentList.URL(media: r.scheme.segmentURI($0.segment.sequence) + suffix, range: $0.keyframe.range) })
        // One picture per segment: the playout rate that shows each at its frame's pace (frames per segment).
        let fps = r.declaredFrameRate ?? 30
        let seconds = Double(first.segment.info.duration.value) / Double(first.segment.info.duration.timescale)
        var rep = MPD.Representation(id: r.name + "-trick", bandwidth: max(1, stream.bandwidth), codecs: video.codecString,
                                     width: video.width, height: video.height,
                                     sar: video.sampleAspectRatio.isValid ? video.sampleAspectRatio : nil,
                                     colour: video.colour, segments: .list(list))
        rep.maxPlayoutRate = max(1, Int((fps * seconds).rounded()))
        rep.codingDependency = false
        return rep
    }
}
