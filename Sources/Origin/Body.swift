import Hummingbird
import MediaCore
import NIOCore

/// An object's bytes as the origin sends them: one or more buffers in turn. A segment is its parts' buffers (the same
/// storage the parts are served from, not a second copy); everything else is one buffer. Or a range of a memory file
/// (`fileRange`): a segment and its parts kept for their RFC 8216 §6.2.2 time after leaving the playlist
/// (`ServedObject.retained`), read per request (`chunks`), or sent with `sendfile(2)` on the fast path.
struct Body: Sendable {
    private let buffers: [ByteBuffer]
    /// Where the bytes are when no buffer holds them.
    let fileRange: FileRange?
    /// Total bytes.
    let count: Int

    /// A range of a memory file.
    struct FileRange: Sendable {
        let file: MemoryFile
        let range: Range<Int>
    }

    init(_ buffer: ByteBuffer) {
        buffers = [buffer]
        fileRange = nil
        count = buffer.readableBytes
    }

    init(chunks: [ByteBuffer]) {
        buffers = chunks.filter { $0.readableBytes > 0 }
        fileRange = nil
        count = buffers.reduce(0) { $0 + $1.readableBytes }
    }

    /// Bytes `range` of `file`, read when sent.
    init(file: MemoryFile, range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= file.length, "a range of the file")
        buffers = []
        fileRange = FileRange(file: file, range: range)
        count = range.count
    }

    /// The bytes in turn; a file range is read now (one copy into a new buffer; empty if the read fails).
    var chunks: [ByteBuffer] {
        guard let fileRange else { return buffers }
        return fileRange.file.read(fileRange.range).map { [$0] } ?? []
    }

    /// `bytes` copied once into one buffer (the copy the origin makes of what it will send).
    init(_ bytes: MediaBytes) {
        var buffer = ByteBufferAllocator().buffer(capacity: bytes.count)
        for c in bytes.chunks { buffer.writeBytes(c) }
        self.init(buffer)
    }

    static let empty = Body(chunks: [])

    /// The bytes of `range` (offsets into the whole body), as slices of the same buffers.
    func slice(_ range: Range<Int>) -> Body {
        if let fileRange {
            let lower = min(max(0, range.lowerBound), count), upper = max(lower, min(range.upperBound, count))
            let base = fileRange.range.lowerBound
            return Body(file: fileRange.file, range: base + lower..<base + upper)
        }
        var out: [ByteBuffer] = []
        var start = 0
        for c in buffers {
            let end = start + c.readableBytes
            let lower = max(range.lowerBound, start), upper = min(range.upperBound, end)
            if lower < upper, let s = c.getSlice(at: c.readerIndex + lower - start, length: upper - lower) { out.append(s) }
            start = end
            if start >= range.upperBound { break }
        }
        return Body(chunks: out)
    }

    /// The body of a Hummingbird response.
    var responseBody: ResponseBody {
        let chunks = self.chunks
        return switch chunks.count {
        case 0: ResponseBody()
        case 1: ResponseBody(byteBuffer: chunks[0])
        default: ResponseBody(contentsOf: chunks)
        }
    }

    /// Every byte in one buffer (a copy: tests, and the few callers that need one).
    var joined: ByteBuffer {
        let chunks = self.chunks
        if chunks.count == 1 { return chunks[0] }
        var out = ByteBufferAllocator().buffer(capacity: count)
        for c in chunks { out.writeImmutableBuffer(c) }
        return out
    }
}
