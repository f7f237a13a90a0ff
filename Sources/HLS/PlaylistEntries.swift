import MediaCore

/// One partial segment (`EXT-X-PART`, RFC 8216bis §4.4.4.9).
public struct PlaylistPart: Sendable, Equatable {
    public var uri: String
    /// Exact duration; rendered truncated to microseconds (never above the real value).
    public var duration: MediaTime
    /// `INDEPENDENT=YES`: the part starts with an independent frame (keyframe).
    public var independent: Bool

    public init(uri: String, duration: MediaTime, independent: Bool = false) {
        self.uri = uri
        self.duration = duration
        self.independent = independent
    }
}

/// `EXT-X-SERVER-CONTROL` (RFC 8216bis §4.4.3.8).
public struct ServerControl: Sendable, Equatable {
    public var canBlockReload: Bool
    public var holdBack: MediaTime?
    public var partHoldBack: MediaTime?
    /// `CAN-SKIP-UNTIL`, the Skip Boundary: the server can produce Playlist Delta Updates
    /// (`MediaPlaylist.deltaUpdate()`). Rendered truncated to microseconds. §4.4.3.8: "The Skip Boundary
    /// MUST be at least six times the Target Duration."
    public var canSkipUntil: MediaTime?
    /// `CAN-SKIP-DATERANGES=YES`: a delta update for `_HLS_skip=v2` also skips older dateranges
    /// (`deltaUpdate(skippingDateRanges:)`).
    public var canSkipDateRanges = false

    public init(canBlockReload: Bool, holdBack: MediaTime? = nil, partHoldBack: MediaTime? = nil,
                canSkipUntil: MediaTime? = nil) {
        self.canBlockReload = canBlockReload
        self.holdBack = holdBack
        self.partHoldBack = partHoldBack
        self.canSkipUntil = canSkipUntil
    }
}

/// `EXT-X-PRELOAD-HINT` (RFC 8216bis §4.4.5.3).
public struct PreloadHint: Sendable, Equatable {
    public enum HintType: String, Sendable { case part = "PART", map = "MAP" }
    public var type: HintType
    public var uri: String

    public init(type: HintType = .part, uri: String) {
        self.type = type
        self.uri = uri
    }
}

/// `EXT-X-RENDITION-REPORT` (RFC 8216bis §4.4.5.4): how far an associated Rendition has got, "as
/// up-to-date as the Playlist that contains it". `MediaPlaylist.renditionReport(uri:)` builds one.
public struct RenditionReport: Sendable, Equatable {
    /// The Rendition's Media Playlist, "relative to the URI of the Media Playlist containing the
    /// EXT-X-RENDITION-REPORT tag".
    public var uri: String
    /// `LAST-MSN`: "the Media Sequence Number of the last Media Segment currently in the specified Rendition.
    /// If the Rendition contains Partial Segments then this value is the Media Sequence Number of the last
    /// Partial Segment."
    public var lastMSN: UInt64
    /// `LAST-PART`: "the Part Index of the last Partial Segment currently in the specified Rendition whose
    /// Media Sequence Number is equal to the LAST-MSN attribute value" (required when it has parts).
    public var lastPart: Int?

    public init(uri: String, lastMSN: UInt64, lastPart: Int? = nil) {
        self.uri = uri
        self.lastMSN = lastMSN
        self.lastPart = lastPart
    }
}

/// A sub-range of a resource: `EXT-X-BYTERANGE:<n>@<o>` of a segment, `BYTERANGE="<n>@<o>"` of an `EXT-X-MAP`
/// (RFC 8216 §4.3.2.2: "n is a decimal-integer indicating the length of the sub-range in bytes. If present, o is a
/// decimal-integer indicating the start of the sub-range, as a byte offset from the beginning of the resource").
/// Always rendered with its offset; a parsed range without one is resolved against the previous segment's.
public struct PlaylistByteRange: Sendable, Equatable {
    public var length: Int
    public var offset: Int

    public init(length: Int, offset: Int) {
        precondition(length >= 0 && offset >= 0, "a byte range is non-negative")
        self.length = length
        self.offset = offset
    }

    public var range: Range<Int> { offset..<(offset + length) }
    /// `n@o`.
    public var text: String { "\(length)@\(offset)" }
}

/// One media segment as it appears in a media playlist.
public struct PlaylistSegment: Sendable, Equatable {
    /// Media sequence number of this segment.
    public var sequence: UInt64
    public var uri: String
    /// Exact duration; rendered as `EXTINF` truncated to microseconds.
    public var duration: MediaTime
    public var programDateTime: WallClock?
    /// `EXT-X-DISCONTINUITY` before this segment.
    public var discontinuity: Bool
    /// `EXT-X-MAP` to emit before this segment. Rendered only when it differs from the map in force
    /// (the playlist's `mapURI`, or the last segment-level map); parsing sets it only where a tag appears.
    public var mapURI: String?
    /// `EXT-X-PART` lines rendered before this segment's `EXTINF` (LL-HLS; usually only near the live edge).
    public var parts: [PlaylistPart]
    /// `EXT-X-BYTERANGE`: the segment is this sub-range of `uri` (a single-file VOD).
    public var byteRange: PlaylistByteRange?
    /// `BYTERANGE` of this segment's `EXT-X-MAP` (with `mapURI`).
    public var mapByteRange: PlaylistByteRange?
    /// The `EXT-X-KEY` that applies to this segment and its parts (`nil`: clear). Rendered only when it differs from
    /// the key in force (`METHOD=NONE` when a clear segment follows encrypted ones); parsing sets the key in force.
    public var key: PlaylistKey? = nil

    public init(sequence: UInt64, uri: String, duration: MediaTime, programDateTime: WallClock? = nil,
                discontinuity: Bool = false, mapURI: String? = nil, parts: [PlaylistPart] = [],
                byteRange: PlaylistByteRange? = nil, mapByteRange: PlaylistByteRange? = nil) {
        self.parts = parts
        self.byteRange = byteRange
        self.mapByteRange = mapByteRange
        self.sequence = sequence
        self.uri = uri
        self.duration = duration
        self.programDateTime = programDateTime
        self.discontinuity = discontinuity
        self.mapURI = mapURI
    }
}
