import Dispatch
import Foundation
import Testing
@testable import Pipeline

/// The rungs of a picture run at the same time, their results come back in rung order, and a rung's error is
/// thrown once every rung has finished.
@Suite struct RungWorkTests {
    struct Failed: Error, Equatable { let rung: Int }

    @Test func resultsInRungOrder() throws {
        let out = try RungWork.map(5) { i in i * 10 }
        #expect(out == [0, 10, 20, 30, 40])
        #expect(try RungWork.map(1) { $0 + 7 } == [7])
        #expect(try RungWork.map(0) { $0 }.isEmpty)
    }

    /// Rung 0 waits for rung 1 to run: done one after another (the old loop), rung 0 would time out.
    @Test(.enabled(if: ProcessInfo.processInfo.activeProcessorCount >= 2))
    func rungsRunAtTheSameTime() throws {
        let rung1Ran = DispatchSemaphore(value: 0)
        let out = try RungWork.map(2) { i -> Bool in
            if i == 1 { rung1Ran.signal(); return true }
            return rung1Ran.wait(timeout: .now() + 10) == .success
        }
        #expect(out == [true, true])
    }

    @Test func anErrorIsThrownAfterEveryRungFinished() {
        let finished = Counter()
        #expect(throws: Failed(rung: 1)) {
            _ = try RungWork.map(4) { i -> Int in
                defer { finished.add() }
                if i == 1 || i == 3 { throw Failed(rung: i) }
                return i
            }
        }
        #expect(finished.value == 4)
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func add() { lock.withLock { n += 1 } }
        var value: Int { lock.withLock { n } }
    }
}
