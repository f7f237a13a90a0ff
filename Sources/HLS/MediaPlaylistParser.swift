import MediaCore

extension MediaPlaylist {
    /// Parses a media playlist. Durations come back in a 1/1 000 000 timescale (what `EXTINF` can express).
    /// Unknown tags and comments are ignored; malformed known tags throw.
    ///
    /// A Playlist Delta Update (`EXT-X-SKIP`) parses into `skippedSegments`, and the listed segments are
    /// numbered from `EXT-X-MEDIA-SEQUENCE + SKIPPED-SEGMENTS`. `EXT-X-RENDITION-REPORT` attributes the
    /// server omitted because they equal this playlist's own report (§4.4.5.4: "A server MAY omit adding an
    /// attribute to an EXT-X-RENDITION-REPORT tag - even a mandatory attribute - if its value is the same as
    /// that of the Rendition Report of the Media Playlist to which the EXT-X-RENDITION-REPORT tag is being
    /// added") are filled in from `renditionReport(uri:)`.
    public static func parse(_ text: String) throws -> MediaPlaylist {
        var iterator = playlistLines(text).makeIterator()
        guard let first = iterator.next(), first.line == "#EXTM3U" else { throw HLSError.missingHeader }
        var version = 1
        var targetDuration: Int?
        var mediaSequence: UInt64 = 0
        var discontinuitySequence: UInt64 = 0
        var independent = false
        var iFramesOnly = false
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
        var keyInForce: PlaylistKey?
        // The previous line was an EXT-X-KEY: a key with another KEYFORMAT right after it joins it.
        var lastWasKey = false
        var pendingByteRange: (length: Int, offset: Int?, line: Int)?
        var mapByteRange: PlaylistByteRange?
        var pendingMapByteRange: PlaylistByteRange?
        var serverControl: ServerControl?
        var partTarget: MediaTime?
        var preloadHint: PreloadHint?
        var skippedSegments: UInt64?
        var skipLine = 0
        var recentlyRemoved: [String]?
        // Rendition reports as written (nil = attribute omitted), completed once the playlist is known.
        var reports: [(line: Int, uri: String, lastMSN: UInt64?, lastPart: Int?)] = []
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
            defer { lastWasKey = line.hasPrefix("#EXT-X-KEY:") }
            if !line.hasPrefix("#") {
                guard let duration = pendingDuration else { throw HLSError.unexpectedURI(line: n) }
                let (first, o1) = mediaSequence.addingReportingOverflow(skippedSegments ?? 0)
                let (sequence, o2) = first.addingReportingOverflow(UInt64(segments.count))
                guard !o1, !o2 else { throw HLSError.invalidTag(line: n, tag: "EXT-X-MEDIA-SEQUENCE") }
                var byteRange: PlaylistByteRange?
                if let r = pendingByteRange {
                    // §4.3.2.2: "If o is not present, a previous Media Segment MUST appear in the Playlist file and
                    // MUST be a sub-range of the same media resource, or the Media Segment is undefined and the
                    // client MUST fail to parse the Playlist."
                    var offset = r.offset
                    if offset == nil, let previous = segments.last, previous.uri == line, let p = previous.byteRange {
                        offset = p.offset + p.length
                    }
                    guard let offset, offset <= Int.max - r.length else { throw HLSError.invalidTag(line: r.line, tag: "EXT-X-BYTERANGE") }
                    byteRange = PlaylistByteRange(length: r.length, offset: offset)
                }
                segments.append(PlaylistSegment(
                    sequence: sequence, uri: String(line), duration: duration,
                    programDateTime: pendingPDT, discontinuity: pendingDiscontinuity, mapURI: pendingMap,
                    parts: pendingParts, byteRange: byteRange, mapByteRange: pendingMap == nil ? nil : pendingMapByteRange))
                segments[segments.count - 1].key = keyInForce
                pendingDuration = nil; pendingDiscontinuity = false; pendingMap = nil; pendingPDT = nil
                pendingParts = []; pendingByteRange = nil; pendingMapByteRange = nil
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
            } else if line == "#EXT-X-I-FRAMES-ONLY" {
                iFramesOnly = true
            } else if let v = tagValue(line, "#EXT-X-MAP:") {
                let attrs = try AttributeList.parse(v, line: n)
                guard let uri = attrs.first(where: { $0.name == "URI" })?.value else {
                    throw HLSError.invalidAttribute(line: n, name: "URI")
                }
                var range: PlaylistByteRange?
                if let text = attrs.first(where: { $0.name == "BYTERANGE" })?.value {
                    // A map has no previous sub-range to continue: an absent offset is the start of the resource.
                    guard let r = Self.byteRange(text) else { throw HLSError.invalidAttribute(line: n, name: "BYTERANGE") }
                    range = PlaylistByteRange(length: r.length, offset: r.offset ?? 0)
                }
                if mapURI == nil && segments.isEmpty && pendingDuration == nil && !pendingDiscontinuity {
                    mapURI = String(uri)
                    mapByteRange = range
                } else {
                    pendingMap = String(uri)
                    pendingMapByteRange = range
                }
            } else if let v = tagValue(line, "#EXT-X-KEY:") {
                let key = try Self.key(v, line: n)
                if key.method != .none, let current = keyInForce, lastWasKey,
                   key.keyFormat != current.keyFormat, !current.alternatives.contains(where: { $0.keyFormat == key.keyFormat }) {
                    // Another key format for the same segments (`PlaylistKey.alternatives`).
                    keyInForce?.alternatives.append(key)
                } else {
                    keyInForce = key.method == .none ? nil : key
                }
            } else if let v = tagValue(line, "#EXT-X-BYTERANGE:") {
                guard let r = Self.byteRange(v) else { throw HLSError.invalidTag(line: n, tag: "EXT-X-BYTERANGE") }
                pendingByteRange = (r.length, r.offset, n)
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
                    case "CAN-SKIP-UNTIL": c.canSkipUntil = try micros(value, n, name)
                    case "CAN-SKIP-DATERANGES": c.canSkipDateRanges = value == "YES"
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
            } else if let v = tagValue(line, "#EXT-X-SKIP:") {
                // §4.4.5.2: "This tag MUST NOT appear more than once in a Playlist." It stands for segments
                // that precede every listed one, so nothing of a listed segment may come before it.
                guard skippedSegments == nil, segments.isEmpty, pendingDuration == nil, pendingParts.isEmpty,
                      !pendingDiscontinuity, pendingMap == nil, pendingPDT == nil else {
                    throw HLSError.invalidTag(line: n, tag: "EXT-X-SKIP")
                }
                var count: UInt64?
                for (name, value) in try AttributeList.parse(v, line: n) {
                    if name == "RECENTLY-REMOVED-DATERANGES" {
                        recentlyRemoved = value.isEmpty ? [] : value.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                        continue
                    }
                    guard name == "SKIPPED-SEGMENTS" else { continue }
                    guard let c: UInt64 = AttributeList.decimalInteger(value) else {
                        throw HLSError.invalidAttribute(line: n, name: name)
                    }
                    count = c
                }
                guard let count else { throw HLSError.invalidAttribute(line: n, name: "SKIPPED-SEGMENTS") }
                skippedSegments = count
                skipLine = n
            } else if line == "#EXT-X-SKIP" {
                throw HLSError.invalidAttribute(line: n, name: "SKIPPED-SEGMENTS")
            } else if let v = tagValue(line, "#EXT-X-RENDITION-REPORT:") {
                var uri: Substring?, lastMSN: UInt64?, lastPart: Int?
                for (name, value) in try AttributeList.parse(v, line: n) {
                    switch name {
                    case "URI": uri = value
                    case "LAST-MSN":
                        guard let m: UInt64 = AttributeList.decimalInteger(value) else {
                            throw HLSError.invalidAttribute(line: n, name: name)
                        }
                        lastMSN = m
                    case "LAST-PART":
                        guard let p: Int = AttributeList.decimalInteger(value) else {
                            throw HLSError.invalidAttribute(line: n, name: name)
                        }
                        lastPart = p
                    default: break
                    }
                }
                guard let uri else { throw HLSError.invalidAttribute(line: n, name: "URI") }
                reports.append((n, String(uri), lastMSN, lastPart))
            }
        }
        if pendingDuration != nil { throw HLSError.missingURI(line: 0) }
        guard let targetDuration else { throw HLSError.missingTag("EXT-X-TARGETDURATION") }
        // §8: "A Playlist MUST indicate an EXT-X-VERSION of 9 or higher if it contains: The EXT-X-SKIP tag."
        if let skippedSegments {
            guard version >= 9 else { throw HLSError.invalidTag(line: skipLine, tag: "EXT-X-VERSION") }
            guard !mediaSequence.addingReportingOverflow(skippedSegments).overflow else {
                throw HLSError.invalidTag(line: skipLine, tag: "EXT-X-SKIP")
            }
        }
        var playlist = MediaPlaylist(
            version: version, targetDuration: targetDuration, mediaSequence: mediaSequence,
            discontinuitySequence: discontinuitySequence, independentSegments: independent, mapURI: mapURI,
            playlistType: playlistType, segments: segments, endList: endList, serverControl: serverControl,
            partTarget: partTarget, trailingParts: pendingParts, preloadHint: preloadHint,
            skippedSegments: skippedSegments)
        playlist.mapByteRange = mapByteRange
        playlist.iFramesOnly = iFramesOnly
        playlist.recentlyRemovedDateRanges = recentlyRemoved
        // Tags of the segment in progress, before its parts.
        playlist.trailingDiscontinuity = pendingDiscontinuity
        playlist.trailingMapURI = pendingMap
        if !pendingParts.isEmpty || preloadHint != nil { playlist.trailingKey = keyInForce }
        for r in reports {
            if let lastMSN = r.lastMSN, r.lastPart != nil || !playlistHasParts(playlist) {
                playlist.renditionReports.append(RenditionReport(uri: r.uri, lastMSN: lastMSN, lastPart: r.lastPart))
                continue
            }
            guard let own = playlist.renditionReport(uri: r.uri) else {
                throw HLSError.invalidAttribute(line: r.line, name: "LAST-MSN")
            }
            playlist.renditionReports.append(RenditionReport(uri: r.uri, lastMSN: r.lastMSN ?? own.lastMSN,
                                                             lastPart: r.lastPart ?? own.lastPart))
        }
        return playlist
    }

    /// `EXT-X-KEY`'s attributes (§4.3.2.4): `METHOD` (NONE, AES-128, SAMPLE-AES, SAMPLE-AES-CTR; another method is
    /// refused), `URI`, `IV`, `KEYFORMAT`, `KEYFORMATVERSIONS`.
    static func key(_ text: Substring, line n: Int) throws -> PlaylistKey {
        var method: PlaylistKey.Method?, uri: String?, iv: [UInt8]?, format: String?, versions: String?
        for (name, value) in try AttributeList.parse(text, line: n) {
            switch name {
            case "METHOD":
                guard let m = PlaylistKey.Method(rawValue: String(value)) else { throw HLSError.invalidAttribute(line: n, name: name) }
                method = m
            case "URI": uri = String(value)
            case "IV":
                guard let bytes = PlaylistKey.bytes(hex: value), bytes.count == 16 else { throw HLSError.invalidAttribute(line: n, name: name) }
                iv = bytes
            case "KEYFORMAT": format = String(value)
            case "KEYFORMATVERSIONS": versions = String(value)
            default: break
            }
        }
        guard let method else { throw HLSError.invalidAttribute(line: n, name: "METHOD") }
        if method == .none { return .none }
        guard uri != nil else { throw HLSError.invalidAttribute(line: n, name: "URI") }
        return PlaylistKey(method: method, uri: uri, iv: iv, keyFormat: format, keyFormatVersions: versions)
    }

    /// `<n>[@<o>]` (§4.3.2.2), decimal-integers.
    static func byteRange(_ text: Substring) -> (length: Int, offset: Int?)? {
        let pieces = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard let length: Int = AttributeList.decimalInteger(pieces[0]) else { return nil }
        guard pieces.count == 2 else { return (length, nil) }
        guard let offset: Int = AttributeList.decimalInteger(pieces[1]), offset <= Int.max - length else { return nil }
        return (length, offset)
    }

    private static func playlistHasParts(_ p: MediaPlaylist) -> Bool {
        !p.trailingParts.isEmpty || p.segments.contains { !$0.parts.isEmpty }
    }
}
