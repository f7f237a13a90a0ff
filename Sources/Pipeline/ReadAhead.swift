import Foundation

/// Runs a producer (`produce`, called again and again until it returns `nil` or throws) on a thread of its own, at
/// most `maxCount` elements or `maxBytes` bytes ahead of the consumer (`next()`), in order. What it threw is thrown by
/// the `next()` after the elements before it. `cancel()` (or the last reference going) stops it at its next element.
///
/// A file read as fast as it goes (`package`, `serve --no-realtime` without `--loop`) reads its packets this way:
/// libavformat's reading and parsing then run beside the segmenting instead of before it, on the 2-core machine
/// the biggest share of one thread's time (docs/benchmarks.md, packaging).
final class ReadAhead<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var items: [Element] = []
    private var head = 0
    private var bytes = 0
    private var end: Result<Void, any Error>?
    private var cancelled = false

    private let maxCount: Int
    private let maxBytes: Int
    private let size: @Sendable (Element) -> Int

    /// `produce` runs on the read-ahead's thread only, one call at a time.
    init(maxCount: Int = 64, maxBytes: Int = 8 << 20, name: String = "hls-origin.read-ahead",
         size: @escaping @Sendable (Element) -> Int, produce: @escaping @Sendable () throws -> Element?) {
        precondition(maxCount >= 1 && maxBytes >= 1)
        self.maxCount = maxCount
        self.maxBytes = maxBytes
        self.size = size
        let thread = Thread { [weak self] in
            while let self, self.produceOne(produce) {}
        }
        thread.name = name
        thread.start()
    }

    deinit { cancel() }

    /// Reads one element and hands it over once there is room; `false` when done (end, error, cancelled).
    private func produceOne(_ produce: () throws -> Element?) -> Bool {
        let next = Result { try produce() }
        condition.lock()
        defer { condition.unlock() }
        while !cancelled && (items.count - head >= maxCount || bytes >= maxBytes) { condition.wait() }
        if cancelled { return false }
        switch next {
        case .success(let e?):
            items.append(e)
            bytes += size(e)
        case .success(nil):
            end = .success(())
        case .failure(let error):
            end = .failure(error)
        }
        condition.broadcast()
        return end == nil
    }

    /// The next element in order; `nil` at the end; what the producer threw, after every element before it.
    func next() throws -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while head == items.count && end == nil && !cancelled { condition.wait() }
        if cancelled { return nil }
        if head < items.count {
            let e = items[head]
            head += 1
            bytes -= size(e)
            if head >= 64 && head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
            condition.broadcast()
            return e
        }
        if case .failure(let error)? = end { throw error }
        return nil
    }

    /// Stops the producer at its next element (the one it is reading finishes first); `next()` then returns `nil`.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }
}
