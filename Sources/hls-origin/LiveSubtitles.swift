import Foundation
import HLS
import Logging
import MediaCore
import MediaPresentation
import ServeConfig

/// `serve URL` of a live HLS presentation with subtitle renditions (issue 21): libavformat 5.1's HLS demuxer reads the
/// video and audio but not the WebVTT renditions, so each is followed here, as `package URL` reads them once
/// (`RemoteSelections`). Before the stream starts, each rendition becomes one of the stream's own (a `--subtitles LANG`
/// without a file, unless the flags or the config name that language already); then, while the stream runs, its media
/// playlist is reloaded every half target duration (0.5–3 s), each new segment fetched once, and its cues, placed on
/// the input's clock by the segment's `X-TIMESTAMP-MAP` (the same clock the demuxer reads the video on), go to the
/// stream's pipeline as the live cue API's do. A cue repeated in the segments it spans is taken once.
struct LiveSubtitles {
    struct Follow: Sendable {
        var language: LanguageTag
        var playlist: URL
        var what: String
    }

    /// The followed renditions of each planned stream, by its name.
    var follows: [String: [Follow]] = [:]

    /// Adds the pulled presentations' subtitle renditions to `plan`'s streams and says which to follow.
    static func plan(_ plan: inout ServePlan, logger: Logger) async -> LiveSubtitles {
        var out = LiveSubtitles()
        for i in plan.streams.indices {
            let follows = await Self.plan(&plan.streams[i], logger: logger)
            if !follows.isEmpty { out.follows[plan.streams[i].name] = follows }
        }
        return out
    }

    /// Adds one stream's pulled subtitle renditions to its options (a stream started at run time: the control API, a
    /// reload) and says which to follow.
    static func plan(_ stream: inout ServePlan.Stream, logger: Logger) async -> [Follow] {
        guard case .url(let input) = stream.input, let (multivariant, base) = await RemoteSelections.multivariant(input) else {
            return []
        }
        let streamLogger = logger.forStream(stream.name)
        var subtitles = stream.options.subtitles ?? []
        var follows: [Follow] = []
        for (tag, url, what) in RemoteSelections.subtitleRenditions(of: multivariant, base: base, logger: streamLogger)
        where !subtitles.contains(where: { $0.language == tag }) {
            subtitles.append(SubtitleSidecar(language: tag))
            follows.append(Follow(language: tag, playlist: url, what: what))
            streamLogger.info("\(what): followed")
        }
        if !follows.isEmpty { stream.options.subtitles = subtitles }
        return follows
    }

    /// One task per followed rendition of `stream`, each ending once the stream does (or when cancelled).
    static func start(_ follows: [Follow], for stream: ServedStream, logger: Logger) -> [Task<Void, Never>] {
        let streamLogger = logger.forStream(stream.name)
        return follows.map { f in
            Task { [streamLogger] in
                await follow(f, into: stream.presentation.eventInbox, running: { stream.isRunning }, logger: streamLogger)
            }
        }
    }

    /// Follows `follow` into `inbox` while `running()` says so (the stream's pipeline runs) and the playlist has no
    /// `EXT-X-ENDLIST`. A reload or segment that fails is a warning (once per failing run of them); following goes on.
    static func follow(_ follow: Follow, into inbox: EventInbox, running: @escaping @Sendable () -> Bool,
                       logger: Logger) async {
        var taken = Set<String>()
        var seen = Set<SubtitleCue>()
        var failing = false
        while running() && !Task.isCancelled {
            var wait = Duration.seconds(1)
            do {
                let playlist = try MediaPlaylist.parse(try await RemoteSelections.fetch(follow.playlist))
                wait = .milliseconds(min(3000, max(500, playlist.targetDuration * 500)))
                for segment in playlist.segments where !taken.contains(segment.uri) {
                    guard let url = URL(string: segment.uri, relativeTo: follow.playlist)?.absoluteURL else { continue }
                    let cues = try RemoteSelections.segmentCues(try await RemoteSelections.fetch(url), from: url, logger: logger)
                    taken.insert(segment.uri)
                    for cue in cues where seen.insert(cue).inserted {
                        inbox.post(PostedCue(language: follow.language.bcp47, cue: cue, onInputClock: true))
                    }
                }
                // Only what the window still lists can come again.
                let listed = Set(playlist.segments.map(\.uri))
                taken.formIntersection(listed)
                // A cue ended a minute before the newest one's start will not be repeated.
                if seen.count > 1024, let newest = seen.map(\.start).max() {
                    let horizon = newest - MediaTime.seconds(60).converted(to: newest.timescale, rounding: .nearest)
                    seen = seen.filter { $0.end > horizon }
                }
                if failing { logger.info("\(follow.what): following again") }
                failing = false
                if playlist.endList { return }
            } catch {
                if !failing { logger.warning("\(follow.what): \(error); retrying") }
                failing = true
            }
            try? await Task.sleep(for: wait)
        }
    }
}
