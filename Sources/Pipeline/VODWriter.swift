import Foundation
import HLS
import ISOBMFF
import MediaCore
import MediaPresentation
import Synchronization

/// Writes a VOD presentation to a directory, in the same layout the live origin serves: per rendition its init
/// segment(s), segments and media playlist (`EXT-X-PLAYLIST-TYPE:VOD`, `EXT-X-ENDLIST`), per video rendition its
/// I-frame playlist (byte ranges of the same segments), `index.m3u8`, and a static DASH `manifest.mpd` over the same
/// segments.
/// Playlists come from the same window snapshots and builders as live ones; they are written once every segment
/// is on disk.
///
/// With `singleFile`, each rendition is one CMAF file instead (`SingleFileWriter`): its init segment, a `sidx`,
/// then every segment, addressed by byte ranges in the playlists; `singleFiles` then says where each part sits.
public final class VODWriter: PresentationConsumer, Sendable {
    public let directory: URL
    /// `directory`'s path: a segment's is this plus its URI (Foundation's `URL.appendingPathComponent` stats the
    /// result to decide on a trailing slash: 4% of `package`'s CPU at 600 segments).
    private let directoryPath: String
    private let presentation: Presentation<Void>
    private let singleFile: SingleFileOptions?
    /// One per rendition in single-file mode (created with its init segment).
    private let files = Mutex<[SingleFileWriter?]>([])
    private let indexes = Mutex<[SingleFileIndex]>([])
    /// Segments are written on a thread of their own (`FileWriterQueue`): the kernel's file work overlaps the demuxing.
    private let writes = FileWriterQueue()
    /// `--thumbnails`: the sheets, written with the playlists (`writeThumbnails`).
    public let thumbnails: TileSheets<[UInt8]>?
    /// Content keys written to `keys/` (an encrypted presentation: `URIScheme.keyURI`, beside the playlists).
    private let keysWritten = Mutex<Set<UInt64>>([])

    /// Its manifest.mpd carries DASH trick-mode sets.
    private let dashTrickMode: Bool

    public init(directory: URL, singleFile: SingleFileOptions? = nil, thumbnails: TileSheets<[UInt8]>? = nil,
                dashTrickMode: Bool = false) throws {
        self.directory = directory
        directoryPath = directory.path
        self.singleFile = singleFile
        self.thumbnails = thumbnails
        self.dashTrickMode = dashTrickMode
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        presentation = Presentation(windowSize: 1, playlistType: .vod, payloads: .none)
    }

    /// Single-file mode, after `finish()`: where the init segment and the `sidx` of each rendition's file sit, in
    /// the order of the layout's renditions (for a DASH `SegmentBase`: `Initialization@range` and `indexRange`).
    /// Empty otherwise.
    public var singleFiles: [SingleFileIndex] { indexes.withLock { $0 } }

    /// The renditions, once the producer announced them.
    public var renditions: [Rendition] { presentation.layout?.renditions ?? [] }

    public func consume(_ event: PresentationEvent) throws {
        switch event {
        case .layout(let renditions, let policy):
            // WebVTT subtitle renditions stay files of their own in single-file mode (a segment each, no init).
            for r in renditions where !r.scheme.directory.isEmpty && (singleFile == nil || !r.scheme.hasInitSegment) {
                try FileManager.default.createDirectory(at: directory.appendingPathComponent(r.scheme.directory),
                                                        withIntermediateDirectories: true)
            }
            if singleFile != nil {
                files.withLock { $0 = Array(repeating: nil, count: renditions.count) }
            }
            // Whole segments only: a VOD playlist lists no LL-HLS parts.
            try presentation.consume(.layout(renditions, TimingPolicy(targetDuration: policy.targetDuration,
                                                                      segmentDuration: policy.segmentDuration)))
        case .initSegment(let r, let bytes, let tracks):
            try presentation.consume(event)
            guard let layout = presentation.layout, let index = layout.windows[r].snapshot().inits.last?.index,
                  layout.renditions[r].scheme.hasInitSegment else { return }
            if let singleFile {
                try openSingleFile(r, layout.renditions[r], bytes, tracks, singleFile)
            } else {
                try write(bytes, to: layout.renditions[r].scheme.initURI(index))
            }
        case .segment(let r, let info, let bytes):
            guard let layout = presentation.layout, layout.renditions.indices.contains(r) else {
                throw PresentationError.unknownRendition(r)
            }
            if singleFile != nil, layout.renditions[r].scheme.hasInitSegment {
                let (file, offset) = try files.withLock { files in
                    guard let f = files[r] else { throw PresentationError.unknownRendition(r) }
                    return (f, f.reserve(bytes.count))
                }
                try writes.write(bytes) { try file.write($0, at: offset) }
            } else {
                let path = directoryPath + "/" + layout.renditions[r].scheme.segmentURI(info.sequence)
                try writes.write(bytes) { try MediaFiles.write($0, to: path) }
            }
            // Only AES-128's key is the origin's to hand out; a CENC key belongs to a licence server.
            if let e = info.encryption, e.method == .aes128 { try writeKey(e.key) }
            try presentation.consume(event)
        case .part:
            break
        case .event, .end:
            // The VOD playlist lists the events its segments span (an EVENT/VOD window keeps every one).
            try presentation.consume(event)
        }
    }

    private func openSingleFile(_ r: Int, _ rendition: Rendition, _ bytes: [UInt8], _ tracks: [TrackFormat],
                                _ options: SingleFileOptions) throws {
        try files.withLock { files in
            if let existing = files[r] {
                // The same init again is no change; a new one would need a second file (and a discontinuity).
                guard existing.initBytes == bytes else { throw SingleFileError.codecChange(rendition.name) }
                return
            }
            let reference = tracks.first { $0.kind == .video } ?? tracks.first
            files[r] = try SingleFileWriter(
                path: directory.appendingPathComponent(rendition.scheme.singleFileURI).path,
                uri: rendition.scheme.singleFileURI, initBytes: bytes, referenceID: reference?.trackID ?? 1,
                reservedReferences: options.reservedReferences())
        }
    }

    /// Writes the playlists once every segment is on disk (in single-file mode, first the `sidx` of every file).
    /// Returns the number of segments of the first rendition.
    @discardableResult
    public func finish() throws -> Int {
        try writes.drain()
        presentation.finish()
        guard let layout = presentation.layout else { return 0 }
        let snapshots = layout.snapshots()
        guard let first = snapshots.first, !first.window.isEmpty else { return 0 }
        var singles: [SingleFileIndex?] = Array(repeating: nil, count: snapshots.count)
        if singleFile != nil {
            let writers = files.withLock { $0 }
            for (r, snap) in snapshots.enumerated() {
                guard let w = writers[r] else { continue }
                singles[r] = try w.finish(segments: snap.window.map(\.info))
            }
            indexes.withLock { $0 = singles.compactMap { $0 } }
        }
        for (r, snap) in snapshots.enumerated() {
            let scheme = layout.renditions[r].scheme
            guard let playlist = PlaylistBuilder.mediaPlaylist(snap, scheme: scheme, playlistType: .vod,
                                                               singleFile: singles[r]) else { continue }
            try write(Array(playlist.render().utf8), to: scheme.playlistURI)
            // Byte ranges of the same segments (or of the one file): a video rendition's I-frames cost one playlist.
            if layout.renditions[r].kind != .audio,
               let iFrames = PlaylistBuilder.iFramePlaylist(snap, scheme: scheme, playlistType: .vod, singleFile: singles[r]) {
                try write(Array(iFrames.render().utf8), to: scheme.iFramePlaylistURI)
            }
        }
        let tiles = try writeThumbnails()
        if var multivariant = PlaylistBuilder.multivariant(layout.renditions, snapshots, iFrames: true) {
            if let tiles { ThumbnailManifests.add(tiles, to: &multivariant) }
            try write(Array(multivariant.render().utf8), to: "index.m3u8")
        }
        let mpd = singleFile == nil ? ManifestBuilder.onDemand(layout.renditions, snapshots, trickMode: dashTrickMode)
            : ManifestBuilder.singleFile(layout.renditions, snapshots, files: singles)
        // Whole-segment AES-128 has no DASH signalling: no manifest.mpd for an encrypted presentation.
        if var mpd, !snapshots.contains(where: { $0.encryption == .aes128 }) {
            if let tiles { ThumbnailManifests.add(tiles, to: &mpd) }
            try write(Array(mpd.render().utf8), to: "manifest.mpd")
        }
        return first.window.count
    }

    /// `keys/<N>.key` (16 bytes, mode 0600) the first time a segment uses key N.
    private func writeKey(_ key: ContentKey) throws {
        guard keysWritten.withLock({ $0.insert(key.id).inserted }) else { return }
        let url = directory.appendingPathComponent(URIScheme.keyURI(key.id))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try write(key.bytes, to: URIScheme.keyURI(key.id))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }

    private func write(_ bytes: [UInt8], to name: String) throws {
        try MediaFiles.write(bytes, to: directory.appendingPathComponent(name).path)
    }

    private func write(_ bytes: MediaBytes, to name: String) throws {
        try MediaFiles.write(bytes, to: directory.appendingPathComponent(name).path)
    }
}

/// `package --single-file`.
public struct SingleFileOptions: Sendable {
    /// The input's duration when known (a file), to reserve room for the `sidx` ahead of the segments.
    public var expectedDuration: @Sendable () -> MediaTime?
    public var segmentDuration: MediaTime

    public init(segmentDuration: MediaTime, expectedDuration: @escaping @Sendable () -> MediaTime?) {
        self.segmentDuration = segmentDuration
        self.expectedDuration = expectedDuration
    }

    /// Segments are cut at the first keyframe at least one segment duration in, so a file has at most
    /// ⌈duration / segment duration⌉ + 1 of them; an eighth more plus 8 covers timestamps that run past the
    /// container's duration. Unknown duration (a pipe): 256 (12 bytes each). Too few only costs a rewrite.
    func reservedReferences() -> Int {
        guard let d = expectedDuration(), d.value > 0, segmentDuration.value > 0 else { return 256 }
        let micros = MediaTime.rescale(d.value, from: d.timescale, to: 1_000_000, rounding: .up)
        let segMicros = max(1, MediaTime.rescale(segmentDuration.value, from: segmentDuration.timescale, to: 1_000_000))
        let n = Int(clamping: (micros + segMicros - 1) / segMicros) + 1
        return min(n + n / 8 + 8, Int(UInt16.max))
    }
}

public enum SingleFileError: Error, Equatable, CustomStringConvertible {
    case codecChange(String)
    case sizeMismatch(String)

    public var description: String {
        switch self {
        case .codecChange(let n):
            "rendition '\(n)' changes codec parameters mid-stream; --single-file holds one init segment per file"
        case .sizeMismatch(let p): "'\(p)': the segments written differ from the segments listed"
        }
    }
}
