import Foundation

/// The rungs of a ladder on lanes of their own (a thread each), up to `depth` pictures apart: a picture is handed to
/// every lane (`submit`) and comes back once every lane is done with it, in picture order. With `depth` 0 a picture
/// comes back from the `submit` that handed it (every rung at the same time); with more, a lane
/// that finished early starts on the next picture while a bigger rung is still encoding this one, so the cores stay
/// busy across pictures instead of waiting at each (the live ladder's `--no-realtime` speed; issue 25 §3). What comes
/// back is then up to `depth` pictures late: a paced live stream keeps depth 0 (no added latency).
///
/// Threads of its own, not libdispatch queues: Linux's libdispatch runs queues on a pool as wide as the machine, in
/// which the producer's own wait would hold a place.
///
/// Each lane touches only its own rung's state, in picture order; what a picture's work reads that the lanes share
/// must stay unchanged until the picture is back.
final class RungLanes<T>: @unchecked Sendable {
    private let depth: Int
    private let count: Int
    /// Per lane, the work handed to it and not started yet (guarded by `lock`).
    private var queues: [[(picture: Int, body: UncheckedBody<T>)]]
    /// Per picture in flight, oldest first: one result slot per lane (guarded by `lock`).
    private var pending: [[Result<T, any Error>?]] = []
    /// The number of the oldest picture in `pending`, and of the next one handed out.
    private var oldest = 0
    private var next = 0
    private var stopping = false
    private let lock = NSCondition()

    /// How far apart the lanes may run: 2 pictures when the input is read as fast as it goes, none when it
    /// is paced or live (no added latency).
    static func depth(readAsFastAsItGoes: Bool) -> Int { readAsFastAsItGoes ? 2 : 0 }

    init(count: Int, depth: Int) {
        precondition(count >= 1 && depth >= 0)
        self.count = count
        self.depth = depth
        queues = Array(repeating: [], count: count)
        for i in 0..<count {
            let t = Thread { [self] in run(lane: i) }
            t.name = "rung-\(i)"
            t.start()
        }
    }

    /// Ends the lanes' threads once their work is done (they hold the lanes until then).
    func stop() {
        lock.lock()
        stopping = true
        lock.broadcast()
        lock.unlock()
    }

    deinit { stop() }

    private func run(lane: Int) {
        lock.lock()
        while true {
            if let work = queues[lane].first {
                queues[lane].removeFirst()
                lock.unlock()
                let r = Result { try work.body.body(lane) }
                lock.lock()
                pending[work.picture - oldest][lane] = r
                lock.broadcast()
            } else if stopping {
                break
            } else {
                lock.wait()
            }
        }
        lock.unlock()
    }

    /// Hands picture work to every lane (`body(lane)`, run on that lane after its earlier pictures), then returns the
    /// pictures every lane has finished (each its results in lane order, oldest first), waiting for the oldest ones
    /// while more than `depth` are in flight. A lane's error is thrown when its picture comes back.
    func submit(_ body: @escaping (Int) throws -> T) throws -> [[T]] {
        // Each lane calls `body` for its own rung only (the type's contract), so sharing it across lanes is safe.
        let work = UncheckedBody(body: body)
        lock.lock()
        let picture = next
        next += 1
        pending.append(Array(repeating: nil, count: count))
        for i in 0..<count { queues[i].append((picture, work)) }
        lock.broadcast()
        lock.unlock()
        return try collect(keeping: depth)
    }

    /// Every picture still in flight, once every lane is done with it.
    func drain() throws -> [[T]] { try collect(keeping: 0) }

    private func collect(keeping inFlight: Int) throws -> [[T]] {
        lock.lock()
        var done: [[Result<T, any Error>]] = []
        while let first = pending.first {
            if !first.allSatisfy({ $0 != nil }) {
                guard pending.count > inFlight else { break }
                lock.wait()
                continue
            }
            done.append(first.map { $0! })
            pending.removeFirst()
            oldest += 1
        }
        lock.unlock()
        return try done.map { try $0.map { try $0.get() } }
    }
}

private struct UncheckedBody<T>: @unchecked Sendable {
    let body: (Int) throws -> T
}
