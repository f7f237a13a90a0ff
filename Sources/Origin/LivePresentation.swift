import HLS
import Hummingbird
import MediaCore
import MediaPresentation
import Synchronization

/// What the origin keeps per object: the bytes copied once into a `ByteBuffer` and the response headers built
/// once, so a request only looks things up.
public struct ServedObject: Sendable {
    let body: ByteBuffer
    let headers: HTTPFields

    init(bytes: [UInt8], kind: ObjectKind) {
        body = ByteBuffer(bytes: bytes)
        headers = kind == .initSegment ? ResponseHeaders.initSegment(contentLength: body.readableBytes)
            : ResponseHeaders.segment(contentLength: body.readableBytes)
    }

    private init(body: ByteBuffer, headers: HTTPFields) {
        self.body = body
        self.headers = headers
    }

    /// `parts` as slices of `segment` when the segment's tail is their concatenation (a segment is `styp` + its
    /// parts), so a finished segment's parts cost no memory of their own; `nil` otherwise.
    static func sharingStorage(of segment: ServedObject, _ parts: [ServedObject]) -> [ServedObject]? {
        let total = parts.reduce(0) { $0 + $1.body.readableBytes }
        guard !parts.isEmpty, total <= segment.body.readableBytes else { return nil }
        var offset = segment.body.readerIndex + segment.body.readableBytes - total
        var shared: [ServedObject] = []
        shared.reserveCapacity(parts.count)
        for p in parts {
            guard let slice = segment.body.getSlice(at: offset, length: p.body.readableBytes), slice == p.body else { return nil }
            shared.append(ServedObject(body: slice, headers: p.headers))
            offset += p.body.readableBytes
        }
        return shared
    }
}

/// A presentation as the live origin holds it.
public typealias LivePresentation = Presentation<ServedObject>

extension Presentation where Payload == ServedObject {
    /// A live presentation for the origin: a sliding window of `windowSize` segments per rendition.
    /// - Parameter clock: monotonic milliseconds, for retention (tests move it by hand).
    public static func live(windowSize: Int = 6, playlistType: MediaPlaylist.PlaylistType? = nil,
                            clock: @escaping @Sendable () -> Int64 = LiveWindowClock.monotonicMilliseconds) -> LivePresentation {
        LivePresentation(windowSize: windowSize, playlistType: playlistType, clock: clock,
                         shareParts: ServedObject.sharingStorage) {
            ServedObject(bytes: $0, kind: $1)
        }
    }
}

/// The presentations an origin serves, by path prefix: `""` serves at the root (`/index.m3u8`), `"cam1"` under
/// `/cam1/`. Presentations can be added while serving.
public final class PresentationRegistry: Sendable {
    private let entries = Mutex<[String: LivePresentation]>([:])

    public init() {}

    /// One presentation at the root.
    public convenience init(root: LivePresentation) {
        self.init()
        register(root, at: "")
    }

    /// Registers (or replaces) the presentation served under `/<name>/` (`""`: the root).
    public func register(_ presentation: LivePresentation, at name: String) {
        precondition(name.isEmpty || Rendition.isValidName(name), "a stream name is 1-32 of [A-Za-z0-9_-]")
        entries.withLock { $0[name] = presentation }
    }

    public func presentation(named name: String) -> LivePresentation? { entries.withLock { $0[name] } }

    public var names: [String] { entries.withLock { Array($0.keys).sorted() } }

    /// The presentation a request path (after the leading `/`) belongs to, and the path inside it.
    func resolve(_ path: Substring) -> (LivePresentation, Substring)? {
        entries.withLock { e in
            if let slash = path.firstIndex(of: "/"), let p = e[String(path[..<slash])] {
                return (p, path[path.index(after: slash)...])
            }
            return e[""].map { ($0, path) }
        }
    }
}

/// Rendered playlists and manifests, cached per presentation snapshot versions so one is rendered once per
/// change, not once per request.
final class PlaylistCache: Sendable {
    struct Key: Hashable {
        let presentation: ObjectIdentifier
        /// -1: the multivariant playlist; -2: the DASH manifest.
        let rendition: Int
        let skip: Bool
    }
    struct Entry {
        let versions: [UInt64]
        /// Anything else the text depends on (the DASH manifest's time endpoint URL).
        let tag: String
        let body: ByteBuffer
        let headers: HTTPFields
    }
    private let entries = Mutex<[Key: Entry]>([:])

    func get(_ key: Key, versions: [UInt64], tag: String = "", headers: (Int) -> HTTPFields = ResponseHeaders.playlist,
             render: () -> String?) -> (ByteBuffer, HTTPFields)? {
        if let e = entries.withLock({ $0[key] }), e.versions == versions, e.tag == tag { return (e.body, e.headers) }
        guard let text = render() else { return nil }
        let body = ByteBuffer(string: text)
        let entry = Entry(versions: versions, tag: tag, body: body, headers: headers(body.readableBytes))
        entries.withLock { $0[key] = entry }
        return (entry.body, entry.headers)
    }
}
