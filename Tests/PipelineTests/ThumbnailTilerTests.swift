import Logging
import MediaCore
import MediaPresentation
import Synchronization
import Testing
@testable import Pipeline

/// `ThumbnailTiler` on real keyframes (one a second from the encoder, 1 fps; H.264, H.265 and AV1): which rendition it
/// decodes, which tiles each segment fills, when a sheet is published, what is left at the end.
@Suite("Thumbnail tiler", .timeLimit(.minutes(1)))
struct ThumbnailTilerTests {
    final class Sink: TileSheetSink {
        struct State {
            var grid: TileGrid?
            var sheets: [(info: TileSheetInfo, jpeg: [UInt8])] = []
            var finished = false
        }
        let state = Mutex(State())
        func setGrid(_ grid: TileGrid) { state.withLock { $0.grid = grid } }
        func publish(_ info: TileSheetInfo, jpeg: [UInt8]) { state.withLock { $0.sheets.append((info, jpeg)) } }
        func finish() { state.withLock { $0.finished = true } }
        var sheets: [TileSheetInfo] { state.withLock { $0.sheets.map(\.info) } }
    }

    /// `count` keyframes of a 128x72 picture, one a second (2 fps, a GOP of one second), and their track's format.
    static func keyframes(_ count: Int, codec: VideoCodecName = .h264) throws -> (TrackFormat, [Sample]) {
        var settings = VideoSettings()
        settings.codec = codec
        if codec == .h264 { settings.preset = "ultrafast" }
        let stage = try VideoEncodeStage(width: 128, height: 72, frameRate: Rational(2, 1), settings: settings,
                                         segmentDuration: .seconds(1), trackID: 1, timescale: 90_000, startupKeyframe: nil)
        var samples: [Sample] = []
        for k in 0..<2 * count {
            let luma = [UInt8](repeating: UInt8(40 + 15 * k % 200), count: 128 * 72)
            samples += try stage.encode(RawVideoFrame(width: 128, height: 72, y: luma, cb: .init(repeating: 128, count: 64 * 36),
                                                      cr: .init(repeating: 128, count: 64 * 36), pts: Int64(k) * 45_000))
        }
        samples += try stage.flush()
        let format = try #require(stage.format)
        let keys = samples.filter(\.isSync)
        try #require(keys.map(\.pts) == (0..<Int64(count)).map { $0 * 90_000 }, "\(codec): a keyframe a second")
        return (format, keys)
    }

    /// A ladder of two renditions: the big one's keyframes are garbage (decoding them would fail), the small one's real.
    static func run(_ settings: ThumbnailSettings, segments: Int, codec: VideoCodecName = .h264) throws -> Sink {
        let (small, keys) = try keyframes(segments, codec: codec)
        var big = small
        big.width = 1280
        big.height = 720
        let sink = Sink()
        let tiler = ThumbnailTiler(settings: settings, segmentDuration: .seconds(1), sink: sink, logger: Logger(label: "test"))
        try tiler.consume(.layout([Rendition(name: "720p", kind: .video, scheme: .nested("720p")),
                                   Rendition(name: "240p", kind: .video, scheme: .nested("240p"))], TimingPolicy(targetDuration: 1)))
        try tiler.consume(.initSegment(rendition: 0, bytes: [], tracks: [big]))
        try tiler.consume(.initSegment(rendition: 1, bytes: [], tracks: [small]))
        for (k, key) in keys.enumerated() {
            for (r, bytes) in [(0, [0, 0, 0, 2, 0x65, 0x88] as [UInt8]), (1, key.data)] {
                let info = SegmentInfo(sequence: UInt64(k), startTime: MediaTime(value: Int64(k) * 90_000, timescale: 90_000),
                                       duration: .seconds(1, timescale: 90_000), byteCount: 0, keyframeSample: bytes)
                try tiler.consume(.segment(rendition: r, info, bytes: MediaBytes()))
            }
        }
        try tiler.consume(.end)
        return sink
    }

    @Test(arguments: [VideoCodecName.h264, .hevc, .av1])
    func oneTilePerSegmentSheetsWhenFull(codec: VideoCodecName) throws {
        var settings = ThumbnailSettings()
        (settings.columns, settings.rows) = (2, 2)
        let sink = try Self.run(settings, segments: 5, codec: codec)
        let s = sink.state.withLock { $0 }
        // The 128x72 (16:9) rendition at 160 wide; one tile a second in the video's timescale.
        #expect(s.grid == TileGrid(columns: 2, rows: 2, tileWidth: 160, tileHeight: 90, interval: .seconds(1, timescale: 90_000)))
        #expect(sink.sheets == [TileSheetInfo(number: 0, tileCount: 4), TileSheetInfo(number: 1, tileCount: 1)])
        #expect(s.finished)
        #expect(s.sheets.allSatisfy { Array($0.jpeg.prefix(2)) == [0xFF, 0xD8] })
    }

    @Test func intervalsShorterAndLongerThanASegment() throws {
        var settings = ThumbnailSettings()
        (settings.columns, settings.rows) = (2, 2)
        settings.interval = .milliseconds(500)
        // 5 segments, two tiles each (the keyframe repeated): 10 tiles.
        #expect(try Self.run(settings, segments: 5).sheets.map(\.tileCount) == [4, 4, 2])
        settings.interval = .seconds(2)
        // Tiles at 0, 2, 4 s: from segments 0, 2 and 4.
        #expect(try Self.run(settings, segments: 5).sheets == [TileSheetInfo(number: 0, tileCount: 3)])
    }
}
