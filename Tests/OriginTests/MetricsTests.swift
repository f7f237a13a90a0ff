import Foundation
import HLS
import Hummingbird
import HummingbirdTesting
import Logging
import MediaCore
import MediaPresentation
import Synchronization
import Testing
@testable import Origin

/// `GET /metrics`: the Prometheus text exposition, its names and labels, and counters that move with requests and
/// publications. No timing assertions.
@Suite struct MetricsTests {
    /// One sample line: `name{label="value",...} value`.
    struct Sample: Hashable {
        let name: String
        let labels: [String: String]
    }

    /// A strict reader of the text format 0.0.4 as the origin writes it: every line is `# HELP`, `# TYPE` or a
    /// sample; every sample's family has HELP and TYPE lines before it. Returns the samples' values.
    static func parse(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [Sample: Double] {
        var samples: [Sample: Double] = [:]
        var typed: [String: String] = [:]
        var helped = Set<String>()
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("# HELP ") {
                helped.insert(String(line.dropFirst(7).prefix { $0 != " " }))
                continue
            }
            if line.hasPrefix("# TYPE ") {
                let f = line.dropFirst(7).split(separator: " ")
                #expect(f.count == 2 && ["counter", "gauge", "histogram"].contains(String(f[1])), "\(line)", sourceLocation: sourceLocation)
                if f.count == 2 { typed[String(f[0])] = String(f[1]) }
                continue
            }
            #expect(!line.hasPrefix("#"), "\(line)", sourceLocation: sourceLocation)
            var name = "", labels: [String: String] = [:], rest = Substring(line)
            if let brace = line.firstIndex(of: "{") {
                name = String(line[..<brace])
                guard let close = line.lastIndex(of: "}") else { Issue.record("no }: \(line)", sourceLocation: sourceLocation); continue }
                for pair in line[line.index(after: brace)..<close].split(separator: ",") {
                    let kv = pair.split(separator: "=", maxSplits: 1)
                    guard kv.count == 2, kv[1].hasPrefix("\""), kv[1].hasSuffix("\"") else {
                        Issue.record("bad label \(pair) in \(line)", sourceLocation: sourceLocation)
                        continue
                    }
                    labels[String(kv[0])] = String(kv[1].dropFirst().dropLast())
                }
                rest = line[line.index(after: close)...]
            } else {
                name = String(line.prefix { $0 != " " })
                rest = line.dropFirst(name.count)
            }
            #expect(name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }, "\(line)",
                    sourceLocation: sourceLocation)
            let value = Double(rest.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "+Inf", with: "inf"))
            #expect(value != nil, "\(line)", sourceLocation: sourceLocation)
            var family = name
            for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) && typed[String(name.dropLast(suffix.count))] == "histogram" {
                family = String(name.dropLast(suffix.count))
            }
            #expect(typed[family] != nil && helped.contains(family), "no TYPE/HELP before \(line)", sourceLocation: sourceLocation)
            samples[Sample(name: name, labels: labels)] = value ?? .nan
        }
        return samples
    }

    static func server(registry: PresentationRegistry, metrics: OriginMetrics?) -> OriginServer {
        var logger = Logger(label: "origin-test")
        logger.logLevel = .warning
        var c = OriginConfiguration(port: 0, firstSegmentWait: .milliseconds(100))
        c.metrics = metrics
        return OriginServer(registry: registry, configuration: c, logger: logger)
    }

    @Test func noMetricsWithoutConfiguration() async throws {
        let stream = TestStream()
        let server = Self.server(registry: PresentationRegistry(root: stream.presentation), metrics: nil)
        try await server.makeApplication().test(.router) { client in
            let r = try await client.execute(uri: "/metrics", method: .get)
            #expect(r.status == .notFound)
        }
    }

    @Test func requestsPublicationsAndViewersAreExposed() async throws {
        let metrics = OriginMetrics()
        let stream = TestStream(partTarget: .milliseconds(333))
        metrics.observe(stream.presentation, named: "")
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        try stream.presentation.consume(.part(rendition: 0, PartInfo(
            segmentSequence: 0, index: 0, duration: .milliseconds(333), byteCount: 10, independent: true,
            closedAt: WallClock(millisecondsSince1970: WallClock.now.millisecondsSince1970 - 20)), bytes: [UInt8](repeating: 1, count: 10)))
        stream.publish(Fixture.liveSegment(payload: 1000))
        stream.publish(Fixture.liveSegment(seconds: 2, payload: 1001))
        let server = Self.server(registry: PresentationRegistry(root: stream.presentation), metrics: metrics)

        try await server.makeApplication().test(.router) { client in
            #expect(try await client.execute(uri: "/stream.m3u8", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/seg0.m4s", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/seg0.m4s", method: .head).status == .ok)
            #expect(try await client.execute(uri: "/seg99.m4s", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/index.m3u8", method: .get).status == .ok)
            let r = try await client.execute(uri: "/metrics", method: .get)
            #expect(r.status == .ok)
            #expect(r.headers[.contentType] == "text/plain; version=0.0.4; charset=utf-8")
            #expect(r.headers[.cacheControl] == "no-store")
            let s = Self.parse(String(buffer: r.body))
            let seg = ["stream": "default", "rendition": "stream", "kind": "segment"]
            #expect(s[Sample(name: "hls_origin_http_requests_total", labels: seg.merging(["status": "200"]) { $1 })] == 2)
            #expect(s[Sample(name: "hls_origin_http_requests_total", labels: seg.merging(["status": "404"]) { $1 })] == 1)
            #expect(s[Sample(name: "hls_origin_http_requests_total",
                             labels: ["stream": "default", "rendition": "stream", "kind": "playlist", "status": "200"])] == 1)
            #expect(s[Sample(name: "hls_origin_http_requests_total",
                             labels: ["stream": "default", "rendition": "", "kind": "playlist", "status": "200"])] == 1)
            // GET sends the segment, HEAD nothing; the 404 sends its text.
            let segBytes = Double(try #require(stream.segmentBytes(0)).readableBytes)
            #expect(s[Sample(name: "hls_origin_http_sent_bytes_total", labels: seg)] == segBytes + Double("Not Found\n".utf8.count))
            let rendition = ["stream": "default", "rendition": "stream"]
            #expect(s[Sample(name: "hls_origin_segments_published_total", labels: rendition)] == 2)
            #expect(s[Sample(name: "hls_origin_parts_published_total", labels: rendition)] == 1)
            #expect(s[Sample(name: "hls_origin_segment_duration_seconds_count", labels: rendition)] == 2)
            #expect(s[Sample(name: "hls_origin_segment_duration_seconds_sum", labels: rendition)] == 3)
            #expect(s[Sample(name: "hls_origin_segment_duration_seconds_bucket", labels: rendition.merging(["le": "1.0"]) { $1 })] == 1)
            #expect(s[Sample(name: "hls_origin_segment_duration_seconds_bucket", labels: rendition.merging(["le": "+Inf"]) { $1 })] == 2)
            #expect(s[Sample(name: "hls_origin_part_publish_latency_seconds_count", labels: rendition)] == 1)
            #expect(s[Sample(name: "hls_origin_viewers", labels: ["stream": "default"])] != nil)
            #expect(s[Sample(name: "hls_origin_llhls_blocked_requests", labels: rendition)] == nil)  // none held yet

            // The scrape itself is counted by the next one.
            let again = Self.parse(String(buffer: try await client.execute(uri: "/metrics", method: .get).body))
            #expect(again[Sample(name: "hls_origin_http_requests_total",
                                 labels: ["stream": "", "rendition": "", "kind": "metrics", "status": "200"])] == 1)
        }
    }

    @Test func namedStreamsAndInputFigures() async throws {
        let metrics = OriginMetrics()
        let registry = PresentationRegistry()
        let cam = TestStream()
        registry.register(cam.presentation, at: "cam1")
        metrics.observe(cam.presentation, named: "cam1")
        cam.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        cam.publish(Fixture.liveSegment())
        let frames = Mutex<Int64>(0)
        metrics.addScrapeHook {
            let f = frames.withLock { $0 += 30; return $0 }
            metrics.updateInput(stream: "cam1", videoFrames: f, inputBytes: f * 100, mediaSeconds: Double(f) / 30,
                                wallSeconds: Double(f) / 30, reconnects: 0)
        }
        let server = Self.server(registry: registry, metrics: metrics)
        try await server.makeApplication().test(.router) { client in
            #expect(try await client.execute(uri: "/cam1/seg0.m4s", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/nope/seg0.m4s", method: .get).status == .notFound)
            let first = Self.parse(String(buffer: try await client.execute(uri: "/metrics", method: .get).body))
            let second = Self.parse(String(buffer: try await client.execute(uri: "/metrics", method: .get).body))
            let cam1 = ["stream": "cam1"]
            #expect(first[Sample(name: "hls_origin_input_video_frames_total", labels: cam1)] == 30)
            #expect(second[Sample(name: "hls_origin_input_video_frames_total", labels: cam1)] == 60)
            #expect(second[Sample(name: "hls_origin_input_bytes_total", labels: cam1)] == 6000)
            #expect(second[Sample(name: "hls_origin_input_frame_rate", labels: cam1)] == 30)
            #expect(second[Sample(name: "hls_origin_input_bytes_per_second", labels: cam1)] == 3000)
            #expect(second[Sample(name: "hls_origin_encode_speed_ratio", labels: cam1)] == 1)
            #expect(second[Sample(name: "hls_origin_segments_published_total", labels: ["stream": "cam1", "rendition": "stream"])] == 1)
            #expect(second[Sample(name: "hls_origin_http_requests_total",
                                  labels: ["stream": "cam1", "rendition": "stream", "kind": "segment", "status": "200"])] == 1)
            // A path under no stream: no stream label value, no path text in any label.
            #expect(second[Sample(name: "hls_origin_http_requests_total",
                                  labels: ["stream": "", "rendition": "", "kind": "other", "status": "404"])] == 1)
            #expect(second[Sample(name: "hls_origin_viewers", labels: cam1)] != nil)
        }
    }

    @Test func heldPartRequestIsAGaugeUntilAnswered() async throws {
        let metrics = OriginMetrics()
        let stream = TestStream(partTarget: .milliseconds(333))
        metrics.observe(stream.presentation, named: "")
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        stream.publish(Fixture.liveSegment())
        var logger = Logger(label: "origin-test")
        logger.logLevel = .warning
        var c = OriginConfiguration(port: 0, firstSegmentWait: .milliseconds(100), partWait: .seconds(10))
        c.metrics = metrics
        let server = OriginServer(registry: PresentationRegistry(root: stream.presentation), configuration: c, logger: logger)
        let held = Sample(name: "hls_origin_llhls_blocked_requests", labels: ["stream": "default", "rendition": "stream"])
        try await server.makeApplication().test(.router) { client in
            async let part = client.execute(uri: "/seg1.0.m4s", method: .get)
            // Waits (bounded) until the request is held; no assertion on how long that takes.
            var seen: Double?
            for _ in 0..<200 where seen != 1 {
                seen = Self.parse(String(buffer: try await client.execute(uri: "/metrics", method: .get).body))[held]
                if seen != 1 { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(seen == 1)
            stream.publishPart(LivePart(bytes: [1, 2, 3], duration: .milliseconds(333), independent: true))
            #expect(try await part.status == .ok)
            let after = Self.parse(String(buffer: try await client.execute(uri: "/metrics", method: .get).body))
            #expect(after[held] == 0)
            #expect(after[Sample(name: "hls_origin_http_requests_total",
                                 labels: ["stream": "default", "rendition": "stream", "kind": "part", "status": "200"])] == 1)
        }
    }
}
