/// `--cue-tags` / `cue_tags`: `daterange` (EXT-X-DATERANGE only, the default) or `legacy` (and the EXT-X-CUE tags).
public enum CueTagStyle: OptionValue, CaseIterable, Hashable {
    case daterange
    case legacy

    public init(parsing text: String) throws(OptionError) {
        switch text.lowercased() {
        case "daterange": self = .daterange
        case "legacy": self = .legacy
        default: throw OptionError(" is daterange or legacy (got '\(text.prefix(32))')")
        }
    }

    public var description: String {
        switch self {
        case .daterange: "daterange"
        case .legacy: "legacy"
        }
    }
}

/// `--events` / `events`: where DASH carries SCTE-35 events: `eventstream` (the MPD's `EventStream`, the default) or
/// `inband` (`emsg` boxes in the segments of every rendition, the MPD's `InbandEventStream`).
public enum EventCarriage: OptionValue, CaseIterable, Hashable {
    case eventstream
    case inband

    public init(parsing text: String) throws(OptionError) {
        switch text.lowercased() {
        case "eventstream": self = .eventstream
        case "inband": self = .inband
        default: throw OptionError(" is eventstream or inband (got '\(text.prefix(32))')")
        }
    }

    public var description: String {
        switch self {
        case .eventstream: "eventstream"
        case .inband: "inband"
        }
    }
}

/// `--interstitial` / `interstitial` and `--interstitial-list` / `interstitial_list`: an asset's or an asset list's
/// http(s) URL (RFC 8216bis Appendix D: absolute), written in a quoted-string attribute (`X-ASSET-URI`,
/// `X-ASSET-LIST`), so without quotes, control characters or spaces.
public struct AssetURL: OptionValue, Hashable {
    public let text: String

    public init(parsing text: String) throws(OptionError) {
        let lower = text.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), text.utf8.count <= 2048,
              text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") }) else {
            throw OptionError(" is an http:// or https:// URL without spaces or quotes (got '\(text.prefix(32))')")
        }
        self.text = text
    }

    public var description: String { text }
}
