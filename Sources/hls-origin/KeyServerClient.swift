import ArgumentParser
import AsyncHTTPClient
import ContentProtection
import Dispatch
import Foundation
import Logging
import MediaPresentation
import NIOCore
import NIOSSL
import ServeConfig
import Synchronization

/// `--key-server`: the HTTP side of a CPIX key server (the documents are `KeyServerRequest`'s). It POSTs the request
/// for some key periods and reads the keys of the answer: at start, periods 0 and 1 (or the one key), with a few
/// retries, and the stream is refused with one line when they do not come; then, on a thread of its own, the next
/// periods ahead (two at a time, when a period begins), retrying with backoff while the server does not answer.
/// The media path never waits on it while serving (`FetchedPeriodKeys` keeps the last key it has); `package` waits
/// for a period's key before encrypting it (up to `packageWait`).
///
/// AsyncHTTPClient (one client for the process), the system's trust store plus `--key-server-ca`, `--key-server-header`s on each
/// request. Keys never reach a log line or an error: only URLs, periods, KIDs' absence and HTTP statuses do.
final class KeyServerClient: Sendable {
    let url: KeyServerURL
    let request: KeyServerRequest
    private let tls: TLSConfiguration?
    private let headers: [HeaderLine]
    private let logger: Logger
    private let wakeup = DispatchSemaphore(value: 0)
    /// Why the latest fetch failed (for the warning when a period must keep an old key).
    private let lastFailure = Mutex<String?>(nil)

    /// Attempts at start, and the time a whole request may take.
    static let startAttempts = 3
    static let requestTimeout = TimeAmount.seconds(5)
    /// How long `package` waits for a period's key before keeping the last one.
    static let packageWait: Duration = .seconds(20)

    init(url: KeyServerURL, caFile: String?, headers: [HeaderLine], request: KeyServerRequest, logger: Logger) throws {
        self.url = url
        self.request = request
        self.headers = headers
        self.logger = logger
        if let caFile {
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMFile(caFile)
            } catch {
                throw ValidationError("--key-server-ca \(caFile): not a PEM certificate file that can be read")
            }
            var t = TLSConfiguration.makeClientConfiguration()
            t.additionalTrustRoots = [.certificates(certificates)]
            tls = t
        } else {
            tls = nil
        }
        if url.text.lowercased().hasPrefix("http://") {
            logger.warning("--key-server \(url) is plain http://: the content keys travel in the clear")
        }
    }

    /// A fetch that failed: one line (a status, a transport error, what the answer lacks).
    struct Failure: Error, CustomStringConvertible {
        let description: String
        /// A refusal the server will repeat (4xx, a bad document): not retried at start.
        let final: Bool
    }

    /// One request for `periods`, blocking this thread (never an event loop's) until the answer or the timeout.
    func fetch(_ periods: [UInt64]) throws(Failure) -> (keys: [[ContentKey]], systems: [DRMSystem]) {
        let response: HTTPClient.Response
        do {
            var r = try HTTPClient.Request(url: url.text, method: .POST)
            r.headers.add(name: "Content-Type", value: "application/xml")
            // SPEKE v2 (its HTTP requirements): the version on the SPEKE side; CPIX@version says the CPIX side's.
            r.headers.add(name: "X-Speke-Version", value: "2.0")
            for h in headers { r.headers.add(name: h.name, value: h.value) }
            r.body = .string(request.document(periods: periods))
            r.tlsConfiguration = tls
            response = try keyServerHTTPClient.execute(request: r, deadline: .now() + Self.requestTimeout).wait()
        } catch {
            throw Failure(description: Self.oneLine(error), final: false)
        }
        guard (200..<300).contains(response.status.code) else {
            throw Failure(description: "answered \(response.status.code) \(response.status.reasonPhrase)",
                          final: response.status.code < 500)
        }
        let text = response.body.map { String(buffer: $0) } ?? ""
        do {
            return try request.keys(periods: periods, answer: text)
        } catch {
            throw Failure(description: error.description, final: true)
        }
    }

    /// The keys at start: `startAttempts` tries (0.5 s, then 1 s apart) unless refused for good; else one line.
    func fetchAtStart(_ periods: [UInt64]) throws -> (keys: [[ContentKey]], systems: [DRMSystem]) {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try fetch(periods)
            } catch {
                if error.final || attempt >= Self.startAttempts {
                    throw ValidationError("--key-server \(url): \(error.description)")
                }
                Thread.sleep(forTimeInterval: 0.5 * Double(attempt))
            }
        }
    }

    /// The stores of a rotating stream's keys, one per track type (`request.tracks`), their fetcher started: a thread
    /// that fetches the next periods (every track type's at once) whenever a store lacks one, retrying with backoff
    /// (0.5 s doubling to 8 s) while the server fails. The first store reports keeping an old key and resuming.
    func rotation(first: [[ContentKey]]) -> [FetchedPeriodKeys] {
        let stores = first.enumerated().map { t, keys in
            FetchedPeriodKeys(keys, onEvent: { [self] event in if t == 0 { report(event) } }, onNeed: { [wakeup] in wakeup.signal() })
        }
        let thread = Thread { [self] in run(stores) }
        thread.name = "key-server"
        thread.start()
        return stores
    }

    /// Wake the fetcher (a period's key is wanted now).
    func wake() { wakeup.signal() }

    private func run(_ stores: [FetchedPeriodKeys]) {
        var failures = 0
        while !stores.allSatisfy(\.isFinished) {
            _ = wakeup.wait(timeout: .now() + (failures == 0 ? 5 : min(8, 0.25 * Double(1 << min(failures, 5)))))
            guard let n = stores.compactMap(\.wanted).min() else { continue }
            do {
                for (store, keys) in zip(stores, try fetch([n, n + 1]).keys) { store.store(keys) }
                if failures > 0 { logger.debug("key server \(url) answers again") }
                failures = 0
            } catch {
                failures += 1
                lastFailure.withLock { $0 = error.description }
                logger.debug("key server \(url): periods \(n)-\(n + 1): \(error.description)")
            }
        }
    }

    private func report(_ event: FetchedPeriodKeys.Event) {
        switch event {
        case .keeping(let period, let kept):
            let why = lastFailure.withLock { $0 } ?? "not answered yet"
            logger.warning("key server \(url): no key for key period \(period) (\(why)); keeping period \(kept)'s key for the new periods until it answers")
        case .resumed(let period):
            logger.notice("key server \(url) answers again: key period \(period) has its own key, rotation resumes")
        }
    }

    /// An error as one short line.
    static func oneLine(_ error: any Error) -> String {
        if let e = error as? HTTPClientError, e == .deadlineExceeded || e == .readTimeout {
            return "no answer within \(requestTimeout.nanoseconds / 1_000_000_000) s"
        }
        if let e = error as? HTTPClientError, e == .connectTimeout { return "cannot connect within 3 s" }
        if "\(error)".contains("Connection refused") { return "connection refused" }
        let text = String(describing: error).split(whereSeparator: \.isNewline).joined(separator: " ")
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }
}

/// The key servers' one client, for the life of the process (a global: never shut down, never deinitialized): a
/// refused connection fails the request at once (no retry inside the pool: the retries and their backoff are
/// `KeyServerClient`'s), no redirects.
private let keyServerHTTPClient: HTTPClient = {
    var pool = HTTPClient.Configuration.ConnectionPool(idleTimeout: .seconds(60))
    pool.retryConnectionEstablishment = false
    let config = HTTPClient.Configuration(
        redirectConfiguration: .disallow,
        timeout: HTTPClient.Configuration.Timeout(connect: .seconds(3), read: .seconds(5)),
        connectionPool: pool)
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
}()

/// `package`: a period's key is waited for (the fetcher woken) before the period is encrypted, since the file is read
/// far faster than real time; after `KeyServerClient.packageWait` the period keeps the last key, as a live stream does
/// (and while it keeps one, each next period is waited for a second only).
struct WaitingPeriodKeys: PeriodKeySource {
    let keys: FetchedPeriodKeys
    let wake: @Sendable () -> Void

    func finish() { keys.finish() }

    func key(period n: UInt64) -> ContentKey {
        if !keys.has(n) {
            let clock = ContinuousClock()
            // Once a period went without its key, a shorter wait for each next one (the file is not held up for long).
            let deadline = clock.now + (keys.isKeeping ? .seconds(1) : KeyServerClient.packageWait)
            var polls = 0
            while !keys.has(n) && clock.now < deadline {
                if polls % 50 == 0 { wake() }
                polls += 1
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        return keys.key(period: n)
    }
}
