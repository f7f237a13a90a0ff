import Dispatch

/// Runs one piece of work per ladder rung at the same time and returns their results in rung order: the rungs of a
/// picture are scaled and encoded on every core (libdispatch's pool, as wide as the machine), not one after another.
///
/// Each body touches only its own rung's state (scaler, encoder, generator) and reads what the rungs share (the
/// decoded picture, read-only), so the rungs need no lock. The call returns once every rung is done with the picture:
/// the next picture starts on all rungs together, so segment N ends at the same time in every rung, as before.
/// A rung's error is thrown after every rung has finished (the first rung's in order, if several fail).
enum RungWork {
    static func map<T>(_ count: Int, _ body: (Int) throws -> T) throws -> [T] {
        if count <= 1 { return try (0..<count).map(body) }
        let results = UnsafeMutableBufferPointer<Result<T, any Error>?>.allocate(capacity: count)
        results.initialize(repeating: nil)
        defer {
            _ = results.deinitialize()
            results.deallocate()
        }
        try withoutActuallyEscaping(body) { body in
            // Each index is written by exactly one iteration, and each body touches only its own rung (see above):
            // what the iterations share needs no lock. The buffer is read once concurrentPerform has returned.
            let shared = Shared(body: body, results: results)
            DispatchQueue.concurrentPerform(iterations: count) { i in
                shared.results[i] = Result { try shared.body(i) }
            }
        }
        return try results.map { try $0!.get() }
    }

    private struct Shared<T>: @unchecked Sendable {
        let body: (Int) throws -> T
        let results: UnsafeMutableBufferPointer<Result<T, any Error>?>
    }
}
