import Foundation
import HLS
import MediaCore
import MediaPresentation

/// Writes a VOD presentation to a directory, in the same layout the live origin serves: per rendition its init
/// segment(s), segments and media playlist (`EXT-X-PLAYLIST-TYPE:VOD`, `EXT-X-ENDLIST`), and `index.m3u8`.
/// Playlists come from the same window snapshots and builders as live ones; they are written once every segment
/// is on disk.
public final class VODWriter: PresentationConsumer, Sendable {
    public let directory: URL
    private let presentation: Presentation<Void>

    public init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        presentation = Presentation(windowSize: 1, playlistType: .vod) { _, _ in () }
    }

    public func consume(_ event: PresentationEvent) throws {
        switch event {
        case .layout(let renditions, let policy):
            for r in renditions where !r.scheme.directory.isEmpty {
                try FileManager.default.createDirectory(at: directory.appendingPathComponent(r.scheme.directory),
                                                        withIntermediateDirectories: true)
            }
            // Whole segments only: a VOD playlist lists no LL-HLS parts.
            try presentation.consume(.layout(renditions, TimingPolicy(targetDuration: policy.targetDuration)))
        case .initSegment(let r, let bytes, _):
            try presentation.consume(event)
            guard let layout = presentation.layout, let index = layout.windows[r].snapshot().inits.last?.index else { return }
            try write(bytes, to: layout.renditions[r].scheme.initURI(index))
        case .segment(let r, let info, let bytes):
            guard let layout = presentation.layout, layout.renditions.indices.contains(r) else {
                throw PresentationError.unknownRendition(r)
            }
            try write(bytes, to: layout.renditions[r].scheme.segmentURI(info.sequence))
            try presentation.consume(event)
        case .part:
            break
        case .end:
            try presentation.consume(event)
        }
    }

    /// Writes the playlists once every segment is on disk. Returns the number of segments of the first rendition.
    @discardableResult
    public func finish() throws -> Int {
        presentation.finish()
        guard let layout = presentation.layout else { return 0 }
        let snapshots = layout.snapshots()
        guard let first = snapshots.first, !first.window.isEmpty else { return 0 }
        for (r, snap) in zip(layout.renditions, snapshots) {
            guard let playlist = PlaylistBuilder.mediaPlaylist(snap, scheme: r.scheme, playlistType: .vod) else { continue }
            try write(Array(playlist.render().utf8), to: r.scheme.playlistURI)
        }
        if let multivariant = PlaylistBuilder.multivariant(layout.renditions, snapshots) {
            try write(Array(multivariant.render().utf8), to: "index.m3u8")
        }
        return first.window.count
    }

    private func write(_ bytes: [UInt8], to name: String) throws {
        try MediaFiles.write(bytes, to: directory.appendingPathComponent(name).path)
    }
}
