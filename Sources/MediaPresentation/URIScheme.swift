/// Every URI of one rendition, built in exactly one place and parsed back by the same rules (STYLE.md §9).
/// The layout is the same on disk (`package`) and over HTTP (`serve`); URIs are relative to the multivariant
/// playlist, which sits at the presentation's root.
///
/// ```
/// muxed "stream" (root layout):  stream.m3u8   init.mp4        seg<N>.m4s        seg<N>.<i>.m4s
/// nested "720p":                 720p.m3u8     720p/init.mp4   720p/seg<N>.m4s   720p/seg<N>.<i>.m4s
/// ```
/// Init segments after a codec change are `init1.mp4`, `init2.mp4`, …
///
/// A video rendition's I-frame playlist (RFC 8216 §4.3.3.6) sits beside its media playlist, named like it with
/// `.iframes` before `.m3u8`: `stream.iframes.m3u8`, `720p.iframes.m3u8`. A rendition name has no `.`, so no other
/// rendition's playlist can take that name; it lists byte ranges of the same segments.
///
/// A subtitle rendition (`URIScheme.webVTT`) has no init segment and no parts: its segments are WebVTT files,
/// `subs-en.m3u8`, `subs-en/seg<N>.vtt` (RFC 8216 §3.5).
///
/// A single-file rendition (`package --single-file`) is one file beside its playlist, named like it:
/// `stream.mp4` for the muxed root rendition, `720p.mp4` for a nested one (its directory stays unused).
public struct URIScheme: Sendable, Hashable {
    /// The media playlist's URI, relative to the presentation root (`720p.m3u8`).
    public let playlistURI: String
    /// Prefix of every media object (`""` or `720p/`).
    public let directory: String
    /// What its segments are: fMP4 fragments (an init segment, parts) or WebVTT files (neither).
    public let segmentFormat: SegmentFormat
    /// Its segments are published whole, never as LL-HLS parts (WebVTT files; a `wvtt` text track): its playlist has
    /// no `EXT-X-PART-INF`, its MPD template no `availabilityTimeOffset`.
    public let wholeSegments: Bool

    public enum SegmentFormat: String, Sendable, Hashable {
        /// `init.mp4`, `seg<N>.m4s`, `seg<N>.<i>.m4s`.
        case fragmentedMP4 = "m4s"
        /// `seg<N>.vtt`: no init segment (no `EXT-X-MAP`), no parts.
        case webVTT = "vtt"
    }

    /// A rendition whose objects sit in a directory named after it (`720p/…`), playlist `name.m3u8`.
    public static func nested(_ name: String) -> URIScheme {
        URIScheme(playlistURI: name + ".m3u8", directory: name + "/")
    }

    /// A subtitle rendition: `name.m3u8`, `name/seg<N>.vtt`.
    public static func webVTT(_ name: String) -> URIScheme {
        URIScheme(playlistURI: name + ".m3u8", directory: name + "/", segmentFormat: .webVTT, wholeSegments: true)
    }

    /// A text track in fMP4 (`wvtt`): nested like a video rendition, its segments published whole.
    public static func textTrack(_ name: String) -> URIScheme {
        URIScheme(playlistURI: name + ".m3u8", directory: name + "/", wholeSegments: true)
    }

    /// A rendition whose objects sit at the root (the single muxed rendition: `init.mp4`, `seg<N>.m4s`).
    public static func root(_ name: String) -> URIScheme {
        URIScheme(playlistURI: name + ".m3u8", directory: "")
    }

    public init(playlistURI: String, directory: String, segmentFormat: SegmentFormat = .fragmentedMP4,
                wholeSegments: Bool = false) {
        precondition(directory.isEmpty || directory.hasSuffix("/"), "a URI directory ends with /")
        self.playlistURI = playlistURI
        self.directory = directory
        self.segmentFormat = segmentFormat
        self.wholeSegments = wholeSegments || segmentFormat == .webVTT
    }

    /// Whether its segments need an init segment (`EXT-X-MAP`).
    public var hasInitSegment: Bool { segmentFormat == .fragmentedMP4 }

    /// The `EXT-X-MAP` URI of init segment `index`, `nil` for segments that need none.
    public func mapURI(_ index: Int) -> String? { hasInitSegment ? initURI(index) : nil }

    /// Objects are named relative to the media playlist, which sits at the root: so a nested rendition's
    /// playlist lists `720p/seg3.m4s`.
    public func initURI(_ index: Int) -> String { directory + (index == 0 ? "init.mp4" : "init\(index).mp4") }
    public func segmentURI(_ sequence: UInt64) -> String { directory + "seg\(sequence)." + segmentFormat.rawValue }
    public func partURI(_ sequence: UInt64, _ index: Int) -> String { directory + "seg\(sequence).\(index).m4s" }
    /// The segment URI as a DASH `SegmentTemplate@media` (`$Number$` is the segment's sequence number).
    public var segmentTemplate: String { directory + "seg$Number$.m4s" }
    /// The one CMAF file of a single-file rendition: the playlist's name with `.mp4` (`720p.m3u8` → `720p.mp4`).
    public var singleFileURI: String { playlistStem + ".mp4" }
    /// The I-frame playlist (`EXT-X-I-FRAMES-ONLY`): the playlist's name with `.iframes.m3u8`
    /// (`720p.m3u8` → `720p.iframes.m3u8`).
    public var iFramePlaylistURI: String { playlistStem + ".iframes.m3u8" }

    /// A content key the origin serves (`EXT-X-KEY` URI): one per presentation, beside the playlists, for every
    /// rendition (`keys/3.key`, relative to the presentation root like every URI here).
    public static func keyURI(_ id: UInt64) -> String { "keys/\(id).key" }

    /// The key number a root-relative path names (`keys/<N>.key`), or `nil`.
    public static func keyObject(_ path: Substring) -> UInt64? {
        guard path.hasPrefix("keys/"), path.hasSuffix(".key") else { return nil }
        return strictDecimal(path.dropFirst(5).dropLast(4))
    }

    private var playlistStem: String {
        playlistURI.hasSuffix(".m3u8") ? String(playlistURI.dropLast(5)) : playlistURI
    }

    /// One object of a rendition.
    public enum Object: Sendable, Hashable {
        case playlist
        /// The I-frame playlist (`iFramePlaylistURI`).
        case iFramePlaylist
        case initSegment(Int)
        case segment(UInt64)
        case part(UInt64, Int)
    }

    /// The object a root-relative path names (no leading `/`), or `nil` if it is not one of this rendition's.
    /// Numbers are strict decimals: no sign, no leading zero, at most 19 digits.
    public func object(at path: Substring) -> Object? {
        if path == playlistURI[...] { return .playlist }
        if path == iFramePlaylistURI[...] { return .iFramePlaylist }
        guard path.hasPrefix(directory) else { return nil }
        return mediaObject(path.dropFirst(directory.count))
    }

    /// `init.mp4`, `init<K>.mp4`, `seg<N>.m4s`, `seg<N>.<i>.m4s` (a name with no directory); `seg<N>.vtt` alone for
    /// WebVTT segments.
    func mediaObject(_ name: Substring) -> Object? {
        if segmentFormat == .webVTT {
            guard name.hasPrefix("seg"), name.hasSuffix(".vtt") else { return nil }
            return Self.strictDecimal(name.dropFirst(3).dropLast(4)).map { .segment($0) }
        }
        if name == "init.mp4" { return .initSegment(0) }
        if name.hasPrefix("init"), name.hasSuffix(".mp4") {
            guard let k = Self.strictDecimal(name.dropFirst(4).dropLast(4)), k > 0, k <= UInt64(Int32.max) else { return nil }
            return .initSegment(Int(k))
        }
        guard name.hasPrefix("seg"), name.hasSuffix(".m4s") else { return nil }
        let middle = name.dropFirst(3).dropLast(4)
        let pieces = middle.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        switch pieces.count {
        case 1:
            return Self.strictDecimal(pieces[0]).map { .segment($0) }
        case 2:
            guard let n = Self.strictDecimal(pieces[0]), let i = Self.strictDecimal(pieces[1]), i <= UInt64(Int32.max) else { return nil }
            return .part(n, Int(i))
        default:
            return nil
        }
    }

    /// Unsigned decimal without sign or leading zeros, 1–19 digits.
    public static func strictDecimal(_ s: Substring) -> UInt64? {
        let u = s.utf8
        guard !u.isEmpty, u.count <= 19, u.first != UInt8(ascii: "0") || u.count == 1 else { return nil }
        var v: UInt64 = 0
        for c in u {
            guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
            v = v * 10 + UInt64(c - UInt8(ascii: "0"))
        }
        return v
    }
}
