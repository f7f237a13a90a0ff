import MediaPresentation

extension Route {
    /// The thumbnail objects of a stream with `--thumbnails` (names from `ThumbnailManifests`, the one place they are
    /// built): `thumbnails.m3u8` (HLS Image Media Playlist), `thumbnails.vtt` (WebVTT sprites), `thumbnails/N.jpg`.
    enum TileObject: Sendable, Equatable {
        case playlist
        case vtt
        case sheet(Int64)

        init?(_ path: Substring) {
            switch path {
            case Substring(ThumbnailManifests.playlistURI): self = .playlist
            case Substring(ThumbnailManifests.vttURI): self = .vtt
            default:
                guard let n = ThumbnailManifests.sheetNumber(path) else { return nil }
                self = .sheet(n)
            }
        }

        /// The metrics' `kind` label.
        var label: String {
            switch self {
            case .playlist, .vtt: "playlist"
            case .sheet: "thumbnail"
            }
        }
    }
}
