import Hummingbird
import MediaCore
import MediaPresentation
import NIOCore
import Prometheus
import Synchronization

/// The origin's figures in the Prometheus text format (`GET /metrics`, exposition format 0.0.4), kept in a
/// `PrometheusCollectorRegistry` of its own (no global `MetricsSystem` bootstrap: several origins, and the tests, can
/// live in one process).
///
/// Labels: `stream` is the name the stream is served under, `default` for the one at the root (`""` when a request
/// belongs to no stream: `/`, `/streams.json`, an unknown path); `rendition` is `Rendition.name` (`""` for the
/// multivariant playlist and paths that name no rendition); `kind` is `playlist` (media, multivariant, DASH
/// manifest, the thumbnail image playlist and WebVTT list), `segment`, `part`, `init`, `thumbnail` (a tile sheet),
/// `metrics` or `other`; `status` the response's status code. Every label value
/// comes from a registered name or a fixed set, never from a request path, so a scanner cannot grow the series.
///
/// What is counted where: requests, bytes, viewers and held LL-HLS requests by the responder; segments, parts, segment
/// durations and part latency by a `PublicationObserver` on each presentation (`observe(_:named:)`); the input's
/// figures (frames, bytes, speed) by a scrape hook the executable adds (the origin knows no pipeline).
public final class OriginMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let hooks = Mutex<[@Sendable () -> Void]>([])
    private let inputs = Mutex<[String: InputTotals]>([:])

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    /// The `stream` label of a presentation registered under `name` (`""`: the root).
    public static func streamLabel(_ name: String) -> String { name.isEmpty ? "default" : name }

    /// Segment durations (seconds): around the usual 1-6 s targets.
    public static let segmentDurationBuckets: [Double] = [0.25, 0.5, 1, 1.5, 2, 3, 4, 6, 10]
    /// Part publication latency (seconds).
    public static let partLatencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]

    // MARK: Names (one place, so a help text is always the same: the registry insists)

    private static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "hls_origin", metricName: metric, unitName: unit, helpText: help)
    }
    static var requests: MetricNameDescriptor { name("http_requests", "total", "HTTP requests answered, by stream, rendition, object kind and status.") }
    static var sentBytes: MetricNameDescriptor { name("http_sent", "bytes_total", "Response body bytes sent (HEAD and 304 send none).") }
    static var viewers: MetricNameDescriptor { name("viewers", "", "Client addresses that fetched a playlist or segment of the stream in the last 10 s.") }
    static var blocked: MetricNameDescriptor { name("llhls_blocked_requests", "", "LL-HLS requests held now (blocking playlist reloads, parts not yet published).") }
    static var segments: MetricNameDescriptor { name("segments_published", "total", "Segments published to the live window.") }
    static var parts: MetricNameDescriptor { name("parts_published", "total", "LL-HLS parts published to the live window.") }
    static var segmentDuration: MetricNameDescriptor { name("segment_duration", "seconds", "Durations of published segments.") }
    static var partLatency: MetricNameDescriptor {
        name("part_publish_latency", "seconds", "Wall time from the arrival of the sample that closed a part to the part's publication.")
    }
    static var inputFrames: MetricNameDescriptor { name("input_video_frames", "total", "Video frames read from the input (test pattern: generated).") }
    static var inputBytes: MetricNameDescriptor { name("input", "bytes_total", "Encoded sample bytes handed to the segmenter (after transcoding, if any).") }
    static var inputMedia: MetricNameDescriptor { name("input_media", "seconds_total", "Media time read from the input.") }
    static var reconnects: MetricNameDescriptor { name("input_reconnects", "total", "Times a network input was taken up again after its publisher went away.") }
    static var frameRate: MetricNameDescriptor { name("input_frame_rate", "", "Video frames per wall-clock second since the previous scrape (first scrape: since the start).") }
    static var bitRate: MetricNameDescriptor { name("input", "bytes_per_second", "Input bytes (encoded samples) per wall-clock second (x8: the input bit rate) since the previous scrape (first scrape: since the start).") }
    static var qoeReports: MetricNameDescriptor { name("qoe_reports", "total", "Player QoE beacons received, by result (accepted, malformed, too_large, too_frequent).") }
    static var qoeStartup: MetricNameDescriptor { name("qoe_startup", "seconds", "Players' time from page start to the first frame.") }
    static var qoeLatency: MetricNameDescriptor { name("qoe_latency", "seconds", "Players' live latency (hls.js latency) when they reported.") }
    static var qoeStalls: MetricNameDescriptor { name("qoe_stalls", "total", "Playback stalls players reported.") }
    static var qoeStalled: MetricNameDescriptor { name("qoe_stalled", "seconds_total", "Seconds players reported spending stalled.") }
    static var qoeSwitches: MetricNameDescriptor { name("qoe_rendition_switches", "total", "Rendition switches players reported.") }
    static let qoeStartupBuckets: [Double] = [0.25, 0.5, 1, 1.5, 2, 3, 5, 10]
    static let qoeLatencyBuckets: [Double] = [0.5, 1, 1.5, 2, 3, 4, 6, 10, 20]

    static var speed: MetricNameDescriptor { name("encode_speed", "ratio", "Media seconds processed per wall-clock second since the previous scrape (1 = real time).") }

    // MARK: Requests

    /// The counters of one label set, looked up once (the registry validates names and builds keys per lookup).
    private struct RequestKey: Hashable {
        let stream: String, rendition: String, kind: String, status: Int
    }
    private let requestCounters = Mutex<[RequestKey: RequestCounters]>([:])

    /// Counts one answered request (`bytes`: body bytes sent).
    func countRequest(stream: String, rendition: String, kind: String, status: Int, bytes: Int) {
        requestCounters(stream: stream, rendition: rendition, kind: kind, status: status).count(bytes: bytes)
    }

    /// The two counters of one label set (the fast path keeps them per connection: no lookup per request).
    struct RequestCounters {
        let requests: Counter
        let bytes: Counter
        func count(bytes sent: Int) {
            requests.increment()
            if sent > 0 { bytes.increment(by: Int64(sent)) }
        }
    }

    func requestCounters(stream: String, rendition: String, kind: String, status: Int) -> RequestCounters {
        let key = RequestKey(stream: stream, rendition: rendition, kind: kind, status: status)
        if let c = requestCounters.withLock({ $0[key] }) { return c }
        let made = RequestCounters(
            requests: registry.makeCounter(descriptor: Self.requests, labels: [
                ("stream", stream), ("rendition", rendition), ("kind", kind), ("status", String(status))]),
            bytes: registry.makeCounter(descriptor: Self.sentBytes, labels: [("stream", stream), ("rendition", rendition), ("kind", kind)]))
        requestCounters.withLock { $0[key] = made }
        return made
    }

    /// One more (`+1`) or one fewer (`-1`) LL-HLS request held for `stream`/`rendition`.
    func blocked(stream: String, rendition: String, _ delta: Double) {
        let g = registry.makeGauge(descriptor: Self.blocked, labels: [("stream", stream), ("rendition", rendition)])
        if delta >= 0 { g.increment(by: delta) } else { g.decrement(by: -delta) }
    }

    // MARK: Player QoE

    /// Counts a beacon's verdict and adds an accepted report's figures to the stream's.
    func countQoE(stream: String, verdict: QoEIntake.Verdict) {
        let result = switch verdict {
        case .accepted: "accepted"
        case .malformed: "malformed"
        case .tooLarge: "too_large"
        case .tooFrequent: "too_frequent"
        }
        let labels = [("stream", stream)]
        registry.makeCounter(descriptor: Self.qoeReports, labels: labels + [("result", result)]).increment()
        guard case .accepted(let r) = verdict else { return }
        if let v = r.startup {
            registry.makeValueHistogram(descriptor: Self.qoeStartup, labels: labels, buckets: Self.qoeStartupBuckets).record(v)
        }
        if let v = r.latency {
            registry.makeValueHistogram(descriptor: Self.qoeLatency, labels: labels, buckets: Self.qoeLatencyBuckets).record(v)
        }
        registry.makeCounter(descriptor: Self.qoeStalls, labels: labels).increment(by: Int64(r.stalls ?? 0))
        registry.makeCounter(descriptor: Self.qoeStalled, labels: labels).increment(by: r.stalled ?? 0)
        registry.makeCounter(descriptor: Self.qoeSwitches, labels: labels).increment(by: Int64(r.switches ?? 0))
    }

    // MARK: Publications

    /// Counts what `presentation` publishes under the stream `name` (`""`: the root).
    public func observe(_ presentation: LivePresentation, named name: String) {
        presentation.observePublications(PublicationMetrics(metrics: self, stream: Self.streamLabel(name)))
    }

    struct PublicationMetrics: PublicationObserver {
        let metrics: OriginMetrics
        let stream: String

        func didPublish(segment: SegmentInfo, rendition: Rendition) {
            let labels = [("stream", stream), ("rendition", rendition.name)]
            let r = metrics.registry
            r.makeCounter(descriptor: OriginMetrics.segments, labels: labels).increment()
            r.makeValueHistogram(descriptor: OriginMetrics.segmentDuration, labels: labels,
                                 buckets: OriginMetrics.segmentDurationBuckets).record(segment.duration.seconds)
        }

        func didPublish(part: PartInfo, rendition: Rendition) {
            let labels = [("stream", stream), ("rendition", rendition.name)]
            let r = metrics.registry
            r.makeCounter(descriptor: OriginMetrics.parts, labels: labels).increment()
            if let closed = part.closedAt {
                let ms = max(0, WallClock.now.millisecondsSince1970 - closed.millisecondsSince1970)
                r.makeValueHistogram(descriptor: OriginMetrics.partLatency, labels: labels,
                                     buckets: OriginMetrics.partLatencyBuckets).record(Double(ms) / 1000)
            }
        }
    }

    // MARK: Input (set by the executable's scrape hook)

    /// Runs before every scrape (the executable reads its pipelines' figures here).
    public func addScrapeHook(_ hook: @escaping @Sendable () -> Void) {
        hooks.withLock { $0.append(hook) }
    }

    struct InputTotals {
        var frames: Int64 = 0
        var bytes: Int64 = 0
        var mediaSeconds: Double = 0
        var wallSeconds: Double = 0
        var reconnects = 0
    }

    /// The input figures of stream `name` (`""`: the root), as running totals since its start; counters move by
    /// the difference to the previous call, rates cover the time since it.
    public func updateInput(stream name: String, videoFrames: Int64, inputBytes: Int64, mediaSeconds: Double,
                            wallSeconds: Double, reconnects: Int) {
        let now = InputTotals(frames: videoFrames, bytes: inputBytes, mediaSeconds: mediaSeconds, wallSeconds: wallSeconds,
                              reconnects: reconnects)
        let before = inputs.withLock { i in
            let b = i[name] ?? InputTotals()
            i[name] = now
            return b
        }
        let labels = [("stream", Self.streamLabel(name))]
        let r = registry
        r.makeCounter(descriptor: Self.inputFrames, labels: labels).increment(by: max(0, now.frames - before.frames))
        r.makeCounter(descriptor: Self.inputBytes, labels: labels).increment(by: max(0, now.bytes - before.bytes))
        r.makeCounter(descriptor: Self.inputMedia, labels: labels).increment(by: max(0, now.mediaSeconds - before.mediaSeconds))
        r.makeCounter(descriptor: Self.reconnects, labels: labels).increment(by: Int64(max(0, now.reconnects - before.reconnects)))
        let wall = now.wallSeconds - before.wallSeconds
        let frameRate = wall > 0 ? Double(now.frames - before.frames) / wall : 0
        let bitRate = wall > 0 ? Double(now.bytes - before.bytes) / wall : 0
        let speed = wall > 0 ? (now.mediaSeconds - before.mediaSeconds) / wall : 0
        r.makeGauge(descriptor: Self.frameRate, labels: labels).set(max(0, frameRate))
        r.makeGauge(descriptor: Self.bitRate, labels: labels).set(max(0, bitRate))
        r.makeGauge(descriptor: Self.speed, labels: labels).set(max(0, speed))
    }

    /// Forgets stream `name`'s input totals: a stream added again under the name counts from its own start.
    public func forgetInput(stream name: String) {
        _ = inputs.withLock { $0.removeValue(forKey: name) }
    }

    // MARK: Exposition

    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The text of one scrape: runs the hooks, sets the viewer gauges, emits the registry. Walks no live window.
    func scrape(_ presentations: PresentationRegistry, _ stats: OriginStats) -> PreparedResponse {
        let hooks = self.hooks.withLock { $0 }
        hooks.forEach { $0() }
        let byStream = stats.activeViewersByStream()
        for name in Set(presentations.names).union(byStream.keys) {
            registry.makeGauge(descriptor: Self.viewers, labels: [("stream", Self.streamLabel(name))])
                .set(Double(byStream[name] ?? 0))
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16_384)
        registry.emit(into: &bytes)
        let body = ByteBuffer(bytes: bytes)
        return PreparedResponse(headers: ResponseHeaders.make(contentType: Self.contentType, cacheControl: "no-store",
                                                              contentLength: body.readableBytes),
                                body: body)
    }
}
