import Foundation
import MediaCore
import Testing
@testable import FFmpegBridge

/// `TileCanvas`: a keyframe placed into chosen tiles of a sheet; the sheet's JPEG decodes to a picture whose tiles
/// hold the keyframe scaled (full range), and whose other tiles stay black.
@Suite("Tile sheets", .timeLimit(.minutes(1)))
struct TileCanvasTests {
    static func mean(_ p: [UInt8]) -> Double { Double(p.reduce(0) { $0 + Int($1) }) / Double(p.count) }

    /// The luma of tile `i` of a decoded sheet (3 columns of 96x54).
    static func tile(_ sheet: RawVideoFrame, _ i: Int) -> [UInt8] {
        let x = (i % 3) * 96, y = (i / 3) * 54
        var out: [UInt8] = []
        for row in 0..<54 {
            let start = (y + row) * sheet.width + x
            out += sheet.y[start..<start + 96]
        }
        return out
    }

    @Test func keyframesLandInTheirTiles() throws {
        let f = try Fixtures.get()
        let key = try JPEGThumbnailTests.firstKeyframe(f.mp4)
        let canvas = try TileCanvas(columns: 3, rows: 2, tileWidth: 96, tileHeight: 54)
        try canvas.place(.h264(avcC: key.avcC), sample: key.sample, at: [1, 5])
        let jpeg = try canvas.jpeg()
        #expect(Array(jpeg.prefix(2)) == [0xFF, 0xD8] && Array(jpeg.suffix(2)) == [0xFF, 0xD9])
        let path = f.temp("sheet.jpg")
        try Data(jpeg).write(to: URL(fileURLWithPath: path))
        let sheet = try #require(try decodeAllVideo(path).first)
        #expect(sheet.width == 288 && sheet.height == 108)
        // The source's first frame at the tile size against the tiles (the decoder gives both in limited range: the
        // JPEG's full-range black comes back as 16). Measured 2.4; against the source 8 rows down, 33.
        let source = try #require(try decodeAllVideo(f.mp4, output: .init(width: 96, height: 54)).first)
        func difference(_ tile: [UInt8], _ reference: ArraySlice<UInt8>) -> Double {
            Self.mean(zip(tile, reference).map { UInt8(abs(Int($0) - Int($1))) })
        }
        let placed = difference(Self.tile(sheet, 1), source.y[...])
        #expect(placed < 10)
        #expect(difference(Self.tile(sheet, 5), source.y[...]) < 10)
        #expect(difference(Self.tile(sheet, 1), source.y.dropFirst(96 * 8)) > placed + 5)
        for empty in [0, 2, 3, 4] {
            #expect(abs(Self.mean(Self.tile(sheet, empty)) - 16) < 2, "tile \(empty) is black")
        }
        // Cleared, the sheet is black again.
        canvas.clear()
        try Data(try canvas.jpeg()).write(to: URL(fileURLWithPath: path))
        #expect(abs(Self.mean(try #require(try decodeAllVideo(path).first).y) - 16) < 2)
    }

    @Test func aBrokenKeyframeIsAnErrorNotACrash() throws {
        let f = try Fixtures.get()
        let key = try JPEGThumbnailTests.firstKeyframe(f.mp4)
        let canvas = try TileCanvas(columns: 2, rows: 2, tileWidth: 16, tileHeight: 16)
        #expect(throws: FFmpegError.self) { try canvas.place(.h264(avcC: key.avcC), sample: [0, 0, 0, 3, 0x65, 0xFF, 0xFF], at: [0]) }
        #expect(throws: FFmpegError.self) { try canvas.place(.h264(avcC: []), sample: key.sample, at: [0]) }
    }
}
