/// An ID3v2 tag as an MPEG-TS timed-metadata stream delivers it (stream type 0x15, libavformat's `timed_id3`), checked
/// before it becomes a `.id3` timed event.
///
/// Apple's "Timed Metadata for HTTP Live Streaming" carries the tag as the whole payload of a PES packet
/// (`stream_id` 0xBD). libavformat 5.1 skips the first 5 bytes of every stream-type-0x15 PES payload, taking them
/// for ISO/IEC 13818-1's metadata Access Unit wrapper (2.12.4), which such streams do not have: it hands over the tag
/// without `"ID3"` and its two version bytes. `tag(_:)` takes a whole tag as it is, and puts those 5 bytes back when
/// the rest is exactly one tag after them (its flags and size, then its frames to the byte).
public enum TimedID3 {
    /// The ID3v2 tag `payload` is or was, or `nil` when it is neither (garbage, a truncated tag).
    public static func tag(_ payload: [UInt8]) -> [UInt8]? {
        if payload.count >= 10, payload[0] == 0x49, payload[1] == 0x44, payload[2] == 0x33 {  // "ID3"
            return isWhole(payload, major: payload[3]) ? payload : nil
        }
        // Without "ID3" and the version: flags, the syncsafe size, the frames. Which version (3 or 4) the frames'
        // sizes tile, 4 first (they are the same when every frame is under 128 bytes).
        for major: UInt8 in [4, 3] {
            let candidate: [UInt8] = [0x49, 0x44, 0x33, major, 0] + payload
            if isWhole(candidate, major: major) { return candidate }
        }
        return nil
    }

    /// `tag` is one whole ID3v2.3 or v2.4 tag: its size (syncsafe) is the bytes that follow the header (and footer),
    /// and without unsynchronisation or an extended header its frames tile it up to the padding.
    static func isWhole(_ tag: [UInt8], major: UInt8) -> Bool {
        guard tag.count >= 10, major == 3 || major == 4, tag[4] != 0xFF else { return false }
        let flags = tag[5]
        guard let size = syncsafe(tag, at: 6) else { return false }
        let footer = major == 4 && flags & 0x10 != 0 ? 10 : 0
        guard tag.count == 10 + size + footer else { return false }
        if flags & 0xC0 != 0 { return true }  // unsynchronised or an extended header: the size is what can be checked
        var p = 10
        let end = 10 + size
        var frames = 0
        while p + 10 <= end, tag[p] != 0 {
            let id = tag[p..<p + 4]
            guard id.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }) else { return false }
            let length: Int
            if major == 4 {
                guard let s = syncsafe(tag, at: p + 4) else { return false }
                length = s
            } else {
                length = tag[(p + 4)..<(p + 8)].reduce(0) { $0 << 8 | Int($1) }
            }
            p += 10 + length
            frames += 1
        }
        guard p <= end, frames > 0 else { return false }
        return tag[p..<end].allSatisfy { $0 == 0 }
    }

    private static func syncsafe(_ b: [UInt8], at i: Int) -> Int? {
        guard i + 4 <= b.count, b[i..<i + 4].allSatisfy({ $0 < 0x80 }) else { return nil }
        return b[i..<i + 4].reduce(0) { $0 << 7 | Int($1) }
    }
}

/// A text information frame of an ID3v2 tag (`TIT2`, `TPE1`, …; ID3v2.4 §4.2): what `EXT-X-DATERANGE` lists as
/// `X-ID3-<id>` beside the tag's `emsg`.
public struct ID3TextFrame: Sendable, Equatable {
    public var id: String
    public var text: String

    public init(id: String, text: String) {
        self.id = id
        self.text = text
    }
}

extension TimedID3 {
    /// The text information frames of a whole ID3v2.3/v2.4 tag (`T` followed by three letters or digits, `TXXX`
    /// excepted: its description is not an attribute name), in order, each decoded from its encoding (ISO-8859-1,
    /// UTF-16 with a byte-order mark, UTF-16BE, UTF-8); several strings (v2.4 separates them with a NUL) are joined
    /// with "/". Empty for a tag that is unsynchronised, compressed or has an extended header (not read here).
    public static func textFrames(_ tag: [UInt8]) -> [ID3TextFrame] {
        guard tag.count >= 10, tag[0] == 0x49, tag[1] == 0x44, tag[2] == 0x33, tag[3] == 3 || tag[3] == 4,
              tag[5] & 0xC0 == 0, let size = syncsafe(tag, at: 6) else { return [] }
        let major = tag[3]
        let end = min(tag.count, 10 + size)
        var out: [ID3TextFrame] = []
        var p = 10
        while p + 10 <= end, tag[p] != 0 {
            let id = String(decoding: tag[p..<p + 4], as: UTF8.self)
            let length = major == 4 ? (syncsafe(tag, at: p + 4) ?? Int.max / 2)
                : tag[(p + 4)..<(p + 8)].reduce(0) { $0 << 8 | Int($1) }
            let formatFlags = tag[p + 9]
            guard p + 10 + length <= end else { break }
            let body = Array(tag[(p + 10)..<(p + 10 + length)])
            p += 10 + length
            // Compressed, encrypted, unsynchronised or with a data length indicator (v2.4 §4.1.2): not plain text.
            let plain = major == 4 ? formatFlags & 0x0F == 0 && formatFlags & 0x40 == 0 : formatFlags & 0xC0 == 0
            guard id.first == "T", id != "TXXX", plain, let encoding = body.first,
                  let text = decode(Array(body.dropFirst()), encoding: encoding) else { continue }
            let joined = text.split(separator: "\0", omittingEmptySubsequences: true).joined(separator: "/")
            if !joined.isEmpty { out.append(ID3TextFrame(id: id, text: joined)) }
        }
        return out
    }

    private static func decode(_ b: [UInt8], encoding: UInt8) -> String? {
        switch encoding {
        case 0: return String(b.map { Character(Unicode.Scalar($0)) })
        case 3: return String(validating: b, as: UTF8.self) ?? String(decoding: b, as: UTF8.self)
        case 1, 2:
            var bytes = b
            var bigEndian = encoding == 2
            if encoding == 1, bytes.count >= 2 {
                if bytes[0] == 0xFF, bytes[1] == 0xFE { bigEndian = false; bytes.removeFirst(2) }
                else if bytes[0] == 0xFE, bytes[1] == 0xFF { bigEndian = true; bytes.removeFirst(2) }
            }
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2)
            var i = 0
            while i + 1 < bytes.count {
                let hi = UInt16(bytes[bigEndian ? i : i + 1])
                let lo = UInt16(bytes[bigEndian ? i + 1 : i])
                units.append(hi << 8 | lo)
                i += 2
            }
            return String(decoding: units, as: UTF16.self)
        default: return nil
        }
    }
}
