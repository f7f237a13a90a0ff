import ISOBMFF
import MediaCore

/// Which tracks one content key protects: a DASH-IF CPIX 2.3 `ContentKeyUsageRule` by its filters. A `VideoFilter`
/// takes video tracks whose picture (width × height) is within its `minPixels`…`maxPixels` (either bound may be
/// absent), an `AudioFilter` audio tracks with `minChannels`…`maxChannels`; several filters of one kind are a union,
/// and a rule with no filter takes every track. `label` is the rule's `intendedTrackType` ("SD", "HD", "AUDIO"), for
/// messages.
public struct KeyUsage: Sendable, Equatable, CustomStringConvertible {
    public var label: String
    /// The `VideoFilter`s' pixel ranges (empty: no video track).
    public var video: [ClosedRange<Int>]
    /// The `AudioFilter`s' channel ranges (empty: no audio track).
    public var audio: [ClosedRange<Int>]

    public init(label: String, video: [ClosedRange<Int>], audio: [ClosedRange<Int>]) {
        self.label = label
        self.video = video
        self.audio = audio
    }

    /// Every track (a rule with no filter, or the one key of a stream).
    public static let all = KeyUsage(label: "ALL", video: [0...Int.max], audio: [0...Int.max])

    /// SPEKE v2's encryption contract's track types (its examples' pixel bounds): SD up to 768 × 576 (442,368
    /// pixels), HD up to 1920 × 1080 (2,073,600), UHD above; all video; all audio.
    public static let sd = KeyUsage(label: "SD", video: [0...442_368], audio: [])
    public static let hd = KeyUsage(label: "HD", video: [442_369...2_073_600], audio: [])
    public static let uhd = KeyUsage(label: "UHD", video: [2_073_601...Int.max], audio: [])
    public static let video = KeyUsage(label: "VIDEO", video: [0...Int.max], audio: [])
    public static let audio = KeyUsage(label: "AUDIO", video: [], audio: [0...Int.max])

    /// The rule's filters as CPIX elements in the schema's order (`VideoFilter`, then `AudioFilter`; open bounds left
    /// out): `all` is both without attributes, as SPEKE v2's encryption contract writes `ALL`.
    public var filterElements: String {
        func bounds(_ r: ClosedRange<Int>, _ low: String, _ high: String) -> String {
            (r.lowerBound > 0 ? " \(low)=\"\(r.lowerBound)\"" : "") + (r.upperBound < Int.max ? " \(high)=\"\(r.upperBound)\"" : "")
        }
        return video.map { "<cpix:VideoFilter\(bounds($0, "minPixels", "maxPixels"))/>" }.joined()
            + audio.map { "<cpix:AudioFilter\(bounds($0, "minChannels", "maxChannels"))/>" }.joined()
    }

    /// Whether `track` is one this key protects.
    public func matches(_ track: TrackFormat) -> Bool {
        switch track.kind {
        case .video: video.contains { $0.contains(track.width * track.height) }
        case .audio: audio.contains { $0.contains(track.channelCount) }
        }
    }

    public var description: String { label }
}

/// A stream's content keys and the tracks each protects (`KeyUsage`): per-track keys as a DRM licence policy wants
/// them (SD, HD and UHD video and the audio each their own key, so a licence can grant SD alone). A rendition is
/// encrypted with one key: its video track's (a muxed rendition's audio goes with its picture), or its audio track's;
/// exactly one usage must take that track. One key for everything is the usual case (`init(_:)`).
public struct TrackKeys: Sendable {
    public struct Entry: Sendable {
        public let usage: KeyUsage
        public let protection: SampleProtection
    }
    public let entries: [Entry]

    /// One key for every track.
    public init(_ protection: SampleProtection) {
        entries = [Entry(usage: .all, protection: protection)]
    }

    /// Keys by usage, all of one scheme and one key period.
    public init(_ keys: [(KeyUsage, SampleProtection)]) {
        precondition(!keys.isEmpty, "at least one key")
        precondition(keys.allSatisfy { $0.1.scheme == keys[0].1.scheme && $0.1.keyPeriod == keys[0].1.keyPeriod },
                     "one scheme and one key period for every key")
        entries = keys.map { Entry(usage: $0.0, protection: $0.1) }
    }

    public var scheme: ProtectionScheme { entries[0].protection.scheme }
    public var keyPeriod: MediaTime? { entries[0].protection.keyPeriod }
    /// The first key's protection (the one key of a stream that has one).
    public var first: SampleProtection { entries[0].protection }

    /// The stream ended: every key source stops fetching.
    public func finish() { for e in entries { e.protection.finish() } }

    /// The entry whose key encrypts a rendition of `tracks`: the one usage that takes its video track, or its audio
    /// track when it has no video. One line when none does or several do (never a key).
    public func entry(for tracks: [TrackFormat]) throws(TrackKeysError) -> Int {
        if entries.count == 1 { return 0 }
        guard let track = tracks.first(where: { $0.kind == .video }) ?? tracks.first(where: { $0.kind == .audio }) else {
            return 0
        }
        let what = track.kind == .video ? "video of \(track.width)×\(track.height) (\(track.width * track.height) pixels)"
            : "audio of \(track.channelCount) channel\(track.channelCount == 1 ? "" : "s")"
        let taken = entries.indices.filter { entries[$0].usage.matches(track) }
        guard let one = taken.first else {
            throw TrackKeysError("no content key is for \(what): the usage rules are \(entries.map(\.usage.label).joined(separator: ", "))")
        }
        guard taken.count == 1 else {
            throw TrackKeysError("\(what) matches the usage rules of \(taken.count) content keys (\(taken.map { entries[$0].usage.label }.joined(separator: ", "))): one key per track")
        }
        return one
    }
}

/// No key, or more than one, for a rendition's track: one line.
public struct TrackKeysError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
