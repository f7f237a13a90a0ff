import Hummingbird
import MediaCore
import NIOCore

/// An object's bytes as the origin sends them: one or more buffers in turn. A segment is its parts' buffers (the same
/// storage the parts are served from, not a second copy); everything else is one buffer.
struct Body: Sendable {
    let chunks: [ByteBuffer]
    /// Total bytes.
    let count: Int

    init(_ buffer: ByteBuffer) {
        chunks = [buffer]
        count = buffer.readableBytes
    }

    init(chunks: [ByteBuffer]) {
        self.chunks = chunks.filter { $0.readableBytes > 0 }
        count = self.chunks.reduce(0) { $0 + $1.readableBytes }
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
        var out: [ByteBuffer] = []
        var start = 0
        for c in chunks {
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
        switch chunks.count {
        case 0: ResponseBody()
        case 1: ResponseBody(byteBuffer: chunks[0])
        default: ResponseBody(contentsOf: chunks)
        }
    }

    /// Every byte in one buffer (a copy: tests, and the few callers that need one).
    var joined: ByteBuffer {
        if chunks.count == 1 { return chunks[0] }
        var out = ByteBufferAllocator().buffer(capacity: count)
        for c in chunks { out.writeImmutableBuffer(c) }
        return out
    }
}
