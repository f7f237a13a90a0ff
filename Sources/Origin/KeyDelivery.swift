import HTTPTypes
import MediaPresentation
import NIOCore

/// The content keys a presentation serves itself (`/NAME/keys/<N>.key`, AES-128, RFC 8216 §5.2: "the key file
/// contains a single 16-octet binary key"): the 16 bytes and nothing else, never to a shared cache. The origin
/// knows only that a key is bytes to hand out; which key encrypts what is the encryption stage's business.
/// Access control applies as to every object of the stream (a signed URL or the bearer token; 403 otherwise), and
/// the playlists list the key URI with the request's own signature, as they list segments.
enum KeyDelivery {
    /// `private, no-store`: no shared cache (an edge, a proxy) may keep it, nor the browser's cache.
    static let cacheControl = "private, no-store"

    static func headers() -> HTTPFields {
        ResponseHeaders.make(contentType: "application/octet-stream", cacheControl: cacheControl, contentLength: 16)
    }

    static func response(_ key: ContentKey) -> PreparedResponse {
        PreparedResponse(headers: headers(), body: ByteBuffer(bytes: key.bytes))
    }
}

extension Presentation where Payload == ServedObject {
    /// Key `id`, if a segment or part of any rendition's window uses it (`WindowSnapshot.contentKey`).
    func contentKey(_ id: UInt64) -> ContentKey? {
        guard let layout else { return nil }
        for w in layout.windows {
            if let k = w.snapshot().contentKey(id) { return k }
        }
        return nil
    }
}
