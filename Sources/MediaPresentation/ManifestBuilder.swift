import DASH
import MediaCore

/// MPEG-DASH manifests as pure functions of window snapshots, like `PlaylistBuilder` for HLS: the same segments,
/// the same URIs, the same bytes (STYLE.md §9). One Period; video (or muxed) renditions are the Representations of
/// one AdaptationSet, audio renditions those of another; each Representation has a `SegmentTemplate` with
/// `$Number$` = the HLS media sequence number and a `SegmentTimeline` in the track's timescale whose `t` are the
/// segments' `tfdt` (the earliest presentation time with `presentationTimeOffset` 0).
public enum ManifestBuilder {
    /// What a live MPD needs besides the snapshots.
    public struct LiveOptions: Sendable {
        /// `publishTime`.
        public var now: WallClock
        /// The absolute URL of the origin's time endpoint, for `UTCTiming` (`nil`: none).
        public var timeURL: String?
        /// A query (without `?`) appended to every init and media URI template (a signed URL's signature; `""`: none).
        public var uriQuery: String
        /// DASH trick-mode AdaptationSets for the video sets (`trickModeSets`).
        public var trickMode: Bool
        public init(now: WallClock, timeURL: String? = nil, uriQuery: String = "", trickMode: Bool = false) {
            self.now = now
            self.timeURL = timeURL
            self.uriQuery = uriQuery
            self.trickMode = trickMode
        }
    }

    /// A dynamic MPD (ISO/IEC 23009-1 §5.4) of the segments in the live windows, `nil` until every rendition is
    /// playable. With LL-HLS parts (low-latency DASH) the segment in progress is listed too, with the policy's
    /// segment duration, and `availabilityTimeOffset` makes it available as soon as its first part is: the origin
    /// serves it by chunked transfer as its parts complete.
    public static func live<P>(_ renditions: [Rendition], _ snapshots: [WindowSnapshot<P>], options: LiveOptions) -> MPD? {
        guard renditions.count == snapshots.count, snapshots.allSatisfy(\.isPlayable), !snapshots.isEmpty,
              let ast = availabilityStartTime(snapshots) else { return nil }
        let policy = snapshots[0].policy
        let lowLatency = policy.partTarget != nil && policy.segmentDuration != nil
        var availabilityOffset: MediaTime?
        if lowLatency, let part = policy.partTarget, let segment = policy.segmentDuration {
            // §5.3.9.5.3: a segment's first bytes are available `availabilityTimeOffset` seconds before its end,
            // which is when its first part is published: segment duration − part duration.
            let ms = MediaTime.rescale(segment.value, from: segment.timescale, to: 1000, rounding: .down)
                - MediaTime.rescale(part.value, from: part.timescale, to: 1000, rounding: .up)
            if ms > 0 { availabilityOffset = .milliseconds(ms) }
        }
        let sets = adaptationSets(renditions, snapshots) { r, snap in
            var entries = snap.window.map { (start: $0.info.startTime, duration: $0.info.duration) }
            if lowLatency, !snap.partial.isEmpty, !snap.finished, let last = snap.window.last,
               let nominal = policy.segmentDuration {
                // The segment in progress, announced with the duration it is being cut at.
                let start = last.info.startTime + last.info.duration
                entries.append((start: start, duration: nominal.converted(to: start.timescale, rounding: .up)))
            }
            // A rendition published in whole segments is available when its segment is complete.
            return template(renditions[r], snap, entries: entries, startNumber: snap.mediaSequence,
                            availabilityOffset: renditions[r].scheme.wholeSegments ? nil : availabilityOffset,
                            uriQuery: options.uriQuery)
        }
        let allSets = sets + (options.trickMode ? trickModeSets(renditions, snapshots, main: sets, uriQuery: options.uriQuery) : [])
        let window = listedDuration(snapshots)
        let target = MediaTime.seconds(Int64(snapshots.map(\.targetDuration).max() ?? 1))
        // HOLD-BACK and PART-HOLD-BACK of the HLS playlists (RFC 8216bis §4.4.3.8): three target durations, or
        // three part targets with low latency.
        let delay: MediaTime = policy.partTarget.map { MediaTime(value: $0.value * 3, timescale: $0.timescale) }
            ?? MediaTime(value: target.value * 3, timescale: target.timescale)
        var mpd = MPD(
            type: snapshots.allSatisfy(\.finished) ? .static : .dynamic, profiles: profiles(renditions),
            minBufferTime: target, periods: [period(allSets, snapshots)],
            availabilityStartTime: ast, publishTime: options.now,
            minimumUpdatePeriod: target, timeShiftBufferDepth: window, suggestedPresentationDelay: delay,
            maxSegmentDuration: target,
            targetLatencyMilliseconds: lowLatency ? Int(MediaTime.rescale(delay.value, from: delay.timescale, to: 1000)) : nil,
            utcTimings: options.timeURL.map { [MPD.UTCTiming(schemeIdUri: MPD.UTCTiming.httpISO, value: $0)] } ?? [])
        if mpd.type == .static {
            // The input ended: the presentation is complete (§5.4: a dynamic MPD may become static).
            mpd.minimumUpdatePeriod = nil
            mpd.timeShiftBufferDepth = nil
            mpd.targetLatencyMilliseconds = nil
            mpd.mediaPresentationDuration = window
        }
        return mpd
    }

    /// A static MPD (§5.4) of every segment of finished windows (a VOD writer's or a recording's), `nil` if a
    /// rendition has no segment; `trickMode`: with the video sets' trick-mode sets.
    @_specialize(exported: true, where P == Void)
    public static func onDemand<P>(_ renditions: [Rendition], _ snapshots: [WindowSnapshot<P>], trickMode: Bool = false) -> MPD? {
        guard renditions.count == snapshots.count, snapshots.allSatisfy(\.isPlayable), !snapshots.isEmpty else { return nil }
        let sets = adaptationSets(renditions, snapshots) { r, snap in
            template(renditions[r], snap, entries: snap.window.map { (start: $0.info.startTime, duration: $0.info.duration) },
                     startNumber: snap.mediaSequence, availabilityOffset: nil)
        }
        let total = listedDuration(snapshots)
        let target = MediaTime.seconds(Int64(snapshots.map(\.targetDuration).max() ?? 1))
        let allSets = sets + (trickMode ? trickModeSets(renditions, snapshots, main: sets, uriQuery: "") : [])
        return MPD(type: .static, profiles: profiles(renditions), minBufferTime: target,
                   periods: [period(allSets, snapshots)], mediaPresentationDuration: total,
                   maxSegmentDuration: target)
    }

    /// A static MPD of single-file representations (ISOBMFF on-demand profile): per Representation a `BaseURL`
    /// (the file) and a `SegmentBase` whose `indexRange` is the `sidx` and whose `Initialization` is the init segment
    /// (§5.3.9.2), `nil` if a rendition has no segment or no file.
    @_specialize(exported: true, where P == Void)
    public static func singleFile<P>(_ renditions: [Rendition], _ snapshots: [WindowSnapshot<P>],
                                     files: [SingleFileIndex?]) -> MPD? {
        guard renditions.count == snapshots.count, files.count == renditions.count else { return nil }
        // WebVTT subtitle renditions are HLS's (files of their own); DASH has their `wvtt` form, one file each.
        let kept = renditions.indices.filter { !renditions[$0].isWebVTTSubtitles }
        let (renditions, snapshots, files) = (kept.map { renditions[$0] }, kept.map { snapshots[$0] }, kept.map { files[$0] })
        guard files.allSatisfy({ $0 != nil }), snapshots.allSatisfy(\.isPlayable), !snapshots.isEmpty else { return nil }
        let sets = adaptationSets(renditions, snapshots) { r, snap in
            let f = files[r]!
            let timescale = snap.window.first?.info.startTime.timescale ?? snap.inits.last?.tracks.first?.timescale ?? 1000
            return .base(MPD.SegmentBase(url: f.fileURI, timescale: timescale,
                                         indexRange: f.indexRange.lowerBound...(f.indexRange.upperBound - 1),
                                         initializationRange: f.initRange.lowerBound...(f.initRange.upperBound - 1)))
        }
        let target = MediaTime.seconds(Int64(snapshots.map(\.targetDuration).max() ?? 1))
        let cmaf = !renditions.contains { $0.kind == .muxed }
        return MPD(type: .static, profiles: [MPD.onDemandProfile] + (cmaf ? [MPD.cmafProfile] : []), minBufferTime: target,
                   periods: [MPD.Period(id: "0", adaptationSets: sets)], mediaPresentationDuration: listedDuration(snapshots),
                   maxSegmentDuration: target)
    }

    /// The one Period: its AdaptationSets, and the first window's timed events as an SCTE-35 `EventStream` whose
    /// presentation times are the events' media times (the segments' `t`: `presentationTimeOffset` is 0).
    static func period<P>(_ sets: [MPD.AdaptationSet], _ snapshots: [WindowSnapshot<P>]) -> MPD.Period {
        var period = MPD.Period(id: "0", adaptationSets: sets)
        var schemes: [String] = []
        for s in snapshots.flatMap(\.inbandSchemes) where !schemes.contains(s) { schemes.append(s) }
        if !schemes.isEmpty {
            for i in period.adaptationSets.indices where period.adaptationSets[i].trickModeOf == nil {
                period.adaptationSets[i].inbandEventSchemes = schemes
            }
        }
        // What the segments carry (ID3; SCTE-35 with --events inband) is not in the EventStream too.
        if let events = snapshots.first?.events.filter({ !$0.inband }), let timescale = events.first?.mediaTime.timescale {
            period.eventStreams = [MPD.EventStream(timescale: timescale, events: events.map { e in
                MPD.Event(id: MPD.Event.numericID(e.id), presentationTime: e.mediaTime.converted(to: timescale).value,
                          duration: (e.duration ?? e.plannedDuration).map { $0.converted(to: timescale).value },
                          binary: e.section)
            })]
        }
        return period
    }

    /// The `ContentProtection` of sample-encrypted segments (DASH-IF IOP 4.3 §7.5.2): the common scheme with `value`
    /// `cenc`/`cbcs` and `cenc:default_KID`, then one per DRM system with its `cenc:pssh` (FairPlay, which has no
    /// `pssh` and no DASH signalling, is left out). Each AdaptationSet has its representations' init segment's key's.
    static func descriptors(_ e: SegmentEncryption) -> [MPD.ContentProtection] {
        // The init segment's key (DASH-IF IOP 4.3 §7.4.1.1: "the default KID, as specified by the 'tenc' box"), which
        // with key periods is the period's it was made in; the fragments name the later ones (`seig`, `pssh`).
        guard e.method.isSampleEncryption, let kid = e.defaultKeyID else { return [] }
        var descriptors = [MPD.ContentProtection(schemeIdUri: MPD.ContentProtection.mp4Protection,
                                                 value: e.method == .sampleAES ? "cbcs" : "cenc", defaultKID: uuid(kid))]
        for k in e.initKeySystems ?? e.keySystems {
            guard let pssh = k.pssh else { continue }
            descriptors.append(MPD.ContentProtection(schemeIdUri: "urn:uuid:" + uuid(k.systemID), pssh: base64(pssh)))
        }
        return descriptors
    }

    /// Lower-case `8-4-4-4-12` text of 16 bytes.
    static func uuid(_ bytes: [UInt8]) -> String {
        var out = ""
        for (i, b) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(i) { out += "-" }
            out += (b < 16 ? "0" : "") + String(b, radix: 16)
        }
        return out
    }

    /// Base64 (RFC 4648 §4, with padding).
    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            let v = (UInt32(bytes[i]) << 16) | (n > 1 ? UInt32(bytes[i + 1]) << 8 : 0) | (n > 2 ? UInt32(bytes[i + 2]) : 0)
            for k in 0..<4 { out.append(k <= n ? alphabet[Int((v >> (18 - 6 * UInt32(k))) & 63)] : UInt8(ascii: "=")) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The longest rendition's listed duration, in milliseconds (rounded up).
    static func listedDuration<P>(_ snapshots: [WindowSnapshot<P>]) -> MediaTime {
        let ms = snapshots.map { snap in
            snap.window.reduce(Int64(0)) { $0 + $1.info.duration.converted(to: 1000, rounding: .up).value }
        }.max() ?? 0
        return .milliseconds(ms)
    }

    /// `availabilityStartTime`: the wall clock of media time 0, from the first listed segment of the first
    /// rendition and its `EXT-X-PROGRAM-DATE-TIME`, so that AST + `t`/timescale is each segment's PDT (to the
    /// millisecond) and the DASH and HLS clocks of the stream are the same.
    static func availabilityStartTime<P>(_ snapshots: [WindowSnapshot<P>]) -> WallClock? {
        for snap in snapshots {
            guard let seg = snap.window.first, let pdt = seg.info.programDateTime else { continue }
            let t = seg.info.startTime
            return WallClock(millisecondsSince1970: pdt.millisecondsSince1970
                - MediaTime.rescale(t.value, from: t.timescale, to: 1000))
        }
        return nil
    }

    /// CMAF (§8.12) when every rendition is one track; a muxed rendition (audio and video in one fragment) is
    /// valid for the ISOBMFF live profile but is not a CMAF track.
    static func profiles(_ renditions: [Rendition]) -> [String] {
        renditions.contains { $0.kind == .muxed } ? [MPD.liveProfile] : [MPD.liveProfile, MPD.cmafProfile]
    }

    private static func template<P>(_ r: Rendition, _ snap: WindowSnapshot<P>, entries: [(start: MediaTime, duration: MediaTime)],
                                    startNumber: UInt64, availabilityOffset: MediaTime?,
                                    uriQuery: String = "") -> MPD.Segments {
        let timescale = entries.first?.start.timescale ?? snap.inits.last?.tracks.first?.timescale ?? 1000
        let initIndex = snap.inits.last?.index ?? 0
        let suffix = uriQuery.isEmpty ? "" : "?" + uriQuery
        return .template(MPD.SegmentTemplate(
            timescale: timescale, initialization: r.scheme.initURI(initIndex) + suffix,
            media: r.scheme.segmentTemplate + suffix,
            startNumber: startNumber, availabilityTimeOffset: availabilityOffset,
            availabilityTimeComplete: availabilityOffset == nil ? nil : false,
            timeline: MPD.TimelineEntry.compress(entries.map {
                (start: $0.start.converted(to: timescale).value, duration: $0.duration.converted(to: timescale).value)
            })))
    }

    /// What one Representation is made from: the rendition, the tracks of its (current) init segment, its measured
    /// bit rates and frame rate, and how its segments are addressed.
    public struct RepresentationFacts: Sendable {
        public var rendition: Rendition
        public var tracks: [TrackFormat]
        public var statistics: VariantStatistics
        public var segments: MPD.Segments
        /// How its latest segment is encrypted (its set's `ContentProtection`).
        public var encryption: SegmentEncryption?
        public init(rendition: Rendition, tracks: [TrackFormat], statistics: VariantStatistics, segments: MPD.Segments,
                    encryption: SegmentEncryption? = nil) {
            self.rendition = rendition
            self.tracks = tracks
            self.statistics = statistics
            self.segments = segments
            self.encryption = encryption
        }
    }

    /// A static MPD of complete representations given as facts (a recording's, which keeps no window of its
    /// segments): one Period, the same AdaptationSets as the live MPD.
    public static func onDemand(_ facts: [RepresentationFacts], duration: MediaTime, targetDuration: Int) -> MPD? {
        guard !facts.isEmpty else { return nil }
        let target = MediaTime.seconds(Int64(max(1, targetDuration)))
        return MPD(type: .static, profiles: profiles(facts.map(\.rendition)), minBufferTime: target,
                   periods: [MPD.Period(id: "0", adaptationSets: adaptationSets(facts))],
                   mediaPresentationDuration: duration, maxSegmentDuration: target)
    }

    private static func adaptationSets<P>(_ renditions: [Rendition], _ snapshots: [WindowSnapshot<P>],
                                          segments: (Int, WindowSnapshot<P>) -> MPD.Segments) -> [MPD.AdaptationSet] {
        adaptationSets(renditions.enumerated().map { i, r in
            RepresentationFacts(rendition: r, tracks: snapshots[i].inits.last?.tracks ?? [],
                                statistics: PlaylistBuilder.statistics(r, snapshots[i]), segments: segments(i, snapshots[i]),
                                encryption: snapshots[i].window.last?.info.encryption ?? snapshots[i].partial.last?.info.encryption)
        })
    }

    /// A measured frame rate as `FrameRateType`: whole rates exactly, NTSC rates as `N×1000/1001`, else to 1/1000.
    static func frameRate(_ f: Double) -> Rational {
        let whole = f.rounded()
        if abs(f - whole) < 0.005 { return Rational(Int32(whole), 1) }
        let ntsc = (f * 1001 / 1000).rounded()
        if abs(f - ntsc * 1000 / 1001) < 0.005 { return Rational(Int32(ntsc * 1000), 1001) }
        return Rational(Int32((f * 1000).rounded()), 1000)
    }
}
