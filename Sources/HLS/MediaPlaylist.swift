import MediaCore

/// A media playlist (RFC 8216bis §4.4.3) for fMP4 segments.
///
/// ```
/// #EXTM3U
/// #EXT-X-VERSION:7
/// #EXT-X-TARGETDURATION:2
/// #EXT-X-MEDIA-SEQUENCE:10
/// #EXT-X-DISCONTINUITY-SEQUENCE:1
/// #EXT-X-PLAYLIST-TYPE:VOD          (only when set; never while live)
/// #EXT-X-I-FRAMES-ONLY              (an I-frame playlist only)
/// #EXT-X-INDEPENDENT-SEGMENTS
/// #EXT-X-SKIP:SKIPPED-SEGMENTS=3    (delta updates only; see `deltaUpdate()`)
/// #EXT-X-MAP:URI="init.mp4"
/// #EXT-X-DISCONTINUITY              (per segment)
/// #EXT-X-MAP:URI="init1.mp4"        (per segment, when the map changes)
/// #EXT-X-PROGRAM-DATE-TIME:2026-11-22T04:20:26.123Z
/// #EXTINF:1.001,
/// #EXT-X-BYTERANGE:81234@1024       (single-file VOD only, with EXT-X-MAP:URI="stream.mp4",BYTERANGE="800@0")
/// seg10.m4s
/// #EXT-X-RENDITION-REPORT:URI="../audio/index.m3u8",LAST-MSN=12,LAST-PART=1
/// #EXT-X-ENDLIST
/// ```
///
/// Low-Latency HLS (when `partTarget` is set): `EXT-X-SERVER-CONTROL` and `EXT-X-PART-INF` follow
/// `EXT-X-TARGETDURATION`; `EXT-X-PART` lines precede each segment's `EXTINF`; the parts of the segment in
/// progress (`trailingParts`, possibly with no complete segment yet), `EXT-X-PRELOAD-HINT` and the
/// `EXT-X-RENDITION-REPORT` tags close the playlist.
///
/// `EXT-X-VERSION`: RFC 8216bis §8 ties version 9 to `EXT-X-SKIP` ("A Playlist MUST indicate an
/// EXT-X-VERSION of 9 or higher if it contains: The EXT-X-SKIP tag."), 10 to `RECENTLY-REMOVED-DATERANGES`
/// (not produced here), and 6 to `EXT-X-MAP` without I-frames-only; parts, preload hints, server control and
/// rendition reports need nothing higher. So `render()` writes `version` (7), raised to 9 only when the
/// playlist carries `EXT-X-SKIP` (`skippedSegments != nil`); §6.2.1: "The value of the EXT-X-VERSION tag
/// SHOULD NOT be greater than what is required for the tags and attributes in the Playlist."
/// Byte ranges: RFC 8216 §4.3.2.2 "Use of the EXT-X-BYTERANGE tag REQUIRES a compatibility version number of 4
/// or greater", and §4.3.2.5 "Use of the EXT-X-MAP tag in a Media Playlist that DOES NOT contain the
/// EXT-X-I-FRAMES-ONLY tag REQUIRES a compatibility version number of 6 or greater" (with or without
/// `BYTERANGE`): the default 7 covers both; `render()` never writes less than 4 when a byte range is present.
///
/// An I-frame playlist (`iFramesOnly`, RFC 8216 §4.3.3.6 `EXT-X-I-FRAMES-ONLY`) is the same model: each segment is
/// one I-frame, an `EXT-X-BYTERANGE` of a media segment, and its `EXTINF` the time to the next I-frame. §4.3.3.6:
/// "Use of the EXT-X-I-FRAMES-ONLY REQUIRES a compatibility version number of 4 or greater", and §4.3.2.5 "Use of
/// the EXT-X-MAP tag in a Media Playlist that contains the EXT-X-I-FRAMES-ONLY tag REQUIRES a compatibility version
/// number of 5 or greater": `render()` never writes less than 5 for one.
public struct MediaPlaylist: Sendable, Equatable {
    public enum PlaylistType: String, Sendable { case vod = "VOD", event = "EVENT" }

    public var version: Int = 7
    /// `EXT-X-I-FRAMES-ONLY`: every segment is one I-frame (a byte range of a media segment).
    public var iFramesOnly = false
    public var targetDuration: Int
    public var mediaSequence: UInt64
    public var discontinuitySequence: UInt64
    public var independentSegments: Bool = true
    /// The map in force for the first segment (rendered in the header); `nil`: the segments need none (WebVTT
    /// subtitle segments, RFC 8216 §3.5).
    public var mapURI: String?
    /// `BYTERANGE` of that map (a single-file VOD: the init segment is the start of the file).
    public var mapByteRange: PlaylistByteRange?
    public var playlistType: PlaylistType?
    public var segments: [PlaylistSegment]
    public var endList: Bool
    /// `EXT-X-SERVER-CONTROL`.
    public var serverControl: ServerControl?
    /// `EXT-X-PART-INF:PART-TARGET`, rendered rounded UP to microseconds (so no part exceeds it).
    public var partTarget: MediaTime?
    /// Parts of the segment in progress, after the last complete segment (or the only ones, when no
    /// segment is complete yet: `segments == []`).
    public var trailingParts: [PlaylistPart]
    /// `EXT-X-DISCONTINUITY` and `EXT-X-MAP` for the segment in progress, rendered before its parts (and its
    /// preload hint): a client appending those parts must know they start a new timeline with a new init segment
    /// before the segment itself is listed (RFC 8216bis §4.4.4: Media Segment tags apply to the next segment,
    /// and a part's segment is the next one).
    public var trailingDiscontinuity = false
    public var trailingMapURI: String?
    /// The key of the segment in progress, rendered before its parts (or its first part's preload hint) when it
    /// differs from the key in force.
    public var trailingKey: PlaylistKey?
    public var preloadHint: PreloadHint?
    /// `EXT-X-SKIP:SKIPPED-SEGMENTS` (§4.4.5.2): this is a Playlist Delta Update in which that many segments,
    /// starting at `mediaSequence`, were replaced by the tag. `segments[0].sequence` is then
    /// `mediaSequence + skippedSegments`. `nil` for a full playlist. See `deltaUpdate()`.
    public var skippedSegments: UInt64?
    /// `EXT-X-SKIP:RECENTLY-REMOVED-DATERANGES` (§4.4.5.2), in a delta update that skips dateranges (`_HLS_skip=v2`):
    /// the IDs of dateranges recently removed from the playlist. `nil`: not written.
    public var recentlyRemovedDateRanges: [String]?
    /// `EXT-X-RENDITION-REPORT` tags, rendered last (before `EXT-X-ENDLIST`).
    public var renditionReports: [RenditionReport]
    /// `EXT-X-DATERANGE` tags (§4.4.5.1), rendered after the header's map, before the first segment. They are Media
    /// Metadata tags, not Media Segment tags: a delta update (`EXT-X-SKIP`) keeps every one (see `deltaUpdate()`).
    public var dateRanges: [DateRange] = []
    /// `--cue-tags legacy`: `EXT-X-CUE-OUT`/`-CONT`/`EXT-X-CUE-IN` before the segments of a break (`CueTags`).
    public var cueTags: [UInt64: String] = [:]

    public init(version: Int = 7, targetDuration: Int, mediaSequence: UInt64 = 0, discontinuitySequence: UInt64 = 0,
                independentSegments: Bool = true, mapURI: String?, playlistType: PlaylistType? = nil,
                segments: [PlaylistSegment], endList: Bool = false, serverControl: ServerControl? = nil,
                partTarget: MediaTime? = nil, trailingParts: [PlaylistPart] = [], preloadHint: PreloadHint? = nil,
                skippedSegments: UInt64? = nil, renditionReports: [RenditionReport] = []) {
        self.serverControl = serverControl
        self.partTarget = partTarget
        self.trailingParts = trailingParts
        self.preloadHint = preloadHint
        self.version = version
        self.targetDuration = targetDuration
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.independentSegments = independentSegments
        self.mapURI = mapURI
        self.playlistType = playlistType
        self.segments = segments
        self.endList = endList
        self.skippedSegments = skippedSegments
        self.renditionReports = renditionReports
    }

    /// `EXT-X-TARGETDURATION` rule: the largest `EXTINF` value (as rendered, i.e. truncated to microseconds)
    /// rounded to the nearest integer, halves up; at least 1.
    public static func targetDuration(for durations: [MediaTime]) -> Int {
        var best: Int64 = 1
        for d in durations {
            let rounded = (HLSFormat.micros(d) + 500_000) / 1_000_000
            if rounded > best { best = rounded }
        }
        return Int(clamping: best)
    }

    /// The `EXTINF` value rounded to the nearest integer, as compared with `EXT-X-TARGETDURATION`.
    public static func roundedDuration(_ d: MediaTime) -> Int {
        Int(clamping: (HLSFormat.micros(d) + 500_000) / 1_000_000)
    }

    /// The `EXTINF` text for a duration (exact decimal, truncated to microseconds, trailing zeros trimmed).
    public static func extinfText(_ d: MediaTime) -> String { HLSFormat.decimalSeconds(d) }

    /// ISO 8601 UTC with milliseconds, as written in `EXT-X-PROGRAM-DATE-TIME`.
    public static func programDateTimeText(_ clock: WallClock) -> String { HLSFormat.programDateTime(clock) }

    /// The `EXT-X-VERSION` that `render()` writes: `version`, or 9 if that is lower and the playlist has
    /// `EXT-X-SKIP` (§8).
    public var renderedVersion: Int {
        var v = skippedSegments == nil ? version : max(version, 9)
        // §8: "RECENTLY-REMOVED-DATERANGES" needs version 10.
        if skippedSegments != nil && recentlyRemovedDateRanges != nil { v = max(v, 10) }
        if mapByteRange != nil || segments.contains(where: { $0.byteRange != nil || $0.mapByteRange != nil }) { v = max(v, 4) }
        if iFramesOnly { v = max(v, 5) }
        return v
    }

    /// The Rendition Report another Rendition's playlist would carry for this playlist (§4.4.5.4): the last
    /// segment's sequence number, or, when parts are listed, the last part's sequence number and Part Index.
    /// `nil` when the playlist lists neither a segment nor a part (or the number would overflow).
    public func renditionReport(uri: String) -> RenditionReport? {
        if !trailingParts.isEmpty {
            let (msn, overflow) = segments.last.map { $0.sequence.addingReportingOverflow(1) }
                ?? mediaSequence.addingReportingOverflow(skippedSegments ?? 0)
            return overflow ? nil : RenditionReport(uri: uri, lastMSN: msn, lastPart: trailingParts.count - 1)
        }
        guard let last = segments.last else { return nil }
        return RenditionReport(uri: uri, lastMSN: last.sequence, lastPart: last.parts.isEmpty ? nil : last.parts.count - 1)
    }

    /// Renders the playlist; pure. Tags follow RFC 8216bis order.
    public func render() -> String {
        var out = ""
        out.reserveCapacity(200 + segments.count * 110)
        out += "#EXTM3U\n#EXT-X-VERSION:\(renderedVersion)\n#EXT-X-TARGETDURATION:\(targetDuration)\n"
        if let c = serverControl {
            var attrs: [String] = []
            if c.canBlockReload { attrs.append("CAN-BLOCK-RELOAD=YES") }
            if let p = c.partHoldBack { attrs.append("PART-HOLD-BACK=" + HLSFormat.decimalSeconds(p)) }
            if let h = c.holdBack { attrs.append("HOLD-BACK=" + HLSFormat.decimalSeconds(h)) }
            if let s = c.canSkipUntil { attrs.append("CAN-SKIP-UNTIL=" + HLSFormat.decimalSeconds(s)) }
            if c.canSkipDateRanges { attrs.append("CAN-SKIP-DATERANGES=YES") }
            out += "#EXT-X-SERVER-CONTROL:" + attrs.joined(separator: ",") + "\n"
        }
        if let partTarget {
            out += "#EXT-X-PART-INF:PART-TARGET=" + HLSFormat.decimal(micros: HLSFormat.microsUp(partTarget)) + "\n"
        }
        out += "#EXT-X-MEDIA-SEQUENCE:\(mediaSequence)\n"
        if discontinuitySequence != 0 { out += "#EXT-X-DISCONTINUITY-SEQUENCE:\(discontinuitySequence)\n" }
        if let playlistType { out += "#EXT-X-PLAYLIST-TYPE:\(playlistType.rawValue)\n" }
        if iFramesOnly { out += "#EXT-X-I-FRAMES-ONLY\n" }
        if independentSegments { out += "#EXT-X-INDEPENDENT-SEGMENTS\n" }
        // §4.4.5.2: "the EXT-X-SKIP tag replaces the segment URI lines and all Media Segment Tags that are
        // applied to those segments", so it stands where they stood: before the map (a Media Segment tag) that
        // applies to the first listed segment. hls.js (m3u8-parser.ts, `case 'SKIP'`) pushes one placeholder
        // per skipped segment and advances the sequence number, so the tag must precede every segment line.
        if let skippedSegments {
            out += "#EXT-X-SKIP:SKIPPED-SEGMENTS=\(skippedSegments)"
            if let removed = recentlyRemovedDateRanges {
                out += ",RECENTLY-REMOVED-DATERANGES=\"" + removed.joined(separator: "\t") + "\""
            }
            out += "\n"
        }
        // The header map precedes every key: the init segment is clear (`PlaylistKey`). With no key in force at the
        // first listed segment, it states its own key, in a full playlist and a delta update alike.
        if let mapURI { Self.renderMap(mapURI, mapByteRange, into: &out) }
        for d in dateRanges { out += d.line + "\n" }
        var currentMap = mapURI ?? ""
        var currentMapRange = mapByteRange
        var currentKey: PlaylistKey?
        for s in segments {
            if let cue = cueTags[s.sequence] { out += cue }
            Self.renderSegment(s, mapInForce: &currentMap, mapRangeInForce: &currentMapRange, keyInForce: &currentKey, into: &out)
        }
        if !trailingParts.isEmpty || preloadHint != nil {
            if trailingDiscontinuity { out += "#EXT-X-DISCONTINUITY\n" }
            if let m = trailingMapURI, m != currentMap {
                Self.clearKey(&currentKey, into: &out)
                out += "#EXT-X-MAP:URI=\"\(m)\"\n"
            }
            // Before the parts, or the preload hint of the next segment's first part; without a trailing key (a
            // model that does not say) the key in force stays.
            if trailingKey != nil || !trailingParts.isEmpty { Self.renderKey(trailingKey, keyInForce: &currentKey, into: &out) }
        }
        for p in trailingParts { Self.renderPart(p, into: &out) }
        if let h = preloadHint { out += "#EXT-X-PRELOAD-HINT:TYPE=\(h.type.rawValue),URI=\"\(h.uri)\"\n" }
        for r in renditionReports {
            out += "#EXT-X-RENDITION-REPORT:URI=\"\(r.uri)\",LAST-MSN=\(r.lastMSN)"
            out += r.lastPart.map { ",LAST-PART=\($0)\n" } ?? "\n"
        }
        if endList { out += "#EXT-X-ENDLIST\n" }
        return out
    }

    /// §4.3.2.5: "BYTERANGE: The value is a quoted-string specifying a byte range into the resource specified by
    /// the URI attribute."
    private static func renderMap(_ uri: String, _ range: PlaylistByteRange?, into out: inout String) {
        out += "#EXT-X-MAP:URI=\"" + uri + "\""
        if let range { out += ",BYTERANGE=\"" + range.text + "\"" }
        out += "\n"
    }

    /// The lines of one segment, exactly as `render()` writes them: `EXT-X-DISCONTINUITY`, `EXT-X-MAP` when
    /// `s.mapURI` (or its byte range) differs from the map in force (which it then updates),
    /// `EXT-X-PROGRAM-DATE-TIME`, parts, `EXTINF`, `EXT-X-BYTERANGE` and the URI. A growing playlist (a recording)
    /// appends these lines without rendering the rest again.
    public static func renderSegment(_ s: PlaylistSegment, mapInForce: inout String, mapRangeInForce: inout PlaylistByteRange?,
                                     into out: inout String) {
        var key = s.key
        renderSegment(s, mapInForce: &mapInForce, mapRangeInForce: &mapRangeInForce, keyInForce: &key, into: &out)
    }

    /// `renderSegment` with the key in force too: `EXT-X-KEY` after the map when the segment's key differs from it; a
    /// new map is preceded by `EXT-X-KEY:METHOD=NONE` while a key is in force, so the init segment stays clear
    /// (RFC 8216bis §4.4.4.4, see `PlaylistKey`).
    public static func renderSegment(_ s: PlaylistSegment, mapInForce: inout String, mapRangeInForce: inout PlaylistByteRange?,
                                     keyInForce: inout PlaylistKey?, into out: inout String) {
        if s.discontinuity { out += "#EXT-X-DISCONTINUITY\n" }
        if let m = s.mapURI, m != mapInForce || s.mapByteRange != mapRangeInForce {
            clearKey(&keyInForce, into: &out)
            renderMap(m, s.mapByteRange, into: &out)
            mapInForce = m
            mapRangeInForce = s.mapByteRange
        }
        renderKey(s.key, keyInForce: &keyInForce, into: &out)
        if let pdt = s.programDateTime { out += "#EXT-X-PROGRAM-DATE-TIME:" + HLSFormat.programDateTime(pdt) + "\n" }
        for p in s.parts { renderPart(p, into: &out) }
        out += "#EXTINF:" + HLSFormat.decimalSeconds(s.duration) + ",\n"
        if let r = s.byteRange { out += "#EXT-X-BYTERANGE:" + r.text + "\n" }
        out += s.uri + "\n"
    }

    /// `renderSegment` for playlists without byte ranges (one file per segment).
    public static func renderSegment(_ s: PlaylistSegment, mapInForce: inout String, into out: inout String) {
        var range: PlaylistByteRange?
        renderSegment(s, mapInForce: &mapInForce, mapRangeInForce: &range, into: &out)
    }

    /// `key` when it differs from the key in force; `METHOD=NONE` for a clear object after encrypted ones.
    private static func renderKey(_ key: PlaylistKey?, keyInForce: inout PlaylistKey?, into out: inout String) {
        guard key != keyInForce else { return }
        guard let key else { return clearKey(&keyInForce, into: &out) }
        out += key.line + "\n"
        keyInForce = key
    }

    /// `EXT-X-KEY:METHOD=NONE` if a key is in force: what follows (a map) is clear.
    private static func clearKey(_ keyInForce: inout PlaylistKey?, into out: inout String) {
        guard keyInForce != nil else { return }
        out += PlaylistKey.none.line + "\n"
        keyInForce = nil
    }

    private static func renderPart(_ p: PlaylistPart, into out: inout String) {
        out += "#EXT-X-PART:DURATION=" + HLSFormat.decimalSeconds(p.duration) + ",URI=\"" + p.uri + "\""
        out += p.independent ? ",INDEPENDENT=YES\n" : "\n"
    }
}
