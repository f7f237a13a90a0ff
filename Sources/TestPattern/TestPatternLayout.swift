import MediaCore

/// Where the test pattern draws things, in luma pixels. Exposed so tests and tools can sample regions.
public struct TestPatternLayout: Sendable, Hashable {
    /// Rows `0 ..< barsBottom`: 75 % colour bars scrolling left every frame.
    public var barsBottom: Int
    /// Rows `barsBottom ..< panelTop`: the reverse-bars strip, scrolling with the bars.
    public var panelTop: Int
    /// The title line ("hls-origin test pattern" and the UTC date).
    public var title: PixelRect
    /// The frame counter ("frame 001234"), sized for six digits.
    public var frameCounter: PixelRect
    /// The wall clock ("HH:MM:SS.mmm UTC").
    public var clock: PixelRect
    /// The row of one-per-frame cells; the cell of the current frame within its second is lit.
    public var syncCells: PixelRect
    /// Inside of the sync box: white while the beep sounds, black otherwise.
    public var flashBox: PixelRect

    var titleScale: Int
    var counterScale: Int
    var clockScale: Int
    var infoScale: Int
    var infoY: Int
    var dateX: Int
    /// The media-time text (right of the clock, bottom-aligned with it).
    var mediaTime: PixelRect
    var flashOuter: PixelRect
    var flashBorder: Int
    var cellCount: Int
}

