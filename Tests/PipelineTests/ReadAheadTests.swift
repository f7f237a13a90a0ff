import Foundation
import Synchronization
import Testing
@testable import Pipeline

/// `ReadAhead`: the producer's elements in order, never more than its bounds ahead, its error after the elements
/// before it, and `cancel()` stopping a producer that would run on.
@Suite struct ReadAheadTests {
    struct Failure: Error, Equatable {}

    @Test func elementsComeInOrderAndTheProducerStaysWithinItsBound() throws {
        let produced = Atomic<Int>(0)
        let ahead = ReadAhead<Int>(maxCount: 4, size: { _ in 1 }) {
            let n = produced.add(1, ordering: .relaxed).newValue
            return n <= 100 ? n : nil
        }
        var got: [Int] = []
        var mostAhead = 0
        while let n = try ahead.next() {
            got.append(n)
            if n % 10 == 0 { Thread.sleep(forTimeInterval: 0.01) }   // the producer runs into its bound meanwhile
            mostAhead = max(mostAhead, produced.load(ordering: .relaxed) - got.count)
        }
        #expect(got == Array(1...100))
        // Four waiting, plus the one read and not yet handed over.
        #expect(mostAhead <= 5, "\(mostAhead) ahead")
        #expect(try ahead.next() == nil, "the end stays the end")
    }

    @Test func theByteBoundHoldsToo() throws {
        let produced = Atomic<Int>(0)
        let ahead = ReadAhead<[UInt8]>(maxCount: 1000, maxBytes: 3000, size: { $0.count }) {
            produced.add(1, ordering: .relaxed).newValue <= 20 ? [UInt8](repeating: 0, count: 1000) : nil
        }
        Thread.sleep(forTimeInterval: 0.05)
        #expect(produced.load(ordering: .relaxed) <= 4, "3,000 bytes held, one more read")
        var count = 0
        while try ahead.next() != nil { count += 1 }
        #expect(count == 20)
    }

    @Test func anErrorComesAfterTheElementsBeforeIt() {
        let produced = Atomic<Int>(0)
        let ahead = ReadAhead<Int>(size: { _ in 1 }) {
            let n = produced.add(1, ordering: .relaxed).newValue
            if n == 4 { throw Failure() }
            return n
        }
        var got: [Int] = []
        #expect(throws: Failure.self) {
            while let n = try ahead.next() { got.append(n) }
        }
        #expect(got == [1, 2, 3])
    }

    @Test func cancelStopsAProducerThatWouldRunOn() throws {
        let produced = Atomic<Int>(0)
        let ahead = ReadAhead<Int>(maxCount: 2, size: { _ in 1 }) { produced.add(1, ordering: .relaxed).newValue }
        #expect(try ahead.next() == 1)
        ahead.cancel()
        Thread.sleep(forTimeInterval: 0.05)
        let after = produced.load(ordering: .relaxed)
        Thread.sleep(forTimeInterval: 0.05)
        #expect(produced.load(ordering: .relaxed) == after, "stopped")
        #expect(after <= 4)
        #expect(try ahead.next() == nil)
    }
}
