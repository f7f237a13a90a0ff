import NIOCore
import NIOPosix

extension OriginServer {
    /// Makes NIO's event loops the Swift concurrency global executor, so a request is parsed, answered and
    /// written on one thread instead of hopping between NIO's threads and the cooperative pool (a large
    /// share of per-request cost on 2 cores). Call it first thing in `main`, before any `async` code runs;
    /// returns `false` when it is too late (then nothing changes).
    @discardableResult
    public static func adoptEventLoopsAsGlobalExecutor() -> Bool {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }
}
