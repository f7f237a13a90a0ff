import HLS
import MediaCore

/// How a presentation's timed events are written besides `EXT-X-DATERANGE` and the MPD's `EventStream`
/// (`--cue-tags legacy`, `--interstitial URL`, `--interstitial-list URL`; docs/events.md).
public struct EventSignalling: Sendable, Equatable {
    /// `EXT-X-CUE-OUT:DURATION`, `EXT-X-CUE-OUT-CONT`, `EXT-X-CUE-IN` before the segments of each break, for the ad
    /// servers and players that read those (no RFC: the de-facto tags of Adobe's and AWS Elemental's outputs).
    public var legacyCueTags: Bool
    /// Every break becomes an HLS interstitial (Apple's `CLASS="com.apple.hls.interstitial"`) that plays this.
    public var interstitial: InterstitialAsset?
    /// `--events inband`: SCTE-35 events are also `emsg` boxes in the segments, and DASH declares their scheme
    /// (`InbandEventStream`) instead of an `EventStream`.
    public var scte35Inband: Bool

    public init(legacyCueTags: Bool = false, interstitial: InterstitialAsset? = nil, scte35Inband: Bool = false) {
        self.legacyCueTags = legacyCueTags
        self.interstitial = interstitial
        self.scte35Inband = scte35Inband
    }

    public static let interstitialClass = "com.apple.hls.interstitial"
    /// A PDT this close to a break's start or end is at it (PDTs are whole milliseconds).
    static let toleranceMillis: Int64 = 20

    /// The interstitial of a break (`nil` for other events or without an asset): its own daterange beside the
    /// SCTE-35 one, starting with the break, naming the asset (`X-ASSET-URI`) or the asset list (`X-ASSET-LIST`,
    /// RFC 8216bis Appendix D: an interstitial has one or the other), `X-RESUME-OFFSET` its planned length (the ad
    /// replaces that much of the live stream), `X-RESTRICT="SKIP,JUMP"` (the ad is not skipped).
    ///
    /// Its attributes never change from one reload to the next (§4.4.5.1: two tags with the same ID give an attribute
    /// they both have the same value): `DURATION` and `X-RESUME-OFFSET` are the planned length, not the length the
    /// break turns out to have (the SCTE-35 daterange says that); without a planned length, `X-RESUME-OFFSET` is left
    /// out (the client resumes after the asset) and `DURATION` comes once the break has ended.
    func interstitial(_ e: ListedEvent) -> DateRange? {
        guard let asset = interstitial, e.outSection != nil else { return nil }
        var d = DateRange(id: e.id + ".interstitial", rangeClass: Self.interstitialClass, startDate: e.startDate)
        d.duration = e.plannedDuration ?? e.duration
        let named: (name: String, value: DateRange.ClientValue)
        switch asset {
        case .uri(let uri): named = ("X-ASSET-URI", .string(uri))
        case .list(let url): named = ("X-ASSET-LIST", .string(InterstitialAsset.listURL(url, breakID: e.id, planned: e.plannedDuration)))
        }
        d.clientAttributes = [named] + (e.plannedDuration.map { [("X-RESUME-OFFSET", .decimal($0))] } ?? [])
            + [("X-RESTRICT", .string("SKIP,JUMP"))]
        return d
    }

    /// The legacy cue lines before each listed segment in a break, by sequence number.
    func cueTags(_ events: [ListedEvent], _ segments: [PlaylistSegment]) -> [UInt64: String] {
        var out: [UInt64: String] = [:]
        for e in events where e.outSection != nil {
            let start = e.startDate.millisecondsSince1970
            let length = e.duration ?? e.plannedDuration
            let end = length.map { start + MediaTime.rescale($0.value, from: $0.timescale, to: 1000) }
            var opened = false
            for (i, s) in segments.enumerated() {
                guard let pdt = s.programDateTime?.millisecondsSince1970 else { continue }
                if let end, pdt >= end - Self.toleranceMillis {
                    if opened { out[s.sequence, default: ""] += "#EXT-X-CUE-IN\n" }
                    break
                }
                guard pdt >= start - Self.toleranceMillis else { continue }
                // The first segment at or after the splice (a copied input's cut is its next keyframe) opens the break;
                // a break older than the window goes on from its first segment.
                let elapsed = MediaTime(value: max(0, pdt - start), timescale: 1000)
                if !opened && !(i == 0 && pdt > start + Self.toleranceMillis) {
                    out[s.sequence, default: ""] += "#EXT-X-CUE-OUT:DURATION=" + (length.map(MediaPlaylist.extinfText) ?? "0") + "\n"
                } else {
                    out[s.sequence, default: ""] += "#EXT-X-CUE-OUT-CONT:ElapsedTime=" + MediaPlaylist.extinfText(elapsed)
                        + (length.map { ",Duration=" + MediaPlaylist.extinfText($0) } ?? "") + "\n"
                }
                opened = true
            }
        }
        return out
    }
}

/// What an interstitial plays: one asset (`--interstitial`, `X-ASSET-URI`: a playlist's URL) or the assets a JSON
/// asset list names (`--interstitial-list`, `X-ASSET-LIST`: `{"ASSETS": [{"URI": …, "DURATION": …}, …]}`, which an ad
/// decision service can answer per break and per viewer).
public enum InterstitialAsset: Sendable, Equatable {
    case uri(String)
    case list(String)

    /// The asset list's URL for one break: the configured URL with `break=ID` and, when the break's out cue planned a
    /// duration, `duration=SECONDS` added to its query (before a `#fragment`; the URL's own query stays). These are the
    /// only facts of a break the list's server cannot learn from the request: the player adds the session's
    /// `_HLS_primary_id` (and `_HLS_start_offset` when it joins a break late), a prefix RFC 8216bis reserves for the
    /// protocol, so ours have plain names. Both are fixed when the break opens (its actual duration, known later, is
    /// not used), so the attribute never changes between reloads (§4.4.5.1).
    static func listURL(_ url: String, breakID: String, planned: MediaTime?) -> String {
        var base = Substring(url), fragment: Substring = ""
        if let hash = url.firstIndex(of: "#") { (base, fragment) = (url[..<hash], url[hash...]) }
        var query = "break=" + Self.percentEncoded(breakID)
        if let planned { query += "&duration=" + MediaPlaylist.extinfText(planned) }
        let joiner = base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
        return base + joiner + query + fragment
    }

    /// RFC 3986 §2.3: unreserved characters as they are, every other byte of the UTF-8 as `%XX`.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                out += "%" + String(b >> 4, radix: 16, uppercase: true) + String(b & 0xF, radix: 16, uppercase: true)
            }
        }
        return out
    }
}
