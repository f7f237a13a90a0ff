import Foundation
import Hummingbird
import HummingbirdTesting
import MediaPresentation
import Synchronization
import Testing
@testable import Origin

/// Player QoE beacons: `POST qoe` admitted by size, rate and plausibility, and added up in `/metrics`.
@Suite struct QoETests {
    final class Clock: Sendable {
        let now = Atomic<Int64>(1_000_000)
        var read: @Sendable () -> Int64 { { [self] in now.load(ordering: .relaxed) } }
    }

    @Test func intakeBoundsSizeRateAndValues() {
        let clock = Clock()
        let intake = QoEIntake(clock: clock.read)
        let good = Array(#"{"startup":0.6,"latency":1.3,"stalls":1,"stalled":0.5,"switches":2}"#.utf8)
        #expect(intake.judge(good, client: "a") == .accepted(QoEReport(startup: 0.6, latency: 1.3, stalls: 1, stalled: 0.5, switches: 2)))
        #expect(intake.judge(good, client: "a") == .tooFrequent)
        #expect(intake.judge(good, client: "b") != .tooFrequent)
        clock.now.add(QoEIntake.minIntervalMillis, ordering: .relaxed)
        #expect(intake.judge(Array("not json".utf8), client: "a") == .malformed)
        clock.now.add(QoEIntake.minIntervalMillis, ordering: .relaxed)
        #expect(intake.judge(Array(#"{"latency":-1}"#.utf8), client: "a") == .malformed)
        clock.now.add(QoEIntake.minIntervalMillis, ordering: .relaxed)
        #expect(intake.judge(Array(#"{"stalls":1e9}"#.utf8), client: "a") == .malformed)
        #expect(intake.judge([UInt8](repeating: 32, count: QoEIntake.maxBody + 1), client: "c") == .tooLarge)
        // The table of addresses stays bounded.
        for i in 0..<(QoEIntake.maxClients + 10) { _ = intake.judge(Array("{}".utf8), client: "client\(i)") }
    }

    @Test func beaconsAreCountedInMetrics() async throws {
        let metrics = OriginMetrics()
        let registry = PresentationRegistry()
        let cam = TestStream()
        registry.register(cam.presentation, at: "cam1")
        cam.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        cam.publish(Fixture.liveSegment())
        let server = MetricsTests.server(registry: registry, metrics: metrics)
        try await server.makeApplication().test(.router) { client in
            let report = ByteBuffer(string: #"{"startup":0.7,"latency":1.2,"stalls":2,"stalled":1.5,"switches":1}"#)
            #expect(try await client.execute(uri: "/cam1/qoe", method: .post, body: report).status == .noContent)
            #expect(try await client.execute(uri: "/cam1/qoe", method: .get).status == .methodNotAllowed)
            #expect(try await client.execute(uri: "/cam1/qoe", method: .post,
                                             body: ByteBuffer(repeating: 32, count: 4096)).status == .contentTooLarge)
            #expect(try await client.execute(uri: "/cam1/seg0.m4s", method: .post).status == .methodNotAllowed)
            #expect(try await client.execute(uri: "/nope/qoe", method: .post, body: report).status == .notFound)
            let s = MetricsTests.parse(String(buffer: try await client.execute(uri: "/metrics", method: .get).body))
            typealias S = MetricsTests.Sample
            let cam1 = ["stream": "cam1"]
            #expect(s[S(name: "hls_origin_qoe_reports_total", labels: ["stream": "cam1", "result": "accepted"])] == 1)
            #expect(s[S(name: "hls_origin_qoe_reports_total", labels: ["stream": "cam1", "result": "too_large"])] == 1)
            #expect(s[S(name: "hls_origin_qoe_latency_seconds_count", labels: cam1)] == 1)
            #expect(s[S(name: "hls_origin_qoe_startup_seconds_sum", labels: cam1)] == 0.7)
            #expect(s[S(name: "hls_origin_qoe_stalls_total", labels: cam1)] == 2)
            #expect(s[S(name: "hls_origin_qoe_stalled_seconds_total", labels: cam1)] == 1.5)
            #expect(s[S(name: "hls_origin_qoe_rendition_switches_total", labels: cam1)] == 1)
            #expect(s[S(name: "hls_origin_http_requests_total",
                        labels: ["stream": "cam1", "rendition": "", "kind": "qoe", "status": "204"])] == 1)
        }
    }
}
