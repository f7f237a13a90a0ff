import Dispatch
import Foundation
import Testing
@testable import Pipeline

/// `RungLanes`: the rungs of a ladder on lanes of their own, pictures back in order, whole.
@Suite struct RungLanesTests {
    struct Failed: Error, Equatable { let rung: Int }

    // MARK: RungLanes

    /// Depth 0: each picture comes back from its own `submit`, every lane's result in lane order.
    @Test func lanesInStepGiveEachPictureBackAtOnce() throws {
        let lanes = RungLanes<Int>(count: 3, depth: 0)
        defer { lanes.stop() }
        for p in 0..<5 {
            #expect(try lanes.submit { lane in p * 10 + lane } == [[p * 10, p * 10 + 1, p * 10 + 2]])
        }
        #expect(try lanes.drain().isEmpty)
    }

    /// Depth 2: a lane runs ahead of a slow one, up to 2 pictures; every picture comes back, in order, whole, and each
    /// lane ran its pictures in order.
    @Test func lanesApartGiveEveryPictureBackInOrder() throws {
        let lanes = RungLanes<Int>(count: 2, depth: 2)
        defer { lanes.stop() }
        let seen = Log()
        var back: [[Int]] = []
        let lane0Waits = DispatchSemaphore(value: 0)
        for p in 0..<3 {
            back += try lanes.submit { lane in
                // Lane 0 holds picture 0 until lane 1 has finished picture 2: lane 1 is two pictures ahead.
                if lane == 0 && p == 0 { _ = lane0Waits.wait(timeout: .now() + 10) }
                seen.add(lane, p)
                if lane == 1 && p == 2 { lane0Waits.signal() }
                return p * 10 + lane
            }
        }
        back += try lanes.drain()
        #expect(back == [[0, 1], [10, 11], [20, 21]])
        #expect(seen.pictures(of: 0) == [0, 1, 2] && seen.pictures(of: 1) == [0, 1, 2])
        #expect(seen.order.firstIndex { $0 == (1, 2) }! < seen.order.firstIndex { $0 == (0, 0) }!)
    }

    /// A lane's error is thrown when its picture comes back (from `submit` in step, from `drain` apart).
    @Test func aLanesErrorIsThrownWhenItsPictureComesBack() throws {
        for depth in [0, 3] {
            let lanes = RungLanes<Int>(count: 2, depth: depth)
            defer { lanes.stop() }
            #expect(throws: Failed(rung: 1)) {
                _ = try lanes.submit { lane in lane }
                _ = try lanes.submit { lane -> Int in if lane == 1 { throw Failed(rung: 1) }; return 0 }
                _ = try lanes.drain()
            }
        }
    }

    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [(Int, Int)] = []
        func add(_ lane: Int, _ picture: Int) { lock.withLock { entries.append((lane, picture)) } }
        var order: [(Int, Int)] { lock.withLock { entries } }
        func pictures(of lane: Int) -> [Int] { order.filter { $0.0 == lane }.map(\.1) }
    }
}
