/// The listed segments of a window, oldest first, shaped so that a snapshot per publish stays cheap however long
/// the window is (a 24-hour time-shift window lists 86,400 one-second segments):
///
/// ```
/// |sealed chunk|sealed chunk|...|open|  hot  |
///  cold: spilled segments, shared   newest, in memory
///  by every snapshot (immutable)    (windowSize of them)
/// ```
///
/// - `hot`: the newest segments (a plain array; its payloads are the consumer's in-memory objects).
/// - cold: older segments, their payload spilled (replaced by a small reference, parts dropped) or, in an EVENT or VOD
///   window that keeps everything, as they were. They are appended to `open`, and every `chunkSize` of them are
///   sealed into an immutable chunk that every later snapshot shares. Eviction moves `head` forward in the first chunk
///   and drops the chunk when it is used up.
///
/// A snapshot copies `hot` and `open` (each bounded) and shares the chunk array, which changes only once per
/// `chunkSize` publishes: publishing costs O(windowSize + chunkSize), not O(window).
public struct SegmentList<Payload: Sendable>: RandomAccessCollection, Sendable {
    public typealias Element = StoredSegment<Payload>
    public typealias Index = Int

    /// Each publish copies `open` (half a chunk on average) and, once a chunk, the chunk list: 64 balances the two
    /// for a day of one-second segments (1,350 chunks).
    static var chunkSize: Int { 64 }

    final class Chunk: Sendable {
        let items: [Element]
        init(_ items: [Element]) { self.items = items }
    }

    private var chunks: [Chunk] = []
    /// Segments already removed from `chunks[0]`.
    private var head = 0
    private var open: [Element] = []
    private(set) var hot: [Element] = []

    public init() {}

    private var sealedCount: Int { chunks.count * Self.chunkSize - head }
    /// Segments outside the hot part (spilled).
    var coldCount: Int { sealedCount + open.count }

    public var startIndex: Int { 0 }
    public var endIndex: Int { sealedCount + open.count + hot.count }

    public subscript(i: Int) -> Element {
        precondition(i >= 0 && i < endIndex, "SegmentList index out of range")
        let sealed = sealedCount
        if i < sealed {
            let j = i + head
            return chunks[j / Self.chunkSize].items[j % Self.chunkSize]
        }
        if i < sealed + open.count { return open[i - sealed] }
        return hot[i - sealed - open.count]
    }

    /// Appends a new segment to the hot part.
    mutating func append(_ segment: Element) { hot.append(segment) }

    /// Removes the oldest hot segment (to spill it, or to evict it when nothing older is listed).
    mutating func removeOldestHot() -> Element { hot.removeFirst() }

    /// Appends a spilled segment after the cold ones (it is older than every hot one).
    mutating func appendCold(_ segment: Element) {
        open.append(segment)
        if open.count == Self.chunkSize {
            chunks.append(Chunk(open))
            open = []
        }
    }

    /// Removes the oldest segment.
    @discardableResult
    mutating func removeOldest() -> Element {
        if !chunks.isEmpty {
            let first = chunks[0].items[head]
            head += 1
            if head == Self.chunkSize {
                chunks.removeFirst()
                head = 0
            }
            return first
        }
        if !open.isEmpty { return open.removeFirst() }
        return hot.removeFirst()
    }

    /// Removes every cold segment, oldest first.
    mutating func removeAllCold() -> [Element] {
        var out: [Element] = []
        out.reserveCapacity(coldCount)
        while coldCount > 0 { out.append(removeOldest()) }
        return out
    }
}
