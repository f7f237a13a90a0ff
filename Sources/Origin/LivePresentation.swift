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

/// What the origin keeps per object: the bytes copied once into `ByteBuffer`s and the response headers built once, so
/// a request only looks things up; or, for a segment spilled from a time-shift window, where it is in the recording
/// (read per request, off the event loop: `RecordedSegment.read()`).
///
/// A segment is its parts in turn: with LL-HLS its body is the list of its parts' buffers (shared with the parts, not a
/// copy), and its memory file (for `sendfile(2)`) is written from the producer's chunks. Each byte of media is copied
/// from the producer's sample arrays at most once into a buffer and once into the memory file.
public struct ServedObject: Sendable {
    private enum Storage: Sendable {
        case memory(Body, HTTPFields)
        case recorded(RecordedSegment)
    }
    private let storage: Storage
    /// A segment's bytes again in an anonymous memory file, for `sendfile(2)` on the fast path (`FastPath`).
    let file: MemoryFile?
    /// A segment made from its parts' buffers: how many (0 otherwise).
    private let tiles: Int
    /// The `200` status line and headers as bytes (`FastPath.head`), for the fast path; `nil` for a recorded segment.
    let head: ByteBuffer?

    /// The bytes (empty for a recorded segment).
    var body: Body {
        if case .memory(let b, _) = storage { return b }
        return .empty
    }
    /// The prepared headers (empty for a recorded segment: they are built when its bytes are read).
    var headers: HTTPFields {
        if case .memory(_, let h) = storage { return h }
        return HTTPFields()
    }
    /// Where the bytes are, when they are not in memory.
    var recorded: RecordedSegment? {
        if case .recorded(let r) = storage { return r }
        return nil
    }

    /// An init segment or a part: its bytes in one buffer.
    init(bytes: MediaBytes, kind: ObjectKind) {
        self.init(body: Body(bytes), etag: Validators.entityTag(bytes), kind: kind, file: nil)
    }

    /// A finished segment: the buffers of its `parts` when its window kept them (they tile it), else its bytes copied
    /// into one buffer; and its memory file, written from the producer's chunks.
    init(segment bytes: MediaBytes, parts: [ServedObject], format: URIScheme.SegmentFormat = .fragmentedMP4) {
        let body = parts.isEmpty ? Body(bytes) : Body(chunks: parts.flatMap(\.body.chunks))
        self.init(body: body, etag: Validators.entityTag(bytes), kind: .segment, file: MemoryFile(bytes), format: format,
                  tiles: parts.count)
    }

    private init(storage: Storage, head: ByteBuffer?, file: MemoryFile?, tiles: Int = 0) {
        self.storage = storage
        self.head = head
        self.file = file
        self.tiles = tiles
    }

    /// What a segment keeps for its RFC 8216 §6.2.2 time once it has left the playlist (`PayloadMaker.retained`): the
    /// same answers read from its memory file, so its heap buffers (and its parts', which tile it) go (a live window
    /// read faster than real time holds up to 16 MiB of evicted segments: issue 25 §4). `nil`: kept as they are (no
    /// memory file, or parts that are not the segment's own tiles, as AES-128's separately sealed ones).
    static func retained(_ segment: ServedObject, parts: [ServedObject]) -> (segment: ServedObject, parts: [ServedObject])? {
        guard let file = segment.file, case .memory(let body, let headers) = segment.storage, body.fileRange == nil,
              body.count == file.length, parts.count == segment.tiles else { return nil }
        var offset = 0
        var kept: [ServedObject] = []
        for p in parts {
            guard case .memory(let b, let h) = p.storage, offset + b.count <= file.length else { return nil }
            kept.append(ServedObject(storage: .memory(Body(file: file, range: offset..<offset + b.count), h), head: p.head,
                                     file: nil))
            offset += b.count
        }
        guard parts.isEmpty || offset == file.length else { return nil }
        return (ServedObject(storage: .memory(Body(file: file, range: 0..<file.length), headers), head: segment.head,
                             file: file), kept)
    }

    private init(body: Body, etag: String, kind: ObjectKind, file: MemoryFile?, format: URIScheme.SegmentFormat = .fragmentedMP4,
                 tiles: Int = 0) {
        let published = WallClock.now.httpDate
        var headers = kind == .initSegment
            ? ResponseHeaders.initSegment(contentLength: body.count, etag: etag, lastModified: published)
            : ResponseHeaders.segment(contentLength: body.count, etag: etag, lastModified: published)
        // RFC 8216 §3.5 WebVTT segments: `text/vtt` (W3C WebVTT §7.1 MIME type registration).
        if format == .webVTT { headers[.contentType] = "text/vtt; charset=utf-8" }
        storage = .memory(body, headers)
        head = FastPath.head(headers)
        self.file = file
        self.tiles = tiles
    }

    /// A thumbnail sheet (`thumbnails/N.jpg`): immutable, like a segment.
    init(sheet jpeg: [UInt8]) {
        let body = Body(MediaBytes(jpeg))
        var headers = ResponseHeaders.segment(contentLength: body.count, etag: Validators.entityTag(MediaBytes(jpeg)),
                                              lastModified: WallClock.now.httpDate)
        headers[.contentType] = "image/jpeg"
        storage = .memory(body, headers)
        head = FastPath.head(headers)
        file = nil
        tiles = 0
    }

    init(recorded: RecordedSegment) {
        file = nil
        head = nil
        tiles = 0
        storage = .recorded(recorded)
    }

    /// How the live origin makes its objects.
    static let maker = PayloadMaker<ServedObject>(
        initSegment: { ServedObject(bytes: MediaBytes($0), kind: .initSegment) },
        part: { bytes, _ in ServedObject(bytes: bytes, kind: .part) },
        segment: { bytes, info, parts in ServedObject(segment: bytes, parts: parts, format: info.format) },
        retained: { ServedObject.retained($0, parts: $1) })
}

/// An object's bytes in an anonymous memory file (POSIX shared memory on tmpfs, unlinked: pages in memory, no disk), so a response
/// can leave by `sendfile(2)`, as nginx sends a file: the kernel hands the pages to the socket instead of copying them
/// from the process (a 330-KB segment over loopback: 15,000 req/s written from memory, against 24,000 for nginx's
/// sendfile, same run). Read-only once made; closed when the last object and response holding it are gone.
final class MemoryFile: Sendable {
    let descriptor: Int32
    let length: Int
    private static let counter = Atomic<Int>(0)

    /// `nil` when the file cannot be made or filled (the bytes are then sent from memory).
    init?(_ bytes: MediaBytes) {
        guard !bytes.isEmpty else { return nil }
        // POSIX shared memory (tmpfs), named only until it is open: unlinked at once, like memfd_create(2).
        let name = "/hls-origin-\(getpid())-\(Self.counter.wrappingAdd(1, ordering: .relaxed).newValue)"
        let fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        shm_unlink(name)
        // One gathering write: tmpfs then gives the file large pages, which sendfile(2) hands out in fewer pieces
        // than the one page per sample that a write per chunk leaves (measured: 59 against 38 µs of CPU per request).
        guard bytes.write(to: fd) == nil else {
            close(fd)
            return nil
        }
        descriptor = fd
        length = bytes.count
    }

    deinit { close(descriptor) }

    /// Bytes `range` copied into a new buffer (`pread(2)`: responses share the descriptor); `nil` if the read fails.
    func read(_ range: Range<Int>) -> ByteBuffer? {
        var buffer = ByteBufferAllocator().buffer(capacity: range.count)
        guard !range.isEmpty else { return buffer }
        let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: range.count) { out -> Int in
            guard let base = out.baseAddress else { return 0 }
            var done = 0
            while done < range.count {
                let n = pread(descriptor, base + done, range.count - done, off_t(range.lowerBound + done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return 0 }
                done += n
            }
            return done
        }
        guard read == range.count else { return nil }
        return buffer
    }
}

/// A segment in a recording directory (`URIScheme` layout), as a time-shift window keeps it once it leaves the
/// hot part: 16 bytes, no allocation (the rendition's location is shared).
struct RecordedSegment: Sendable {
    let location: RecordingLocation
    let sequence: UInt64

    var path: String { location.directory + "/" + location.scheme.segmentURI(sequence) }

    /// The file's bytes, read on NIO's thread pool (never on an event loop).
    func read() async throws -> ByteBuffer {
        let path = self.path
        return try await NIOThreadPool.singleton.runIfActive { try Self.readFile(path) }
    }

    static func readFile(_ path: String) throws -> ByteBuffer {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw RecordedSegmentError(path: path, errno: errno) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw RecordedSegmentError(path: path, errno: errno) }
        let size = Int(st.st_size)
        var buffer = ByteBufferAllocator().buffer(capacity: size)
        var left = size
        while left > 0 {
            let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: left) { out in
                Glibc.read(fd, out.baseAddress!, left)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw RecordedSegmentError(path: path, errno: errno)
            }
            if n == 0 { break }  // shorter than its size said: serve what is there
            left -= n
        }
        return buffer
    }
}

struct RecordedSegmentError: Error, CustomStringConvertible {
    let path: String
    let errno: Int32
    var description: String { "cannot read '\(path)': \(String(cString: strerror(errno)))" }
}

/// One rendition's place in a recording.
final class RecordingLocation: Sendable {
    let directory: String
    let scheme: URIScheme
    init(directory: String, scheme: URIScheme) {
        self.directory = directory
        self.scheme = scheme
    }
}

/// Where a time-shift window finds the segments that leave its hot part: a recording directory in the `URIScheme`
/// layout, and which segments are complete there (`Recorder.isRecorded`).
public final class RecordedSegments: Sendable {
    public let directory: String
    private let isRecorded: @Sendable (_ rendition: Int, _ sequence: UInt64) -> Bool
    private let locations = Mutex<[Int: RecordingLocation]>([:])

    public init(directory: String, isRecorded: @escaping @Sendable (_ rendition: Int, _ sequence: UInt64) -> Bool) {
        self.directory = directory
        self.isRecorded = isRecorded
    }

    /// The stand-in for a segment leaving the hot window, or `nil` if its file is not complete.
    func standIn(_ rendition: Int, _ r: Rendition, _ segment: StoredSegment<ServedObject>) -> ServedObject? {
        guard isRecorded(rendition, segment.sequence) else { return nil }
        let location = locations.withLock { l in
            if let found = l[rendition] { return found }
            let made = RecordingLocation(directory: directory, scheme: r.scheme)
            l[rendition] = made
            return made
        }
        return ServedObject(recorded: RecordedSegment(location: location, sequence: segment.sequence))
    }
}

/// A presentation as the live origin holds it.
public typealias LivePresentation = Presentation<ServedObject>

/// A live stream's thumbnail sheets, each made into a served object once.
public typealias LiveTileSheets = TileSheets<ServedObject>

extension TileSheets where Payload == ServedObject {
    /// `retention`: the window's span (sheets leave with the window).
    public static func live(retention: MediaTime) -> LiveTileSheets {
        LiveTileSheets(retention: retention) { ServedObject(sheet: $0) }
    }
}

extension Presentation where Payload == ServedObject {
    /// A live presentation for the origin: a sliding window of `windowSize` segments per rendition.
    /// - Parameter clock: monotonic milliseconds, for retention (tests move it by hand).
    /// - Parameters:
    ///   - history: time-shift depth (`--dvr-window`): the playlists list that much media; segments older than
    ///     the newest `windowSize` are read back from `recording` (without it they stay in memory).
    public static func live(windowSize: Int = 6, playlistType: MediaPlaylist.PlaylistType? = nil,
                            clock: @escaping @Sendable () -> Int64 = LiveWindowClock.monotonicMilliseconds,
                            history: MediaTime? = nil, recording: RecordedSegments? = nil,
                            dashTrickMode: Bool = false, eventSignalling: EventSignalling = EventSignalling()) -> LivePresentation {
        var spill: LivePresentation.Spill?
        if let recording { spill = { index, rendition, segment in recording.standIn(index, rendition, segment) } }
        return LivePresentation(windowSize: windowSize, playlistType: playlistType, clock: clock, history: history,
                                spill: spill, dashTrickMode: dashTrickMode, eventSignalling: eventSignalling,
                                payloads: ServedObject.maker)
    }
}

/// The presentations an origin serves, by path prefix: `""` serves at the root (`/index.m3u8`), `"cam1"` under
/// `/cam1/`. Presentations can be added, replaced and removed while serving.
public final class PresentationRegistry: Sendable {
    private let entries = Mutex<[String: LivePresentation]>([:])
    private let thumbnailSources = Mutex<[String: any ThumbnailSource]>([:])
    private let tileSheets = Mutex<[String: LiveTileSheets]>([:])
    private let registrations = Atomic<UInt64>(0)

    /// Moves whenever a presentation is registered, replaced or unregistered.
    var generation: UInt64 { registrations.load(ordering: .acquiring) }

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
        registrations.add(1, ordering: .releasing)
    }

    public func presentation(named name: String) -> LivePresentation? { entries.withLock { $0[name] } }

    /// Stops serving the presentation under `name` (its paths answer 404 from now on) and its thumbnails.
    public func unregister(_ name: String) {
        entries.withLock { $0[name] = nil }
        thumbnailSources.withLock { $0[name] = nil }
        tileSheets.withLock { $0[name] = nil }
        registrations.add(1, ordering: .releasing)
    }

    /// Where the stream `name`'s `thumbnail.jpg` comes from (none: 404).
    public func setThumbnails(_ source: any ThumbnailSource, for name: String) {
        thumbnailSources.withLock { $0[name] = source }
    }

    func thumbnails(for name: String) -> (any ThumbnailSource)? { thumbnailSources.withLock { $0[name] } }

    /// The stream `name`'s thumbnail tiles (`--thumbnails`): its image playlist, sheets and WebVTT list.
    public func setTileSheets(_ sheets: LiveTileSheets, for name: String) {
        tileSheets.withLock { $0[name] = sheets }
        registrations.add(1, ordering: .releasing)
    }

    func tileSheets(for name: String) -> LiveTileSheets? { tileSheets.withLock { $0[name] } }

    public var names: [String] { entries.withLock { Array($0.keys).sorted() } }

    /// The presentation a request path (after the leading `/`) belongs to, and the path inside it.
    func resolve(_ path: Substring) -> (LivePresentation, Substring)? {
        resolveNamed(path).map { ($0.presentation, $0.inner) }
    }

    /// `resolve` with the name the presentation is registered under.
    func resolveNamed(_ path: Substring) -> (name: String, presentation: LivePresentation, inner: Substring)? {
        entries.withLock { e in
            if let slash = path.firstIndex(of: "/") {
                let name = String(path[..<slash])
                if let p = e[name] { return (name, p, path[path.index(after: slash)...]) }
            }
            return e[""].map { ("", $0, path) }
        }
    }
}

/// A stream's still picture for the stream list (`/NAME/thumbnail.jpg`): made outside the origin (it decodes video).
public protocol ThumbnailSource: Sendable {
    /// The current thumbnail as a JPEG, `nil` before there is one. May block for a few milliseconds: the origin calls
    /// it off its event loops.
    func jpeg() throws -> [UInt8]?
}

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
