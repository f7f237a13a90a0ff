import MediaCore

extension MPD {
    /// A thumbnail AdaptationSet (DASH-IF IOP 4.3 §6.2.6 "Thumbnails"): `contentType="image"`, `mimeType="image/jpeg"`,
    /// one Representation whose `@width`×`@height` is the whole grid image, with
    /// `<EssentialProperty schemeIdUri="http://dashif.org/thumbnail_tile" value="<htiles>x<vtiles>"/>` (the grid
    /// image holds htiles columns by vtiles rows of tiles, each covering an equal share of the segment's duration),
    /// and a `SegmentTemplate` whose segments are the grid images: here with a `SegmentTimeline` in the video's
    /// timescale, so sheet `$Number$` starts where its first tile does (the same `t` as the video's `tfdt`).
    public struct ThumbnailSet: Sendable, Equatable {
        public var id: Int
        public var representationID: String
        public var bandwidth: Int
        public var columns: Int
        public var rows: Int
        /// The grid image's size (columns × tile width, rows × tile height).
        public var width: Int
        public var height: Int
        public var timescale: Int32
        /// `$Number$` template (`thumbnails/$Number$.jpg`).
        public var media: String
        public var startNumber: UInt64
        public var timeline: [TimelineEntry]

        public init(id: Int, representationID: String = "thumbnails", bandwidth: Int, columns: Int, rows: Int,
                    width: Int, height: Int, timescale: Int32, media: String, startNumber: UInt64,
                    timeline: [TimelineEntry]) {
            self.id = id
            self.representationID = representationID
            self.bandwidth = bandwidth
            self.columns = columns
            self.rows = rows
            self.width = width
            self.height = height
            self.timescale = timescale
            self.media = media
            self.startNumber = startNumber
            self.timeline = timeline
        }

        public static let tileScheme = "http://dashif.org/thumbnail_tile"

        func render(into x: inout XMLText) {
            x.open("AdaptationSet", [("id", String(id)), ("contentType", "image"), ("mimeType", "image/jpeg")])
            x.open("SegmentTemplate", [("timescale", String(timescale)), ("media", media), ("startNumber", String(startNumber))])
            MPD.TimelineEntry.render(timeline, into: &x)
            x.close("SegmentTemplate")
            x.open("Representation", [("id", representationID), ("bandwidth", String(bandwidth)),
                                      ("width", String(width)), ("height", String(height))])
            x.empty("EssentialProperty", [("schemeIdUri", Self.tileScheme), ("value", "\(columns)x\(rows)")])
            x.close("Representation")
            x.close("AdaptationSet")
        }
    }
}
