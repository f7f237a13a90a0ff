@testable import Pipeline
import MediaCore
import Synchronization
import Testing

@Suite struct FileWriterQueueTests {
    struct Refused: Error {}

    @Test(arguments: [1, 3, 4, 9, 17])
    func writesRunInOrderAndAllRunByDrain(count: Int) throws {
        let queue = FileWriterQueue(maxPending: 2, batchSize: 4)
        let done = Mutex<[Int]>([])
        for i in 0..<count {
            try queue.write(MediaBytes([UInt8(i)])) { bytes in done.withLock { $0.append(Int(bytes.joined[0])) } }
        }
        try queue.drain()
        #expect(done.withLock { $0 } == Array(0..<count))
    }

    @Test func theFirstFailureStopsLaterWritesAndIsThrown() throws {
        let queue = FileWriterQueue(maxPending: 2, batchSize: 4)
        let done = Mutex<[Int]>([])
        for i in 0..<12 {
            do {
                try queue.write(MediaBytes([UInt8(i)])) { bytes in
                    let n = Int(bytes.joined[0])
                    if n == 5 { throw Refused() }
                    done.withLock { $0.append(n) }
                }
            } catch is Refused {
                break  // a write after the failure may see it already; drain always does
            }
        }
        #expect(throws: Refused.self) { try queue.drain() }
        #expect(done.withLock { $0 } == [0, 1, 2, 3, 4])
    }
}
