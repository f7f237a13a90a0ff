/// A rectangle of pixels in a plane (luma coordinates unless stated otherwise).
public struct PixelRect: Sendable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var description: String { "(\(x),\(y) \(width)x\(height))" }
}

/// Writes into one 8-bit plane (rows packed, stride == width) with whole-row memory copies only, so it is
/// fast even in a debug build: fills copy from a table of solid rows instead of looping per pixel.
struct PlaneWriter {
    let base: UnsafeMutablePointer<UInt8>
    let width: Int
    let height: Int
    /// 256 rows of `solidStride` bytes; row `v` holds the value `v` in every byte.
    let solid: UnsafePointer<UInt8>
    let solidStride: Int

    @inline(__always)
    private func copy(to dst: UnsafeMutablePointer<UInt8>, from src: UnsafePointer<UInt8>, count: Int) {
        UnsafeMutableRawPointer(dst).copyMemory(from: UnsafeRawPointer(src), byteCount: count)
    }

    /// Fills `count` bytes of row `y` from column `x` with `value` (clipped to the plane).
    func fillSpan(y: Int, x: Int, count: Int, value: UInt8) {
        guard y >= 0, y < height else { return }
        let x0 = max(x, 0), x1 = min(x + count, width, x0 + solidStride)
        guard x1 > x0 else { return }
        copy(to: base + y * width + x0, from: solid + Int(value) * solidStride, count: x1 - x0)
    }

    func fill(_ rect: PixelRect, value: UInt8) {
        let y0 = max(rect.y, 0), y1 = min(rect.maxY, height)
        guard y1 > y0 else { return }
        for y in y0..<y1 { fillSpan(y: y, x: rect.x, count: rect.width, value: value) }
    }

    /// Draws a rectangle outline `thickness` pixels wide inside `rect`.
    func frame(_ rect: PixelRect, thickness: Int, value: UInt8) {
        fill(PixelRect(x: rect.x, y: rect.y, width: rect.width, height: thickness), value: value)
        fill(PixelRect(x: rect.x, y: rect.maxY - thickness, width: rect.width, height: thickness), value: value)
        fill(PixelRect(x: rect.x, y: rect.y, width: thickness, height: rect.height), value: value)
        fill(PixelRect(x: rect.maxX - thickness, y: rect.y, width: thickness, height: rect.height), value: value)
    }

    /// Copies `width` bytes from `source` into row `y`.
    func setRow(_ y: Int, from source: UnsafePointer<UInt8>) {
        copy(to: base + y * width, from: source, count: width)
    }

    /// Copies row `first` into rows `first + 1 ..< end`, doubling the copied block each step
    /// (about log2(end - first) copies).
    func replicateRow(_ first: Int, through end: Int) {
        var done = 1
        let total = end - first
        while done < total {
            let n = min(done, total - done)
            copy(to: base + (first + done) * width, from: base + first * width, count: n * width)
            done += n
        }
    }

    /// Copies a block of whole rows from `source` (packed with this plane's width) to rows `y ..< y + rows`.
    func setRows(_ y: Int, count rows: Int, from source: UnsafePointer<UInt8>) {
        copy(to: base + y * width, from: source, count: rows * width)
    }

    /// Draws ASCII `text` with the bitmap font; `(x, y)` is the top-left of the first glyph cell
    /// (cell height `BitmapFont.glyphHeight * scale`, caps occupy the top 7 font rows).
    func drawText(_ text: [UInt8], x: Int, y: Int, scale: Int, value: UInt8, font: BitmapFont) {
        let valueRow = solid + Int(value) * solidStride
        font.runs.withUnsafeBufferPointer { glyphs in
            for row in 0..<BitmapFont.glyphHeight {
                let rowY = y + row * scale
                if rowY + scale <= 0 || rowY >= height { continue }
                for (i, ch) in text.enumerated() {
                    let glyph = Int(ch) < glyphs.count ? Int(ch) : 0x20
                    let cellX = x + i * BitmapFont.advance * scale
                    for run in glyphs[glyph][row] {
                        let x0 = max(cellX + run.start * scale, 0)
                        let x1 = min(cellX + (run.start + run.length) * scale, width)
                        if x1 <= x0 { continue }
                        for dy in 0..<scale {
                            let py = rowY + dy
                            if py < 0 || py >= height { continue }
                            copy(to: base + py * width + x0, from: valueRow, count: x1 - x0)
                        }
                    }
                }
            }
        }
    }
}

/// 8-bit limited-range (16...235 / 16...240) BT.709 Y'CbCr for gamma-encoded R'G'B' in 0...1.
struct YCbCr: Sendable, Hashable {
    var y: UInt8
    var cb: UInt8
    var cr: UInt8

    init(y: UInt8, cb: UInt8, cr: UInt8) {
        self.y = y
        self.cb = cb
        self.cr = cr
    }

    init(r: Double, g: Double, b: Double) {
        let luma = 0.2126 * r + 0.7152 * g + 0.0722 * b
        func byte(_ v: Double) -> UInt8 { UInt8(clamping: Int(v.rounded())) }
        y = byte(16 + 219 * luma)
        cb = byte(128 + 224 * (b - luma) / 1.8556)
        cr = byte(128 + 224 * (r - luma) / 1.5748)
    }

    static func gray(_ y: UInt8) -> YCbCr { YCbCr(y: y, cb: 128, cr: 128) }
}
