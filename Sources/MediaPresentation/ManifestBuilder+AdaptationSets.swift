import DASH
import MediaCore

/// An MPD's AdaptationSets from its Representations' facts: video sets by codec family and key, audio sets by
/// language and label, text sets by language.
extension ManifestBuilder {
    static func adaptationSets(_ facts: [RepresentationFacts]) -> [MPD.AdaptationSet] {
        var all = RepresentationsByKind()
        // A subtitle rendition is in the MPD as its `wvtt` form (ISO/IEC 14496-30), not as WebVTT files.
        for f in facts where !f.rendition.isWebVTTSubtitles { all.add(f) }
        let (video, videoGroups) = videoSets(all)
        var sets = video + audioSets(all, videoGroups: videoGroups)
        sets += textSets(all, firstID: (sets.map(\.id).max() ?? 0) + 1)
        return sets.sorted { $0.id < $1.id }
    }

    /// The Representations of an MPD, sorted by what their AdaptationSets are made by.
    private struct RepresentationsByKind {
        var video: [MPD.Representation] = []
        /// Per Representation (by id): its key's ContentProtection descriptors and KID.
        var protection: [String: (kid: [UInt8], descriptors: [MPD.ContentProtection])] = [:]
        var captions: [String: [CaptionService]] = [:]   // per codec family
        var audio: [(key: AudioSetKey, representation: MPD.Representation)] = []
        var muxed = false
        var text: [(rendition: Rendition, representation: MPD.Representation)] = []

        mutating func add(_ f: RepresentationFacts) {
            if f.rendition.kind == .subtitles {
                text.append((f.rendition, MPD.Representation(id: f.rendition.name, bandwidth: max(1, f.statistics.peakBitRate),
                                                             codecs: "wvtt", segments: f.segments)))
                return
            }
            let r = f.rendition
            let representation = ManifestBuilder.representation(f)
            if let e = f.encryption, e.method.isSampleEncryption, let kid = e.defaultKeyID {
                protection[representation.id] = (kid, ManifestBuilder.descriptors(e))
            }
            if r.kind == .audio {
                audio.append((AudioSetKey(language: r.language, label: r.audioLabel, kid: protection[representation.id]?.kid), representation))
            } else {
                muxed = muxed || r.kind == .muxed
                video.append(representation)
                let family = ManifestBuilder.family(representation.codecs)
                for c in f.tracks.first(where: { $0.kind == .video })?.captions ?? [] where !(captions[family] ?? []).contains(c) {
                    captions[family, default: []].append(c)
                }
            }
        }
    }

    /// A video, muxed or audio Representation.
    private static func representation(_ f: RepresentationFacts) -> MPD.Representation {
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
        return representation
    }

    /// One video AdaptationSet per codec family (avc1, hvc1, av01): a player switches seamlessly within a set, and
    /// DASH-IF IOP 4.3 §3.2.13 keeps one codec per set so a client that cannot decode one skips the set.
    /// Representations of different keys (per-track keys: SD and HD) are in sets of their own (DASH-IF IOP 4.3 §7.5.2:
    /// "For an encrypted Adaptation Set, ContentProtection Descriptors SHALL always be present in the AdaptationSet
    /// element, and apply to all contained Representations"), which say they can be switched between (§3.8,
    /// `urn:mpeg:dash:adaptation-set-switching:2016`). Also returns how many sets there are.
    private static func videoSets(_ all: RepresentationsByKind) -> ([MPD.AdaptationSet], Int) {
        let video = all.video.sorted { $0.bandwidth > $1.bandwidth }
        var groups: [(family: String, kid: [UInt8]?)] = []
        for r in video where !groups.contains(where: { $0.family == family(r.codecs) && $0.kid == all.protection[r.id]?.kid }) {
            groups.append((family(r.codecs), all.protection[r.id]?.kid))
        }
        // H.264, the one every player has, first; then by codec; in order of bandwidth within one.
        let rank = { (f: String) in f == "avc1" ? 0 : 1 }
        groups = groups.enumerated().sorted {
            (rank($0.element.family), $0.element.family, $0.offset) < (rank($1.element.family), $1.element.family, $1.offset)
        }.map(\.element)
        var sets: [MPD.AdaptationSet] = []
        for (i, g) in groups.enumerated() {
            // ids: the first video set 0, the audio 1 (as before a ladder could mix codecs), other video sets 2, 3 ...
            let members = video.filter { family($0.codecs) == g.family && all.protection[$0.id]?.kid == g.kid }
            var set = MPD.AdaptationSet(id: i == 0 ? 0 : i + 1, contentType: all.muxed ? nil : .video, mimeType: "video/mp4",
                                        representations: members)
            set.accessibility = MPD.Descriptor.closedCaptions(all.captions[g.family] ?? [])
            set.contentProtection = members.first.flatMap { all.protection[$0.id]?.descriptors } ?? []
            set.switchableWith = groups.indices.filter { $0 != i && groups[$0].family == g.family }.map { $0 == 0 ? 0 : $0 + 1 }
            sets.append(set)
        }
        return (sets, groups.count)
    }

    /// One audio AdaptationSet per language and label (DASH-IF IOP 4.3 §3.9.4: each language its own set, told apart
    /// by `lang` and `Role`); renditions without a label share one, as before languages were planned. The first set
    /// has id 1; the others follow every video set.
    private static func audioSets(_ all: RepresentationsByKind, videoGroups: Int) -> [MPD.AdaptationSet] {
        var keys: [AudioSetKey] = []
        for a in all.audio where !keys.contains(a.key) { keys.append(a.key) }
        var nextID = max(1, videoGroups) + 1
        var sets: [MPD.AdaptationSet] = []
        for (i, key) in keys.enumerated() {
            let id = i == 0 ? 1 : nextID
            if i > 0 { nextID += 1 }
            var set = MPD.AdaptationSet(id: id, contentType: .audio, mimeType: "audio/mp4", language: key.language,
                                        role: key.label?.role.rawValue,
                                        representations: all.audio.filter { $0.key == key }.map(\.representation))
            set.contentProtection = set.representations.first.flatMap { all.protection[$0.id]?.descriptors } ?? []
            sets.append(set)
        }
        return sets
    }

    /// One text AdaptationSet per subtitle language (DASH-IF IOP 4.3 §6.4.5: `contentType="text"`,
    /// `mimeType="application/mp4"`, `codecs="wvtt"`), after every other set; Role `subtitle`, or `forced-subtitle`
    /// (ISO/IEC 23009-1 §5.8.5.5 Table 34).
    private static func textSets(_ all: RepresentationsByKind, firstID: Int) -> [MPD.AdaptationSet] {
        all.text.enumerated().map { i, t in
            MPD.AdaptationSet(id: firstID + i, contentType: .text, mimeType: "application/mp4",
                              language: t.rendition.language,
                              role: t.rendition.subtitleLabel?.forced == true ? "forced-subtitle" : "subtitle",
                              startWithSAP: 1, representations: [t.representation])
        }
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
}
