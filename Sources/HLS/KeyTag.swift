/// `EXT-X-KEY` (RFC 8216 §4.3.2.4; RFC 8216bis §4.4.4.4): how the segments after it are encrypted.
///
/// Which objects a key applies to. RFC 8216bis §4.4.4.4: "It applies to every Media Segment and to every Media
/// Initialization Section declared by an EXT-X-MAP tag that appears between it and the next EXT-X-KEY tag in the
/// Playlist file with the same KEYFORMAT attribute or a METHOD of NONE (or the end of the Playlist file). Any Media
/// Segment or Media Initialization Section that precedes the first EXT-X-KEY tag is unencrypted." Init segments
/// stay clear here: `MediaPlaylist.render()` writes the header `EXT-X-MAP` before any key, and a later map only
/// after `EXT-X-KEY:METHOD=NONE` (then the segment's own key again). A Partial Segment is listed between the key
/// tag and its parent segment's URI, so the parent's key and IV apply to it.
public struct PlaylistKey: Sendable, Equatable {
    public enum Method: String, Sendable {
        /// §4.3.2.4: "An encryption method of NONE means that Media Segments are not encrypted. If the encryption
        /// method is NONE, other attributes MUST NOT be present."
        case none = "NONE"
        case aes128 = "AES-128"
        /// §4.3.2.4: "SAMPLE-AES means that the Media Segments contain media samples, such as audio or video, that are
        /// encrypted using the Advanced Encryption Standard". In fMP4 segments: ISO/IEC 23001-7 `cbcs`.
        case sampleAES = "SAMPLE-AES"
        /// RFC 8216bis §4.4.4.4: "SAMPLE-AES-CTR ... the Media Segments contain ... samples ... encrypted using the
        /// ... 'cenc' scheme" (ISO/IEC 23001-7 AES-CTR).
        case sampleAESCTR = "SAMPLE-AES-CTR"
    }

    public var method: Method
    /// Where the key is (relative to the playlist, like every URI in it).
    public var uri: String?
    /// §4.3.2.4: "IV: The value is a hexadecimal-sequence that specifies a 128-bit unsigned integer Initialization
    /// Vector to be used with the key." Use of it "REQUIRES a compatibility version number of 2 or greater".
    public var iv: [UInt8]?
    /// §4.3.2.4 `KEYFORMAT`: how the key is represented (a DRM system: `com.apple.streamingkeydelivery`,
    /// `urn:uuid:edef8ba9-…`, `org.w3.clearkey`); absent: `identity`.
    public var keyFormat: String?
    /// §4.3.2.4 `KEYFORMATVERSIONS` (`"1"`).
    public var keyFormatVersions: String?
    /// The same segments' keys for other key formats (one `EXT-X-KEY` each, right after this one: "it applies to every
    /// Media Segment ... between it and the next EXT-X-KEY tag ... with the same KEYFORMAT attribute", so several
    /// formats can be in force at once, one per DRM system).
    public var alternatives: [PlaylistKey] = []

    /// `METHOD=NONE`: the objects after it are clear.
    public static let none = PlaylistKey(method: .none)

    public init(method: Method, uri: String? = nil, iv: [UInt8]? = nil, keyFormat: String? = nil,
                keyFormatVersions: String? = nil, alternatives: [PlaylistKey] = []) {
        precondition(iv.map { $0.count == 16 } ?? true, "an IV is 128 bits")
        precondition(method != .none || (uri == nil && iv == nil), "METHOD=NONE has no other attribute")
        self.method = method
        self.uri = uri
        self.iv = iv
        self.keyFormat = keyFormat
        self.keyFormatVersions = keyFormatVersions
        self.alternatives = alternatives
    }

    /// The tag's line, without the line feed (with alternatives: one line each, joined by line feeds).
    public var line: String {
        var out = "#EXT-X-KEY:METHOD=" + method.rawValue
        if let uri { out += ",URI=\"" + uri + "\"" }
        if let iv { out += ",IV=0x" + Self.hex(iv) }
        if let keyFormat { out += ",KEYFORMAT=\"" + keyFormat + "\"" }
        if let keyFormatVersions { out += ",KEYFORMATVERSIONS=\"" + keyFormatVersions + "\"" }
        for a in alternatives { out += "\n" + a.line }
        return out
    }

    /// The same key as `EXT-X-SESSION-KEY` lines of a multivariant playlist (RFC 8216bis §4.4.6.5: "its attributes
    /// are the same as those of EXT-X-KEY"; METHOD NONE is not allowed there).
    public var sessionLines: [String] {
        guard method != .none else { return [] }
        var one = self
        one.alternatives = []
        return [String(one.line.dropFirst("#EXT-X-KEY:".count))].map { "#EXT-X-SESSION-KEY:" + $0 }
            + alternatives.flatMap(\.sessionLines)
    }

    /// Upper-case hexadecimal, two digits a byte.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Bytes of a `0x`/`0X`-prefixed hexadecimal-sequence (§4.2), `nil` if it is not one.
    static func bytes(hex text: Substring) -> [UInt8]? {
        guard text.hasPrefix("0x") || text.hasPrefix("0X") else { return nil }
        let digits = Array(text.dropFirst(2).utf8)
        guard !digits.isEmpty, digits.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        var i = 0
        while i < digits.count {
            guard let hi = value(digits[i]), let lo = value(digits[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}
