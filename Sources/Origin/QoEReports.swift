import Foundation
import Synchronization

/// One player's QoE beacon (`POST /qoe`, `POST /NAME/qoe`), sent by the player page every 10 s and when it closes:
/// `{"startup": 0.62, "latency": 1.31, "stalls": 1, "stalled": 0.8, "switches": 2}`. Every field is optional; counts
/// are since the player's previous report.
struct QoEReport: Decodable, Equatable {
    /// Seconds from the page's start to the first frame (sent once).
    var startup: Double?
    /// The player's live latency now (hls.js `latency`), seconds.
    var latency: Double?
    /// Stalls (playback waiting for data after it started), and seconds spent stalled.
    var stalls: Int?
    var stalled: Double?
    /// Rendition switches.
    var switches: Int?

    /// A report whose numbers are in range (a beacon is untrusted input: anything else is refused whole).
    var isPlausible: Bool {
        func inRange(_ v: Double?, _ r: ClosedRange<Double>) -> Bool { v.map { $0.isFinite && r.contains($0) } ?? true }
        func inRange(_ v: Int?, _ r: ClosedRange<Int>) -> Bool { v.map { r.contains($0) } ?? true }
        return inRange(startup, 0...120) && inRange(latency, 0...120) && inRange(stalls, 0...1000)
            && inRange(stalled, 0...3600) && inRange(switches, 0...1000)
    }
}

/// Admission of QoE beacons: bounded in size (`maxBody`) and rate (one per `minIntervalMillis` per client address;
/// the table of addresses is bounded too), so a client cannot flood `/metrics` or the origin's memory.
final class QoEIntake: Sendable {
    static let maxBody = 1024
    /// The page reports every 10 s; twice a second per address leaves room for several viewers behind one NAT.
    static let minIntervalMillis: Int64 = 500
    static let maxClients = 10_000

    enum Verdict: Equatable { case accepted(QoEReport), tooLarge, malformed, tooFrequent }

    private let lastReport = Mutex<[String: Int64]>([:])
    private let clock: @Sendable () -> Int64

    init(clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }) {
        self.clock = clock
    }

    func judge(_ body: [UInt8], client: String) -> Verdict {
        guard body.count <= Self.maxBody else { return .tooLarge }
        let now = clock()
        let admitted = lastReport.withLock { seen -> Bool in
            if let last = seen[client], now - last < Self.minIntervalMillis { return false }
            if seen.count >= Self.maxClients {
                // Forget addresses that have not reported for a minute; if all are recent, start over.
                seen = seen.filter { now - $0.value < 60_000 }
                if seen.count >= Self.maxClients { seen.removeAll(keepingCapacity: true) }
            }
            seen[client] = now
            return true
        }
        guard admitted else { return .tooFrequent }
        guard let report = try? JSONDecoder().decode(QoEReport.self, from: Data(body)), report.isPlausible else {
            return .malformed
        }
        return .accepted(report)
    }
}
