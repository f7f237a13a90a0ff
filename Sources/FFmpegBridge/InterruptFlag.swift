import Synchronization

/// Aborts a blocking FFmpeg read from another task: `interrupt()` makes the next I/O check fail with
/// an `FFmpegError` whose `isInterrupted` is true (FFmpeg's `AVIOInterruptCB`).
public final class InterruptFlag: Sendable {
    private let state = Atomic<Bool>(false)

    public init() {}

    public func interrupt() { state.store(true, ordering: .releasing) }

    /// Clears the flag so the demuxer can be used again (e.g. after a deliberate abort of one read).
    public func reset() { state.store(false, ordering: .releasing) }

    public var isInterrupted: Bool { state.load(ordering: .acquiring) }
}
