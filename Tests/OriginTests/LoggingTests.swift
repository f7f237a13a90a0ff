import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing
import MediaPresentation
@testable import Origin

final class CapturedLogs: Sendable {
    let events = Mutex<[(message: String, metadata: Logger.Metadata)]>([])
}

struct CapturingLogHandler: LogHandler {
    let sink: CapturedLogs
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        sink.events.withLock { $0.append(("\(event.message)", merged)) }
    }
}

@Suite struct RequestLoggingTests {
    @Test func requestsAreLoggedAtDebugWithRequestMetadata() async throws {
        let sink = CapturedLogs()
        let logger = Logger(label: "capture") { _ in CapturingLogHandler(sink: sink) }
        let stream = TestStream(windowSize: 3)
        stream.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        stream.publish(Fixture.liveSegment())
        let server = stream.server(configuration: .init(port: 0), logger: logger)
        try await server.makeApplication().test(.live) { client in
            let ok = try await client.execute(uri: "/seg0.m4s", method: .get)
            let missing = try await client.execute(uri: "/missing", method: .get)
            #expect(ok.status == .ok)
            #expect(missing.status == .notFound)
        }
        let requests = sink.events.withLock { $0.filter { $0.message == "request" } }
        #expect(requests.count == 2)
        #expect(requests.first?.metadata["path"] == "/seg0.m4s")
        #expect(requests.first?.metadata["status"] == "200")
        #expect(requests.last?.metadata["status"] == "404")
        #expect(requests.first?.metadata["hb.request.id"] != nil)   // Hummingbird's id survives the wrapper
        #expect(requests.first?.metadata["remote"]?.description.hasPrefix("[IPv4]127.0.0.1") == true)
    }
}
