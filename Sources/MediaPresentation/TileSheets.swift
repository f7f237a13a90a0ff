import MediaCore
import Synchronization

/// Where thumbnail tiles sit, in a sheet and in time (trick play, issue 24 §2).
///
/// A sheet is one JPEG of `columns` × `rows` tiles, filled row by row (tile 0 top left, tile `columns` the first of
/// the second row), each `tileWidth` × `tileHeight`: the htiles × vtiles grid of DASH-IF IOP 4.3 §6.2.6 (`value` of
/// the `thumbnail_tile` descriptor) and the HLS Image Media Playlist's `LAYOUT=<columns>x<rows>`.
/// Tile `k` of the stream shows the picture at `k × interval` on the media timeline (the segments' `tfdt`), and lies
/// in sheet `k / tilesPerSheet`. Times are integer ticks of `interval.timescale` (the video track's).
public struct TileGrid: Sendable, Equatable {
    public var columns: Int
    public var rows: Int
    public var tileWidth: Int
    public var tileHeight: Int
    /// One tile's time span, in the video track's timescale.
    public var interval: MediaTime

    public init(columns: Int, rows: Int, tileWidth: Int, tileHeight: Int, interval: MediaTime) {
        precondition(columns > 0 && rows > 0 && tileWidth > 0 && tileHeight > 0, "TileGrid: empty grid")
        precondition(interval.value > 0 && interval.timescale > 0, "TileGrid: the interval must be positive")
        self.columns = columns
        self.rows = rows
        self.tileWidth = tileWidth
        self.tileHeight = tileHeight
        self.interval = interval
    }

    public var tilesPerSheet: Int { columns * rows }
    public var sheetWidth: Int { columns * tileWidth }
    public var sheetHeight: Int { rows * tileHeight }
    /// A full sheet's time span.
    public var sheetDuration: MediaTime { MediaTime(value: interval.value * Int64(tilesPerSheet), timescale: interval.timescale) }

    /// The pixel rectangle of tile `index` (0 ..< tilesPerSheet) in its sheet, row-major.
    public func rect(ofTile index: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        precondition((0..<tilesPerSheet).contains(index), "TileGrid: tile \(index) is outside the sheet")
        return ((index % columns) * tileWidth, (index / columns) * tileHeight, tileWidth, tileHeight)
    }

    /// When tile `k` of the stream starts.
    public func start(ofTile k: Int64) -> MediaTime { MediaTime(value: k * interval.value, timescale: interval.timescale) }

    /// The tiles whose start lies in `[start, start + duration)` (a segment's span): each shows that segment's
    /// keyframe. Times in other timescales are converted (rounding up: a tile starts at or after the segment start).
    public func tiles(startingIn start: MediaTime, duration: MediaTime) -> Range<Int64> {
        let s = start.converted(to: interval.timescale, rounding: .up).value
        let e = (start + duration).converted(to: interval.timescale, rounding: .up).value
        return Self.ceilDiv(s, interval.value)..<Self.ceilDiv(e, interval.value)
    }

    /// The tile height that keeps the display aspect of a `width` × `height` picture (pixel aspect `sar`) at
    /// `tileWidth` wide; even, for 4:2:0 chroma.
    public static func tileHeight(tileWidth: Int, width: Int, height: Int, sar: Rational = Rational(1, 1)) -> Int {
        let sar = sar.isValid ? sar : Rational(1, 1)
        let displayWidth = max(1, width * Int(sar.numerator) / Int(sar.denominator))
        return max(2, (height * tileWidth / displayWidth + 1) & ~1)
    }

    static func ceilDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? (a + b - 1) / b : -((-a) / b) }
}

/// One published sheet: its number (sheet `n` holds tiles `n × tilesPerSheet …`) and how many of its tiles are
/// filled from its first (all but the stream's last sheet are full).
public struct TileSheetInfo: Sendable, Equatable {
    public var number: Int64
    public var tileCount: Int
    public init(number: Int64, tileCount: Int) {
        self.number = number
        self.tileCount = tileCount
    }

    public func start(_ grid: TileGrid) -> MediaTime { grid.start(ofTile: number * Int64(grid.tilesPerSheet)) }
    public func duration(_ grid: TileGrid) -> MediaTime {
        MediaTime(value: grid.interval.value * Int64(tileCount), timescale: grid.interval.timescale)
    }
}

/// A stream's thumbnail sheets, as its segments are kept: one writer (the tiler, on the producer's thread) publishes
/// each sheet once, made into a `Payload` once (the origin's prepared buffer, a file's bytes); readers take an
/// immutable snapshot. Live, a sheet leaves once it ends before the newest sheet's start minus `retention` (the
/// window's span: sheets leave with the window); `nil` keeps every sheet (`package`).
public final class TileSheets<Payload: Sendable>: Sendable {
    public struct Stored: Sendable {
        public var info: TileSheetInfo
        /// The JPEG's size (the image playlist's BANDWIDTH).
        public var byteCount: Int
        public var payload: Payload
    }
    public struct Snapshot: Sendable {
        /// `nil` until the first picture set the tile size.
        public var grid: TileGrid?
        public var sheets: [Stored] = []
        /// The stream ended: no sheet will follow (`EXT-X-ENDLIST`).
        public var finished = false
        /// Moves with every change (playlist caches).
        public var version: UInt64 = 0

        public func sheet(_ number: Int64) -> Stored? {
            guard let first = sheets.first, number >= first.info.number else { return nil }
            let i = Int(number - first.info.number)
            return i < sheets.count && sheets[i].info.number == number ? sheets[i] : sheets.first { $0.info.number == number }
        }
    }

    public let retention: MediaTime?
    private let make: @Sendable ([UInt8]) -> Payload
    private let state = Mutex(Snapshot())

    public init(retention: MediaTime?, make: @escaping @Sendable ([UInt8]) -> Payload) {
        self.retention = retention
        self.make = make
    }

    public func snapshot() -> Snapshot { state.withLock { $0 } }

    /// The tile size and timing, once, before the first sheet.
    public func setGrid(_ grid: TileGrid) { state.withLock { $0.grid = grid; $0.version &+= 1 } }

    /// A finished sheet (made into its payload here, outside the lock). A sheet number not above the last is ignored.
    public func publish(_ info: TileSheetInfo, jpeg: [UInt8]) {
        let payload = make(jpeg)
        state.withLock { s in
            guard let grid = s.grid, s.sheets.last.map({ info.number > $0.info.number }) ?? true else { return }
            s.sheets.append(Stored(info: info, byteCount: jpeg.count, payload: payload))
            if let retention {
                let oldest = info.start(grid) - retention
                s.sheets.removeAll { $0.info.start(grid) + $0.info.duration(grid) <= oldest }
            }
            s.version &+= 1
        }
    }

    public func finish() { state.withLock { $0.finished = true; $0.version &+= 1 } }
}

/// Where a tiler puts what it makes: the live origin's `TileSheets`, a VOD writer's.
public protocol TileSheetSink: Sendable {
    func setGrid(_ grid: TileGrid)
    func publish(_ info: TileSheetInfo, jpeg: [UInt8])
    func finish()
}

extension TileSheets: TileSheetSink {}
