import MediaCore

/// Playlist Delta Updates (RFC 8216bis §6.2.5.1, `EXT-X-SKIP` §4.4.5.2, `CAN-SKIP-UNTIL` §4.4.3.8).
extension MediaPlaylist {
    /// The Playlist Delta Update of this (full) playlist, as served for `_HLS_skip=YES`; pure.
    ///
    /// Returns `nil` when the directive must be ignored, i.e. the full playlist is the answer. §6.2.5.1:
    /// "A Server MUST ignore the _HLS_skip directive if the Playlist does not contain the CAN-SKIP-UNTIL
    /// attribute, or if it contains an EXT-X-ENDLIST tag."
    ///
    /// What is skipped. §6.2.5.1: "The Playlist Delta Update is a version of the Playlist in which Media
    /// Segments that are further from the end of the last (Parent) Media Segment in the Playlist than the Skip
    /// Boundary (Section 4.4.3.8), as well as their associated tags, are replaced by an EXT-X-SKIP tag
    /// (Section 4.4.5.2)." So:
    /// - distances are measured back from the END OF THE LAST COMPLETE SEGMENT (trailing parts do not count);
    /// - a segment is skipped when its END is further back than the Skip Boundary, i.e. it lies entirely
    ///   before the boundary: `lastEnd - segmentEnd > CAN-SKIP-UNTIL`. A segment that ends exactly on the
    ///   boundary, or straddles it, stays;
    /// - durations are those the playlist states (`EXTINF` and `CAN-SKIP-UNTIL` as rendered, whole
    ///   microseconds), so anyone holding the two texts can check the cut. (Skipped segments always form a
    ///   prefix, and the last segment always stays.)
    ///
    /// What the remaining segments keep:
    /// - §4.4.5.2: "When replacing Media Segments, the EXT-X-SKIP tag replaces the segment URI lines and all
    ///   Media Segment Tags that are applied to those segments", so the parts, discontinuity tags, maps and
    ///   program dates of skipped segments go. §6.2.5.1: "All tags that were not skipped MUST remain in the
    ///   Playlist Delta Update": every remaining segment, its parts, the trailing parts, the preload hint and
    ///   the rendition reports stay as they are;
    /// - `EXT-X-DISCONTINUITY-SEQUENCE` is unchanged. §4.4.5.2: "Replacing segments with the the EXT-X-SKIP
    ///   tag does not change the value of the EXT-X-DISCONTINUITY-SEQUENCE tag." (`EXT-X-MEDIA-SEQUENCE` is
    ///   unchanged too: the first listed segment is `mediaSequence + SKIPPED-SEGMENTS`.)
    /// - the map in force for the first remaining segment is stated again, right after `EXT-X-SKIP` (the
    ///   header `EXT-X-MAP` applied to the skipped segments, and a later map may have replaced it there);
    /// - if a skipped segment carried `EXT-X-PROGRAM-DATE-TIME` and the first remaining one does not, the
    ///   first remaining one gets the date a client would extrapolate from the last skipped date
    ///   (date + the `EXTINF` durations in between, rounded to the millisecond), so the delta maps dates
    ///   to segments on its own, as the full playlist did.
    ///
    /// Nothing to skip. §6.2.5.1 says that for `_HLS_skip=YES` the server "MUST respond with a Playlist Delta
    /// Update", and `SKIPPED-SEGMENTS` is a decimal-integer (0 allowed). So when no segment lies before the
    /// boundary this returns the playlist with `EXT-X-SKIP:SKIPPED-SEGMENTS=0` (version 9), not `nil`: the
    /// response still says it is a delta update (hls.js and Shaka add 0; ExoPlayer copies 0 segments from its
    /// previous playlist). A caller that prefers the plain full playlist can set `skippedSegments = nil`.
    ///
    /// The result has `version` raised to 9 (§8: "A Playlist MUST indicate an EXT-X-VERSION of 9 or higher
    /// if it contains: The EXT-X-SKIP tag."). Applied to a delta update, it skips any further segments that
    /// have fallen behind the boundary (adding to `skippedSegments`). The boundary itself is not checked here
    /// (§4.4.3.8: "The Skip Boundary MUST be at least six times the Target Duration").
    ///
    /// Dateranges. They are Media Metadata tags, not Media Segment tags: `_HLS_skip=YES` keeps every one. With
    /// `skippingDateRanges` (`_HLS_skip=v2`, offered by `CAN-SKIP-DATERANGES=YES`), a daterange that starts before the
    /// first remaining segment and can no longer change (its `DURATION` is known, or it is not a break) is skipped too —
    /// the client has it from an earlier reload — and `EXT-X-SKIP` lists `recentlyRemoved`, the IDs the playlist has
    /// dropped lately (§4.4.5.2 `RECENTLY-REMOVED-DATERANGES`, version 10), so the client drops them as well.
    public func deltaUpdate(skippingDateRanges: Bool = false, recentlyRemoved: [String] = []) -> MediaPlaylist? {
        guard let boundary = serverControl?.canSkipUntil, !endList else { return nil }
        if skippingDateRanges, serverControl?.canSkipDateRanges == true, var delta = deltaUpdate() {
            delta.recentlyRemovedDateRanges = recentlyRemoved
            if let first = delta.segments.first?.programDateTime, (delta.skippedSegments ?? 0) > 0 {
                delta.dateRanges.removeAll { d in d.startDate < first && (d.duration != nil || d.scte35Out == nil) }
            }
            return delta
        }
        let skip = Self.skippableCount(segments.map(\.duration), skipBoundary: boundary)
        var delta = self
        delta.version = max(version, 9)
        delta.skippedSegments = (skippedSegments ?? 0) + UInt64(skip)
        guard skip > 0 else { return delta }

        var mapInForce = mapURI
        var lastDate: (date: WallClock, microsSince: Int64)?
        for s in segments[..<skip] {
            if let m = s.mapURI { mapInForce = m }
            if let pdt = s.programDateTime { lastDate = (pdt, 0) }
            lastDate?.microsSince += HLSFormat.micros(s.duration)
        }
        var rest = Array(segments[skip...])
        // The first remaining segment's own map, else the one the skipped segments left in force, goes in the
        // header slot (after EXT-X-SKIP); the segment itself then needs no map of its own.
        delta.mapURI = rest[0].mapURI ?? mapInForce
        rest[0].mapURI = nil
        if rest[0].programDateTime == nil, let lastDate {
            let ms = lastDate.date.millisecondsSince1970 + (lastDate.microsSince + 500) / 1000
            rest[0].programDateTime = WallClock(millisecondsSince1970: ms)
        }
        delta.segments = rest
        return delta
    }

    /// How many leading segments lie entirely before the Skip Boundary (see `deltaUpdate()`): those whose end
    /// is more than `skipBoundary` before the end of the last one, in whole microseconds as rendered.
    public static func skippableCount(_ durations: [MediaTime], skipBoundary: MediaTime) -> Int {
        let micros = durations.map(HLSFormat.micros)
        let boundary = max(0, HLSFormat.micros(skipBoundary))
        var fromEnd: Int64 = 0  // end of the last segment minus end of segment i
        for i in micros.indices.reversed() {
            if fromEnd > boundary { return i + 1 }
            fromEnd += micros[i]
        }
        return 0
    }
}
