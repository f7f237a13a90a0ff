import ArgumentParser
import Dispatch
import Foundation
import MediaCore

// The process plumbing `serve` runs on: file limits, the pipeline threads' start and outcome, signals, the status
// line.

/// Raises the soft limit on open files towards `connections` plus room for the pipeline and recorder (the hard limit
/// caps it), so that --max-connections, not EMFILE, decides when connections are refused.
func raiseFileLimit(toFit connections: Int) {
    #if canImport(Glibc)
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    let resource = RLIMIT_NOFILE
    #endif
    var rl = rlimit()
    guard getrlimit(resource, &rl) == 0 else { return }
    let wanted = rlim_t(connections + 256)
    guard rl.rlim_cur < wanted else { return }
    rl.rlim_cur = min(wanted, rl.rlim_max)
    _ = setrlimit(resource, &rl)
    if rl.rlim_cur < wanted {
        Console.say("open-file limit \(rl.rlim_cur) is below --max-connections \(connections); raise 'ulimit -n'", level: .warning)
    }
}

func formatRate(_ bps: Double) -> String {
    bps >= 1e6 ? String(format: "%.2f Mb/s", bps / 1e6) : String(format: "%.0f kb/s", bps / 1e3)
}

/// Starts the pipeline thread once, from whichever task learns first that the server is listening.
final class StartOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var thread: Thread?
    init(_ thread: Thread) {
        thread.stackSize = 8 << 20
        thread.name = "hls-origin pipeline"
        self.thread = thread
    }
    private var didStart = false
    func start() {
        lock.withLock { () -> Thread? in
            didStart = didStart || thread != nil
            return thread.take()
        }?.start()
    }
    var started: Bool { lock.withLock { didStart } }
}

/// How the input ended, set once by the pipeline thread.
final class PipelineOutcome: @unchecked Sendable {
    enum State: Sendable { case running, finished, failed(String) }
    private let lock = NSLock()
    private var state = State.running
    func set(_ s: State) { lock.withLock { state = s } }
    func get() -> State { lock.withLock { state } }
    var isRunning: Bool { if case .running = get() { true } else { false } }
}

/// SIGINT/SIGTERM -> a clean shutdown (the handler runs once; a second signal exits at once). Made first thing, so a
/// signal that comes while the inputs are still being opened is kept until there is something to stop (`onShutdown`)
/// instead of ending the process with the signal's default action.
final class SignalWatcher: @unchecked Sendable {
    // @unchecked: `sources` is set in init only; the rest is under the lock.
    private var sources: [DispatchSourceSignal] = []
    private let lock = NSLock()
    private var requested = false
    private var action: (@Sendable () -> Void)?

    init() {
        for sig in [SIGINT, SIGTERM] {
            sources.append(signalSource(sig) { self.fire() })   // lives as long as the process
        }
    }

    /// What a signal does: at once if one has already come.
    func onShutdown(_ handler: @escaping @Sendable () -> Void) {
        let already = lock.withLock { () -> Bool in
            action = handler
            return requested
        }
        if already { handler() }
    }

    private func fire() {
        let (again, action) = lock.withLock { () -> (Bool, (@Sendable () -> Void)?) in
            defer { requested = true }
            return (requested, self.action)
        }
        if again { exit(130) }
        action?()
    }
}

/// A dispatch source delivering `sig` to `handler` (on a global queue), the signal's default action turned off first.
private func signalSource(_ sig: Int32, _ handler: @escaping () -> Void) -> DispatchSourceSignal {
    signal(sig, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
    source.setEventHandler(handler: handler)
    source.resume()
    return source
}

/// SIGHUP as an async sequence (one element per signal, at most one waiting): its default action, which ends the
/// process, is turned off first.
final class ReloadSignal: @unchecked Sendable {
    // @unchecked: the source is set in init only.
    let signals: AsyncStream<Void>
    private let source: DispatchSourceSignal

    init() {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        signals = stream
        source = signalSource(SIGHUP) { continuation.yield() }
    }

    deinit { source.cancel() }
}

/// A status line redrawn in place on a terminal.
struct StatusLine: Sendable {
    let enabled: Bool

    /// Shown only when standard error is a terminal and its lines are text: redirected to a file, a pipe or the
    /// journal, or with `--log-format json`, the `\r` and escape codes would corrupt the lines.
    static func onTerminal(quiet: Bool) -> StatusLine {
        StatusLine(enabled: !quiet && Console.format == .text && isatty(STDERR_FILENO) == 1)
    }
    func show(_ text: String) {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
    }
    func clear() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
