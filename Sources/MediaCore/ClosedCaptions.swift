/// One closed-caption service a video track carries inside its pictures (CTA-608 channels and CTA-708 services, in
/// ATSC A/53 `cc_data`): what HLS signals as an `EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS` rendition (RFC 8216bis §4.4.6.1)
/// and DASH as an `Accessibility` descriptor (ANSI/SCTE 214-1 §6.7.3 `urn:scte:dash:cc:cea-608:2015`/`…708:2015`).
public struct CaptionService: Sendable, Hashable, CustomStringConvertible {
    /// The HLS `INSTREAM-ID`: `CC1`…`CC4` (CTA-608 channels) or `SERVICE1`…`SERVICE63` (CTA-708 services).
    public let instreamID: String
    public var language: LanguageTag?

    /// `nil` unless `instreamID` is one of the values §4.4.6.1 allows.
    public init?(instreamID: String, language: LanguageTag? = nil) {
        let id = instreamID.uppercased()
        if id.hasPrefix("CC"), let n = Int(id.dropFirst(2)), (1...4).contains(n) {
            self.instreamID = "CC\(n)"
        } else if id.hasPrefix("SERVICE"), let n = Int(id.dropFirst(7)), (1...63).contains(n) {
            self.instreamID = "SERVICE\(n)"
        } else {
            return nil
        }
        self.language = language
    }

    /// A CTA-708 service (`SERVICEn`), not a CTA-608 channel.
    public var is708: Bool { instreamID.hasPrefix("SERVICE") }
    /// The channel or service number (1 of `CC1`, 2 of `SERVICE2`).
    public var number: Int { Int(instreamID.drop { !$0.isNumber }) ?? 1 }
    /// A readable `NAME` for a player's menu: the language's own name ("English"), else the channel ("CC1").
    public var name: String { language?.nativeName ?? instreamID }
    public var description: String { language.map { "\(instreamID)=\($0)" } ?? instreamID }
}

/// Which caption data an access unit's A/53 `cc_data` holds (CTA-708 §4.4 / ATSC A/53 Part 4 §6.2.3.1 `cc_type`):
/// field 1 of CTA-608 (channels CC1/CC2), field 2 (CC3/CC4), or CTA-708 DTVCC packets. Only constructs whose
/// `cc_valid` is set count; in field 2, only those that carry data.
public struct CaptionPresence: Sendable, Hashable {
    public var field1 = false
    public var field2 = false
    public var dtvcc = false

    public init(field1: Bool = false, field2: Bool = false, dtvcc: Bool = false) {
        self.field1 = field1
        self.field2 = field2
        self.dtvcc = dtvcc
    }

    public var isEmpty: Bool { !field1 && !field2 && !dtvcc }

    public static func | (a: CaptionPresence, b: CaptionPresence) -> CaptionPresence {
        CaptionPresence(field1: a.field1 || b.field1, field2: a.field2 || b.field2, dtvcc: a.dtvcc || b.dtvcc)
    }

    /// The services this presence stands for, by the usual assignment: field 1 is `CC1`, field 2 `CC3` (the first
    /// channel of each field: a second channel in a field is told apart only by its control codes), DTVCC data
    /// `SERVICE1` (the primary caption service, CTA-708 §6.2).
    public var services: [CaptionService] {
        var ids: [String] = []
        if field1 { ids.append("CC1") }
        if field2 { ids.append("CC3") }
        if dtvcc { ids.append("SERVICE1") }
        return ids.compactMap { CaptionService(instreamID: $0) }
    }
}

/// What `--captions` asks for: the services found in the input (`auto`), none (`none`), or these, named.
public enum CaptionPlan: Sendable, Hashable, CustomStringConvertible {
    case auto
    case none
    /// Entries `CC1=en`, `SERVICE1=fr` name a service exactly; a bare language (`en`) names the next service found
    /// in the input that no entry named, else the next free 608 channel (CC1, CC3, CC2, CC4).
    case listed([(instreamID: String?, language: LanguageTag)])

    /// Reads `auto`, `none` or a comma-separated list of `ID=LANG` / `LANG`; `nil` when an entry is neither.
    public init?(_ text: String) {
        let t = trimmed(Substring(text))
        switch t.lowercased() {
        case "auto", "": self = .auto
        case "none", "off": self = .none
        default:
            var entries: [(String?, LanguageTag)] = []
            for item in t.split(separator: ",", omittingEmptySubsequences: false) {
                let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { trimmed($0) }
                if parts.count == 2 {
                    guard let s = CaptionService(instreamID: parts[0]), let l = LanguageTag(parts[1]) else { return nil }
                    entries.append((s.instreamID, l))
                } else {
                    guard let l = LanguageTag(parts[0]) else { return nil }
                    entries.append((nil, l))
                }
            }
            let ids = entries.compactMap(\.0)
            guard !entries.isEmpty, Set(ids).count == ids.count else { return nil }
            self = .listed(entries)
        }
    }

    /// The services to signal for a track in which `found` were detected.
    public func services(found: [CaptionService]) -> [CaptionService] {
        switch self {
        case .auto: return found
        case .none: return []
        case .listed(let entries):
            var taken = Set(entries.compactMap(\.instreamID))
            var spare = found.map(\.instreamID).filter { !taken.contains($0) }
                + ["CC1", "CC3", "CC2", "CC4"].filter { id in !taken.contains(id) && !found.contains { $0.instreamID == id } }
            return entries.compactMap { e in
                let id: String
                if let named = e.instreamID { id = named } else {
                    guard !spare.isEmpty else { return nil }
                    id = spare.removeFirst()
                }
                taken.insert(id)
                return CaptionService(instreamID: id, language: e.language)
            }
        }
    }

    public var description: String {
        switch self {
        case .auto: "auto"
        case .none: "none"
        case .listed(let entries): entries.map { e in e.instreamID.map { "\($0)=\(e.language)" } ?? "\(e.language)" }
            .joined(separator: ",")
        }
    }

    public static func == (a: CaptionPlan, b: CaptionPlan) -> Bool { a.description == b.description }
    public func hash(into h: inout Hasher) { h.combine(description) }
}

private func trimmed(_ s: Substring) -> String {
    String(s.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
}
