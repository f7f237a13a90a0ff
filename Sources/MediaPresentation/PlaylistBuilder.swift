import HLS
import MediaCore

/// Playlists as pure functions of window snapshots and URI schemes (gohlslib `pkg/playlist`): no I/O, no locks,
/// the same code for the live origin, the VOD writer and the recorder.
///
/// The entry points a VOD writer or a recorder calls (their windows hold no payload, `P == Void`) are compiled for
/// that type here too (`@_specialize(exported:)`, as are `ManifestBuilder`'s): called from another module, a generic
/// builder otherwise runs unspecialized, looking type metadata up and copying through value witnesses for every
/// segment it lists (`package --single-file` of 600 segments: its four playlists and the MPD 8.5 ms → 3.7 ms).
public enum PlaylistBuilder {
    /// Delta updates (RFC 8216bis §4.4.3.8): "CAN-SKIP-UNTIL … MUST be at least six times the Target Duration".
    public static let skipTargetDurations = 6
    /// Parts are listed for segments within this many target durations of the playlist end (RFC 8216bis
    /// §4.4.4.9: "Partial Segments … SHOULD be removed from the Playlist once they are greater than three Target
    /// Durations from the end of the Playlist").
    static let partTargetDurations: Int64 = 3

    /// The media playlist of one rendition, `nil` until it is playable. `reports` are the
    /// `EXT-X-RENDITION-REPORT`s of the other renditions (LL-HLS); `skip` answers `_HLS_skip=YES` with a delta update.
    /// `singleFile`: every segment is a byte range of that file (`EXT-X-BYTERANGE`, and `EXT-X-MAP` with
    /// `BYTERANGE`), laid end to end from `mediaStart` by their `byteCount`s; the window must hold every segment
    /// from the first, all of one init segment (a VOD written by `VODWriter`).
    /// `uriQuery`: a query (without `?`) every listed URI carries (a signed URL's signature; `""`: none); `reports`
    /// carry theirs already.
    @_specialize(exported: true, where P == Void)
    public static func mediaPlaylist<P>(_ snap: WindowSnapshot<P>, scheme: URIScheme,
                                        playlistType: MediaPlaylist.PlaylistType?,
                                        reports: [RenditionReport] = [], skip: Bool = false, skipDateRanges: Bool = false,
                                        singleFile: SingleFileIndex? = nil, uriQuery: String = "",
                                        events signalling: EventSignalling = EventSignalling()) -> MediaPlaylist? {
        guard snap.isPlayable, let firstInit = snap.window.first?.initIndex ?? snap.inits.last?.index else { return nil }
        let suffixed = SuffixedScheme(scheme, uriQuery)
        let td = snap.targetDuration
        // A rendition published in whole segments (WebVTT, a wvtt text track) lists no parts, so its playlist has no
        // EXT-X-PART-INF (RFC 8216bis §4.4.3.7: REQUIRED only when the playlist has EXT-X-PART tags); it still
        // answers blocking reloads by segment (`_HLS_msn`), as the stream's other playlists do.
        let partTarget = scheme.wholeSegments ? nil : snap.policy.partTarget
        let blockingReload = snap.policy.partTarget != nil
        let scheme = suffixed
        let partsFrom = partTarget == nil ? snap.window.count : firstSegmentWithParts(snap, targetDuration: td)
        var previousInit = firstInit
        let segments = snap.window.enumerated().map { i, seg -> PlaylistSegment in
            let map: String? = seg.initIndex != previousInit ? scheme.mapURI(seg.initIndex) : nil
            previousInit = seg.initIndex
            var s = PlaylistSegment(sequence: seg.sequence, uri: scheme.segmentURI(seg.sequence), duration: seg.info.duration,
                                    programDateTime: seg.info.programDateTime, discontinuity: seg.discontinuity, mapURI: map,
                                    parts: i >= partsFrom ? playlistParts(seg.parts, seg.sequence, scheme) : [])
            s.key = scheme.key(seg.info.encryption)
            return s
        }
        var playlist = MediaPlaylist(targetDuration: td, mediaSequence: snap.mediaSequence,
                                     discontinuitySequence: snap.discontinuitySequence, mapURI: scheme.mapURI(firstInit),
                                     playlistType: renderedType(playlistType, snap), segments: segments, endList: snap.finished)
        playlist.dateRanges = snap.events.flatMap { e in [dateRange(e)] + (signalling.interstitial(e).map { [$0] } ?? []) }
        if signalling.legacyCueTags { playlist.cueTags = signalling.cueTags(snap.events, segments) }
        if blockingReload {
            // HOLD-BACK ≥ 3 × TARGETDURATION (§4.4.3.8).
            playlist.serverControl = ServerControl(canBlockReload: true, holdBack: .seconds(Int64(td) * 3))
            if !snap.finished {
                playlist.serverControl?.canSkipUntil = .seconds(Int64(td * skipTargetDurations))
                playlist.serverControl?.canSkipDateRanges = true
            }
            playlist.renditionReports = reports
        }
        if let partTarget { lowLatency(&playlist, snap, partTarget: partTarget, scheme: scheme) }
        if let singleFile { lay(&playlist, snap, in: singleFile) }
        if skip, let delta = playlist.deltaUpdate(skippingDateRanges: skipDateRanges,
                                                  recentlyRemoved: recentlyRemoved(snap, boundary: Int64(td * skipTargetDurations))) {
            return delta
        }
        return playlist
    }

    /// LL-HLS: the index of the first listed segment whose parts are listed, those that start within 3 target
    /// durations of the playlist end.
    private static func firstSegmentWithParts<P>(_ snap: WindowSnapshot<P>, targetDuration td: Int) -> Int {
        var partsFrom = snap.window.count
        let limit = Int64(td) * partTargetDurations * 1_000_000
        var fromEnd = snap.partial.reduce(Int64(0)) { $0 + micros($1.info.duration) }
        while partsFrom > 0 {
            let d = micros(snap.window[partsFrom - 1].info.duration)
            guard fromEnd + d <= limit else { break }
            fromEnd += d
            partsFrom -= 1
        }
        return partsFrom
    }

    /// An LL-HLS playlist's part hold-back, part target, trailing parts of the segment in progress and preload hint.
    private static func lowLatency<P>(_ playlist: inout MediaPlaylist, _ snap: WindowSnapshot<P>,
                                      partTarget: MediaTime, scheme: SuffixedScheme) {
        // PART-HOLD-BACK ≥ 3 × PART-TARGET (§4.4.3.8); the policy's part target is fixed for the stream, so it
        // never changes.
        let rendered = MediaTime.rescale(partTarget.value, from: partTarget.timescale, to: 1_000_000, rounding: .up)
        playlist.serverControl?.partHoldBack = MediaTime(value: rendered * 3, timescale: 1_000_000)
        playlist.partTarget = partTarget
        playlist.trailingParts = playlistParts(snap.partial, snap.nextSequence, scheme)
        playlist.trailingKey = scheme.key(snap.partial.first?.info.encryption
                                          ?? (snap.finished ? nil : snap.window.last?.info.nextEncryption))
        // A new init segment since the last segment: the segment in progress starts a new timeline, and its
        // parts must say so before the segment is listed.
        if !snap.finished, let current = snap.inits.last?.index, let last = snap.window.last?.initIndex, current != last {
            playlist.trailingDiscontinuity = true
            playlist.trailingMapURI = scheme.initURI(current)
        }
        if !snap.finished {
            playlist.preloadHint = PreloadHint(type: .part, uri: scheme.partURI(snap.nextSequence, snap.partial.count))
        }
    }

    /// Every segment a byte range of one file (`EXT-X-BYTERANGE`, `EXT-X-MAP` with `BYTERANGE`), laid end to end.
    private static func lay<P>(_ playlist: inout MediaPlaylist, _ snap: WindowSnapshot<P>, in singleFile: SingleFileIndex) {
        var offset = singleFile.mediaStart
        playlist.mapURI = singleFile.fileURI
        playlist.mapByteRange = PlaylistByteRange(length: singleFile.initRange.count, offset: singleFile.initRange.lowerBound)
        for (i, seg) in snap.window.enumerated() {
            playlist.segments[i].uri = singleFile.fileURI
            playlist.segments[i].byteRange = PlaylistByteRange(length: seg.info.byteCount, offset: offset)
            playlist.segments[i].mapURI = nil
            offset += seg.info.byteCount
        }
    }

    /// The IDs of the dateranges dropped within the Skip Boundary (`boundary` seconds) of the last segment's end: a client
    /// reloading with `_HLS_skip=v2` at least that often learns of each removal.
    static func recentlyRemoved<P>(_ snap: WindowSnapshot<P>, boundary: Int64) -> [String] {
        guard let last = snap.window.last, let pdt = last.info.programDateTime else { return snap.removedEvents.map(\.id) }
        let end = pdt.millisecondsSince1970 + MediaTime.rescale(last.info.duration.value, from: last.info.duration.timescale, to: 1000)
        return snap.removedEvents.filter { $0.at.millisecondsSince1970 >= end - boundary * 1000 }.map(\.id)
    }

    /// A listed event's `EXT-X-DATERANGE`: its out, in or command section as it came, `PLANNED-DURATION` from the
    /// cue, `DURATION` once the break ended.
    /// An ID3 event's: its text frames as `X-ID3-<frame id>` attributes (RFC 8216bis §4.4.5.1: "X-" attributes are
    /// client-defined; a value a quoted-string cannot hold is a hexadecimal-sequence of its UTF-8).
    public static func dateRange(_ e: ListedEvent) -> DateRange {
        var d = DateRange(id: e.id, startDate: e.startDate, duration: e.duration, plannedDuration: e.plannedDuration,
                          scte35Out: e.outSection, scte35In: e.inSection, scte35Cmd: e.commandSection)
        d.clientAttributes = e.id3Frames.map { ("X-ID3-" + $0.id, .text($0.text)) }
        return d
    }

    /// `EXT-X-PLAYLIST-TYPE` as rendered: `VOD` only once the window is finished (a VOD playlist cannot change).
    static func renderedType<P>(_ type: MediaPlaylist.PlaylistType?, _ snap: WindowSnapshot<P>) -> MediaPlaylist.PlaylistType? {
        switch type {
        case .event: .event
        case .vod: snap.finished ? .vod : nil
        case nil: nil
        }
    }

    /// `EXT-X-RENDITION-REPORT` for a rendition, from its snapshot (RFC 8216bis §4.4.5.4: LAST-MSN and LAST-PART
    /// are those of the last segment and part of the rendition's playlist).
    public static func renditionReport<P>(_ snap: WindowSnapshot<P>, scheme: URIScheme,
                                          uriQuery: String = "") -> RenditionReport? {
        guard snap.isPlayable, let last = snap.lastPosition else { return nil }
        return RenditionReport(uri: SuffixedScheme(scheme, uriQuery).playlistURI, lastMSN: last.msn, lastPart: last.part)
    }

    /// The multivariant playlist of a presentation, `nil` until every rendition is playable. Video renditions
    /// (or the muxed one) become `EXT-X-STREAM-INF` variants, ordered by BANDWIDTH, highest first; audio
    /// renditions become `EXT-X-MEDIA:TYPE=AUDIO` entries of their group, which the video variants name in
    /// `AUDIO=`. A variant's BANDWIDTH is its own peak plus the peak of its audio group (the variant stream is
    /// everything a client plays together, RFC 8216bis §4.4.6.2); CODECS lists both.
    ///
    /// `statistics` replaces what is measured over the snapshots' windows (a recorder measures every segment
    /// of the current init as it goes, and keeps only a one-segment window).
    /// `uriQuery`: a query (without `?`) every listed URI carries (`""`: none).
    /// `iFrames`: an `EXT-X-I-FRAME-STREAM-INF` for each variant whose window lists I-frames (`iFramePlaylist`), for
    /// an output that serves or writes those playlists.
    @_specialize(exported: true, where P == Void)
    public static func multivariant<P>(_ renditions: [Rendition], _ snapshots: [WindowSnapshot<P>],
                                       statistics measured: [VariantStatistics?]? = nil,
                                       uriQuery: String = "", iFrames: Bool = false) -> MultivariantPlaylist? {
        guard renditions.count == snapshots.count, snapshots.allSatisfy(\.isPlayable) else { return nil }
        let stats = zip(renditions, snapshots).enumerated().map { i, rs in
            measured.flatMap { $0.indices.contains(i) ? $0[i] : nil } ?? statistics(rs.0, rs.1)
        }
        let groups = AudioGroups(renditions, snapshots, stats, uriQuery: uriQuery)
        var media = groups.media
        var variants: [VariantStream] = []
        let subtitles = subtitleMedia(renditions, uriQuery: uriQuery)
        let subtitlePeak = zip(renditions, stats).filter { $0.0.isWebVTTSubtitles }.map(\.1.peakBitRate).max() ?? 0
        let subtitleAverage = zip(renditions, stats).filter { $0.0.isWebVTTSubtitles }.map(\.1.averageBitRate).max() ?? 0
        for (i, r) in renditions.enumerated() where r.kind.hasPictures {
            let named = r.kind == .video ? (r.audioGroup ?? (groups.codecs["audio"] != nil ? "audio" : nil))
                : (r.audioLabel != nil ? r.audioGroup : nil)
            variants.append(variant(r, snapshots[i], stats[i], audioGroup: named.flatMap { groups.codecs[$0] != nil ? $0 : nil },
                                    groupPeak: groups.peak, groupAverage: groups.average, groupCodecs: groups.codecs,
                                    uriQuery: uriQuery))
        }
        if variants.isEmpty {
            // Audio only: the audio renditions are the variants.
            media = []
            for (i, r) in renditions.enumerated() where r.kind == .audio {
                variants.append(variant(r, snapshots[i], stats[i], audioGroup: nil, groupPeak: [:], groupAverage: [:],
                                        groupCodecs: [:], uriQuery: uriQuery))
            }
        }
        if !subtitles.isEmpty {
            // §4.4.6.2 SUBTITLES on every variant; BANDWIDTH and AVERAGE-BANDWIDTH count the largest subtitle
            // rendition too (the variant stream is everything a client plays together).
            media += subtitles
            for i in variants.indices {
                variants[i].subtitlesGroup = Rendition.subtitleGroup
                variants[i].bandwidth += subtitlePeak
                variants[i].averageBandwidth = variants[i].averageBandwidth.map { $0 + subtitleAverage }
            }
        }
        let captions = captionMedia(renditions, snapshots)
        media += captions
        if captions.isEmpty, renditions.contains(where: \.kind.hasPictures) {
            for i in variants.indices { variants[i].closedCaptions = ClosedCaptionsReference.none }
        }
        variants.sort { $0.bandwidth > $1.bandwidth }
        let iFrameStreams = !iFrames ? [] : zip(renditions, snapshots).compactMap { r, snap in
            r.kind.hasPictures ? iFrameStream(snap, scheme: r.scheme, uriQuery: uriQuery) : nil
        }.sorted { $0.bandwidth > $1.bandwidth }
        var playlist = MultivariantPlaylist(variants: variants, media: media, iFrameStreams: iFrameStreams)
        // Sample encryption is signalled up front too, each key once: per init segment's key (per-track keys: one for SD,
        // one for HD, one for the audio...; with key periods, the latest of each, however far each rendition has got).
        // AES-128's URI is a key file per period, which a session key would only repeat.
        var kids: Set<[UInt8]> = []
        for e in snapshots.compactMap({ $0.window.last?.info.encryption ?? $0.partial.last?.info.encryption })
        where e.method.isSampleEncryption && kids.insert(e.defaultKeyID ?? []).inserted {
            playlist.sessionKeys.append(e.playlistKey())
        }
        return playlist
    }

    private static func variant<P>(_ r: Rendition, _ snap: WindowSnapshot<P>, _ s: VariantStatistics, audioGroup: String?,
                                   groupPeak: [String: Int], groupAverage: [String: Int],
                                   groupCodecs: [String: [String]], uriQuery: String) -> VariantStream {
        let video = snap.inits.last?.tracks.first { $0.kind == .video }
        var codecList = codecs(snap)
        var peak = s.peakBitRate
        var average = s.averageBitRate
        if let g = audioGroup {
            peak += groupPeak[g] ?? 0
            average += groupAverage[g] ?? 0
            // §4.4.6.2 CODECS: "every media format present in any Media Segment in any of the Renditions specified by
            // the Variant Stream": each audio codec of the group once (a muxed variant lists its own already).
            let own = Set(codecList.split(separator: ","))
            for c in groupCodecs[g] ?? [] where !own.contains(Substring(c)) { codecList += "," + c }
        }
        var v = VariantStream(
            bandwidth: max(1, peak), averageBandwidth: max(1, average), codecs: codecList,
            resolution: video.flatMap { $0.width > 0 && $0.height > 0 ? .init(width: $0.width, height: $0.height) : nil },
            frameRate: video == nil ? nil : (s.frameRate ?? r.declaredFrameRate),
            uri: SuffixedScheme(r.scheme, uriQuery).playlistURI)
        v.audioGroup = audioGroup
        v.videoRange = video?.colour?.videoRange
        v.supplementalCodecs = video?.dolbyVision?.supplementalCodecs
        if let c = video?.captions, !c.isEmpty { v.closedCaptions = .group(captionGroup) }
        return v
    }

    static let captionGroup = "cc"

    /// The subtitle renditions (RFC 8216bis §4.4.6.1): one `EXT-X-MEDIA:TYPE=SUBTITLES` each in group "subs", with its
    /// `URI` (§4.4.6.2.1: required for SUBTITLES), `LANGUAGE`, `NAME`, `DEFAULT`, `AUTOSELECT` and `FORCED`.
    private static func subtitleMedia(_ renditions: [Rendition], uriQuery: String) -> [MediaRendition] {
        renditions.filter(\.isWebVTTSubtitles).map { r in
            let label = r.subtitleLabel ?? SubtitleLabel(language: r.language.flatMap(LanguageTag.init), name: r.name)
            var m = MediaRendition(type: .subtitles, groupID: Rendition.subtitleGroup, name: label.name,
                                   language: label.language?.bcp47, isDefault: label.isDefault, autoselect: label.autoselect,
                                   uri: SuffixedScheme(r.scheme, uriQuery).playlistURI)
            m.forced = label.forced
            return m
        }
    }

    /// The closed captions of the variants' video (RFC 8216bis §4.4.6.1, §4.4.6.2): one `EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS`
    /// per service in group "cc" (no `URI`, an `INSTREAM-ID`; `DEFAULT=NO`, `AUTOSELECT=YES` so a player may turn them on
    /// by the viewer's accessibility settings), named by language and unique in the group. When no variant has any,
    /// every variant says `CLOSED-CAPTIONS=NONE` (the player need not look for captions in the video).
    private static func captionMedia<P>(_ renditions: [Rendition], _ snapshots: [WindowSnapshot<P>]) -> [MediaRendition] {
        var services: [CaptionService] = []
        for (r, snap) in zip(renditions, snapshots) where r.kind.hasPictures {
            for c in snap.inits.last?.tracks.first(where: { $0.kind == .video })?.captions ?? []
            where !services.contains(where: { $0.instreamID == c.instreamID }) {
                services.append(c)
            }
        }
        let names = services.map(\.name)
        return services.map { c in
            // §4.4.6.1.1: "All EXT-X-MEDIA tags in the same Group MUST have different NAME attributes."
            let name = names.filter { $0 == c.name }.count > 1 ? "\(c.name) (\(c.instreamID))" : c.name
            return MediaRendition(type: .closedCaptions, groupID: captionGroup, name: name, language: c.language?.bcp47,
                                  isDefault: false, autoselect: true, instreamID: c.instreamID)
        }
    }

    static func codecs<P>(_ snap: WindowSnapshot<P>) -> String {
        (snap.inits.last?.tracks ?? []).map(\.codecString).joined(separator: ",")
    }

    /// Measured over the window's segments of the current init; before the first segment, over the parts; with
    /// nothing measurable yet, the declared bit rate.
    static func statistics<P>(_ r: Rendition, _ snap: WindowSnapshot<P>) -> VariantStatistics {
        let current = snap.inits.last?.index
        var samples = snap.window.filter { $0.initIndex == current }.map {
            VariantStatistics.Sample(bytes: $0.info.byteCount, duration: $0.info.duration, videoSamples: $0.info.videoSampleCount)
        }
        if samples.isEmpty {
            samples = snap.partial.map { VariantStatistics.Sample(bytes: $0.info.byteCount, duration: $0.info.duration) }
        }
        if let s = VariantStatistics.measure(samples) { return s }
        let declared = r.declaredBitRate ?? 1
        return VariantStatistics(peakBitRate: declared, averageBitRate: declared, frameRate: r.declaredFrameRate)
    }

    private static func micros(_ t: MediaTime) -> Int64 {
        MediaTime.rescale(t.value, from: t.timescale, to: 1_000_000, rounding: .down)
    }

    private static func playlistParts<P>(_ parts: [StoredPart<P>], _ sequence: UInt64, _ scheme: SuffixedScheme) -> [PlaylistPart] {
        parts.enumerated().map { i, p in
            PlaylistPart(uri: scheme.partURI(sequence, i), duration: p.info.duration, independent: p.info.independent)
        }
    }
}

/// A rendition's URIs with a query appended (`?` + `uriQuery`; nothing when it is empty): the names stay built in
/// one place (`URIScheme`), the suffix is added here, once, for every URI a playlist lists.
struct SuffixedScheme {
    let scheme: URIScheme
    let suffix: String

    init(_ scheme: URIScheme, _ uriQuery: String) {
        self.scheme = scheme
        suffix = uriQuery.isEmpty ? "" : "?" + uriQuery
    }

    var playlistURI: String { scheme.playlistURI + suffix }
    var iFramePlaylistURI: String { scheme.iFramePlaylistURI + suffix }
    func initURI(_ index: Int) -> String { scheme.initURI(index) + suffix }
    func mapURI(_ index: Int) -> String? { scheme.mapURI(index).map { $0 + suffix } }
    var wholeSegments: Bool { scheme.wholeSegments }
    func segmentURI(_ sequence: UInt64) -> String { scheme.segmentURI(sequence) + suffix }
    func partURI(_ sequence: UInt64, _ index: Int) -> String { scheme.partURI(sequence, index) + suffix }

    /// The `EXT-X-KEY` of an encrypted segment: its key's URI (`URIScheme.keyURI`, with the suffix, as access control
    /// needs it like any other URI) and its IV, stated explicitly.
    func key(_ e: SegmentEncryption?) -> PlaylistKey? { e?.playlistKey(uriSuffix: suffix) }
}
