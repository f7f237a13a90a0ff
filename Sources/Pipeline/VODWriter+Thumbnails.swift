import Foundation
import MediaPresentation

extension VODWriter {
    /// `--thumbnails`: each sheet (`thumbnails/N.jpg`), the image playlist (`EXT-X-PLAYLIST-TYPE:VOD`) and the WebVTT
    /// list, from the finished sheets; the snapshot, for the multivariant playlist and the MPD (`nil`: none).
    func writeThumbnails() throws -> TileSheets<[UInt8]>.Snapshot? {
        guard let thumbnails else { return nil }
        let snap = thumbnails.snapshot()
        guard let playlist = ThumbnailManifests.imagePlaylist(snap, playlistType: .vod) else { return nil }
        if let first = snap.sheets.first {
            let path = directory.appendingPathComponent(ThumbnailManifests.sheetURI(first.info.number)).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
        }
        for s in snap.sheets {
            try MediaFiles.write(s.payload, to: directory.appendingPathComponent(ThumbnailManifests.sheetURI(s.info.number)).path)
        }
        try MediaFiles.write(Array(playlist.render().utf8), to: directory.appendingPathComponent(ThumbnailManifests.playlistURI).path)
        try MediaFiles.write(Array(ThumbnailManifests.vtt(snap).utf8), to: directory.appendingPathComponent(ThumbnailManifests.vttURI).path)
        return snap
    }
}
