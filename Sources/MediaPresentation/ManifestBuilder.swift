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

    private static func adaptationSets(_ facts: [RepresentationFacts]) -> [MPD.AdaptationSet] {
        var video: [MPD.Representation] = []
        // Per Representation (by id): its key's ContentProtection descriptors and KID.
        var protection: [String: (kid: [UInt8], descriptors: [MPD.ContentProtection])] = [:]
        var captions: [String: [CaptionService]] = [:]   // per codec family
        var audio: [(key: AudioSetKey, representation: MPD.Representation)] = []
        var muxed = false
        var text: [(rendition: Rendition, representation: MPD.Representation)] = []
        // A subtitle rendition is in the MPD as its `wvtt` form (ISO/IEC 14496-30), not as WebVTT files.
        for f in facts where !f.rendition.isWebVTTSubtitles {
            if f.rendition.kind == .subtitles {
                text.append((f.rendition, MPD.Representation(id: f.rendition.name, bandwidth: max(1, f.statistics.peakBitRate),
                                                             codecs: "wvtt", segments: f.segments)))
                continue
            }
            let r = f.rendition, tracks = f.tracks, stats = f.statistics
            let v = tracks.first { $0.kind == .video }
            let a = tracks.first { $0.kind == .audio }
            var representation = MPD.Representation(
                id: r.name, bandwidth: max(1, stats.peakBitRate), codecs: tracks.map(\.dashCodecString).joined(separator: ","),
                width: v.map(\.width), height: v.map(\.height),
                frameRate: v == nil ? nil : (stats.frameRate ?? r.declaredFrameRate).map(frameRate),
                sar: v.flatMap { $0.sampleAspectRatio.isValid ? $0.sampleAspectRatio : nil },
                audioSamplingRate: v == nil ? a.map(\.sampleRate) : nil, audioChannelConfiguration: v == nil ? a.map(MPD.AudioChannelConfiguration.init(track:)) : nil,
                colour: v?.colour, segments: f.segments)
            // Dolby Vision profile 8 over its HEVC base layer: HLS's SUPPLEMENTAL-CODECS `dvh1.08.06/db1p`, split
            // into the codec and its brand.
            if let dv = v?.dolbyVision?.supplementalCodecs?.split(separator: "/"), let codec = dv.first {
                representation.supplementalCodecs = String(codec)
                representation.supplementalProfiles = dv.dropFirst().first.map(String.init)
            }
            if let e = f.encryption, e.method.isSampleEncryption, let kid = e.defaultKeyID {
                protection[representation.id] = (kid, descriptors(e))
            }
            if r.kind == .audio {
                audio.append((AudioSetKey(language: r.language, label: r.audioLabel, kid: protection[representation.id]?.kid), representation))
            } else {
                muxed = muxed || r.kind == .muxed
                video.append(representation)
                for c in v?.captions ?? [] where !(captions[family(representation.codecs)] ?? []).contains(c) {
                    captions[family(representation.codecs), default: []].append(c)
                }
            }
        }
        video.sort { $0.bandwidth > $1.bandwidth }
        // One video AdaptationSet per codec family (avc1, hvc1, av01): a player switches seamlessly within a set,
        // and DASH-IF IOP 4.3 §3.2.13 keeps one codec per set so a client that cannot decode one skips the set.
        // Representations of different keys (per-track keys: SD and HD) are in sets of their own (DASH-IF IOP 4.3 §7.5.2:
        // "For an encrypted Adaptation Set, ContentProtection Descriptors SHALL always be present in the AdaptationSet
        // element, and apply to all contained Representations"), which say they can be switched between (§3.8,
        // `urn:mpeg:dash:adaptation-set-switching:2016`).
        var groups: [(family: String, kid: [UInt8]?)] = []
        for r in video where !groups.contains(where: { $0.family == family(r.codecs) && $0.kid == protection[r.id]?.kid }) {
            groups.append((family(r.codecs), protection[r.id]?.kid))
        }
        // H.264, the one every player has, first; then by codec; in order of bandwidth within one.
        let rank = { (f: String) in f == "avc1" ? 0 : 1 }
        groups = groups.enumerated().sorted {
            (rank($0.element.family), $0.element.family, $0.offset) < (rank($1.element.family), $1.element.family, $1.offset)
        }.map(\.element)
        var sets: [MPD.AdaptationSet] = []
        for (i, g) in groups.enumerated() {
            // ids: the first video set 0, the audio 1 (as before a ladder could mix codecs), other video sets 2, 3 ...
            let members = video.filter { family($0.codecs) == g.family && protection[$0.id]?.kid == g.kid }
            var set = MPD.AdaptationSet(id: i == 0 ? 0 : i + 1, contentType: muxed ? nil : .video, mimeType: "video/mp4",
                                        representations: members)
            set.accessibility = MPD.Descriptor.closedCaptions(captions[g.family] ?? [])
            set.contentProtection = members.first.flatMap { protection[$0.id]?.descriptors } ?? []
            set.switchableWith = groups.indices.filter { $0 != i && groups[$0].family == g.family }.map { $0 == 0 ? 0 : $0 + 1 }
            sets.append(set)
        }
        // One audio AdaptationSet per language and label (DASH-IF IOP 4.3 §3.9.4: each language its own set, told
        // apart by `lang` and `Role`); renditions without a label share one, as before languages were planned. The
        // first set has id 1; the others follow every video set.
        var keys: [AudioSetKey] = []
        for a in audio where !keys.contains(a.key) { keys.append(a.key) }
        var nextID = max(1, groups.count) + 1
        for (i, key) in keys.enumerated() {
            let id = i == 0 ? 1 : nextID
            if i > 0 { nextID += 1 }
            var set = MPD.AdaptationSet(id: id, contentType: .audio, mimeType: "audio/mp4", language: key.language,
                                        role: key.label?.role.rawValue,
                                        representations: audio.filter { $0.key == key }.map(\.representation))
            set.contentProtection = set.representations.first.flatMap { protection[$0.id]?.descriptors } ?? []
            sets.append(set)
        }
        // One text AdaptationSet per subtitle language (DASH-IF IOP 4.3 §6.4.5: `contentType="text"`,
        // `mimeType="application/mp4"`, `codecs="wvtt"`), after every other set; Role `subtitle`, or `forced-subtitle`
        // (ISO/IEC 23009-1 §5.8.5.5 Table 34).
        var nextText = (sets.map(\.id).max() ?? 0) + 1
        for t in text {
            sets.append(MPD.AdaptationSet(id: nextText, contentType: .text, mimeType: "application/mp4",
                                          language: t.rendition.language,
                                          role: t.rendition.subtitleLabel?.forced == true ? "forced-subtitle" : "subtitle",
                                          startWithSAP: 1, representations: [t.representation]))
            nextText += 1
        }
        return sets.sorted { $0.id < $1.id }
    }

    private struct AudioSetKey: Equatable {
        var language: String?
        var label: AudioLabel?
        /// Its key's KID: renditions of different keys are in sets of their own.
        var kid: [UInt8]?
    }

    /// The sample entry of a representation's first codec: `avc1`, `hvc1`, `av01`.
    private static func family(_ codecs: String) -> String {
        String(codecs.prefix { $0 != "." && $0 != "," })
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
