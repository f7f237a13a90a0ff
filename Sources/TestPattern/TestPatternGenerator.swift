import MediaCore

/// The built-in test pattern that `hls-origin serve` streams without an input: raw yuv420p pictures and
/// interleaved 16-bit audio, generated in pure Swift.
///
/// Picture: 75 % colour bars and a reverse-bars strip scrolling left every frame, and a dark panel with the
/// title, a large frame counter, the wall clock, a row of per-frame sync cells and a sync box that is white
/// exactly while the audio beep sounds. Audio: a continuous 440 Hz tone plus a 100 ms 1 kHz beep starting
/// at every whole second (sample index a multiple of `sampleRate`), on every channel.
///
/// Time: video `pts = index * frameDuration` in `videoTimeBase` (1/30 for 30 fps so `pts == index`;
/// 1/30000 with `frameDuration` 1001 for 30000/1001). Audio `pts` = sample index in `sampleRate` ticks.
/// Video frame 0 and audio sample 0 are both at time zero.
///
/// Not `Sendable`: one task owns a generator. Its output values are `Sendable`.
public final class TestPatternGenerator {
    public let configuration: TestPatternConfiguration
    public let layout: TestPatternLayout
    /// Time base of video `pts`: 1 / (reduced frame-rate numerator).
    public let videoTimeBase: Rational
    /// Ticks of `videoTimeBase` per frame (the reduced frame-rate denominator).
    public let frameDuration: Int64

    private let width: Int
    private let height: Int
    private let chromaWidth: Int
    private let chromaHeight: Int
    /// Reduced frame rate `fpsNum / fpsDen` frames per second.
    private let fpsNum: Int64
    private let fpsDen: Int64
    /// Luma pixels the bars move per frame (even, so chroma moves by whole samples).
    private let scrollStep: Int

    /// Bar rows doubled (`2 * width`, `2 * chromaWidth`) so any scroll offset is one contiguous copy.
    private let barsY: [UInt8]
    private let barsCb: [UInt8]
    private let barsCr: [UInt8]
    private let stripY: [UInt8]
    private let stripCb: [UInt8]
    private let stripCr: [UInt8]
    /// The static panel (rows `panelTop ..< height`, chroma rows `panelTop / 2 ..< chromaHeight`).
    private let panelY: [UInt8]
    private let panelCb: [UInt8]
    private let panelCr: [UInt8]
    /// 256 solid rows of `width` bytes, the source of every fill.
    private let solid: [UInt8]
    private let font = BitmapFont.shared

    /// One second of mono audio; sample `n` of any second is `secondOfAudio[n]`.
    let secondOfAudio: [Int16]

    // Colours (limited-range luma).
    private static let panelLuma: UInt8 = 28
    private static let textLuma: UInt8 = 235
    private static let dimTextLuma: UInt8 = 150
    private static let cellLuma: UInt8 = 52
    private static let white: UInt8 = 235
    private static let black: UInt8 = 16

    public init(_ configuration: TestPatternConfiguration) {
        let c = configuration
        precondition(c.width >= 16 && c.height >= 16, "test pattern needs at least 16x16 pixels")
        precondition(c.frameRate.isValid, "test pattern frame rate must be positive")
        precondition(c.sampleRate >= 1_000, "test pattern sample rate must be at least 1000 Hz")
        precondition((1...8).contains(c.channelCount), "test pattern supports 1...8 channels")
        precondition(c.toneAmplitude >= 0 && c.beepAmplitude >= 0 && c.toneAmplitude + c.beepAmplitude <= 1,
                     "test pattern amplitudes must be in 0...1 and sum to at most 1")
        self.configuration = c
        width = c.width
        height = c.height
        chromaWidth = (c.width + 1) / 2
        chromaHeight = (c.height + 1) / 2

        var a = Int64(c.frameRate.numerator), b = Int64(c.frameRate.denominator)
        while b != 0 { (a, b) = (b, a % b) }
        fpsNum = Int64(c.frameRate.numerator) / a
        fpsDen = Int64(c.frameRate.denominator) / a
        videoTimeBase = Rational(1, Int32(fpsNum))
        frameDuration = fpsDen
        scrollStep = max(2, (c.width / 320) & ~1)

        let layout = Self.makeLayout(width: c.width, height: c.height, fpsNum: fpsNum, fpsDen: fpsDen)
        self.layout = layout

        solid = (0..<256).flatMap { [UInt8](repeating: UInt8($0), count: c.width) }

        // Bars: 75 % white, yellow, cyan, green, magenta, red, blue; strip: the SMPTE reverse-blue row.
        let q = 0.75
        let top: [YCbCr] = [
            YCbCr(r: q, g: q, b: q), YCbCr(r: q, g: q, b: 0), YCbCr(r: 0, g: q, b: q), YCbCr(r: 0, g: q, b: 0),
            YCbCr(r: q, g: 0, b: q), YCbCr(r: q, g: 0, b: 0), YCbCr(r: 0, g: 0, b: q),
        ]
        let black = YCbCr.gray(Self.black)
        let strip: [YCbCr] = [top[6], black, top[4], black, top[2], black, top[0]]
        (barsY, barsCb, barsCr) = Self.doubledRows(top, width: c.width, chromaWidth: chromaWidth)
        (stripY, stripCb, stripCr) = Self.doubledRows(strip, width: c.width, chromaWidth: chromaWidth)

        (panelY, panelCb, panelCr) = Self.renderPanel(configuration: c, layout: layout, solid: solid)

        secondOfAudio = Self.makeSecondOfAudio(c)
    }

    // MARK: - Timing

    /// Presentation time of frame `index` in `videoTimeBase` ticks.
    public func videoPTS(index: Int64) -> Int64 { index * frameDuration }

    /// Whether frame `index` shows the white sync box: its presentation interval
    /// `[index, index + 1) / frameRate` overlaps a beep `[s, s + beepSampleCount / sampleRate)` for a whole second `s`.
    public func isFlashing(frameIndex index: Int64) -> Bool {
        // Work in units of 1 / (fpsNum * sampleRate) seconds, exactly.
        let sr = Int128(configuration.sampleRate)
        let second = Int128(fpsNum) * sr
        let start = Int128(index) * Int128(fpsDen) * sr
        let end = start + Int128(fpsDen) * sr
        let beep = Int128(configuration.beepSampleCount) * Int128(fpsNum)
        var s = start / second
        if start % second != 0, start < 0 { s -= 1 }
        // The frame can overlap the beep of its own second or (if it is longer than the gap) the next one.
        var k = s
        while k * second < end {
            if start < k * second + beep && end > k * second { return true }
            k += 1
        }
        return false
    }

    /// Which sync cell frame `index` lights: its start time's position within the second, in cells.
    func syncCell(frameIndex index: Int64) -> Int {
        let second = fpsNum
        let start = index * fpsDen
        let within = ((start % second) + second) % second
        return Int(within * Int64(layout.cellCount) / second)
    }

    // MARK: - Video

    /// Frame number `index` (`pts = index * frameDuration` in `videoTimeBase`) with `wallClock` drawn as text.
    public func videoFrame(index: Int64, wallClock: WallClock) -> RawVideoFrame {
        let w = width, h = height, cw = chromaWidth, ch = chromaHeight
        let layout = self.layout
        let wide = Int64(w)
        let offset = Int((((index % wide) * Int64(scrollStep)) % wide + wide) % wide) & ~1
        let chromaOffset = offset / 2
        let stripTop = layout.barsBottom, panelTop = layout.panelTop
        let flashing = isFlashing(frameIndex: index)
        let cell = syncCell(frameIndex: index)
        let counterText = Self.counterText(index)
        let (dateText, clockText) = Self.clockTexts(wallClock)
        let mediaText = Self.mediaTimeText(frameStartMilliseconds: index * fpsDen * 1000 / fpsNum)

        let y = [UInt8](unsafeUninitializedCapacity: w * h) { buffer, count in
            solid.withUnsafeBufferPointer { solid in
                let plane = PlaneWriter(base: buffer.baseAddress!, width: w, height: h,
                                        solid: solid.baseAddress!, solidStride: w)
                barsY.withUnsafeBufferPointer { plane.setRow(0, from: $0.baseAddress! + offset) }
                plane.replicateRow(0, through: stripTop)
                stripY.withUnsafeBufferPointer { plane.setRow(stripTop, from: $0.baseAddress! + offset) }
                plane.replicateRow(stripTop, through: panelTop)
                panelY.withUnsafeBufferPointer { plane.setRows(panelTop, count: h - panelTop, from: $0.baseAddress!) }

                plane.drawText(counterText, x: layout.frameCounter.x, y: layout.frameCounter.y,
                               scale: layout.counterScale, value: Self.textLuma, font: font)
                plane.drawText(clockText, x: layout.clock.x, y: layout.clock.y,
                               scale: layout.clockScale, value: Self.textLuma, font: font)
                plane.drawText(dateText, x: layout.dateX, y: layout.title.y,
                               scale: layout.titleScale, value: Self.dimTextLuma, font: font)
                plane.drawText(mediaText, x: layout.mediaTime.x, y: layout.mediaTime.y,
                               scale: layout.titleScale, value: Self.dimTextLuma, font: font)
                let litCell = Self.cellRect(cell, in: layout)
                plane.fill(litCell, value: Self.white)
                plane.fill(layout.flashBox, value: flashing ? Self.white : Self.black)
            }
            count = w * h
        }
        let cb = Self.chromaPlane(bars: barsCb, strip: stripCb, panel: panelCb, offset: chromaOffset,
                                  width: cw, height: ch, stripTop: stripTop / 2, panelTop: panelTop / 2, solid: solid)
        let cr = Self.chromaPlane(bars: barsCr, strip: stripCr, panel: panelCr, offset: chromaOffset,
                                  width: cw, height: ch, stripTop: stripTop / 2, panelTop: panelTop / 2, solid: solid)
        return RawVideoFrame(width: w, height: h, y: y, cb: cb, cr: cr, pts: videoPTS(index: index))
    }

    private static func chromaPlane(bars: [UInt8], strip: [UInt8], panel: [UInt8], offset: Int, width: Int,
                                    height: Int, stripTop: Int, panelTop: Int, solid: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: width * height) { buffer, count in
            solid.withUnsafeBufferPointer { solid in
                let plane = PlaneWriter(base: buffer.baseAddress!, width: width, height: height,
                                        solid: solid.baseAddress!, solidStride: solid.count / 256)
                bars.withUnsafeBufferPointer { plane.setRow(0, from: $0.baseAddress! + offset) }
                plane.replicateRow(0, through: stripTop)
                strip.withUnsafeBufferPointer { plane.setRow(stripTop, from: $0.baseAddress! + offset) }
                plane.replicateRow(stripTop, through: panelTop)
                panel.withUnsafeBufferPointer { plane.setRows(panelTop, count: height - panelTop, from: $0.baseAddress!) }
            }
            count = width * height
        }
    }

    static func counterText(_ index: Int64) -> [UInt8] {
        var digits = [UInt8]()
        var v = index.magnitude
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(v % 10))
            v /= 10
        } while v > 0
        while digits.count < 6 { digits.append(UInt8(ascii: "0")) }
        if index < 0 { digits.append(UInt8(ascii: "-")) }
        return Array("frame ".utf8) + digits.reversed()
    }

    /// ("YYYY-MM-DD", "HH:MM:SS.mmm UTC") for a wall-clock time.
    static func clockTexts(_ clock: WallClock) -> (date: [UInt8], time: [UInt8]) {
        let msPerDay: Int64 = 86_400_000
        let ms = clock.millisecondsSince1970
        var days = ms / msPerDay
        var inDay = ms % msPerDay
        if inDay < 0 { inDay += msPerDay; days -= 1 }
        func digit(_ v: Int64) -> UInt8 { UInt8(ascii: "0") + UInt8(v % 10) }
        func two(_ v: Int64) -> [UInt8] { [digit(v / 10), digit(v)] }
        let colon = UInt8(ascii: ":"), milli = inDay % 1000
        let time = two(inDay / 3_600_000) + [colon] + two(inDay / 60_000 % 60) + [colon] + two(inDay / 1000 % 60)
            + [UInt8(ascii: "."), digit(milli / 100), digit(milli / 10), digit(milli)] + Array(" UTC".utf8)
        // Days since 1970-01-01 -> civil date (H. Hinnant, "chrono-compatible low-level date algorithms").
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        let date = two(year / 100) + two(year % 100) + [UInt8(ascii: "-")] + two(month) + [UInt8(ascii: "-")] + two(day)
        return (date, time)
    }

    /// "media 0:00:41.133": the frame's presentation time (its start, truncated to milliseconds).
    static func mediaTimeText(frameStartMilliseconds ms: Int64) -> [UInt8] {
        let v = max(ms, 0)
        func digit(_ d: Int64) -> UInt8 { UInt8(ascii: "0") + UInt8(d % 10) }
        let hours = Array(String(v / 3_600_000).utf8)
        return Array("media ".utf8) + hours + [UInt8(ascii: ":"), digit(v / 600_000 % 6), digit(v / 60_000),
            UInt8(ascii: ":"), digit(v / 10_000 % 6), digit(v / 1000), UInt8(ascii: "."),
            digit(v / 100), digit(v / 10), digit(v)]
    }

    // MARK: - Static picture parts

    private static func makeLayout(width w: Int, height h: Int, fpsNum: Int64, fpsDen: Int64) -> TestPatternLayout {
        // Designed on a 1280x720 grid and scaled; row boundaries kept even for 4:2:0 chroma.
        func sx(_ v: Int) -> Int { v * w / 1280 }
        func sy(_ v: Int) -> Int { v * h / 720 }
        func even(_ v: Int) -> Int { v & ~1 }
        let barsBottom = even(sy(420))
        let panelTop = even(sy(480))
        let margin = max(2, sx(40))
        let titleScale = max(1, h * 3 / 720)
        let counterScale = max(1, h * 6 / 720)
        let clockScale = max(1, h * 5 / 720)
        let infoScale = max(1, h * 2 / 720)
        let cellHeight = BitmapFont.glyphHeight

        let title = PixelRect(x: margin, y: panelTop + sy(18), width: BitmapFont.textWidth(count: 23) * titleScale,
                              height: cellHeight * titleScale)
        let counter = PixelRect(x: margin, y: panelTop + sy(60), width: BitmapFont.textWidth(count: 12) * counterScale,
                                height: 7 * counterScale)
        let clock = PixelRect(x: margin, y: panelTop + sy(126), width: BitmapFont.textWidth(count: 16) * clockScale,
                              height: 7 * clockScale)
        let infoY = panelTop + sy(196)

        let side = max(4, min(sy(200), h - panelTop - 2 * sy(20)))
        let outer = PixelRect(x: w - margin - side, y: panelTop + sy(20), width: side, height: side)
        let border = max(1, sy(4))
        let flash = PixelRect(x: outer.x + 2 * border, y: outer.y + 2 * border,
                              width: outer.width - 4 * border, height: outer.height - 4 * border)

        let framesPerSecond = Int((fpsNum + fpsDen - 1) / fpsDen)
        let cellCount = min(max(framesPerSecond, 1), 60)
        let cellsX = sx(560)
        let cellsWidth = max(cellCount, outer.x - sx(40) - cellsX)
        let pitch = cellsWidth / cellCount
        let cells = PixelRect(x: cellsX, y: counter.y, width: pitch * cellCount, height: counter.height)
        let dateX = cells.maxX - BitmapFont.textWidth(count: 10) * titleScale
        let mediaWidth = BitmapFont.textWidth(count: 17) * titleScale
        let mediaTime = PixelRect(x: cells.maxX - mediaWidth, y: clock.maxY - 7 * titleScale,
                                  width: mediaWidth, height: 7 * titleScale)

        return TestPatternLayout(
            barsBottom: barsBottom, panelTop: panelTop, title: title, frameCounter: counter, clock: clock,
            syncCells: cells, flashBox: flash, titleScale: titleScale, counterScale: counterScale,
            clockScale: clockScale, infoScale: infoScale, infoY: infoY, dateX: dateX, mediaTime: mediaTime, flashOuter: outer,
            flashBorder: border, cellCount: cellCount)
    }

    static func cellRect(_ cell: Int, in layout: TestPatternLayout) -> PixelRect {
        let pitch = layout.syncCells.width / layout.cellCount
        let gap = max(1, pitch / 5)
        return PixelRect(x: layout.syncCells.x + cell * pitch + gap / 2, y: layout.syncCells.y,
                         width: pitch - gap, height: layout.syncCells.height)
    }

    /// One bar row of luma and chroma, each written twice in a row so a scrolled row is one copy.
    private static func doubledRows(_ colours: [YCbCr], width: Int, chromaWidth: Int)
        -> ([UInt8], [UInt8], [UInt8]) {
        func colour(atLuma x: Int) -> YCbCr { colours[(x % width) * colours.count / width] }
        let y = (0..<(2 * width)).map { colour(atLuma: $0).y }
        let cb = (0..<(2 * chromaWidth)).map { colour(atLuma: 2 * $0).cb }
        let cr = (0..<(2 * chromaWidth)).map { colour(atLuma: 2 * $0).cr }
        return (y, cb, cr)
    }

    /// Renders the parts of the panel that never change (background, title, info line, sync-box border,
    /// unlit cells, second marker) once.
    private static func renderPanel(configuration c: TestPatternConfiguration, layout: TestPatternLayout,
                                    solid: [UInt8]) -> ([UInt8], [UInt8], [UInt8]) {
        let w = c.width, h = c.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        var y = [UInt8](repeating: panelLuma, count: w * h)
        var cb = [UInt8](repeating: 128, count: cw * ch)
        var cr = [UInt8](repeating: 128, count: cw * ch)
        let font = BitmapFont.shared
        let fps = c.frameRate.denominator == 1 ? "\(c.frameRate.numerator)"
            : Self.decimal(Int64(c.frameRate.numerator) * 100 / Int64(c.frameRate.denominator), places: 2)
        let channels = c.channelCount == 1 ? "mono" : c.channelCount == 2 ? "stereo" : "\(c.channelCount) ch"
        let rate = c.sampleRate % 1000 == 0 ? "\(c.sampleRate / 1000) kHz" : "\(c.sampleRate) Hz"
        let fullInfo = Array("\(w)x\(h)  \(fps) fps  |  \(rate) \(channels)  |  1 kHz beep + white box every second".utf8)
        let infoRoom = max(0, (layout.flashOuter.x - layout.title.x) / (BitmapFont.advance * layout.infoScale) - 1)
        let info = Array(fullInfo.prefix(infoRoom))
        // Accent: the SMPTE-blue line between strip and panel, and a marker under cell 0 (second boundary).
        let accent = YCbCr(r: 0.1, g: 0.45, b: 0.95)
        let marker = YCbCr(r: 0.95, g: 0.55, b: 0.1)
        let firstCell = cellRect(0, in: layout)
        let markerRect = PixelRect(x: firstCell.x, y: layout.syncCells.maxY + max(2, h * 6 / 720),
                                   width: firstCell.width, height: max(2, h * 6 / 720) & ~1)
        let accentRect = PixelRect(x: 0, y: layout.panelTop, width: w, height: max(2, h * 4 / 720) & ~1)

        solid.withUnsafeBufferPointer { solid in
            y.withUnsafeMutableBufferPointer { buffer in
                let plane = PlaneWriter(base: buffer.baseAddress!, width: w, height: h,
                                        solid: solid.baseAddress!, solidStride: w)
                plane.drawText(Array("hls-origin test pattern".utf8), x: layout.title.x, y: layout.title.y,
                               scale: layout.titleScale, value: textLuma, font: font)
                plane.drawText(info, x: layout.title.x, y: layout.infoY,
                               scale: layout.infoScale, value: dimTextLuma, font: font)
                for cell in 0..<layout.cellCount { plane.fill(cellRect(cell, in: layout), value: cellLuma) }
                plane.frame(layout.flashOuter, thickness: layout.flashBorder, value: 128)
                plane.fill(accentRect, value: accent.y)
                plane.fill(markerRect, value: marker.y)
            }
            func paintChroma(_ plane: inout [UInt8], accent: UInt8, marker: UInt8) {
                plane.withUnsafeMutableBufferPointer { buffer in
                    let writer = PlaneWriter(base: buffer.baseAddress!, width: cw, height: ch,
                                             solid: solid.baseAddress!, solidStride: w)
                    writer.fill(Self.half(accentRect), value: accent)
                    writer.fill(Self.half(markerRect), value: marker)
                }
            }
            paintChroma(&cb, accent: accent.cb, marker: marker.cb)
            paintChroma(&cr, accent: accent.cr, marker: marker.cr)
        }
        let top = layout.panelTop
        return (Array(y[(top * w)...]), Array(cb[(top / 2 * cw)...]), Array(cr[(top / 2 * cw)...]))
    }

    private static func half(_ r: PixelRect) -> PixelRect {
        PixelRect(x: r.x / 2, y: r.y / 2, width: (r.width + 1) / 2, height: (r.height + 1) / 2)
    }

    private static func decimal(_ hundredths: Int64, places: Int) -> String {
        let whole = hundredths / 100, frac = hundredths % 100
        return "\(whole)." + (frac < 10 ? "0" : "") + "\(frac)"
    }
}

/// `sin(2π k / n)` for integers, without libm: range-reduced to [-π, π) and a Taylor series to x^23
/// (error below 1e-10), so the tone table is identical on every platform.
func sinOfTurns(_ k: Int, _ n: Int) -> Double {
    precondition(n > 0)
    let r = ((k % n) + n) % n
    // x = 2π r/n - π in [-π, π); sin(x + π) = -sin(x).
    let x = 2 * Double.pi * Double(r) / Double(n) - Double.pi
    let x2 = x * x
    var term = x, sum = x
    var i = 1
    while i < 23 {
        term *= -x2 / Double((i + 1) * (i + 2))
        sum += term
        i += 2
    }
    return -sum
}
