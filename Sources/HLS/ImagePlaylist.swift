import MediaCore

/// One `EXT-X-IMAGE-STREAM-INF` tag of a multivariant playlist, naming an Image Media Playlist of thumbnail sheets (the
/// HLS Image Media Playlist spec v0.4, github.com/image-media-playlist/spec, which Roku's trick mode reads; Roku's
/// "HLS and DASH" trick-mode page):
///
/// ```
/// #EXT-X-IMAGE-STREAM-INF:BANDWIDTH=12000,RESOLUTION=160x90,CODECS="jpeg",URI="thumbnails.m3u8"
/// ```
///
/// BANDWIDTH is the image playlist's peak bit rate, RESOLUTION one tile's size, CODECS `jpeg`, URI the image
/// playlist. The tag "stands alone, in that it does not apply to a particular URI in the Master Playlist" (as
/// encoding.com's summary of the spec puts it); players that do not know it ignore it (RFC 8216 §4: unknown tags
/// are ignored).
public struct ImageStream: Sendable, Equatable {
    public var bandwidth: Int
    /// One tile's size.
    public var resolution: VariantStream.Resolution
    public var codecs = "jpeg"
    public var uri: String

    public init(bandwidth: Int, resolution: VariantStream.Resolution, uri: String) {
        self.bandwidth = bandwidth
        self.resolution = resolution
        self.uri = uri
    }

    /// The tag line (no line break).
    public func render() -> String {
        "#EXT-X-IMAGE-STREAM-INF:BANDWIDTH=\(bandwidth),RESOLUTION=\(resolution.width)x\(resolution.height)"
            + ",CODECS=" + AttributeList.quoted(codecs) + ",URI=" + AttributeList.quoted(uri)
    }
}

/// An Image Media Playlist (HLS Image Media Playlist spec v0.4 §3.2–§3.4): a media playlist whose segments are JPEG
/// sheets of tiles.
///
/// ```
/// #EXTM3U
/// #EXT-X-VERSION:7
/// #EXT-X-TARGETDURATION:25
/// #EXT-X-MEDIA-SEQUENCE:3
/// #EXT-X-IMAGES-ONLY
/// #EXT-X-TILES:RESOLUTION=160x90,LAYOUT=5x5,DURATION=1.0
/// #EXTINF:25.0,
/// thumbnails/3.jpg
/// ```
///
/// `EXT-X-IMAGES-ONLY` marks a playlist whose segments are all images. As Brightcove's description of the Roku-compatible
/// playlists has it: "The #EXT-X-TILES tag specifies the resolution, layout (number of rows and columns), and
/// duration of each sprite tile. … Each #EXTINF tag specifies the duration covered by the corresponding sprite sheet
/// tile." So per sheet: `EXT-X-TILES` with RESOLUTION (one tile's size), LAYOUT (`<columns>x<rows>`) and DURATION
/// (one tile's seconds), then `EXTINF` = the sheet's span (tiles × DURATION; the last sheet of an ended stream may
/// hold fewer tiles), then the sheet's URI; both tags apply to the URI that follows them (published playlists put
/// them in either order). Durations are written from integer ticks (`HLSFormat.decimalSeconds`), never through
/// `Double`.
public struct ImagePlaylist: Sendable, Equatable {
    public struct Sheet: Sendable, Equatable {
        public var duration: MediaTime
        public var uri: String
        public init(duration: MediaTime, uri: String) {
            self.duration = duration
            self.uri = uri
        }
    }

    public var tileResolution: VariantStream.Resolution
    public var columns: Int
    public var rows: Int
    public var tileDuration: MediaTime
    public var mediaSequence: Int64
    public var playlistType: MediaPlaylist.PlaylistType?
    public var sheets: [Sheet]
    public var endList: Bool

    public init(tileResolution: VariantStream.Resolution, columns: Int, rows: Int, tileDuration: MediaTime,
                mediaSequence: Int64, playlistType: MediaPlaylist.PlaylistType? = nil, sheets: [Sheet], endList: Bool) {
        self.tileResolution = tileResolution
        self.columns = columns
        self.rows = rows
        self.tileDuration = tileDuration
        self.mediaSequence = mediaSequence
        self.playlistType = playlistType
        self.sheets = sheets
        self.endList = endList
    }

    /// RFC 8216bis §4.4.3.1: the EXTINF durations rounded to the nearest integer must not exceed it; a full sheet's
    /// duration when none is listed yet.
    public var targetDuration: Int {
        let full = MediaTime(value: tileDuration.value * Int64(columns * rows), timescale: tileDuration.timescale)
        return MediaPlaylist.targetDuration(for: sheets.isEmpty ? [full] : sheets.map(\.duration))
    }

    public func render() -> String {
        var out = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:\(targetDuration)\n"
        out += "#EXT-X-MEDIA-SEQUENCE:\(mediaSequence)\n"
        if let t = playlistType { out += "#EXT-X-PLAYLIST-TYPE:\(t.rawValue)\n" }
        out += "#EXT-X-IMAGES-ONLY\n"
        let tiles = "#EXT-X-TILES:RESOLUTION=\(tileResolution.width)x\(tileResolution.height),LAYOUT=\(columns)x\(rows)"
            + ",DURATION=" + HLSFormat.decimalSeconds(tileDuration) + "\n"
        for s in sheets {
            out += tiles
            out += "#EXTINF:" + HLSFormat.decimalSeconds(s.duration) + ",\n" + s.uri + "\n"
        }
        if endList { out += "#EXT-X-ENDLIST\n" }
        return out
    }
}
