import MediaCore

/// One partial segment (`EXT-X-PART`, RFC 8216bis §4.4.4.9).
public struct PlaylistPart: Sendable, Equatable {
    public var uri: String
    /// Exact duration; rendered truncated to microseconds (never above the real value).
    public var duration: MediaTime
    /// `INDEPENDENT=YES`: the part starts with an independent frame (keyframe).
    public var independent: Bool

    public init(uri: String, duration: MediaTime, independent: Bool = false) {
        self.uri = uri
        self.duration = duration
        self.independent = independent
    }
}

/// `EXT-X-SERVER-CONTROL` (RFC 8216bis §4.4.3.8). `CAN-SKIP-UNTIL` is not modelled (no delta updates).
public struct ServerControl: Sendable, Equatable {
    public var canBlockReload: Bool
    public var holdBack: MediaTime?
    public var partHoldBack: MediaTime?

    public init(canBlockReload: Bool, holdBack: MediaTime? = nil, partHoldBack: MediaTime? = nil) {
        self.canBlockReload = canBlockReload
        self.holdBack = holdBack
        self.partHoldBack = partHoldBack
    }
}

/// `EXT-X-PRELOAD-HINT` (RFC 8216bis §4.4.5.3).
public struct PreloadHint: Sendable, Equatable {
    public enum HintType: String, Sendable { case part = "PART", map = "MAP" }
    public var type: HintType
    public var uri: String

    public init(type: HintType = .part, uri: String) {
        self.type = type
        self.uri = uri
    }
}

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
    /// `EXT-X-PART` lines rendered before this segment's `EXTINF` (LL-HLS; usually only near the live edge).
    public var parts: [PlaylistPart]

    public init(sequence: UInt64, uri: String, duration: MediaTime, programDateTime: WallClock? = nil,
                discontinuity: Bool = false, mapURI: String? = nil, parts: [PlaylistPart] = []) {
        self.parts = parts
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
///
/// Low-Latency HLS (when `partTarget` is set): `EXT-X-SERVER-CONTROL` and `EXT-X-PART-INF` follow
/// `EXT-X-TARGETDURATION`; `EXT-X-PART` lines precede each segment's `EXTINF`; the parts of the segment in
/// progress (`trailingParts`) and `EXT-X-PRELOAD-HINT` close the playlist. None of these needs a higher
/// `EXT-X-VERSION`: RFC 8216bis §8 (and Apple's "About the EXT-X-VERSION tag") ties version 9 only to
/// `EXT-X-SKIP` (delta updates, not offered here) and 10 to `RECENTLY-REMOVED-DATERANGES`; `EXT-X-MAP`
/// without I-frames-only needs 6. The playlist keeps the version it always had (7).
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
    /// `EXT-X-SERVER-CONTROL`.
    public var serverControl: ServerControl?
    /// `EXT-X-PART-INF:PART-TARGET`, rendered rounded UP to microseconds (so no part exceeds it).
    public var partTarget: MediaTime?
    /// Parts of the segment in progress, after the last complete segment.
    public var trailingParts: [PlaylistPart]
    public var preloadHint: PreloadHint?

    public init(version: Int = 7, targetDuration: Int, mediaSequence: UInt64 = 0, discontinuitySequence: UInt64 = 0,
                independentSegments: Bool = true, mapURI: String, playlistType: PlaylistType? = nil,
                segments: [PlaylistSegment], endList: Bool = false, serverControl: ServerControl? = nil,
                partTarget: MediaTime? = nil, trailingParts: [PlaylistPart] = [], preloadHint: PreloadHint? = nil) {
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
        if let c = serverControl {
            var attrs: [String] = []
            if c.canBlockReload { attrs.append("CAN-BLOCK-RELOAD=YES") }
            if let p = c.partHoldBack { attrs.append("PART-HOLD-BACK=" + HLSFormat.decimalSeconds(p)) }
            if let h = c.holdBack { attrs.append("HOLD-BACK=" + HLSFormat.decimalSeconds(h)) }
            out += "#EXT-X-SERVER-CONTROL:" + attrs.joined(separator: ",") + "\n"
        }
        if let partTarget {
            out += "#EXT-X-PART-INF:PART-TARGET=" + HLSFormat.decimal(micros: HLSFormat.microsUp(partTarget)) + "\n"
        }
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
            for p in s.parts { Self.renderPart(p, into: &out) }
            out += "#EXTINF:" + HLSFormat.decimalSeconds(s.duration) + ",\n" + s.uri + "\n"
        }
        for p in trailingParts { Self.renderPart(p, into: &out) }
        if let h = preloadHint { out += "#EXT-X-PRELOAD-HINT:TYPE=\(h.type.rawValue),URI=\"\(h.uri)\"\n" }
        if endList { out += "#EXT-X-ENDLIST\n" }
        return out
    }

    private static func renderPart(_ p: PlaylistPart, into out: inout String) {
        out += "#EXT-X-PART:DURATION=" + HLSFormat.decimalSeconds(p.duration) + ",URI=\"" + p.uri + "\""
        out += p.independent ? ",INDEPENDENT=YES\n" : "\n"
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
        var pendingParts: [PlaylistPart] = []
        var serverControl: ServerControl?
        var partTarget: MediaTime?
        var preloadHint: PreloadHint?
        func micros(_ v: Substring, _ n: Int, _ name: String) throws -> MediaTime {
            guard let m = HLSFormat.parseMicros(v) else { throw HLSError.invalidAttribute(line: n, name: name) }
            return MediaTime(value: m, timescale: 1_000_000)
        }

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
                    programDateTime: pendingPDT, discontinuity: pendingDiscontinuity, mapURI: pendingMap,
                    parts: pendingParts))
                pendingDuration = nil; pendingDiscontinuity = false; pendingMap = nil; pendingPDT = nil
                pendingParts = []
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
            } else if let v = tagValue(line, "#EXT-X-PART:") {
                var uri: Substring?, duration: MediaTime?, independent = false
                for (name, value) in try AttributeList.parse(v, line: n) {
                    switch name {
                    case "URI": uri = value
                    case "DURATION": duration = try micros(value, n, name)
                    case "INDEPENDENT": independent = value == "YES"
                    default: break
                    }
                }
                guard let uri else { throw HLSError.invalidAttribute(line: n, name: "URI") }
                guard let duration else { throw HLSError.invalidAttribute(line: n, name: "DURATION") }
                pendingParts.append(PlaylistPart(uri: String(uri), duration: duration, independent: independent))
            } else if let v = tagValue(line, "#EXT-X-PART-INF:") {
                let attrs = try AttributeList.parse(v, line: n)
                guard let t = attrs.first(where: { $0.name == "PART-TARGET" }) else {
                    throw HLSError.invalidAttribute(line: n, name: "PART-TARGET")
                }
                partTarget = try micros(t.value, n, "PART-TARGET")
            } else if let v = tagValue(line, "#EXT-X-SERVER-CONTROL:") {
                var c = ServerControl(canBlockReload: false)
                for (name, value) in try AttributeList.parse(v, line: n) {
                    switch name {
                    case "CAN-BLOCK-RELOAD": c.canBlockReload = value == "YES"
                    case "HOLD-BACK": c.holdBack = try micros(value, n, name)
                    case "PART-HOLD-BACK": c.partHoldBack = try micros(value, n, name)
                    default: break
                    }
                }
                serverControl = c
            } else if let v = tagValue(line, "#EXT-X-PRELOAD-HINT:") {
                var type: PreloadHint.HintType?, uri: Substring?
                for (name, value) in try AttributeList.parse(v, line: n) {
                    if name == "TYPE" {
                        guard let t = PreloadHint.HintType(rawValue: String(value)) else {
                            throw HLSError.invalidAttribute(line: n, name: name)
                        }
                        type = t
                    } else if name == "URI" {
                        uri = value
                    }
                }
                guard let type else { throw HLSError.invalidAttribute(line: n, name: "TYPE") }
                guard let uri else { throw HLSError.invalidAttribute(line: n, name: "URI") }
                preloadHint = PreloadHint(type: type, uri: String(uri))
            }
        }
        if pendingDuration != nil { throw HLSError.missingURI(line: 0) }
        guard let targetDuration else { throw HLSError.missingTag("EXT-X-TARGETDURATION") }
        guard let mapURI else { throw HLSError.missingTag("EXT-X-MAP") }
        return MediaPlaylist(version: version, targetDuration: targetDuration, mediaSequence: mediaSequence,
                             discontinuitySequence: discontinuitySequence, independentSegments: independent,
                             mapURI: mapURI, playlistType: playlistType, segments: segments, endList: endList,
                             serverControl: serverControl, partTarget: partTarget, trailingParts: pendingParts,
                             preloadHint: preloadHint)
    }
}
