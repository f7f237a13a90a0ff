import MediaCore

/// One media segment as it appears in a media playlist.
public struct PlaylistSegment: Sendable, Equatable {
    /// Media sequence number of this segment.
    public var sequence: UInt64
    public var uri: String
    /// Exact duration; rendered as `EXTINF` truncated to microseconds.
    public var duration: MediaTime
    public var programDateTime: WallClock?
    /// `EXT-X-DISCONTINUITY` before this segment.
    public var discontinuity: Bool
    /// `EXT-X-MAP` to emit before this segment. Rendered only when it differs from the map in force
    /// (the playlist's `mapURI`, or the last segment-level map); parsing sets it only where a tag appears.
    public var mapURI: String?

    public init(sequence: UInt64, uri: String, duration: MediaTime, programDateTime: WallClock? = nil,
                discontinuity: Bool = false, mapURI: String? = nil) {
        self.sequence = sequence
        self.uri = uri
        self.duration = duration
        self.programDateTime = programDateTime
        self.discontinuity = discontinuity
        self.mapURI = mapURI
    }
}

/// A media playlist (RFC 8216bis §4.4.3) for fMP4 segments.
///
/// ```
/// #EXTM3U
/// #EXT-X-VERSION:7
/// #EXT-X-TARGETDURATION:2
/// #EXT-X-MEDIA-SEQUENCE:10
/// #EXT-X-DISCONTINUITY-SEQUENCE:1
/// #EXT-X-PLAYLIST-TYPE:VOD          (only when set; never while live)
/// #EXT-X-INDEPENDENT-SEGMENTS
/// #EXT-X-MAP:URI="init.mp4"
/// #EXT-X-DISCONTINUITY              (per segment)
/// #EXT-X-MAP:URI="init1.mp4"        (per segment, when the map changes)
/// #EXT-X-PROGRAM-DATE-TIME:2026-11-22T04:20:26.123Z
/// #EXTINF:1.001,
/// seg10.m4s
/// #EXT-X-ENDLIST
/// ```
public struct MediaPlaylist: Sendable, Equatable {
    public enum PlaylistType: String, Sendable { case vod = "VOD", event = "EVENT" }

    public var version: Int = 7
    public var targetDuration: Int
    public var mediaSequence: UInt64
    public var discontinuitySequence: UInt64
    public var independentSegments: Bool = true
    public var mapURI: String
    public var playlistType: PlaylistType?
    public var segments: [PlaylistSegment]
    public var endList: Bool

    public init(version: Int = 7, targetDuration: Int, mediaSequence: UInt64 = 0, discontinuitySequence: UInt64 = 0,
                independentSegments: Bool = true, mapURI: String, playlistType: PlaylistType? = nil,
                segments: [PlaylistSegment], endList: Bool = false) {
        self.version = version
        self.targetDuration = targetDuration
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.independentSegments = independentSegments
        self.mapURI = mapURI
        self.playlistType = playlistType
        self.segments = segments
        self.endList = endList
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

    /// Renders the playlist; pure. Tags follow RFC 8216bis order.
    public func render() -> String {
        var out = ""
        out.reserveCapacity(200 + segments.count * 110)
        out += "#EXTM3U\n#EXT-X-VERSION:\(version)\n#EXT-X-TARGETDURATION:\(targetDuration)\n"
        out += "#EXT-X-MEDIA-SEQUENCE:\(mediaSequence)\n"
        if discontinuitySequence != 0 { out += "#EXT-X-DISCONTINUITY-SEQUENCE:\(discontinuitySequence)\n" }
        if let playlistType { out += "#EXT-X-PLAYLIST-TYPE:\(playlistType.rawValue)\n" }
        if independentSegments { out += "#EXT-X-INDEPENDENT-SEGMENTS\n" }
        out += "#EXT-X-MAP:URI=\"\(mapURI)\"\n"
        var currentMap = mapURI
        for s in segments {
            if s.discontinuity { out += "#EXT-X-DISCONTINUITY\n" }
            if let m = s.mapURI, m != currentMap {
                out += "#EXT-X-MAP:URI=\"\(m)\"\n"
                currentMap = m
            }
            if let pdt = s.programDateTime { out += "#EXT-X-PROGRAM-DATE-TIME:" + HLSFormat.programDateTime(pdt) + "\n" }
            out += "#EXTINF:" + HLSFormat.decimalSeconds(s.duration) + ",\n" + s.uri + "\n"
        }
        if endList { out += "#EXT-X-ENDLIST\n" }
        return out
    }

    /// Parses a media playlist. Durations come back in a 1/1 000 000 timescale (what `EXTINF` can express).
    /// Unknown tags and comments are ignored; malformed known tags throw.
    public static func parse(_ text: String) throws -> MediaPlaylist {
        var iterator = playlistLines(text).makeIterator()
        guard let first = iterator.next(), first.line == "#EXTM3U" else { throw HLSError.missingHeader }
        var version = 1
        var targetDuration: Int?
        var mediaSequence: UInt64 = 0
        var discontinuitySequence: UInt64 = 0
        var independent = false
        var mapURI: String?
        var playlistType: PlaylistType?
        var endList = false
        var segments: [PlaylistSegment] = []
        // Pending per-segment state.
        var pendingDuration: MediaTime?
        var pendingDiscontinuity = false
        var pendingMap: String?
        var pendingPDT: WallClock?

        func tagValue(_ line: Substring, _ tag: String) -> Substring? {
            guard line.hasPrefix(tag) else { return nil }
            return line.dropFirst(tag.count)
        }
        func int<T: FixedWidthInteger>(_ v: Substring, _ n: Int, _ tag: String) throws -> T {
            guard let x = T(v) else { throw HLSError.invalidTag(line: n, tag: tag) }
            return x
        }

        while let (n, line) = iterator.next() {
            if !line.hasPrefix("#") {
                guard let duration = pendingDuration else { throw HLSError.unexpectedURI(line: n) }
                segments.append(PlaylistSegment(
                    sequence: mediaSequence + UInt64(segments.count), uri: String(line), duration: duration,
                    programDateTime: pendingPDT, discontinuity: pendingDiscontinuity, mapURI: pendingMap))
                pendingDuration = nil; pendingDiscontinuity = false; pendingMap = nil; pendingPDT = nil
                continue
            }
            if !line.hasPrefix("#EXT") { continue }  // comment
            if pendingDuration != nil && !line.hasPrefix("#EXT-X-") {
                throw HLSError.missingURI(line: n)
            }
            if let v = tagValue(line, "#EXT-X-VERSION:") {
                version = try int(v, n, "EXT-X-VERSION")
            } else if let v = tagValue(line, "#EXT-X-TARGETDURATION:") {
                targetDuration = try int(v, n, "EXT-X-TARGETDURATION")
            } else if let v = tagValue(line, "#EXT-X-MEDIA-SEQUENCE:") {
                guard segments.isEmpty else { throw HLSError.invalidTag(line: n, tag: "EXT-X-MEDIA-SEQUENCE") }
                mediaSequence = try int(v, n, "EXT-X-MEDIA-SEQUENCE")
            } else if let v = tagValue(line, "#EXT-X-DISCONTINUITY-SEQUENCE:") {
                discontinuitySequence = try int(v, n, "EXT-X-DISCONTINUITY-SEQUENCE")
            } else if let v = tagValue(line, "#EXT-X-PLAYLIST-TYPE:") {
                guard let t = PlaylistType(rawValue: String(v)) else {
                    throw HLSError.invalidTag(line: n, tag: "EXT-X-PLAYLIST-TYPE")
                }
                playlistType = t
            } else if line == "#EXT-X-INDEPENDENT-SEGMENTS" {
                independent = true
            } else if let v = tagValue(line, "#EXT-X-MAP:") {
                let attrs = try AttributeList.parse(v, line: n)
                guard let uri = attrs.first(where: { $0.name == "URI" })?.value else {
                    throw HLSError.invalidAttribute(line: n, name: "URI")
                }
                if mapURI == nil && segments.isEmpty && pendingDuration == nil && !pendingDiscontinuity {
                    mapURI = String(uri)
                } else {
                    pendingMap = String(uri)
                }
            } else if line == "#EXT-X-DISCONTINUITY" {
                pendingDiscontinuity = true
            } else if let v = tagValue(line, "#EXT-X-PROGRAM-DATE-TIME:") {
                guard let pdt = HLSFormat.parseProgramDateTime(v) else {
                    throw HLSError.invalidTag(line: n, tag: "EXT-X-PROGRAM-DATE-TIME")
                }
                pendingPDT = pdt
            } else if let v = tagValue(line, "#EXTINF:") {
                let number = v.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first ?? v
                guard let micros = HLSFormat.parseMicros(number) else { throw HLSError.invalidTag(line: n, tag: "EXTINF") }
                pendingDuration = MediaTime(value: micros, timescale: 1_000_000)
            } else if line == "#EXT-X-ENDLIST" {
                endList = true
            }
        }
        if pendingDuration != nil { throw HLSError.missingURI(line: 0) }
        guard let targetDuration else { throw HLSError.missingTag("EXT-X-TARGETDURATION") }
        guard let mapURI else { throw HLSError.missingTag("EXT-X-MAP") }
        return MediaPlaylist(version: version, targetDuration: targetDuration, mediaSequence: mediaSequence,
                             discontinuitySequence: discontinuitySequence, independentSegments: independent,
                             mapURI: mapURI, playlistType: playlistType, segments: segments, endList: endList)
    }
}
