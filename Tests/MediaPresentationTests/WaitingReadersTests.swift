import Testing
@testable import MediaPresentation

/// The readers blocked on a window, without the window: a decision and a timeout can each come before or after the
/// reader installs its continuation, and the first one wins.
@Suite struct WaitingReadersTests {
    /// A window that is still being fed (nothing decided) and one that is finished (every playlist wait is decided
    /// `true`, `.playable` `false`).
    let open = LiveWindow<[UInt8]>().snapshot()
    let finished: WindowSnapshot<[UInt8]> = {
        let w = LiveWindow<[UInt8]>()
        w.finish()
        return w.snapshot()
    }()

    @Test func aReaderInstalledThenDecidedIsHandedOutWithItsValue() async {
        let value = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            var readers = WaitingReaders()
            let id = readers.add(.playlist(msn: 3, part: nil))
            #expect(readers.install(id, c) { Issue.record("not gone"); return false } == nil)
            #expect(readers.takeDecided(by: open).isEmpty)
            let decided = readers.takeDecided(by: finished)
            #expect(decided.count == 1 && readers.count == 0)
            for (continuation, v) in decided { continuation.resume(returning: v) }
        }
        #expect(value)
    }

    @Test func aDecisionBeforeTheContinuationIsKeptForIt() async {
        let value = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            var readers = WaitingReaders()
            let id = readers.add(.playable)
            #expect(readers.takeDecided(by: finished).isEmpty)   // no continuation yet: marked, not handed out
            #expect(readers.count == 1)
            let now = readers.install(id, c) { Issue.record("not gone"); return true }
            #expect(now == false && readers.count == 0)
            c.resume(returning: now ?? true)
        }
        #expect(!value)
    }

    @Test func aTimeoutBeforeTheDecisionWins() async {
        let value = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            var readers = WaitingReaders()
            let id = readers.add(.playlist(msn: 0, part: nil))
            #expect(readers.resolve(id, false) == nil)             // timed out before installing
            #expect(readers.takeDecided(by: finished).isEmpty)     // the later decision (true) does not replace it
            let now = readers.install(id, c) { Issue.record("not gone"); return true }
            #expect(now == false)
            c.resume(returning: now ?? true)
        }
        #expect(!value)
    }

    @Test func aTimeoutAfterInstallingHandsOutTheContinuationOnce() async {
        let value = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            var readers = WaitingReaders()
            let id = readers.add(.part(msn: 1, index: 0))
            #expect(readers.install(id, c) { false } == nil)
            let timedOut = readers.resolve(id, false)
            #expect(timedOut != nil && readers.count == 0)
            #expect(readers.resolve(id, false) == nil)            // gone: nothing to resume twice
            timedOut?.resume(returning: false)
        }
        #expect(!value)
    }

    @Test func aReaderAlreadyGoneIsDecidedByTheWindow() async {
        let value = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            var readers = WaitingReaders()
            let now = readers.install(42, c) { true }
            c.resume(returning: now ?? false)
        }
        #expect(value)
    }
}
