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
    public var uri: String

    public init(bandwidth: Int, averageBandwidth: Int? = nil, codecs: String, resolution: Resolution? = nil,
                frameRate: Double? = nil, uri: String) {
        self.bandwidth = bandwidth
        self.averageBandwidth = averageBandwidth
        self.codecs = codecs
        self.resolution = resolution
        self.frameRate = frameRate
        self.uri = uri
    }
}

/// A multivariant playlist (RFC 8216bis §4.4.6).
public struct MultivariantPlaylist: Sendable, Equatable {
    public var variants: [VariantStream]
    public var independentSegments: Bool

    public init(variants: [VariantStream], independentSegments: Bool = true) {
        self.variants = variants
        self.independentSegments = independentSegments
    }

    public func render() -> String {
        var out = "#EXTM3U\n"
        if independentSegments { out += "#EXT-X-INDEPENDENT-SEGMENTS\n" }
        for v in variants {
            out += "#EXT-X-STREAM-INF:BANDWIDTH=\(v.bandwidth)"
            if let a = v.averageBandwidth { out += ",AVERAGE-BANDWIDTH=\(a)" }
            out += ",CODECS=\"" + v.codecs + "\""
            if let r = v.resolution { out += ",RESOLUTION=\(r.width)x\(r.height)" }
            if let f = v.frameRate { out += ",FRAME-RATE=" + HLSFormat.threeDecimals(f) }
            out += "\n" + v.uri + "\n"
        }
        return out
    }

    /// Parses `EXT-X-STREAM-INF` entries; other tags are ignored. `FRAME-RATE` comes back as written
    /// (three decimals), so a round trip keeps only values that are exact to three decimals.
    public static func parse(_ text: String) throws -> MultivariantPlaylist {
        var iterator = playlistLines(text).makeIterator()
        guard let first = iterator.next(), first.line == "#EXTM3U" else { throw HLSError.missingHeader }
        var independent = false
        var variants: [VariantStream] = []
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
            } else if line.hasPrefix("#EXT-X-STREAM-INF:") {
                let attrs = try AttributeList.parse(line.dropFirst("#EXT-X-STREAM-INF:".count), line: n)
                var v = VariantStream(bandwidth: -1, codecs: "", uri: "")
                for (name, value) in attrs {
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
                    default:
                        break
                    }
                }
                guard v.bandwidth >= 0 else { throw HLSError.invalidAttribute(line: n, name: "BANDWIDTH") }
                pending = v
            }
        }
        if pending != nil { throw HLSError.missingURI(line: 0) }
        return MultivariantPlaylist(variants: variants, independentSegments: independent)
    }
}
