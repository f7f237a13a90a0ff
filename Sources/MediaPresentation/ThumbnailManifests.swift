import DASH
import HLS
import MediaCore

/// The thumbnail sheets' names and listings, as pure functions of a `TileSheets` snapshot (like `PlaylistBuilder`
/// and `ManifestBuilder` for the media): the HLS Image Media Playlist and its `EXT-X-IMAGE-STREAM-INF`, the DASH
/// thumbnail AdaptationSet, and a WebVTT list of `#xywh` sprites for web players. Every URI is built here.
public enum ThumbnailManifests {
    public static let playlistURI = "thumbnails.m3u8"
    public static let vttURI = "thumbnails.vtt"
    static let sheetDirectory = "thumbnails/"

    public static func sheetURI(_ number: Int64) -> String { sheetDirectory + "\(number).jpg" }

    /// The sheet number `path` (relative to the presentation) names: `thumbnails/12.jpg` → 12.
    public static func sheetNumber(_ path: Substring) -> Int64? {
        guard path.hasPrefix(sheetDirectory), path.hasSuffix(".jpg") else { return nil }
        let digits = path.dropFirst(sheetDirectory.count).dropLast(4)
        guard let n = URIScheme.strictDecimal(digits), n <= UInt64(Int64.max) else { return nil }
        return Int64(n)
    }

    /// The multivariant playlist's `EXT-X-IMAGE-STREAM-INF`, once the tile size is known.
    public static func imageStream<P>(_ snap: TileSheets<P>.Snapshot, uriQuery: String = "") -> ImageStream? {
        guard let grid = snap.grid else { return nil }
        return ImageStream(bandwidth: peakBitRate(snap, grid),
                           resolution: .init(width: grid.tileWidth, height: grid.tileHeight),
                           uri: with(playlistURI, uriQuery))
    }

    /// The Image Media Playlist of the sheets kept; `EXT-X-ENDLIST` once the stream ended.
    public static func imagePlaylist<P>(_ snap: TileSheets<P>.Snapshot, playlistType: MediaPlaylist.PlaylistType? = nil,
                                        uriQuery: String = "") -> ImagePlaylist? {
        guard let grid = snap.grid else { return nil }
        return ImagePlaylist(tileResolution: .init(width: grid.tileWidth, height: grid.tileHeight),
                             columns: grid.columns, rows: grid.rows, tileDuration: grid.interval,
                             mediaSequence: snap.sheets.first?.info.number ?? 0, playlistType: playlistType,
                             sheets: snap.sheets.map { .init(duration: $0.info.duration(grid), uri: with(sheetURI($0.info.number), uriQuery)) },
                             endList: snap.finished)
    }

    /// A WebVTT file (W3C WebVTT §4) with one cue per filled tile, its payload `SHEET#xywh=x,y,w,h` (the W3C Media
    /// Fragments spatial dimension, §4.4, which web players' thumbnail plugins read). Cue times are the tiles' media
    /// times (the segments' `tfdt`), in milliseconds written from integer ticks.
    public static func vtt<P>(_ snap: TileSheets<P>.Snapshot, uriQuery: String = "") -> String {
        var out = "WEBVTT\n"
        guard let grid = snap.grid else { return out }
        for s in snap.sheets {
            let uri = with(sheetURI(s.info.number), uriQuery)
            let first = s.info.number * Int64(grid.tilesPerSheet)
            for i in 0..<s.info.tileCount {
                let r = grid.rect(ofTile: i)
                out += "\n" + timestamp(grid.start(ofTile: first + Int64(i))) + " --> "
                    + timestamp(grid.start(ofTile: first + Int64(i) + 1)) + "\n"
                out += uri + "#xywh=\(r.x),\(r.y),\(r.width),\(r.height)\n"
            }
        }
        return out
    }

    /// The DASH thumbnail AdaptationSet of the sheets kept (`nil` before the tile size is known or any sheet).
    public static func dashSet<P>(_ snap: TileSheets<P>.Snapshot, id: Int, uriQuery: String = "") -> MPD.ThumbnailSet? {
        guard let grid = snap.grid, let first = snap.sheets.first else { return nil }
        let timeline = MPD.TimelineEntry.compress(snap.sheets.map { ($0.info.start(grid).value, $0.info.duration(grid).value) })
        return MPD.ThumbnailSet(id: id, bandwidth: peakBitRate(snap, grid), columns: grid.columns, rows: grid.rows,
                                width: grid.sheetWidth, height: grid.sheetHeight, timescale: grid.interval.timescale,
                                media: with(sheetDirectory + "$Number$.jpg", uriQuery),
                                startNumber: UInt64(max(0, first.info.number)), timeline: timeline)
    }

    /// Lists the sheets in a multivariant playlist (its `EXT-X-IMAGE-STREAM-INF`) and in an MPD's first Period.
    public static func add<P>(_ snap: TileSheets<P>.Snapshot, to playlist: inout MultivariantPlaylist, uriQuery: String = "") {
        if let stream = imageStream(snap, uriQuery: uriQuery) { playlist.imageStreams.append(stream) }
    }

    public static func add<P>(_ snap: TileSheets<P>.Snapshot, to mpd: inout MPD, uriQuery: String = "") {
        guard !mpd.periods.isEmpty else { return }
        let id = (mpd.periods[0].adaptationSets.map(\.id).max() ?? 0) + 1
        mpd.periods[0].thumbnails = dashSet(snap, id: id, uriQuery: uriQuery)
    }

    /// `hh:mm:ss.ttt` (WebVTT §4.2 timestamps), rounded down to the millisecond.
    static func timestamp(_ t: MediaTime) -> String {
        let ms = max(0, MediaTime.rescale(t.value, from: t.timescale, to: 1000, rounding: .down))
        func pad(_ v: Int64, _ n: Int) -> String { let s = String(v); return String(repeating: "0", count: max(0, n - s.count)) + s }
        return pad(ms / 3_600_000, 2) + ":" + pad(ms / 60_000 % 60, 2) + ":" + pad(ms / 1000 % 60, 2) + "." + pad(ms % 1000, 3)
    }

    /// The largest sheet's bits per second of its span; before any sheet, a guess of a tenth of a byte per pixel.
    static func peakBitRate<P>(_ snap: TileSheets<P>.Snapshot, _ grid: TileGrid) -> Int {
        let full = grid.sheetDuration
        let bytes = snap.sheets.map(\.byteCount).max() ?? grid.sheetWidth * grid.sheetHeight / 10
        return max(1, Int(MediaTime.scale(Int64(bytes) * 8, by: Int64(full.timescale), over: max(1, full.value), rounding: .up)))
    }

    private static func with(_ uri: String, _ query: String) -> String { query.isEmpty ? uri : uri + "?" + query }
}
