import HLS
import MediaCore
import MediaPresentation

/// The timing a stream announces for its life, decided once, when its formats are known: `EXT-X-TARGETDURATION`
/// and LL-HLS `PART-TARGET` (both must stay constant: Apple's player stops when `PART-TARGET` changes), and the
/// segment duration low-latency DASH announces.
public enum TimingPlanner {
    /// What is known of the input's keyframes when the stream starts.
    public enum Keyframes: Sendable, Equatable {
        /// Encoded here: keyframes on the segment grid.
        case onGrid
        /// The container's index (an MP4's sample table): every keyframe's decode time, in ticks of `timescale`.
        case indexed([Int64], timescale: Int32)
        /// The distance between the first two keyframes (a live input measured as it arrives).
        case measuredGOP(MediaTime)
        /// Nothing known (an input without an index that ended or gave up before a second keyframe).
        case unknown
    }

    public static func policy(segmentDuration: MediaTime, partDuration: MediaTime?, formats: [TrackFormat],
                              groups: [[Int]], keyframes: Keyframes, frameDurations: [Int64?]) -> TimingPolicy {
        TimingPolicy(targetDuration: targetDuration(segmentDuration: segmentDuration, keyframes: keyframes),
                     partTarget: partTarget(partDuration, formats: formats, groups: groups, frameDurations: frameDurations),
                     segmentDuration: segmentDuration)
    }

    /// RFC 8216 §4.3.3.1: every `EXTINF`, rounded, is at most the target duration. Segments are cut at the first
    /// keyframe one segment duration in, so they follow the keyframes when those are farther apart: the longest cut the
    /// keyframes allow sets it.
    public static func targetDuration(segmentDuration: MediaTime, keyframes: Keyframes) -> Int {
        let floor = MediaPlaylist.targetDuration(for: [segmentDuration])
        switch keyframes {
        case .onGrid, .unknown:
            return floor
        case .measuredGOP(let gop):
            guard gop.value > 0 else { return floor }
            // One GOP per segment when the GOP is longer than the segment duration, else as many as fill one.
            let seg = segmentDuration.converted(to: gop.timescale, rounding: .up).value
            let length = gop.value >= seg ? gop.value : (seg + gop.value - 1) / gop.value * gop.value
            return max(floor, MediaPlaylist.targetDuration(for: [MediaTime(value: length, timescale: gop.timescale)]))
        case .indexed(let times, let timescale):
            return max(floor, MediaPlaylist.targetDuration(for: cuts(times, segment: segmentDuration.converted(to: timescale, rounding: .up).value)
                .map { MediaTime(value: $0, timescale: timescale) }))
        }
    }

    /// The durations of the segments the segmenter cuts on these keyframe times (a keyframe one segment duration or
    /// more past the segment's start ends it); the last, open one is not counted.
    static func cuts(_ keyframes: [Int64], segment: Int64) -> [Int64] {
        var out: [Int64] = []
        var start: Int64?
        for k in keyframes.sorted() {
            guard let s = start else { start = k; continue }
            if k - s >= segment {
                out.append(k - s)
                start = k
            }
        }
        return out
    }

    /// RFC 8216bis §4.4.4.9: every part's duration MUST be at most the Part Target Duration. Parts are cut on the
    /// reference track's frames, so a 0.333 s part of 30 fps video lasts 10 frames = 1/3 s; a rendition whose reference
    /// is another track (a separate audio rendition, cut at the video's boundaries on its own frames) can run one of its
    /// frames longer. Rounded up to whole milliseconds, so the playlist shows a short exact number (`0.334`).
    /// `frameDurations`: per track, its frame duration in its ticks, when known.
    public static func partTarget(_ partDuration: MediaTime?, formats: [TrackFormat], groups: [[Int]],
                                  frameDurations: [Int64?]) -> MediaTime? {
        guard let partDuration else { return nil }
        let ref = formats.firstIndex { $0.kind == .video } ?? 0
        var target = partDuration
        if let frame = frameDurations[ref], frame > 0 {
            let ts = formats[ref].timescale
            let ticks = partDuration.converted(to: ts, rounding: .up).value
            target = MediaTime(value: (ticks + frame - 1) / frame * frame, timescale: ts)
        }
        var longest = target
        for group in groups where !group.contains(ref) {
            let own = group.first { formats[$0].kind == .video } ?? group[0]
            // When no frame has been seen yet, the codec's longest (AAC 1024 samples, AC-3 1536, Opus 60 ms).
            if let frame = frameDurations[own] ?? formats[own].longestAudioFrame, frame > 0 {
                longest = max(longest, target + MediaTime(value: frame, timescale: formats[own].timescale))
            }
        }
        return MediaTime(value: MediaTime.rescale(longest.value, from: longest.timescale, to: 1000, rounding: .up), timescale: 1000)
    }
}
