import MediaCore

/// One `EXT-X-STREAM-INF` entry.
public struct VariantStream: Sendable, Equatable {
    public struct Resolution: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public init(width: Int, height: Int) { self.width = width; self.height = height }
    }

    /// Peak segment bit rate, bits/s.
    public var bandwidth: Int
    /// Average segment bit rate, bits/s.
    public var averageBandwidth: Int?
    /// RFC 6381 codecs, comma-joined (`avc1.64001f,mp4a.40.2`).
    public var codecs: String
    public var resolution: Resolution?
    /// Rendered with three decimals.
    public var frameRate: Double?
    /// `AUDIO` (§4.4.6.2): the GROUP-ID of the `EXT-X-MEDIA` TYPE=AUDIO renditions this variant plays with.
    public var audioGroup: String?
    /// `VIDEO-RANGE` (§4.4.6.2): written only for PQ and HLG (absent means SDR).
    public var videoRange: VideoRange?
    /// `SUPPLEMENTAL-CODECS` (§4.4.6.2): a codec a player may use instead of `CODECS`' when it can (Dolby Vision
    /// profile 8 over an HEVC base layer: `dvh1.08.06/db1p`).
    public var supplementalCodecs: String?
    /// `CLOSED-CAPTIONS` (§4.4.6.2): the GROUP-ID of the `EXT-X-MEDIA` TYPE=CLOSED-CAPTIONS renditions in this
    /// variant's video, or `.none` (`NONE`: the variant has no closed captions); absent (`nil`): not said.
    public var closedCaptions: ClosedCaptionsReference?
    /// `SUBTITLES` (§4.4.6.2): the GROUP-ID of the `EXT-X-MEDIA` TYPE=SUBTITLES renditions this variant plays with.
    public var subtitlesGroup: String?
    public var uri: String

    public init(bandwidth: Int, averageBandwidth: Int? = nil, codecs: String, resolution: Resolution? = nil,
                frameRate: Double? = nil, audioGroup: String? = nil, uri: String) {
        self.bandwidth = bandwidth
        self.averageBandwidth = averageBandwidth
        self.codecs = codecs
        self.resolution = resolution
        self.frameRate = frameRate
        self.audioGroup = audioGroup
        self.uri = uri
    }
}

/// The `CLOSED-CAPTIONS` attribute of `EXT-X-STREAM-INF` (RFC 8216bis §4.4.6.2): "either a quoted-string or an
/// enumerated-string with the value NONE".
public enum ClosedCaptionsReference: Sendable, Equatable {
    case group(String)
    case none
}

/// One `EXT-X-I-FRAME-STREAM-INF` tag (RFC 8216 §4.3.4.3): "identifies a Media Playlist file containing the
/// I-frames of a multimedia presentation". Its attributes are those of `EXT-X-STREAM-INF` less `FRAME-RATE`,
/// `AUDIO`, `SUBTITLES` and `CLOSED-CAPTIONS` (draft-pantos-hls-rfc8216bis §4.4.6.3), plus the required `URI`.
public struct IFrameStream: Sendable, Equatable {
    /// Peak bit rate of the I-frame playlist's ranges (each range's bytes over its `EXTINF`), bits/s.
    public var bandwidth: Int
    public var averageBandwidth: Int?
    /// The video codec of the I-frames (RFC 6381).
    public var codecs: String
    public var resolution: VariantStream.Resolution?
    /// The I-frame playlist (`EXT-X-I-FRAMES-ONLY`).
    public var uri: String

    public init(bandwidth: Int, averageBandwidth: Int? = nil, codecs: String, resolution: VariantStream.Resolution? = nil,
                uri: String) {
        self.bandwidth = bandwidth
        self.averageBandwidth = averageBandwidth
        self.codecs = codecs
        self.resolution = resolution
        self.uri = uri
    }
}

/// One `EXT-X-MEDIA` tag (RFC 8216bis §4.4.6.1): a Rendition in a Group of Renditions (same TYPE and
/// GROUP-ID, §4.4.6.1.1).
public struct MediaRendition: Sendable, Equatable {
    public enum MediaType: String, Sendable, CaseIterable {
        case audio = "AUDIO", video = "VIDEO", subtitles = "SUBTITLES", closedCaptions = "CLOSED-CAPTIONS"
    }

    public var type: MediaType
    public var groupID: String
    /// Human-readable; unique within the group.
    public var name: String
    /// RFC 5646 language tag (`en`, `pt-BR`).
    public var language: String?
    /// `DEFAULT=YES`. Rendered always (`YES`/`NO`); absent reads as `NO`.
    public var isDefault: Bool
    /// `AUTOSELECT=YES`. Rendered always (`YES`/`NO`); absent reads as `NO`.
    public var autoselect: Bool
    /// `CHANNELS` (AUDIO only): the channel count first, e.g. `"2"`, `"6"`, `"16/JOC"`.
    public var channels: String?
    /// `CHARACTERISTICS` (§4.4.6.1): Uniform Type Identifiers, comma-separated, e.g.
    /// `public.accessibility.describes-video` for audio description.
    public var characteristics: String?
    /// `INSTREAM-ID`: required for CLOSED-CAPTIONS (`"CC1"`…`"CC4"`, `"SERVICE1"`…`"SERVICE63"`).
    public var instreamID: String?
    /// `FORCED=YES` (SUBTITLES only, §4.4.6.1): content a viewer needs whatever their choice. Rendered only when YES.
    public var forced = false
    /// The rendition's Media Playlist. Absent for AUDIO/VIDEO carried in the variant's own playlist; must be
    /// absent for CLOSED-CAPTIONS and present for SUBTITLES (see `MultivariantPlaylist.validate()`).
    public var uri: String?

    public init(type: MediaType, groupID: String, name: String, language: String? = nil, isDefault: Bool = false,
                autoselect: Bool = false, channels: String? = nil, instreamID: String? = nil, uri: String? = nil,
                characteristics: String? = nil) {
        self.type = type
        self.groupID = groupID
        self.name = name
        self.language = language
        self.isDefault = isDefault
        self.autoselect = autoselect
        self.channels = channels
        self.instreamID = instreamID
        self.uri = uri
        self.characteristics = characteristics
    }
}

/// A multivariant playlist (RFC 8216bis §4.4.6).
///
/// ```
/// #EXTM3U
/// #EXT-X-INDEPENDENT-SEGMENTS
/// #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",DEFAULT=YES,AUTOSELECT=YES,LANGUAGE="en",CHANNELS="2",URI="audio/en.m3u8"
/// #EXT-X-STREAM-INF:BANDWIDTH=2640000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,AUDIO="aac"
/// video/720p.m3u8
/// #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=520000,CODECS="avc1.64001f",RESOLUTION=1280x720,URI="720p.iframes.m3u8"
/// ```
///
/// `EXT-X-VERSION` is written only when §8 requires one. §8: "The EXT-X-MEDIA tag and the AUDIO, VIDEO, and
/// SUBTITLES attributes of the EXT-X-STREAM-INF tag are backward compatible to protocol version 1, but
/// playback on older clients may not be desirable. A server MAY consider indicating an EXT-X-VERSION of 4 or
/// higher in the Multivariant Playlist but is not required to do so." The attributes modelled here need a
/// version only through `INSTREAM-ID`: 7 for "SERVICE" values of CLOSED-CAPTIONS, 13 for any other TYPE.
/// A playlist without renditions renders exactly as before renditions existed.
public struct MultivariantPlaylist: Sendable, Equatable {
    public var variants: [VariantStream]
    /// `EXT-X-MEDIA` tags, rendered before the variants.
    public var media: [MediaRendition]
    /// `EXT-X-I-FRAME-STREAM-INF` tags, rendered after the variants.
    public var iFrameStreams: [IFrameStream]
    public var independentSegments: Bool
    /// `EXT-X-IMAGE-STREAM-INF` tags (thumbnail sheets), rendered after the variants.
    public var imageStreams: [ImageStream] = []
    /// `EXT-X-SESSION-KEY` (RFC 8216bis §4.4.6.5): the media playlists' keys stated up front, so a client can set up
    /// its DRM session before loading one; one line per key format (`PlaylistKey.sessionLines`), for each key (per-track
    /// keys: one each, in order).
    public var sessionKeys: [PlaylistKey] = []

    public init(variants: [VariantStream], media: [MediaRendition] = [], iFrameStreams: [IFrameStream] = [],
                independentSegments: Bool = true) {
        self.variants = variants
        self.media = media
        self.iFrameStreams = iFrameStreams
        self.independentSegments = independentSegments
    }

    /// The `EXT-X-VERSION` §8 requires, or `nil` when none is needed (version 1).
    public var requiredVersion: Int? {
        var version: Int?
        for m in media {
            guard let id = m.instreamID else { continue }
            // §8: "A Multivariant Playlist MUST indicate an EXT-X-VERSION of 7 or higher if it contains:
            // "SERVICE" values for the INSTREAM-ID attribute of the EXT-X-MEDIA tag." and "of 13 or higher if
            // it contains: An EXT-X-MEDIA tag with INSTREAM-ID attribute for non CLOSED-CAPTIONS TYPE."
            let needed = m.type != .closedCaptions ? 13 : id.hasPrefix("SERVICE") ? 7 : nil
            if let needed { version = max(version ?? 0, needed) }
        }
        return version
    }

    public func render() -> String {
        var out = "#EXTM3U\n"
        if let v = requiredVersion { out += "#EXT-X-VERSION:\(v)\n" }
        if independentSegments { out += "#EXT-X-INDEPENDENT-SEGMENTS\n" }
        for line in sessionKeys.flatMap(\.sessionLines) { out += line + "\n" }
        for m in media {
            out += "#EXT-X-MEDIA:TYPE=" + m.type.rawValue + ",GROUP-ID=" + AttributeList.quoted(m.groupID)
            out += ",NAME=" + AttributeList.quoted(m.name)
            out += m.isDefault ? ",DEFAULT=YES" : ",DEFAULT=NO"
            out += m.autoselect ? ",AUTOSELECT=YES" : ",AUTOSELECT=NO"
            if m.forced { out += ",FORCED=YES" }
            if let l = m.language { out += ",LANGUAGE=" + AttributeList.quoted(l) }
            if let i = m.instreamID { out += ",INSTREAM-ID=" + AttributeList.quoted(i) }
            if let c = m.channels { out += ",CHANNELS=" + AttributeList.quoted(c) }
            if let c = m.characteristics { out += ",CHARACTERISTICS=" + AttributeList.quoted(c) }
            if let u = m.uri { out += ",URI=" + AttributeList.quoted(u) }
            out += "\n"
        }
        for v in variants {
            out += "#EXT-X-STREAM-INF:BANDWIDTH=\(v.bandwidth)"
            if let a = v.averageBandwidth { out += ",AVERAGE-BANDWIDTH=\(a)" }
            out += ",CODECS=\"" + v.codecs + "\""
            if let s = v.supplementalCodecs { out += ",SUPPLEMENTAL-CODECS=" + AttributeList.quoted(s) }
            if let r = v.resolution { out += ",RESOLUTION=\(r.width)x\(r.height)" }
            if let f = v.frameRate { out += ",FRAME-RATE=" + HLSFormat.threeDecimals(f) }
            if let r = v.videoRange, r != .sdr { out += ",VIDEO-RANGE=" + r.rawValue }
            if let a = v.audioGroup { out += ",AUDIO=" + AttributeList.quoted(a) }
            if let g = v.subtitlesGroup { out += ",SUBTITLES=" + AttributeList.quoted(g) }
            switch v.closedCaptions {
            case .group(let g)?: out += ",CLOSED-CAPTIONS=" + AttributeList.quoted(g)
            case .none?: out += ",CLOSED-CAPTIONS=NONE"
            case nil: break
            }
            out += "\n" + v.uri + "\n"
        }
        for f in iFrameStreams {
            out += "#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=\(f.bandwidth)"
            if let a = f.averageBandwidth { out += ",AVERAGE-BANDWIDTH=\(a)" }
            out += ",CODECS=\"" + f.codecs + "\""
            if let r = f.resolution { out += ",RESOLUTION=\(r.width)x\(r.height)" }
            out += ",URI=" + AttributeList.quoted(f.uri) + "\n"
        }
        for i in imageStreams { out += i.render() + "\n" }
        return out
    }

    /// Parses `EXT-X-MEDIA` and `EXT-X-STREAM-INF` entries; other tags (`EXT-X-VERSION` included) are ignored.
    /// `FRAME-RATE` comes back as written (three decimals), so a round trip keeps only values that are exact to
    /// three decimals.
    public static func parse(_ text: String) throws -> MultivariantPlaylist {
        var iterator = playlistLines(text).makeIterator()
        guard let first = iterator.next(), first.line == "#EXTM3U" else { throw HLSError.missingHeader }
        var independent = false
        var variants: [VariantStream] = []
        var media: [MediaRendition] = []
        var iFrames: [IFrameStream] = []
        var pending: VariantStream?
        while let (n, line) = iterator.next() {
            if !line.hasPrefix("#") {
                guard var v = pending else { throw HLSError.unexpectedURI(line: n) }
                v.uri = String(line)
                variants.append(v)
                pending = nil
                continue
            }
            if pending != nil && line.hasPrefix("#EXT") { throw HLSError.missingURI(line: n) }
            if line == "#EXT-X-INDEPENDENT-SEGMENTS" {
                independent = true
            } else if line.hasPrefix("#EXT-X-MEDIA:") {
                media.append(try parseMedia(line.dropFirst("#EXT-X-MEDIA:".count), line: n))
            } else if line.hasPrefix("#EXT-X-STREAM-INF:") {
                pending = try parseStreamInf(line.dropFirst("#EXT-X-STREAM-INF:".count), line: n)
            } else if line.hasPrefix("#EXT-X-I-FRAME-STREAM-INF:") {
                iFrames.append(try parseIFrameStreamInf(line.dropFirst("#EXT-X-I-FRAME-STREAM-INF:".count), line: n))
            }
        }
        if pending != nil { throw HLSError.missingURI(line: 0) }
        return MultivariantPlaylist(variants: variants, media: media, iFrameStreams: iFrames,
                                    independentSegments: independent)
    }

    /// §4.3.4.3: the `EXT-X-STREAM-INF` attributes it may carry, and "URI … This attribute is REQUIRED."
    private static func parseIFrameStreamInf(_ text: Substring, line n: Int) throws -> IFrameStream {
        let v = try parseStreamInf(text, line: n)
        guard let uri = try AttributeList.parse(text, line: n).first(where: { $0.name == "URI" })?.value else {
            throw HLSError.invalidAttribute(line: n, name: "URI")
        }
        return IFrameStream(bandwidth: v.bandwidth, averageBandwidth: v.averageBandwidth, codecs: v.codecs,
                            resolution: v.resolution, uri: String(uri))
    }

    private static func parseStreamInf(_ text: Substring, line n: Int) throws -> VariantStream {
        var v = VariantStream(bandwidth: -1, codecs: "", uri: "")
        for (name, value) in try AttributeList.parse(text, line: n) {
            switch name {
            case "BANDWIDTH":
                guard let b = Int(value), b >= 0 else { throw HLSError.invalidAttribute(line: n, name: name) }
                v.bandwidth = b
            case "AVERAGE-BANDWIDTH":
                guard let b = Int(value), b >= 0 else { throw HLSError.invalidAttribute(line: n, name: name) }
                v.averageBandwidth = b
            case "CODECS":
                v.codecs = String(value)
            case "RESOLUTION":
                let parts = value.split(separator: "x")
                guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]) else {
                    throw HLSError.invalidAttribute(line: n, name: name)
                }
                v.resolution = .init(width: w, height: h)
            case "FRAME-RATE":
                guard let f = Double(value), f.isFinite, f >= 0 else {
                    throw HLSError.invalidAttribute(line: n, name: name)
                }
                v.frameRate = f
            case "AUDIO":
                v.audioGroup = String(value)
            case "SUBTITLES":
                v.subtitlesGroup = String(value)
            case "SUPPLEMENTAL-CODECS":
                v.supplementalCodecs = String(value)
            case "CLOSED-CAPTIONS":
                // The enumerated NONE is unquoted; a group is a quoted-string (the attribute reader unquotes both).
                v.closedCaptions = text.contains("CLOSED-CAPTIONS=NONE") ? ClosedCaptionsReference.none : .group(String(value))
            case "VIDEO-RANGE":
                guard let r = VideoRange(rawValue: String(value)) else { throw HLSError.invalidAttribute(line: n, name: name) }
                v.videoRange = r
            default:
                break
            }
        }
        guard v.bandwidth >= 0 else { throw HLSError.invalidAttribute(line: n, name: "BANDWIDTH") }
        return v
    }

    private static func parseMedia(_ text: Substring, line n: Int) throws -> MediaRendition {
        var type: MediaRendition.MediaType?, groupID: String?, name: String?
        var m = MediaRendition(type: .audio, groupID: "", name: "")
        for (attr, value) in try AttributeList.parse(text, line: n) {
            switch attr {
            case "TYPE":
                guard let t = MediaRendition.MediaType(rawValue: String(value)) else {
                    throw HLSError.invalidAttribute(line: n, name: attr)
                }
                type = t
            case "GROUP-ID": groupID = String(value)
            case "NAME": name = String(value)
            case "LANGUAGE": m.language = String(value)
            case "DEFAULT", "AUTOSELECT", "FORCED":
                guard let b = AttributeList.yesNo(value) else { throw HLSError.invalidAttribute(line: n, name: attr) }
                if attr == "DEFAULT" { m.isDefault = b } else if attr == "AUTOSELECT" { m.autoselect = b } else { m.forced = b }
            case "CHANNELS": m.channels = String(value)
            case "CHARACTERISTICS": m.characteristics = String(value)
            case "INSTREAM-ID": m.instreamID = String(value)
            case "URI": m.uri = String(value)
            default: break
            }
        }
        guard let type else { throw HLSError.invalidAttribute(line: n, name: "TYPE") }
        guard let groupID else { throw HLSError.invalidAttribute(line: n, name: "GROUP-ID") }
        guard let name else { throw HLSError.invalidAttribute(line: n, name: "NAME") }
        m.type = type
        m.groupID = groupID
        m.name = name
        return m
    }
}
