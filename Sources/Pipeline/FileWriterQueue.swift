import Dispatch
import MediaCore
import Synchronization

/// Writes files on a thread of their own, so the kernel's work of creating and filling them (most of what packaging a
/// copied file costs: ext4's block allocation, the page cache) runs on the second core while the first demuxes and
/// segments. At most `maxPending` writes wait at a time: the producer waits beyond that, so memory stays bounded. The
/// first failure is kept and thrown by the next `write` and by `drain()`; nothing is written after it.
final class FileWriterQueue: Sendable {
    private let queue = DispatchQueue(label: "hls-origin.files")
    private let slots: DispatchSemaphore
    private let failure = Mutex<(any Error)?>(nil)

    init(maxPending: Int = 8) {
        slots = DispatchSemaphore(value: maxPending)
    }

    /// Runs `job` in turn after the writes before it (their order is kept).
    func write(_ job: @escaping @Sendable () throws -> Void) throws {
        if let e = failure.withLock({ $0 }) { throw e }
        slots.wait()
        queue.async { [self] in
            defer { slots.signal() }
            guard failure.withLock({ $0 }) == nil else { return }
            do { try job() } catch { failure.withLock { if $0 == nil { $0 = error } } }
        }
    }

    /// Waits for every write; throws the first failure.
    func drain() throws {
        queue.sync {}
        if let e = failure.withLock({ $0 }) { throw e }
    }
}
