import Dispatch
import MediaCore
import Synchronization

/// Writes files on a thread of their own, so the kernel's work of creating and filling them (most of what packaging a
/// copied file costs: ext4's block allocation, the page cache) runs on the second core while the first demuxes and
/// segments. At most `maxPending` writes wait at a time: the producer waits beyond that, so memory stays bounded. The
/// first failure is kept and thrown by the next `write` and by `drain()`; nothing is written after it.
///
/// The bytes written go back to the producer's thread to be freed there: they were allocated there (the demuxer's
/// samples), and glibc's malloc frees a block into the arena it came from under that arena's lock, so freeing them on
/// the writer thread made the two threads take turns at one lock (a futex wake per contended free: about a tenth of
/// the packaging's time in `perf`).
final class FileWriterQueue: Sendable {
    private let queue = DispatchQueue(label: "hls-origin.files")
    private let slots: DispatchSemaphore
    private let failure = Mutex<(any Error)?>(nil)
    /// Written, waiting to be released by the producer.
    private let written = Mutex<[MediaBytes]>([])

    /// Writes gathered before the writer thread is woken: a wake-up per 1-second segment cost the producer about 3% of
    /// a package run (a futex wake each). Only the producer touches it.
    private let batch = Mutex<[Job]>([])
    private let batchSize: Int

    private struct Job: Sendable {
        var bytes: MediaBytes
        var run: @Sendable (MediaBytes) throws -> Void
    }

    /// At most `maxPending` batches of `batchSize` writes wait at a time.
    init(maxPending: Int = 3, batchSize: Int = 4) {
        slots = DispatchSemaphore(value: maxPending)
        self.batchSize = batchSize
    }

    /// Runs `job(bytes)` in turn after the writes before it (their order is kept), at the latest on `drain()`.
    func write(_ bytes: MediaBytes, _ job: @escaping @Sendable (MediaBytes) throws -> Void) throws {
        releaseWritten()
        if let e = failure.withLock({ $0 }) { throw e }
        let full = batch.withLock { jobs -> [Job]? in
            jobs.append(Job(bytes: bytes, run: job))
            guard jobs.count >= batchSize else { return nil }
            defer { jobs.removeAll(keepingCapacity: true) }
            return jobs
        }
        if let full { submit(full) }
    }

    private func submit(_ jobs: [Job]) {
        slots.wait()
        queue.async { [self] in
            defer {
                written.withLock { $0.append(contentsOf: jobs.map(\.bytes)) }
                slots.signal()
            }
            for job in jobs {
                guard failure.withLock({ $0 }) == nil else { return }
                do { try job.run(job.bytes) } catch { failure.withLock { if $0 == nil { $0 = error } } }
            }
        }
    }

    /// Waits for every write; throws the first failure.
    func drain() throws {
        let rest = batch.withLock { jobs in defer { jobs.removeAll() }; return jobs }
        if !rest.isEmpty { submit(rest) }
        queue.sync {}
        releaseWritten()
        if let e = failure.withLock({ $0 }) { throw e }
    }

    /// Frees what was written on the calling (producer's) thread: the list leaves the lock before it is dropped.
    private func releaseWritten() {
        let done = written.withLock { list -> [MediaBytes] in
            guard !list.isEmpty else { return [] }
            defer { list.removeAll(keepingCapacity: true) }
            return list
        }
        _ = done
    }
}
