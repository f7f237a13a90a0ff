import MediaCore

/// An MPEG-DASH Media Presentation Description (ISO/IEC 23009-1), as much of it as a CMAF live or on-demand
/// presentation needs. A value type rendered by `render()`; the DASH sibling of `HLS.MediaPlaylist`.
public struct MPD: Sendable, Equatable {
    public enum PresentationType: String, Sendable {
        case `static`
        case dynamic
    }

    /// ISO/IEC 23009-1 §8.5: ISOBMFF live profile (`SegmentTemplate`, every segment starting with a SAP).
    public static let liveProfile = "urn:mpeg:dash:profile:isoff-live:2011"
    /// ISO/IEC 23009-1 §8.3: ISOBMFF on-demand profile (one file per representation, `SegmentBase` + `sidx`).
    public static let onDemandProfile = "urn:mpeg:dash:profile:isoff-on-demand:2011"
    /// ISO/IEC 23009-1 §8.12 (2019 amendment): every representation is a CMAF track.
    public static let cmafProfile = "urn:mpeg:dash:profile:cmaf:2019"

    public var type: PresentationType
    public var profiles: [String]
    /// `@availabilityStartTime` (mandatory for `dynamic`): the wall clock of media time 0 of the first Period.
    public var availabilityStartTime: WallClock?
    public var publishTime: WallClock?
    public var minimumUpdatePeriod: MediaTime?
    public var timeShiftBufferDepth: MediaTime?
    public var suggestedPresentationDelay: MediaTime?
    /// `@mediaPresentationDuration` (static presentations).
    public var mediaPresentationDuration: MediaTime?
    public var maxSegmentDuration: MediaTime?
    public var minBufferTime: MediaTime
    /// DASH-IF IOP low-latency `ServiceDescription` `Latency@target` (milliseconds), if any.
    public var targetLatencyMilliseconds: Int?
    public var utcTimings: [UTCTiming]
    public var periods: [Period]

    public init(type: PresentationType, profiles: [String], minBufferTime: MediaTime, periods: [Period],
                availabilityStartTime: WallClock? = nil, publishTime: WallClock? = nil,
                minimumUpdatePeriod: MediaTime? = nil, timeShiftBufferDepth: MediaTime? = nil,
                suggestedPresentationDelay: MediaTime? = nil, mediaPresentationDuration: MediaTime? = nil,
                maxSegmentDuration: MediaTime? = nil, targetLatencyMilliseconds: Int? = nil, utcTimings: [UTCTiming] = []) {
        self.type = type
        self.profiles = profiles
        self.minBufferTime = minBufferTime
        self.periods = periods
        self.availabilityStartTime = availabilityStartTime
        self.publishTime = publishTime
        self.minimumUpdatePeriod = minimumUpdatePeriod
        self.timeShiftBufferDepth = timeShiftBufferDepth
        self.suggestedPresentationDelay = suggestedPresentationDelay
        self.mediaPresentationDuration = mediaPresentationDuration
        self.maxSegmentDuration = maxSegmentDuration
        self.targetLatencyMilliseconds = targetLatencyMilliseconds
        self.utcTimings = utcTimings
    }

    /// `UTCTiming` (ISO/IEC 23009-1 §5.8.4.11, schemes in §5.8.5.7).
    public struct UTCTiming: Sendable, Equatable {
        /// The origin's time endpoint answers an ISO 8601 date-time (`urn:mpeg:dash:utc:http-iso:2014`).
        public static let httpISO = "urn:mpeg:dash:utc:http-iso:2014"
        /// `xs:dateTime` (`urn:mpeg:dash:utc:http-xsdate:2014`).
        public static let httpXSDate = "urn:mpeg:dash:utc:http-xsdate:2014"
        public var schemeIdUri: String
        public var value: String
        public init(schemeIdUri: String, value: String) {
            self.schemeIdUri = schemeIdUri
            self.value = value
        }
    }

    public struct Period: Sendable, Equatable {
        public var id: String
        public var start: MediaTime
        public var adaptationSets: [AdaptationSet]
        /// Thumbnail tiles (DASH-IF IOP 4.3 §6.2.6), rendered after the media AdaptationSets.
        public var thumbnails: ThumbnailSet?
        /// Timed events (`EventStream`, §5.10.2): SCTE-35 cues.
        public var eventStreams: [EventStream] = []
        public init(id: String, start: MediaTime = .zero(1), adaptationSets: [AdaptationSet], thumbnails: ThumbnailSet? = nil) {
            self.id = id
            self.start = start
            self.adaptationSets = adaptationSets
            self.thumbnails = thumbnails
        }
    }

    public struct AdaptationSet: Sendable, Equatable {
        public enum ContentType: String, Sendable {
            case video
            case audio
            case text
        }
        public var id: Int
        /// `nil` for a multiplexed (audio + video) adaptation set.
        public var contentType: ContentType?
        public var mimeType: String
        public var language: String?
        /// The `Role` value in scheme `urn:mpeg:dash:role:2011` (§5.8.5.5): `main`, `alternate`, `commentary`…; an
        /// audio set without one is `main`.
        public var role: String?
        /// Every segment boundary is aligned across representations (§5.3.3.2), and every segment starts with a
        /// SAP of type 1 or 2 (`startWithSAP`, §5.3.3.2).
        public var segmentAlignment: Bool
        public var startWithSAP: Int?
        /// DASH-IF IOP 4.3 §3.2.9: the `@id` of the AdaptationSet this one is the trick mode of (written as
        /// `EssentialProperty schemeIdUri="http://dashif.org/guidelines/trickmode"`).
        public var trickModeOf: Int?
        /// The `@id`s of the AdaptationSets a player may switch to from this one as if they were one set (DASH-IF IOP 4.3
        /// §3.8: `SupplementalProperty schemeIdUri="urn:mpeg:dash:adaptation-set-switching:2016"`): the sets one set of
        /// video is split into when its representations have different keys.
        public var switchableWith: [Int] = []
        /// `Accessibility` descriptors (§5.8.4.3), e.g. the closed captions in the video (`closedCaptions(_:)`).
        public var accessibility: [Descriptor] = []
        /// `InbandEventStream` schemes (§5.10.3.2): the `emsg` boxes its segments carry (ID3 timed metadata).
        public var inbandEventSchemes: [String] = []
        /// `ContentProtection` descriptors (§5.8.4.1), first in the set (ISO/IEC 23001-7 / DASH-IF IOP §7).
        public var contentProtection: [ContentProtection] = []
        public var representations: [Representation]
        public init(id: Int, contentType: ContentType?, mimeType: String, language: String? = nil, role: String? = nil,
                    segmentAlignment: Bool = true, startWithSAP: Int? = 1, representations: [Representation]) {
            self.id = id
            self.contentType = contentType
            self.mimeType = mimeType
            self.language = language
            self.role = role
            self.segmentAlignment = segmentAlignment
            self.startWithSAP = startWithSAP
            self.trickModeOf = nil
            self.representations = representations
        }
    }

    /// A descriptor element (ISO/IEC 23009-1 §5.8.2, `DescriptorType`): a scheme and its value.
    public struct Descriptor: Sendable, Equatable {
        public var schemeIdUri: String
        public var value: String?
        public init(schemeIdUri: String, value: String? = nil) {
            self.schemeIdUri = schemeIdUri
            self.value = value
        }

        /// The `Accessibility` descriptors of CTA-608 and CTA-708 captions in the video (ANSI/SCTE 214-1 §6.7.3,
        /// DASH-IF IOP 4.3 §6.4.3): `urn:scte:dash:cc:cea-608:2015` with `CC1=eng;CC3=spa` (a channel alone when its
        /// language is unknown), `urn:scte:dash:cc:cea-708:2015` with `1=lang:eng;2=lang:spa` (a service number alone).
        public static func closedCaptions(_ services: [CaptionService]) -> [Descriptor] {
            let c608 = services.filter { !$0.is708 }.map { c in c.language.map { "\(c.instreamID)=\($0.iso639T)" } ?? c.instreamID }
            let c708 = services.filter(\.is708).map { c in c.language.map { "\(c.number)=lang:\($0.iso639T)" } ?? "\(c.number)" }
            var out: [Descriptor] = []
            if !c608.isEmpty { out.append(Descriptor(schemeIdUri: "urn:scte:dash:cc:cea-608:2015", value: c608.joined(separator: ";"))) }
            if !c708.isEmpty { out.append(Descriptor(schemeIdUri: "urn:scte:dash:cc:cea-708:2015", value: c708.joined(separator: ";"))) }
            return out
        }
    }

    /// A `ContentProtection` descriptor (ISO/IEC 23009-1 §5.8.4.1, §5.8.5.2): the common scheme
    /// (`urn:mpeg:dash:mp4protection:2011`, `value` the scheme type `cenc`/`cbcs`, with `cenc:default_KID` of
    /// ISO/IEC 23001-7 §11.2), or one DRM system (`urn:uuid:<SystemID>`) with its `cenc:pssh` (the whole `pssh` box,
    /// base64). Rendering one adds `xmlns:cenc="urn:mpeg:cenc:2013"` to the MPD.
    public struct ContentProtection: Sendable, Equatable {
        public static let mp4Protection = "urn:mpeg:dash:mp4protection:2011"
        public static let cencNamespace = "urn:mpeg:cenc:2013"
        public var schemeIdUri: String
        public var value: String?
        public var defaultKID: String?
        /// Base64 of the `pssh` box.
        public var pssh: String?

        public init(schemeIdUri: String, value: String? = nil, defaultKID: String? = nil, pssh: String? = nil) {
            self.schemeIdUri = schemeIdUri
            self.value = value
            self.defaultKID = defaultKID
            self.pssh = pssh
        }
    }

    public struct Representation: Sendable, Equatable {
        public var id: String
        public var bandwidth: Int
        public var codecs: String
        public var width: Int?
        public var height: Int?
        /// `@frameRate` as `N` or `N/D` (§5.3.7.2, `FrameRateType`).
        public var frameRate: Rational?
        public var sar: Rational?
        public var audioSamplingRate: Int?
        public var audioChannelConfiguration: AudioChannelConfiguration?
        /// Video: the colour description, signalled with the CICP descriptors when the range is PQ or HLG.
        public var colour: ColourInfo?
        /// Trick mode (§5.3.7.2): the fastest rate the representation is meant for, and `codingDependency` false
        /// (every access unit decodes on its own: keyframes only).
        public var maxPlayoutRate: Int?
        public var codingDependency: Bool?
        /// SCTE 214-1 `scte214:supplementalCodecs` / `scte214:supplementalProfiles` (as DASH-IF IOP and Dolby's DASH
        /// guidance use them): a codec a capable player may decode the same samples as, beside `codecs`, and its
        /// brands. Dolby Vision profile 8: `dvh1.08.06` and `db1p` beside the HEVC base layer's `hvc1.2.4.…`.
        public var supplementalCodecs: String?
        public var supplementalProfiles: String?
        public var segments: Segments
        public init(id: String, bandwidth: Int, codecs: String, width: Int? = nil, height: Int? = nil,
                    frameRate: Rational? = nil, sar: Rational? = nil, audioSamplingRate: Int? = nil,
                    audioChannelConfiguration: AudioChannelConfiguration? = nil, colour: ColourInfo? = nil,
                    segments: Segments) {
            self.id = id
            self.bandwidth = bandwidth
            self.codecs = codecs
            self.width = width
            self.height = height
            self.frameRate = frameRate
            self.sar = sar
            self.audioSamplingRate = audioSamplingRate
            self.audioChannelConfiguration = audioChannelConfiguration
            self.colour = colour
            self.segments = segments
        }
    }

    public enum Segments: Sendable, Equatable {
        case template(SegmentTemplate)
        case base(SegmentBase)
        case list(SegmentList)
    }

    /// `SegmentList` (§5.3.9.3) with a `SegmentTimeline`: one `SegmentURL` per segment, each a byte range
    /// (`mediaRange`) of a file, in timeline order. Trick-mode representations address the keyframe fragments of
    /// the main representation's segments this way, without storing a byte twice.
    public struct SegmentList: Sendable, Equatable {
        public struct URL: Sendable, Equatable {
            public var media: String
            /// Byte range in `media`, half-open here, written inclusive (`first-last`).
            public var range: Range<Int>
            public init(media: String, range: Range<Int>) {
                self.media = media
                self.range = range
            }
        }
        public var timescale: Int32
        public var initialization: String
        public var startNumber: UInt64
        public var timeline: [TimelineEntry]
        public var urls: [URL]
        public init(timescale: Int32, initialization: String, startNumber: UInt64, timeline: [TimelineEntry], urls: [URL]) {
            self.timescale = timescale
            self.initialization = initialization
            self.startNumber = startNumber
            self.timeline = timeline
            self.urls = urls
        }
    }

    /// `SegmentTemplate` with `$Number$` and a `SegmentTimeline` (§5.3.9.4, §5.3.9.6).
    public struct SegmentTemplate: Sendable, Equatable {
        public var timescale: Int32
        public var initialization: String
        /// The media URL template, with `$Number$`.
        public var media: String
        public var startNumber: UInt64
        public var presentationTimeOffset: Int64
        /// Low-latency DASH: seconds before a segment's end at which its first bytes are available (§5.3.9.5.3).
        public var availabilityTimeOffset: MediaTime?
        /// `false` when segments are delivered in chunks as they are produced (§5.3.9.5.3).
        public var availabilityTimeComplete: Bool?
        public var timeline: [TimelineEntry]
        public init(timescale: Int32, initialization: String, media: String, startNumber: UInt64,
                    presentationTimeOffset: Int64 = 0, availabilityTimeOffset: MediaTime? = nil,
                    availabilityTimeComplete: Bool? = nil, timeline: [TimelineEntry]) {
            self.timescale = timescale
            self.initialization = initialization
            self.media = media
            self.startNumber = startNumber
            self.presentationTimeOffset = presentationTimeOffset
            self.availabilityTimeOffset = availabilityTimeOffset
            self.availabilityTimeComplete = availabilityTimeComplete
            self.timeline = timeline
        }
    }

    /// `SegmentTimeline/S` (§5.3.9.6): `t` is given where the timeline does not continue from the previous entry;
    /// `r` repeats an entry with the same duration.
    public struct TimelineEntry: Sendable, Equatable {
        public var time: Int64?
        public var duration: Int64
        public var repeatCount: Int
        public init(time: Int64?, duration: Int64, repeatCount: Int = 0) {
            self.time = time
            self.duration = duration
            self.repeatCount = repeatCount
        }
    }

    /// `SegmentBase` (§5.3.9.2) of a single-file representation: the `sidx` at `indexRange`, the init segment at
    /// `initializationRange`, both inclusive byte ranges of `url`.
    public struct SegmentBase: Sendable, Equatable {
        public var url: String
        public var timescale: Int32
        public var indexRange: ClosedRange<Int>
        public var initializationRange: ClosedRange<Int>
        public init(url: String, timescale: Int32, indexRange: ClosedRange<Int>, initializationRange: ClosedRange<Int>) {
            self.url = url
            self.timescale = timescale
            self.indexRange = indexRange
            self.initializationRange = initializationRange
        }
    }
}

extension MPD.TimelineEntry {
    /// `S` entries for segments given as (start, duration) in one timescale, oldest first: runs of equal durations
    /// that follow each other become one entry with `r`; `t` is written on the first entry and after any gap.
    public static func compress(_ segments: [(start: Int64, duration: Int64)]) -> [MPD.TimelineEntry] {
        var out: [MPD.TimelineEntry] = []
        var expected: Int64?
        for s in segments {
            if s.start == expected, let last = out.last, last.duration == s.duration {
                out[out.count - 1].repeatCount += 1
            } else {
                out.append(MPD.TimelineEntry(time: s.start == expected ? nil : s.start, duration: s.duration))
            }
            expected = s.start + s.duration
        }
        return out
    }
}
