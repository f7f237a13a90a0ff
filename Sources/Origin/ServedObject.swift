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
