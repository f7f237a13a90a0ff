import FFmpegBridge
import Logging
import MediaCore
import MediaPresentation
import Synchronization

/// Thumbnail tiles (`--thumbnails`): how many, how big, how often.
public struct ThumbnailSettings: Sendable, Equatable {
    public var columns = 5
    public var rows = 5
    public var tileWidth = 160
    /// One tile's time span; `nil`: the segment duration (one tile per segment).
    public var interval: MediaTime?
    /// MJPEG quantizer (2 best … 31 worst).
    public var quality = 5
    public init() {}
}

/// Makes thumbnail sheets from the segments as they are published (a `PresentationConsumer`, placed before the
/// outputs in the fan-out so a sheet is listed no later than the segment that completed it).
///
/// Every segment opens with a keyframe, and the segmenter hands it forward (`SegmentInfo.keyframeSample`): the tiler decodes
/// that one frame of the smallest video rendition (a ladder's lowest rung decodes fastest), whatever made the video —
/// copied, transcoded or a ladder — and scales it into each tile whose start lies in the segment (`TileGrid.tiles`).
/// With the default interval (the segment duration) that is one tile per segment, showing the frame at the tile's
/// start; a shorter interval than the keyframe spacing repeats the keyframe. One decode per segment, one JPEG per
/// sheet. A sheet is published once full (or, the last one, at the end of the stream): its bytes never change.
///
/// H.264, H.265 and AV1 (what the origin encodes and copies); a keyframe that does not decode is said once in the log
/// and its tiles stay black.
public final class ThumbnailTiler: PresentationConsumer, Sendable {
    private struct State {
        var renditions: [Rendition] = []
        /// The video track of each rendition's newest init segment.
        var formats: [Int: TrackFormat] = [:]
        var chosen: Int?
        var grid: TileGrid?
        var canvas: TileCanvas?
        /// The sheet being filled and how many of its tiles are filled (from its first).
        var sheet: (number: Int64, filled: Int)?
        var warned = false
    }
    public let settings: ThumbnailSettings
    private let segmentDuration: MediaTime
    private let sink: any TileSheetSink
    private let logger: Logger
    // One writer (the producer's thread); the lock makes the class Sendable (TileCanvas is not, and never leaves it).
    private let state: Mutex<State>

    public init(settings: ThumbnailSettings, segmentDuration: MediaTime, sink: any TileSheetSink, logger: Logger) {
        self.settings = settings
        self.segmentDuration = segmentDuration
        self.sink = sink
        self.logger = logger
        state = Mutex(State())
    }

    public func consume(_ event: PresentationEvent) throws {
        switch event {
        case .layout(let renditions, _):
            state.withLock { $0.renditions = renditions }
        case .initSegment(let r, _, let tracks):
            if let video = tracks.first(where: { $0.kind == .video }) { state.withLock { $0.formats[r] = video } }
        case .segment(let r, let info, _):
            state.withLock { s in
                do {
                    try tile(r, info, &s)
                } catch {
                    if !s.warned { logger.warning("thumbnail tiles: \(error)") }
                    s.warned = true
                }
            }
        case .end:
            state.withLock { s in
                do { try publish(&s) } catch { logger.warning("thumbnail tiles: \(error)") }
            }
            sink.finish()
        case .part, .event:
            break
        }
    }

    private func tile(_ r: Int, _ info: SegmentInfo, _ s: inout State) throws {
        if s.chosen == nil {
            // The smallest video rendition: every rendition's first init came before any segment.
            s.chosen = s.formats.min { $0.value.width * $0.value.height < $1.value.width * $1.value.height }?.key
        }
        guard r == s.chosen, let format = s.formats[r], let keyframe = info.keyframeSample else { return }
        switch format.codec {
        case .h264, .hevc, .av1: break
        default: return
        }
        let grid = try gridAndCanvas(format, timescale: info.startTime.timescale, &s)
        let perSheet = Int64(grid.tilesPerSheet)
        var bySheet: [Int64: [Int]] = [:]
        for k in grid.tiles(startingIn: info.startTime, duration: info.duration) {
            let n = Self.floorDiv(k, perSheet)
            bySheet[n, default: []].append(Int(k - n * perSheet))
        }
        for (number, indices) in bySheet.sorted(by: { $0.key < $1.key }) {
            if let current = s.sheet, current.number != number {
                // A later sheet begins: the one being filled is done (a timeline never goes back; if it did, skip).
                guard number > current.number else { continue }
                try publish(&s)
            }
            guard let canvas = s.canvas, let last = indices.max() else { continue }
            try canvas.place(format.codec, sample: keyframe, at: indices)
            let filled = max(s.sheet?.filled ?? 0, last + 1)
            s.sheet = (number, filled)
            if filled == grid.tilesPerSheet { try publish(&s) }
        }
    }

    /// The sheet being filled, as its JPEG, to the sink; the canvas cleared for the next.
    private func publish(_ s: inout State) throws {
        guard let sheet = s.sheet, let canvas = s.canvas else { return }
        s.sheet = nil
        defer { canvas.clear() }
        sink.publish(TileSheetInfo(number: sheet.number, tileCount: sheet.filled), jpeg: try canvas.jpeg(quality: settings.quality))
    }

    /// The grid from the first picture's track (tile height from its display aspect), set once.
    private func gridAndCanvas(_ format: TrackFormat, timescale: Int32, _ s: inout State) throws -> TileGrid {
        if let grid = s.grid { return grid }
        let width = max(2, settings.tileWidth & ~1)
        let height = TileGrid.tileHeight(tileWidth: width, width: format.width, height: format.height,
                                         sar: format.sampleAspectRatio)
        let interval = (settings.interval ?? segmentDuration).converted(to: timescale, rounding: .nearest)
        let grid = TileGrid(columns: settings.columns, rows: settings.rows, tileWidth: width, tileHeight: height,
                            interval: MediaTime(value: max(1, interval.value), timescale: timescale))
        s.canvas = try TileCanvas(columns: grid.columns, rows: grid.rows, tileWidth: width, tileHeight: height)
        s.grid = grid
        sink.setGrid(grid)
        return grid
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }
}
