import Hummingbird
import MediaCore
import NIOCore

/// Validators for media objects (RFC 9110 §8.8): a strong `ETag` from the bytes and `Last-Modified` from the
/// moment the object was published, so a cache or CDN can revalidate with `If-None-Match` (answered `304`).
enum Validators {
    /// `"<FNV-1a 64 of the bytes>-<length>"` in hex: the same bytes give the same tag in any origin process (a
    /// restarted or redundant origin serving the same object), different bytes under one URI never share one.
    static func entityTag(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes(entityTag) }

    static func entityTag(_ buffer: ByteBuffer) -> String { buffer.withUnsafeReadableBytes(entityTag) }

    static func entityTag(_ bytes: UnsafeRawBufferPointer) -> String {
        tag(FNV1a.hash64(bytes), count: bytes.count)
    }

    /// The same tag as of the bytes in one array, over the chunks in turn.
    static func entityTag(_ bytes: MediaBytes) -> String {
        var h = FNV1a.offset64
        for c in bytes.chunks { h = c.withUnsafeBytes { FNV1a.hash64($0, from: h) } }
        return tag(h, count: bytes.count)
    }

    private static func tag(_ h: UInt64, count: Int) -> String {
        "\"" + String(h, radix: 16) + "-" + String(count, radix: 16) + "\""
    }

    /// RFC 9110 §13.1.2: If-None-Match is `*` or a list of entity tags, compared weakly (a `W/` prefix ignored).
    static func noneMatch(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { item in
            var t = item.trimmingCharacters(in: " \t")
            if t == "*" { return true }
            if t.hasPrefix("W/") { t.removeFirst(2) }
            var e = Substring(etag)
            if e.hasPrefix("W/") { e.removeFirst(2) }
            return t == e
        }
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return s
    }
}
