import MediaCore

extension MPD {
    /// The MPD as XML (UTF-8, namespace `urn:mpeg:dash:schema:mpd:2011`, ISO/IEC 23009-1 Annex B).
    /// SCTE 214-1's namespace (`supplementalCodecs`, `supplementalProfiles`).
    public static let scte214Namespace = "urn:scte:dash:scte214-extensions"

    public func render() -> String {
        var x = XMLText()
        x.raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        var attributes: [(String, String)] = [
            ("xmlns", "urn:mpeg:dash:schema:mpd:2011"),
            ("type", type.rawValue),
            ("profiles", profiles.joined(separator: ",")),
        ]
        if let t = availabilityStartTime { attributes.append(("availabilityStartTime", t.iso8601)) }
        if let t = publishTime { attributes.append(("publishTime", t.iso8601)) }
        if let d = mediaPresentationDuration { attributes.append(("mediaPresentationDuration", Self.duration(d))) }
        if let d = minimumUpdatePeriod { attributes.append(("minimumUpdatePeriod", Self.duration(d))) }
        if let d = timeShiftBufferDepth { attributes.append(("timeShiftBufferDepth", Self.duration(d))) }
        if let d = suggestedPresentationDelay { attributes.append(("suggestedPresentationDelay", Self.duration(d))) }
        if let d = maxSegmentDuration { attributes.append(("maxSegmentDuration", Self.duration(d))) }
        attributes.append(("minBufferTime", Self.duration(minBufferTime)))
        if periods.contains(where: { $0.adaptationSets.contains { !$0.contentProtection.isEmpty } }) {
            attributes.insert(("xmlns:cenc", ContentProtection.cencNamespace), at: 1)
        }
        if periods.contains(where: { $0.adaptationSets.contains { $0.representations.contains { $0.supplementalCodecs != nil } } }) {
            attributes.insert(("xmlns:scte214", Self.scte214Namespace), at: 1)
        }
        x.open("MPD", attributes)
        if let target = targetLatencyMilliseconds {
            // DASH-IF IOP low-latency (and ISO/IEC 23009-1 Annex K): the service's target latency.
            x.open("ServiceDescription", [("id", "0")])
            x.empty("Latency", [("target", String(target)), ("referenceId", "0")])
            x.close("ServiceDescription")
        }
        for p in periods {
            x.open("Period", [("id", p.id), ("start", Self.duration(p.start))])
            // §5.3.2.2: EventStream elements precede the AdaptationSets in a Period's content model.
            for e in p.eventStreams { e.render(into: &x) }
            for a in p.adaptationSets { render(a, into: &x) }
            p.thumbnails?.render(into: &x)
            x.close("Period")
        }
        // §5.3.1.2: UTCTiming elements follow the Periods (and Metrics) in the MPD's content model.
        for u in utcTimings { x.empty("UTCTiming", [("schemeIdUri", u.schemeIdUri), ("value", u.value)]) }
        x.close("MPD")
        return x.text
    }

    private func render(_ a: AdaptationSet, into x: inout XMLText) {
        var attributes: [(String, String)] = [("id", String(a.id))]
        if let c = a.contentType { attributes.append(("contentType", c.rawValue)) }
        attributes.append(("mimeType", a.mimeType))
        if let l = a.language { attributes.append(("lang", l)) }
        if a.segmentAlignment { attributes.append(("segmentAlignment", "true")) }
        if let s = a.startWithSAP { attributes.append(("startWithSAP", String(s))) }
        x.open("AdaptationSet", attributes)
        // RepresentationBaseType's order (ISO/IEC 23009-1 Annex B): ContentProtection before EssentialProperty.
        for c in a.contentProtection {
            var attributes = [("schemeIdUri", c.schemeIdUri)]
            if let v = c.value { attributes.append(("value", v)) }
            if let k = c.defaultKID { attributes.append(("cenc:default_KID", k)) }
            guard let pssh = c.pssh else { x.empty("ContentProtection", attributes); continue }
            x.open("ContentProtection", attributes)
            x.open("cenc:pssh", [], inline: true)
            x.escaped(pssh)
            x.close("cenc:pssh")
            x.close("ContentProtection")
        }
        if let main = a.trickModeOf {
            x.empty("EssentialProperty", [("schemeIdUri", "http://dashif.org/guidelines/trickmode"), ("value", String(main))])
        }
        if !a.switchableWith.isEmpty {
            x.empty("SupplementalProperty", [("schemeIdUri", "urn:mpeg:dash:adaptation-set-switching:2016"),
                                             ("value", a.switchableWith.map(String.init).joined(separator: ","))])
        }
        // §5.3.3.2: InbandEventStream (RepresentationBaseType) comes before Accessibility and Role.
        for scheme in a.inbandEventSchemes { x.empty("InbandEventStream", [("schemeIdUri", scheme), ("value", "")]) }
        for d in a.accessibility {
            x.empty("Accessibility", [("schemeIdUri", d.schemeIdUri)] + (d.value.map { [("value", $0)] } ?? []))
        }
        if let role = a.role ?? (a.contentType == .audio ? "main" : nil) {
            x.empty("Role", [("schemeIdUri", "urn:mpeg:dash:role:2011"), ("value", role)])
        }
        for r in a.representations { render(r, into: &x) }
        x.close("AdaptationSet")
    }

    /// HDR signalling of DASH-IF IOP 4.3 §6.2.5 (HDR10: colour primaries, PQ transfer and matrix as
    /// EssentialProperty, `urn:mpeg:mpegB:cicp:*` of ISO/IEC 23001-8) and §6.2.6 (HLG: transfer 14 as
    /// EssentialProperty, so an SDR BT.2020 client still plays it, and 18 as SupplementalProperty). Nothing for SDR.
    private func renderHDR(_ c: ColourInfo, into x: inout XMLText) {
        guard c.videoRange != .sdr else { return }
        let cicp = "urn:mpeg:mpegB:cicp:"
        x.empty("EssentialProperty", [("schemeIdUri", cicp + "ColourPrimaries"), ("value", String(c.primaries))])
        if c.videoRange == .pq {
            x.empty("EssentialProperty", [("schemeIdUri", cicp + "TransferCharacteristics"), ("value", String(c.transfer))])
        } else {
            x.empty("EssentialProperty", [("schemeIdUri", cicp + "TransferCharacteristics"), ("value", "14")])
        }
        x.empty("EssentialProperty", [("schemeIdUri", cicp + "MatrixCoefficients"), ("value", String(c.matrix))])
        if c.videoRange == .hlg {
            x.empty("SupplementalProperty", [("schemeIdUri", cicp + "TransferCharacteristics"), ("value", String(c.transfer))])
        }
    }

    private func render(_ r: Representation, into x: inout XMLText) {
        var attributes: [(String, String)] = [("id", r.id), ("bandwidth", String(r.bandwidth)), ("codecs", r.codecs)]
        if let w = r.width { attributes.append(("width", String(w))) }
        if let h = r.height { attributes.append(("height", String(h))) }
        if let f = r.frameRate {
            attributes.append(("frameRate", f.denominator == 1 ? String(f.numerator) : "\(f.numerator)/\(f.denominator)"))
        }
        if let s = r.sar { attributes.append(("sar", "\(s.numerator):\(s.denominator)")) }
        if let s = r.audioSamplingRate { attributes.append(("audioSamplingRate", String(s))) }
        if let rate = r.maxPlayoutRate { attributes.append(("maxPlayoutRate", String(rate))) }
        if let d = r.codingDependency { attributes.append(("codingDependency", d ? "true" : "false")) }
        if let c = r.supplementalCodecs { attributes.append(("scte214:supplementalCodecs", c)) }
        if let p = r.supplementalProfiles { attributes.append(("scte214:supplementalProfiles", p)) }
        x.open("Representation", attributes)
        if let c = r.audioChannelConfiguration {
            x.empty("AudioChannelConfiguration", [("schemeIdUri", c.schemeIdUri), ("value", c.value)])
        }
        if let c = r.colour { renderHDR(c, into: &x) }
        switch r.segments {
        case .template(let t):
            var attributes: [(String, String)] = [
                ("timescale", String(t.timescale)), ("initialization", t.initialization), ("media", t.media),
                ("startNumber", String(t.startNumber)),
            ]
            if t.presentationTimeOffset != 0 { attributes.append(("presentationTimeOffset", String(t.presentationTimeOffset))) }
            if let o = t.availabilityTimeOffset { attributes.append(("availabilityTimeOffset", Self.seconds(o))) }
            if let c = t.availabilityTimeComplete { attributes.append(("availabilityTimeComplete", c ? "true" : "false")) }
            x.open("SegmentTemplate", attributes)
            render(t.timeline, into: &x)
            x.close("SegmentTemplate")
        case .list(let l):
            x.open("SegmentList", [("timescale", String(l.timescale)), ("startNumber", String(l.startNumber))])
            x.empty("Initialization", [("sourceURL", l.initialization)])
            render(l.timeline, into: &x)
            for u in l.urls {
                x.empty("SegmentURL", [("media", u.media), ("mediaRange", "\(u.range.lowerBound)-\(u.range.upperBound - 1)")])
            }
            x.close("SegmentList")
        case .base(let b):
            x.open("BaseURL", [], inline: true)
            x.escaped(b.url)
            x.close("BaseURL")
            x.open("SegmentBase", [
                ("timescale", String(b.timescale)),
                ("indexRange", "\(b.indexRange.lowerBound)-\(b.indexRange.upperBound)"),
                ("indexRangeExact", "true"),
            ])
            x.empty("Initialization", [
                ("range", "\(b.initializationRange.lowerBound)-\(b.initializationRange.upperBound)"),
            ])
            x.close("SegmentBase")
        }
        x.close("Representation")
    }

    private func render(_ timeline: [TimelineEntry], into x: inout XMLText) {
        TimelineEntry.render(timeline, into: &x)
    }

    /// `xs:duration` in seconds, exact to the millisecond and never above the value (`PT1.5S`, `PT86400S`).
    public static func duration(_ t: MediaTime) -> String { "PT" + seconds(t) + "S" }

    /// Decimal seconds, truncated to milliseconds, trailing zeros trimmed (`0.667`, `2`).
    static func seconds(_ t: MediaTime) -> String {
        let ms = MediaTime.rescale(t.value, from: t.timescale, to: 1000, rounding: .down)
        let sign = ms < 0 ? "-" : ""
        let whole = ms.magnitude / 1000
        var frac = ms.magnitude % 1000
        guard frac != 0 else { return sign + String(whole) }
        var digits = 3
        while frac % 10 == 0 { frac /= 10; digits -= 1 }
        let f = String(frac)
        return sign + String(whole) + "." + String(repeating: "0", count: digits - f.count) + f
    }
}

/// Indented XML text with attribute and character escaping (XML 1.0 §2.4, §3.3.3).
struct XMLText {
    private(set) var text = ""
    private var depth = 0
    private var inline = false

    mutating func raw(_ s: String) { text += s }

    mutating func open(_ name: String, _ attributes: [(String, String)], inline: Bool = false) {
        indent()
        text += "<" + name
        attributes.forEach { append($0) }
        text += ">"
        if !inline { text += "\n" }
        self.inline = inline
        depth += 1
    }

    mutating func empty(_ name: String, _ attributes: [(String, String)]) {
        indent()
        text += "<" + name
        attributes.forEach { append($0) }
        text += "/>\n"
    }

    mutating func close(_ name: String) {
        depth -= 1
        if inline { inline = false } else { indent() }
        text += "</" + name + ">\n"
    }

    mutating func escaped(_ s: String) { text += Self.escape(s, quote: false) }

    private mutating func append(_ attribute: (String, String)) {
        text += " " + attribute.0 + "=\"" + Self.escape(attribute.1, quote: true) + "\""
    }

    private mutating func indent() { text += String(repeating: "  ", count: depth) }

    static func escape(_ s: String, quote: Bool) -> String { XMLEscaping.escape(s, quote: quote) }
}

extension MPD.TimelineEntry {
    /// `SegmentTimeline` with its `S` elements (§5.3.9.6), for every segment addressing that has one.
    static func render(_ timeline: [MPD.TimelineEntry], into x: inout XMLText) {
        x.open("SegmentTimeline", [])
        for s in timeline {
            var a: [(String, String)] = []
            if let time = s.time { a.append(("t", String(time))) }
            a.append(("d", String(s.duration)))
            if s.repeatCount > 0 { a.append(("r", String(s.repeatCount))) }
            x.empty("S", a)
        }
        x.close("SegmentTimeline")
    }
}
