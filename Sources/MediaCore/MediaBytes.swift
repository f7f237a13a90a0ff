#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bytes held as chunks, read in order, without being joined: a fragment is its header (`moof` and the `mdat`
/// header) followed by its samples' own arrays; a segment is its parts' chunks in turn. A producer builds them without
/// copying a sample's bytes (the arrays are shared, copy-on-write); each consumer copies once, into what it sends or
/// stores: a `ByteBuffer`, a file (`writev`), a request body.
public struct MediaBytes: Sendable, Hashable, CustomStringConvertible {
    public private(set) var chunks: [[UInt8]]
    /// Total bytes.
    public private(set) var count: Int

    public init() {
        chunks = []
        count = 0
    }

    public init(_ bytes: [UInt8]) {
        chunks = bytes.isEmpty ? [] : [bytes]
        count = bytes.count
    }

    public init(chunks: [[UInt8]]) {
        self.chunks = chunks.filter { !$0.isEmpty }
        count = self.chunks.reduce(0) { $0 + $1.count }
    }

    public var isEmpty: Bool { count == 0 }

    public mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        chunks.append(bytes)
        count += bytes.count
    }

    public mutating func append(contentsOf other: MediaBytes) {
        chunks.append(contentsOf: other.chunks)
        count += other.count
    }

    /// The bytes in one array: a copy (for small objects, tests, and consumers that need one buffer).
    public var joined: [UInt8] {
        if chunks.count == 1 { return chunks[0] }
        var out: [UInt8] = []
        out.reserveCapacity(count)
        for c in chunks { out += c }
        return out
    }

    /// Equal when the bytes are, however they are chunked.
    public static func == (a: MediaBytes, b: MediaBytes) -> Bool {
        a.count == b.count && a.chunks.lazy.joined().elementsEqual(b.chunks.lazy.joined())
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for c in chunks { for byte in c { hasher.combine(byte) } }
    }

    public var description: String { "\(count) bytes in \(chunks.count) chunks" }
}

extension MediaBytes {
    /// Writes every chunk to `fd` with gathering writes (`pwritev` at `offset`, or `writev` at the file's position),
    /// at most 1024 chunks a call, retrying short writes and `EINTR`: the chunks reach the kernel without being joined
    /// (a segment's header and samples in one call). Returns the `errno` of a failure, `nil` once all is written.
    public func write(to fd: Int32, at offset: Int? = nil) -> Int32? {
        var vectors: [iovec] = []
        vectors.reserveCapacity(chunks.count)
        // Each chunk's storage is pinned while the nested closures run.
        func gather(_ i: Int) -> Int32? {
            guard i < chunks.count else { return vectors.withUnsafeMutableBufferPointer { Self.writeVectors(fd, $0, total: count, at: offset) } }
            return chunks[i].withUnsafeBytes { raw in
                vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress), iov_len: raw.count))
                return gather(i + 1)
            }
        }
        return gather(0)
    }

    private static func writeVectors(_ fd: Int32, _ vectors: UnsafeMutableBufferPointer<iovec>, total: Int, at offset: Int?) -> Int32? {
        var done = 0
        var first = 0
        while done < total {
            let count = Int32(min(vectors.count - first, 1024))
            let base = vectors.baseAddress! + first
            let n = offset.map { pwritev(fd, base, count, off_t($0 + done)) } ?? writev(fd, base, count)
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if n == 0 { return EIO }
            done += n
            // Skip what was written: whole vectors, then the written head of a partly written one.
            var left = n
            while left > 0 && first < vectors.count {
                if left >= vectors[first].iov_len {
                    left -= vectors[first].iov_len
                    first += 1
                } else {
                    vectors[first].iov_base = vectors[first].iov_base.map { $0 + left }
                    vectors[first].iov_len -= left
                    left = 0
                }
            }
        }
        return nil
    }
}
