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
