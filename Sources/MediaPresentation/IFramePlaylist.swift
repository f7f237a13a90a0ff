import HLS
import MediaCore

/// I-frame playlists (RFC 8216 §4.3.3.6 `EXT-X-I-FRAMES-ONLY`, §4.3.4.3 `EXT-X-I-FRAME-STREAM-INF`) as pure functions
/// of a window snapshot, like the media playlist: the same for live, time-shift and VOD.
///
/// Each listed segment gives one I-frame: the fragment that opens with its first video keyframe
/// (`SegmentInfo.keyframe`, a fact the segmenter wrote down), listed as an `EXT-X-BYTERANGE` of the segment itself, so
/// no byte is stored twice. Video segments start with a keyframe (that is where they are cut), so the I-frame playlist
/// lists one entry per segment and shares the media playlist's `EXT-X-MEDIA-SEQUENCE`, discontinuity sequence and
/// `EXT-X-MAP`s; a segment without a keyframe fact is left out (the I-frame before it then lasts until the next one).
extension PlaylistBuilder {
    /// One I-frame of a window.
    struct IFrame<Payload: Sendable> {
        let segment: StoredSegment<Payload>
        /// Its position in the window (for single-file offsets).
        let index: Int
        let keyframe: KeyframeFragment
        /// §4.3.3.6: "the duration of the I-frame … is the time between the presentation time of the I-frame in the
        /// Media Segment and the presentation time of the next I-frame in the Playlist, or the end of the
        /// presentation if it is the last I-frame in the Playlist". Measured between decode times (`tfdt`s), the
        /// timeline the segments' own `EXTINF`s use: equal whenever keyframes share one composition offset.
        let duration: MediaTime
        /// `EXT-X-DISCONTINUITY` before it: its segment, or a segment left out since the previous I-frame, starts one.
        let discontinuity: Bool
    }

    /// The I-frames of a window, oldest first. The last I-frame before a discontinuity, and the last of the window,
    /// lasts until the end of its run of segments (live: the segment in progress starts with the next keyframe).
    static func iFrames<P>(_ snap: WindowSnapshot<P>) -> [IFrame<P>] {
        var reversed: [(index: Int, keyframe: KeyframeFragment, duration: MediaTime)] = []
        var following: MediaTime?
        for j in snap.window.indices.reversed() {
            let info = snap.window[j].info
            if j + 1 == snap.window.count || snap.window[j + 1].discontinuity { following = info.startTime + info.duration }
            guard let k = info.keyframe, let end = following else { continue }
            let duration = end - k.decodeTime
            following = k.decodeTime
            if duration.value > 0 { reversed.append((j, k, duration)) }
        }
        var out: [IFrame<P>] = []
        out.reserveCapacity(reversed.count)
        var previous = -1
        for (j, k, d) in reversed.reversed() {
            let discontinuity = (previous + 1...j).contains { $0 >= 0 && snap.window[$0].discontinuity }
            out.append(IFrame(segment: snap.window[j], index: j, keyframe: k, duration: d, discontinuity: discontinuity))
            previous = j
        }
        return out
    }

    /// The I-frame playlist of a rendition, `nil` until it is playable or while it lists no I-frame (no video).
    /// `singleFile`: byte ranges into that one file (the segments laid end to end from `mediaStart`, as
    /// `mediaPlaylist` lists them). `uriQuery`: a query every listed URI carries (`""`: none).
    @_specialize(exported: true, where P == Void)
    public static func iFramePlaylist<P>(_ snap: WindowSnapshot<P>, scheme: URIScheme,
                                         playlistType: MediaPlaylist.PlaylistType?,
                                         singleFile: SingleFileIndex? = nil, uriQuery: String = "") -> MediaPlaylist? {
        let frames = iFrames(snap)
        guard snap.isPlayable, let first = frames.first else { return nil }
        let scheme = SuffixedScheme(scheme, uriQuery)
        var segmentOffsets: [Int] = []
        if let singleFile {
            var offset = singleFile.mediaStart
            segmentOffsets = snap.window.map { seg in defer { offset += seg.info.byteCount }; return offset }
        }
        var previousInit = first.segment.initIndex
        let segments = frames.map { f -> PlaylistSegment in
            let seg = f.segment
            let map: String? = seg.initIndex != previousInit && singleFile == nil ? scheme.initURI(seg.initIndex) : nil
            previousInit = seg.initIndex
            let base = singleFile == nil ? 0 : segmentOffsets[f.index]
            var s = PlaylistSegment(
                sequence: seg.sequence, uri: singleFile?.fileURI ?? scheme.segmentURI(seg.sequence), duration: f.duration,
                programDateTime: seg.info.programDateTime.map { programDateTime($0, of: seg.info, at: f.keyframe.decodeTime) },
                discontinuity: f.discontinuity, mapURI: map,
                byteRange: PlaylistByteRange(length: f.keyframe.range.count, offset: base + f.keyframe.range.lowerBound))
            // A sample-encrypted keyframe fragment carries its own senc: the segment's keys apply to it as they are.
            if let e = seg.info.encryption, e.method.isSampleEncryption { s.key = scheme.key(e) }
            return s
        }
        var playlist = MediaPlaylist(
            targetDuration: max(snap.targetDuration, MediaPlaylist.targetDuration(for: frames.map(\.duration))),
            mediaSequence: snap.mediaSequence, discontinuitySequence: snap.discontinuitySequence,
            independentSegments: false, mapURI: singleFile?.fileURI ?? scheme.initURI(first.segment.initIndex),
            playlistType: renderedType(playlistType, snap), segments: segments, endList: snap.finished)
        playlist.iFramesOnly = true
        if let singleFile {
            playlist.mapByteRange = PlaylistByteRange(length: singleFile.initRange.count, offset: singleFile.initRange.lowerBound)
        }
        return playlist
    }

    /// The I-frame is dated by its segment's date plus its offset in the segment (whole milliseconds).
    private static func programDateTime(_ date: WallClock, of info: SegmentInfo, at time: MediaTime) -> WallClock {
        let offset = time - info.startTime
        return WallClock(millisecondsSince1970: date.millisecondsSince1970
                         + MediaTime.rescale(offset.value, from: offset.timescale, to: 1000, rounding: .down))
    }

    /// The `EXT-X-I-FRAME-STREAM-INF` of a rendition whose window lists I-frames (`nil` otherwise): `BANDWIDTH` is the
    /// peak of each I-frame's bytes over its duration, measured over the I-frames of the current init segment;
    /// `CODECS` and `RESOLUTION` are the video track's.
    static func iFrameStream<P>(_ snap: WindowSnapshot<P>, scheme: URIScheme, uriQuery: String) -> IFrameStream? {
        guard let video = snap.inits.last?.tracks.first(where: { $0.kind == .video }) else { return nil }
        let current = snap.inits.last?.index
        let samples = iFrames(snap).filter { $0.segment.initIndex == current }.map {
            VariantStatistics.Sample(bytes: $0.keyframe.range.count, duration: $0.duration)
        }
        guard let stats = VariantStatistics.measure(samples) else { return nil }
        return IFrameStream(bandwidth: stats.peakBitRate, averageBandwidth: stats.averageBitRate, codecs: video.codecString,
                            resolution: video.width > 0 && video.height > 0 ? .init(width: video.width, height: video.height) : nil,
                            uri: SuffixedScheme(scheme, uriQuery).iFramePlaylistURI)
    }
}
