import HLS
import Hummingbird
import MediaCore
import MediaPresentation
import NIOCore
import NIOPosix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Rendered playlists and manifests, cached per presentation snapshot versions so one is rendered once per
/// change, not once per request.
final class PlaylistCache: Sendable {
    struct Key: Hashable {
        /// `Presentation.serial`.
        let presentation: UInt64
        /// -1: the multivariant playlist; -2: the DASH manifest.
        let rendition: Int
        let skip: Bool
        /// `_HLS_skip=v2`: the delta update skips older dateranges too.
        var skipDateRanges = false
        /// The signature query the URIs carry (`""` without signed URLs).
        var uriQuery = ""
        /// The rendition's I-frame playlist rather than its media playlist.
        var iFrames = false
    }
    /// Entries for signed requests, beyond which those are dropped (one per signature in use, per playlist).
    static let signedEntryLimit = 256
    struct Entry {
        let versions: [UInt64]
        /// Anything else the text depends on (the DASH manifest's time endpoint URL).
        let tag: String
        let body: ByteBuffer
        let headers: HTTPFields
        /// The `200` head as bytes, for the fast path (`FastPath.head`).
        let head: ByteBuffer
    }
    private let entries = Mutex<[Key: Entry]>([:])

    func get(_ key: Key, versions: [UInt64], tag: String = "", headers: (Int) -> HTTPFields = ResponseHeaders.playlist,
             render: () -> String?) -> (ByteBuffer, HTTPFields)? {
        entry(key, versions: versions, tag: tag, headers: headers, render: render).map { ($0.body, $0.headers) }
    }

    func entry(_ key: Key, versions: [UInt64], tag: String = "", headers: (Int) -> HTTPFields = ResponseHeaders.playlist,
               render: () -> String?) -> Entry? {
        if let e = entries.withLock({ $0[key] }), e.versions == versions, e.tag == tag { return e }
        guard let text = render() else { return nil }
        let body = ByteBuffer(string: text)
        let fields = headers(body.readableBytes)
        let entry = Entry(versions: versions, tag: tag, body: body, headers: fields, head: FastPath.head(fields))
        entries.withLock { e in
            if !key.uriQuery.isEmpty, e[key] == nil, e.count >= Self.signedEntryLimit {
                e = e.filter { $0.key.uriQuery.isEmpty }
            }
            e[key] = entry
        }
        return entry
    }
}
