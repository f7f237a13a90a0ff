import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HLS
import Logging
import MediaCore
import MediaPresentation
import Synchronization

/// Records a live presentation to a directory as it is published, in the layout `package` writes and the origin
/// serves (`URIScheme`): per rendition its init segment(s), every complete segment (LL-HLS parts are not
/// written: the segment that contains them is), a media playlist that grows (`EXT-X-PLAYLIST-TYPE:EVENT`), and
/// `index.m3u8` once every rendition has a segment. `finish()` (the input's end, Ctrl-C) turns the playlists into
/// VOD (`EXT-X-PLAYLIST-TYPE:VOD`, `EXT-X-ENDLIST`), byte for byte what `package` writes for the same segments, and
/// writes a static DASH `manifest.mpd` of the same segments (`RecordingSummary.manifest()`).
///
/// Crash safety (a process killed with `kill -9`): a segment's bytes are written before its playlist lines, so a
/// playlist never lists a partial or missing file; the recording then plays up to its last complete segment (an
/// EVENT playlist without `EXT-X-ENDLIST`). Files are not `fsync`ed: this survives the process, not the machine.
///
/// Cost: a day of one-second segments is 86,400 playlist entries, so the playlist is never rendered again per
/// segment: each segment's lines (`MediaPlaylist.renderSegment`, the same code `render()` uses) are appended with
/// one `write(2)`. The file is rewritten (temporary file + rename) only when its header must change: at `finish()`
/// (EVENT → VOD), and if a segment's EXTINF rounds above the header's `EXT-X-TARGETDURATION`, which is chosen so
/// that this does not happen: it is the producer's `TimingPolicy.targetDuration`, which the pipeline raises from a
/// keyframe scan of a file before its first segment and which encoded renditions never exceed (segments are cut
/// on the grid). Only a pipe whose keyframes get farther apart than its first GOP makes a rewrite.
///
/// A write error (disk full) stops the recording with one log line; the consumer never throws, so the live
/// stream it sits beside keeps going.
public final class Recorder: PresentationConsumer, Sendable {
    public let directory: URL
    /// Called once by `finish()` with what was recorded, after the playlists are final: the place to write a
    /// static DASH MPD of the recording. An error it throws is logged.
    public typealias FinishHook = @Sendable (RecordingSummary) throws -> Void

    private let logger: Logger
    private let onFinish: FinishHook?
    /// Init indexes, discontinuities and the snapshots the multivariant playlist is built from, by the same rules
    /// as the live windows (a one-segment window: nothing grows with the recording).
    private let index = Presentation<Void>(windowSize: 1, payloads: .none)
    /// Per rendition, the last segment whose file is complete and listed (-1: none). Separate from `state` so
    /// `isRecorded` (called under a live window's lock) never waits for file I/O.
    private let listed = Mutex<[Int64]>([])

    private struct Track {
        /// The daterange last written per ID (a rewrite of the playlist lists the latest of each).
        var dateRanges: [String: DateRange] = [:]
        var fd: Int32 = -1
        var headerTarget = 0
        var mapInForce = ""
        /// The `EXT-X-KEY` in force at the end of the playlist (an encrypted stream).
        var keyInForce: PlaylistKey?
        var inits: [RecordingSummary.RecordedInit] = []
        var timeline: [TimelineEntry] = []
        var segmentCount = 0
        var statistics = VariantStatistics.Accumulator()
        var statisticsInit: Int?
        /// How its latest segment was encrypted (its set's ContentProtection in manifest.mpd).
        var encryption: SegmentEncryption?
    }

    private struct State {
        var renditions: [Rendition] = []
        var policy = TimingPolicy(targetDuration: 1)
        var keysWritten: Set<UInt64> = []
        var tracks: [Track] = []
        var multivariantWritten = false
        var stopped = false
        var finished = false
        /// The stream's timed events, merged by ID (a recording's playlists list each one as it starts and again as it
        /// changes: the same ID, the same START-DATE, DURATION and SCTE35-IN added).
        var events = EventList()
    }

    /// Held while writing: only the producer's thread and `finish()` take it, never an HTTP reader.
    private let state = Mutex(State())

    /// Creates `directory` if needed; refuses one that has files in it (a recording never mixes with another).
    public init(directory: URL, logger: Logger, onFinish: FinishHook? = nil) throws {
        self.directory = directory
        self.logger = logger
        self.onFinish = onFinish
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw RecorderError.notADirectory(directory.path) }
            let contents = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            guard contents.isEmpty else { throw RecorderError.notEmpty(directory.path) }
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw RecorderError.cannotCreate(directory.path, "\(error.localizedDescription)")
        }
    }

    /// Whether segment `sequence` of rendition `rendition` is complete on disk (for a live window's spill: a
    /// time-shift window reads older segments back from the recording). Cheap; never waits for a write.
    public func isRecorded(rendition: Int, sequence: UInt64) -> Bool {
        listed.withLock { $0.indices.contains(rendition) && Int64(bitPattern: sequence) <= $0[rendition] }
    }

    public func consume(_ event: PresentationEvent) {
        state.withLock { s in
            guard !s.stopped, !s.finished else { return }
            do {
                try record(event, &s)
            } catch {
                s.stopped = true
                logger.error("recording stopped: \(error); the live stream goes on")
            }
        }
        if case .end = event { finish() }
    }

    private func record(_ event: PresentationEvent, _ s: inout State) throws {
        switch event {
        case .layout(let renditions, let policy):
            for r in renditions where !r.scheme.directory.isEmpty {
                try createDirectory(r.scheme.directory)
            }
            // Whole segments only: a recording lists no LL-HLS parts.
            let whole = TimingPolicy(targetDuration: policy.targetDuration)
            try index.consume(.layout(renditions, whole))
            s.renditions = renditions
            s.policy = whole
            s.tracks = renditions.map { _ in Track() }
            listed.withLock { $0 = renditions.map { _ in -1 } }
        case .initSegment(let r, let bytes, let tracks):
            try index.consume(event)
            guard let current = index.layout?.windows[r].snapshot().inits.last, current.index >= s.tracks[r].inits.count,
                  s.renditions[r].scheme.hasInitSegment else {
                return  // the same init again, or a WebVTT rendition's (no file)
            }
            let uri = s.renditions[r].scheme.initURI(current.index)
            try MediaFiles.write(bytes, to: path(uri))
            s.tracks[r].inits.append(RecordingSummary.RecordedInit(index: current.index, uri: uri, tracks: tracks))
        case .segment(let r, let info, let bytes):
            guard s.renditions.indices.contains(r) else { throw PresentationError.unknownRendition(r) }
            let scheme = s.renditions[r].scheme
            // 1. The segment's bytes (and, the first time it is used, its content key: `keys/<N>.key`, mode 0600).
            try MediaFiles.write(bytes, to: path(scheme.segmentURI(info.sequence)))
            if let e = info.encryption { s.tracks[r].encryption = e }
            if let e = info.encryption, e.method == .aes128, case let key = e.key, !s.keysWritten.contains(key.id) {
                try writeKey(key)
                s.keysWritten.insert(key.id)
            }
            try index.consume(event)
            guard let stored = index.layout?.windows[r].snapshot().window.last, stored.sequence == info.sequence else {
                return  // not listed (no init segment yet): the file stays unreferenced, as in a live window
            }
            // 2. Then its playlist lines.
            try list(stored, r, &s)
            listed.withLock { $0[r] = Int64(bitPattern: stored.sequence) }
            var t = s.tracks[r]
            t.timeline.append(sequence: stored.sequence, start: info.startTime, duration: info.duration,
                              initIndex: stored.initIndex, discontinuity: stored.discontinuity)
            t.segmentCount += 1
            if t.statisticsInit != stored.initIndex {
                t.statistics = VariantStatistics.Accumulator()
                t.statisticsInit = stored.initIndex
            }
            t.statistics.add(VariantStatistics.Sample(bytes: info.byteCount, duration: info.duration,
                                                      videoSamples: info.videoSampleCount))
            s.tracks[r] = t
            if !s.multivariantWritten, s.tracks.allSatisfy({ $0.segmentCount > 0 }) {
                try writeMultivariant(s)
                s.multivariantWritten = true
            }
        case .event(let e):
            _ = s.events.add(e)
        case .part:
            break
        case .end:
            break  // `consume` calls `finish()` once the lock is released
        }
    }

    /// Appends one segment's lines to its playlist (creating the playlist with its first segment).
    private func list(_ stored: StoredSegment<Void>, _ r: Int, _ s: inout State) throws {
        let scheme = s.renditions[r].scheme
        var segment = PlaylistSegment(sequence: stored.sequence, uri: scheme.segmentURI(stored.sequence),
                                      duration: stored.info.duration, programDateTime: stored.info.programDateTime,
                                      discontinuity: stored.discontinuity, mapURI: scheme.mapURI(stored.initIndex))
        segment.key = stored.info.encryption?.playlistKey()
        let ranges = dateRangeLines(stored, r, &s)
        let playlistPath = path(scheme.playlistURI)
        let needed = MediaPlaylist.roundedDuration(stored.info.duration)
        if s.tracks[r].fd < 0 {
            // The first segment: the header (with the map in force) and its lines, written whole, then renamed
            // into place.
            let target = max(s.policy.targetDuration, needed)
            var playlist = MediaPlaylist(targetDuration: target, mapURI: scheme.mapURI(stored.initIndex),
                                         playlistType: .event, segments: [segment])
            playlist.dateRanges = ranges
            try MediaFiles.replace(Array(playlist.render().utf8), at: playlistPath)
            s.tracks[r].fd = try MediaFiles.openForAppending(playlistPath)
            s.tracks[r].headerTarget = target
            s.tracks[r].mapInForce = playlist.mapURI ?? ""
            s.tracks[r].keyInForce = segment.key
            return
        }
        if needed > s.tracks[r].headerTarget {
            // Rare (see the type's comment): the header changes, so the whole file is rewritten.
            var playlist = try readPlaylist(playlistPath)
            playlist.targetDuration = needed
            playlist.segments.append(segment)
            // The parser keeps no dateranges: the latest of each, in start order.
            playlist.dateRanges = s.tracks[r].dateRanges.values.sorted { ($0.startDate, $0.id) < ($1.startDate, $1.id) }
            try rewrite(playlist, r, &s)
            return
        }
        var lines = ranges.map { $0.line + "\n" }.joined()
        var mapRange: PlaylistByteRange?
        var track = s.tracks[r]
        MediaPlaylist.renderSegment(segment, mapInForce: &track.mapInForce, mapRangeInForce: &mapRange,
                                    keyInForce: &track.keyInForce, into: &lines)
        s.tracks[r] = track
        try MediaFiles.writeAll(s.tracks[r].fd, Array(lines.utf8), path: playlistPath)
    }

    /// The dateranges to write before segment `stored` of rendition `r`: those started by its end whose line is new
    /// or changed since last written (a break's end adds DURATION and SCTE35-IN under the same ID).
    private func dateRangeLines(_ stored: StoredSegment<Void>, _ r: Int, _ s: inout State) -> [DateRange] {
        guard !s.events.events.isEmpty, let pdt = stored.info.programDateTime else { return [] }
        let d = stored.info.duration
        let end = WallClock(millisecondsSince1970: pdt.millisecondsSince1970 + MediaTime.rescale(d.value, from: d.timescale, to: 1000))
        _ = s.events.elapse(to: end)
        var out: [DateRange] = []
        for e in s.events.events where e.startDate < end {
            let range = PlaylistBuilder.dateRange(e)
            guard s.tracks[r].dateRanges[e.id] != range else { continue }
            s.tracks[r].dateRanges[e.id] = range
            out.append(range)
        }
        return out
    }

    /// Replaces rendition `r`'s playlist with `playlist` and reopens it for appending.
    private func rewrite(_ playlist: MediaPlaylist, _ r: Int, _ s: inout State) throws {
        let playlistPath = path(s.renditions[r].scheme.playlistURI)
        try MediaFiles.replace(Array(playlist.render().utf8), at: playlistPath)
        close(s.tracks[r].fd)
        s.tracks[r].fd = try MediaFiles.openForAppending(playlistPath)
        s.tracks[r].headerTarget = playlist.targetDuration
        s.tracks[r].mapInForce = playlist.segments.last(where: { $0.mapURI != nil })?.mapURI ?? playlist.mapURI ?? ""
        s.tracks[r].keyInForce = playlist.segments.last?.key
    }

    private func writeKey(_ key: ContentKey) throws {
        let keyPath = path(URIScheme.keyURI(key.id))
        try FileManager.default.createDirectory(atPath: (keyPath as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try MediaFiles.write(key.bytes, to: keyPath)
        chmod(keyPath, 0o600)
    }

    private func readPlaylist(_ playlistPath: String) throws -> MediaPlaylist {
        guard let data = FileManager.default.contents(atPath: playlistPath), let text = String(data: data, encoding: .utf8) else {
            throw RecorderError.cannotRead(playlistPath)
        }
        return try MediaPlaylist.parse(text)
    }

    private func writeMultivariant(_ s: State) throws {
        guard let layout = index.layout,
              let multivariant = PlaylistBuilder.multivariant(layout.renditions, layout.snapshots(),
                                                              statistics: s.tracks.map(\.statistics.result)) else { return }
        try MediaFiles.replace(Array(multivariant.render().utf8), at: path("index.m3u8"))
    }

    /// Ends the recording: every playlist becomes VOD with `EXT-X-ENDLIST`, `index.m3u8` gets the bit rates
    /// measured over the whole recording, then the finish hook runs. Idempotent; events after it are ignored.
    /// Also after a write error: what was recorded until then is made complete.
    public func finish() {
        let summary: RecordingSummary? = state.withLock { s in
            guard !s.finished else { return nil }
            s.finished = true
            index.finish()
            do {
                for r in s.tracks.indices where s.tracks[r].fd >= 0 {
                    var playlist = try readPlaylist(path(s.renditions[r].scheme.playlistURI))
                    playlist.playlistType = .vod
                    playlist.endList = true
                    try MediaFiles.replace(Array(playlist.render().utf8), at: path(s.renditions[r].scheme.playlistURI))
                    close(s.tracks[r].fd)
                    s.tracks[r].fd = -1
                }
                if s.tracks.allSatisfy({ $0.segmentCount > 0 }) { try writeMultivariant(s) }
            } catch {
                logger.error("recording: cannot end the playlists: \(error)")
                return nil
            }
            let renditions = s.tracks.indices.map { r in
                RecordingSummary.RenditionRecording(rendition: s.renditions[r], inits: s.tracks[r].inits,
                                                    timeline: s.tracks[r].timeline, segmentCount: s.tracks[r].segmentCount,
                                                    statistics: s.tracks[r].statistics.result, encryption: s.tracks[r].encryption)
            }
            return RecordingSummary(directory: directory, policy: s.policy, renditions: renditions)
        }
        guard let summary else { return }
        logger.info("recording ended: \(summary.renditions.first?.segmentCount ?? 0) segments in \(directory.path)")
        do {
            // AES-128 has no DASH signalling.
            if summary.renditions.contains(where: { $0.encryption?.method == .aes128 }) {
                logger.notice("recording: no manifest.mpd (whole-segment AES-128 has no DASH signalling)")
            } else if let mpd = summary.manifest() {
                try MediaFiles.replace(Array(mpd.render().utf8), at: path("manifest.mpd"))
            } else if summary.renditions.contains(where: { $0.inits.count > 1 }) {
                logger.notice("recording: no manifest.mpd (the codec changed mid-stream; DASH here has one Period)")
            }
        } catch {
            logger.error("recording: cannot write manifest.mpd: \(error)")
        }
        do {
            try onFinish?(summary)
        } catch {
            logger.error("recording: finish hook failed: \(error)")
        }
    }

    private func path(_ uri: String) -> String { directory.appendingPathComponent(uri).path }

    private func createDirectory(_ uri: String) throws {
        let p = path(uri)
        guard mkdir(p, 0o755) == 0 || errno == EEXIST else { throw MediaFileError(path: p, errno: errno) }
    }
}

public enum RecorderError: Error, Equatable, CustomStringConvertible {
    case notEmpty(String)
    case notADirectory(String)
    case cannotCreate(String, String)
    case cannotRead(String)

    public var description: String {
        switch self {
        case .notEmpty(let p): "recording directory '\(p)' is not empty (a recording starts in an empty directory)"
        case .notADirectory(let p): "recording directory '\(p)' is a file"
        case .cannotCreate(let p, let why): "cannot create recording directory '\(p)': \(why)"
        case .cannotRead(let p): "cannot read back '\(p)'"
        }
    }
}
