import MediaCore

/// What a waiting reader waits for.
public enum WaitCondition: Sendable, Equatable {
    /// A media playlist can be given out (`WindowSnapshot.isPlayable`).
    case playable
    /// Blocking playlist reload (`_HLS_msn`, `_HLS_part`): segment `msn` is complete, or part `part` of it exists.
    case playlist(msn: UInt64, part: Int?)
    /// A part (`seg<msn>.<index>.m4s`) is published. Decided `false` once it can never exist.
    case part(msn: UInt64, index: Int)

    /// `true`/`false` once decided in `snap`, `nil` while the condition may still come true.
    func outcome<Payload>(in snap: WindowSnapshot<Payload>) -> Bool? {
        switch self {
        case .playable:
            return snap.isPlayable ? true : (snap.finished ? false : nil)
        case .playlist(let msn, let part):
            if snap.finished { return true }
            guard snap.isPlayable else { return nil }
            if msn < snap.nextSequence { return true }
            if let part, msn == snap.nextSequence, part < snap.partial.count { return true }
            return nil
        case .part(let msn, let index):
            if snap.part(msn, index) != nil { return true }
            return snap.partMayAppear(msn, index) ? nil : false
        }
    }
}

/// The readers blocked on a window (blocking playlist reloads, parts not yet published), kept in the window's locked
/// state. A reader is registered, then installs its continuation; a decision or a timeout may come between the two,
/// so a decided reader without a continuation keeps its result until the continuation arrives. Continuations are
/// handed out to be resumed after the lock is released.
struct WaitingReaders {
    private struct Reader {
        var condition: WaitCondition
        var continuation: CheckedContinuation<Bool, Never>?
        var resolved: Bool?
    }

    private var readers: [Int: Reader] = [:]
    private var nextID = 0

    var count: Int { readers.count }

    /// Registers a reader of `condition`; its id.
    mutating func add(_ condition: WaitCondition) -> Int {
        let id = nextID
        nextID += 1
        readers[id] = Reader(condition: condition)
        return id
    }

    /// Installs reader `id`'s continuation: the result to resume it with now if it was decided meanwhile (or is
    /// gone: then `decided` decides), else `nil` (it is resumed later).
    mutating func install(_ id: Int, _ c: CheckedContinuation<Bool, Never>, decided: () -> Bool) -> Bool? {
        guard var r = readers[id] else { return decided() }
        if let value = r.resolved {
            readers[id] = nil
            return value
        }
        r.continuation = c
        readers[id] = r
        return nil
    }

    /// Decides reader `id` as `value` (a timeout): its continuation to resume, if installed; else the value is kept
    /// for it. A reader already decided keeps its first value.
    mutating func resolve(_ id: Int, _ value: Bool) -> CheckedContinuation<Bool, Never>? {
        guard var r = readers[id] else { return nil }
        if let c = r.continuation {
            readers[id] = nil
            return c
        }
        if r.resolved == nil { r.resolved = value }
        readers[id] = r
        return nil
    }

    /// Removes the readers `snap` decides that have a continuation (returned, to resume after unlock) and marks the
    /// others so theirs is resumed as soon as it is installed.
    mutating func takeDecided<Payload>(by snap: WindowSnapshot<Payload>) -> [(CheckedContinuation<Bool, Never>, Bool)] {
        guard !readers.isEmpty else { return [] }
        var decided: [(CheckedContinuation<Bool, Never>, Bool)] = []
        for (id, var r) in readers where r.resolved == nil {
            guard let value = r.condition.outcome(in: snap) else { continue }
            if let c = r.continuation {
                decided.append((c, value))
                readers[id] = nil
            } else {
                r.resolved = value
                readers[id] = r
            }
        }
        return decided
    }
}
