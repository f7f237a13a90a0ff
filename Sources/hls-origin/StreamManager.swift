import Dispatch
import Foundation
import Logging
import Origin
import Pipeline
import ServeConfig
import Synchronization

/// The streams `serve` runs, while it runs: those it started with, and those added, ended and replaced later by the
/// control API (`StreamControl`) and by reloads of `--config` (`reload`). Registers each in the origin's registry,
/// the metrics and the thumbnails. No lock is held while an input opens or a pipeline flushes: a name is reserved,
/// the slow part runs on a worker thread, and the result is put in place; the other streams never wait.
final class StreamManager: StreamControl {
    struct Entry: Sendable {
        var planned: ServePlan.Stream
        /// Started from the command line or `--config` (a reload manages it), not from the API.
        var fromConfig: Bool
        /// `nil` while its input opens.
        var stream: ServedStream?
        /// Ended by `remove` (or a reload): still served, ended, no longer configured.
        var removed = false
    }

    let registry: PresentationRegistry
    let metrics: OriginMetrics
    let factory: StreamFactory
    /// The command line's options: every stream's defaults.
    let flags: StreamOptions
    let environment: ServePlan.Environment
    private let entries = Mutex<[String: Entry]>([:])

    init(registry: PresentationRegistry, metrics: OriginMetrics, factory: StreamFactory, flags: StreamOptions,
         environment: ServePlan.Environment) {
        self.registry = registry
        self.metrics = metrics
        self.factory = factory
        self.flags = flags
        self.environment = environment
    }

    // MARK: What runs

    /// The streams opened at start (not started yet: the server starts them once it listens).
    func adopt(_ streams: [ServedStream], plan: ServePlan) {
        for stream in streams {
            guard let planned = plan.streams.first(where: { $0.name == stream.name }) else { continue }
            entries.withLock { $0[stream.name] = Entry(planned: planned, fromConfig: true, stream: stream) }
            publish(stream)
        }
    }

    /// Every stream served now, ended ones included, by name.
    func all() -> [ServedStream] {
        entries.withLock { e in e.keys.sorted().compactMap { e[$0]?.stream } }
    }

    /// The streams configured now (not ended by `remove`), by name.
    func running() -> [ServedStream] {
        entries.withLock { e in e.keys.sorted().compactMap { e[$0].flatMap { $0.removed ? nil : $0.stream } } }
    }

    func configured() -> [String] {
        entries.withLock { e in e.filter { !$0.value.removed }.keys.sorted() }
    }

    // MARK: StreamControl

    func add(json: [UInt8]) async throws(StreamControlError) -> String {
        let planned: ServePlan.Stream
        do {
            planned = try StreamRequest.add(json, flags: flags, environment: environment)
        } catch {
            throw StreamControlError(.invalid, error.message, field: error.field)
        }
        try await start(planned, fromConfig: false)
        return planned.name
    }

    func patch(name: String, json: [UInt8]) async throws(StreamControlError) -> [String] {
        guard let entry = entries.withLock({ $0[name] }), !entry.removed, let stream = entry.stream else {
            throw Self.noStream(name)
        }
        let (changed, options): ([String], StreamOptions)
        do {
            (changed, options) = try StreamRequest.patch(json, current: entry.planned)
        } catch {
            throw StreamControlError(.invalid, error.message, field: error.field)
        }
        // Only the window changes live (the live presentation's windows list more or fewer segments from the next
        // one on); the push has its own playlists' window. Timing, encoding and input are fixed in the pipeline.
        let live: Set<String> = stream.pusher == nil ? ["window"] : []
        let fixed = changed.filter { !live.contains($0) }
        guard fixed.isEmpty else {
            throw StreamControlError(.unprocessable, "\(fixed.joined(separator: ", ")) cannot change while the stream runs: DELETE it and POST it again with the new options (or edit --config and send SIGHUP); nothing was changed",
                                     field: fixed.first, fields: fixed)
        }
        guard !changed.isEmpty else { return [] }
        stream.presentation.setWindowSize(options.window ?? StreamOptions.defaultWindow)
        entries.withLock { e in if e[name]?.stream === stream { e[name]?.planned.options = options } }
        note("\(name): \(changed.joined(separator: ", ")) changed")
        return changed
    }

    func remove(name: String) async throws(StreamControlError) -> StreamRemoval {
        enum Step { case end(ServedStream), unregister }
        let step: Result<Step, StreamControlError> = entries.withLock { e in
            guard let entry = e[name] else { return .failure(Self.noStream(name)) }
            guard let stream = entry.stream else { return .failure(StreamControlError(.conflict, "stream '\(name)' is still starting; try again")) }
            if entry.removed {
                e[name] = nil
                return .success(.unregister)
            }
            e[name]?.removed = true
            return .success(.end(stream))
        }
        switch step {
        case .failure(let error): throw error
        case .success(.unregister):
            registry.unregister(name)
            note("\(name): no longer served")
            return .unregistered
        case .success(.end(let stream)):
            await end(stream)
            note("\(name): ended; its playlists end with EXT-X-ENDLIST and it is still served (DELETE again to remove it)")
            return .ended
        }
    }

    // MARK: Starting and ending

    /// Starts `planned` under its name (free, or held by a stream ended earlier, which it replaces).
    func start(_ planned: ServePlan.Stream, fromConfig: Bool) async throws(StreamControlError) {
        let name = planned.name
        let (taken, previous) = entries.withLock { e -> (Bool, Entry?) in
            let previous = e[name]
            if let previous, !previous.removed { return (true, previous) }
            e[name] = Entry(planned: planned, fromConfig: fromConfig, stream: nil)
            return (false, previous)
        }
        if taken { throw StreamControlError(.conflict, "stream '\(name)' exists (DELETE it first)", field: "name") }
        let factory = self.factory
        // A pulled HLS presentation's subtitle renditions become the stream's own, followed while it runs.
        var served = planned
        let follows = await LiveSubtitles.plan(&served, logger: factory.logger)
        let opened: Result<ServedStream, any Error> = await Self.offLoop { [served] in
            Result { try factory.open(served, later: true) }
        }
        switch opened {
        case .failure(let error):
            entries.withLock { e in if e[name]?.stream == nil { e[name] = previous } }
            throw StreamControlError(.invalid, planned.label + describe(error), field: "input")
        case .success(let stream):
            metrics.forgetInput(stream: name)
            publish(stream)
            entries.withLock { $0[name]?.stream = stream }
            stream.start()
            _ = LiveSubtitles.start(follows, for: stream, logger: factory.logger)
            note("\(name): added, served at /\(name)/index.m3u8")
        }
    }

    /// Ends `stream` off the event loops; its push drains in the background.
    func end(_ stream: ServedStream) async {
        await Self.offLoop { stream.end() }
        if let pusher = stream.pusher {
            let name = stream.name
            Task { await finishPushing(pusher, stream: name) }
        }
    }

    private func publish(_ stream: ServedStream) {
        registry.register(stream.presentation, at: stream.name)
        registry.setThumbnails(Thumbnailer(keyframes: stream.pipeline.keyframes), for: stream.name)
        if let sheets = stream.tileSheets { registry.setTileSheets(sheets, for: stream.name) }
        metrics.observe(stream.presentation, named: stream.name)
    }

    static func noStream(_ name: String) -> StreamControlError {
        StreamControlError(.notFound, "no stream '\(name)'")
    }

    /// Runs `work` on a worker thread (an input's opening blocks on the disk or the network).
    static func offLoop<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { done in
            DispatchQueue.global().async { done.resume(returning: work()) }
        }
    }

    /// One line on standard error (a JSON object with `--log-format json`).
    func note(_ text: String) {
        Console.say(text)
    }

    // MARK: Reload

    /// Re-reads `--config` with the code of the start (`ServePlan.make`) and makes the running streams match it
    /// (`ReloadPlan`); streams added by the API are left alone. A file that does not read or validate changes
    /// nothing (one line); a stream whose input cannot be opened is one line too, the others go on.
    func reload(configPath: String?) async {
        guard let configPath else {
            note("reload: no --config file to read (SIGHUP reloads one); nothing changed")
            return
        }
        let plan: ServePlan
        do {
            plan = try ServePlan.make(flags: flags, arguments: [], configPath: configPath, environment: environment)
        } catch {
            switch error {
            case .usage(let message), .failure(let message): note("reload: \(message); nothing changed")
            }
            return
        }
        let (running, byAPI) = entries.withLock { e in
            (e.values.filter { $0.fromConfig && !$0.removed && $0.stream != nil }.map(\.planned),
             Set(e.filter { !$0.value.fromConfig && !$0.value.removed }.keys))
        }
        let diff = ReloadPlan.diff(running: running, planned: plan.streams)
        for name in diff.remove + diff.replace.map(\.name) {
            guard let stream = entries.withLock({ e -> ServedStream? in
                e[name]?.removed = true
                return e[name]?.stream
            }) else { continue }
            await end(stream)
        }
        for planned in diff.replace + diff.add {
            if byAPI.contains(planned.name) {
                note("reload: \(planned.name): added through the API; left as it is")
                continue
            }
            do {
                try await start(planned, fromConfig: true)
            } catch {
                note("reload: \(error.message)")
            }
        }
        note("reload: \(diff.summary)")
    }
}
