import HLS
import MediaCore

/// How a presentation's timed events are written besides `EXT-X-DATERANGE` and the MPD's `EventStream`
/// (`--cue-tags legacy`, `--interstitial URL`; docs/events.md).
public struct EventSignalling: Sendable, Equatable {
    /// `EXT-X-CUE-OUT:DURATION`, `EXT-X-CUE-OUT-CONT`, `EXT-X-CUE-IN` before the segments of each break, for the ad
    /// servers and players that read those (no RFC: the de-facto tags of Adobe's and AWS Elemental's outputs).
    public var legacyCueTags: Bool
    /// Every break becomes an HLS interstitial (Apple's `CLASS="com.apple.hls.interstitial"`) that plays this asset.
    public var interstitialAssetURI: String?
    /// `--events inband`: SCTE-35 events are also `emsg` boxes in the segments, and DASH declares their scheme
    /// (`InbandEventStream`) instead of an `EventStream`.
    public var scte35Inband: Bool

    public init(legacyCueTags: Bool = false, interstitialAssetURI: String? = nil, scte35Inband: Bool = false) {
        self.legacyCueTags = legacyCueTags
        self.interstitialAssetURI = interstitialAssetURI
        self.scte35Inband = scte35Inband
    }

    public static let interstitialClass = "com.apple.hls.interstitial"
    /// A PDT this close to a break's start or end is at it (PDTs are whole milliseconds).
    static let toleranceMillis: Int64 = 20

    /// The interstitial of a break (`nil` for other events or without an asset): its own daterange beside the
    /// SCTE-35 one, starting with the break, `X-RESUME-OFFSET` its length (the ad replaces that much of the live
    /// stream), `X-RESTRICT="SKIP,JUMP"` (the ad is not skipped).
    func interstitial(_ e: ListedEvent) -> DateRange? {
        guard let uri = interstitialAssetURI, e.outSection != nil else { return nil }
        var d = DateRange(id: e.id + ".interstitial", rangeClass: Self.interstitialClass, startDate: e.startDate)
        let length = e.duration ?? e.plannedDuration
        d.duration = length
        d.clientAttributes = [("X-ASSET-URI", .string(uri)), ("X-RESUME-OFFSET", .decimal(length ?? .zero(1))),
                              ("X-RESTRICT", .string("SKIP,JUMP"))]
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
