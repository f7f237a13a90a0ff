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
