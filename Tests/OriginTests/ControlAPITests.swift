import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import MediaCore
import MediaPresentation
import Synchronization
import Testing
@testable import Origin

/// A `StreamControl` over a registry, as the executable's `StreamManager` behaves at the HTTP boundary: the origin's
/// side of the control API (credential, methods, bodies, statuses, JSON errors) is tested without a pipeline.
final class FakeControl: StreamControl {
    let registry: PresentationRegistry
    private let removed = Mutex<Set<String>>([])
    init(_ registry: PresentationRegistry) { self.registry = registry }

    func configured() -> [String] { let r = removed.withLock { $0 }; return registry.names.filter { !r.contains($0) } }

    func add(json: [UInt8]) async throws(StreamControlError) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else {
            throw StreamControlError(.invalid, "the body is not a JSON object")
        }
        guard let name = object["name"] as? String, Rendition.isValidName(name) else {
            throw StreamControlError(.invalid, "name: missing", field: "name")
        }
        if object["window"] as? Int == 0 {
            throw StreamControlError(.invalid, "streams.\(name): window must be between 1 and 1000 segments", field: "window")
        }
        guard registry.presentation(named: name) == nil else { throw StreamControlError(.conflict, "stream '\(name)' exists", field: "name") }
        registry.register(.live(), at: name)
        return name
    }

    func patch(name: String, json: [UInt8]) async throws(StreamControlError) -> [String] {
        guard registry.presentation(named: name) != nil else { throw StreamControlError(.notFound, "no stream '\(name)'") }
        throw StreamControlError(.unprocessable, "window cannot change while the stream runs", field: "window", fields: ["window"])
    }

    func remove(name: String) async throws(StreamControlError) -> StreamRemoval {
        guard let p = registry.presentation(named: name) else { throw StreamControlError(.notFound, "no stream '\(name)'") }
        if removed.withLock({ $0.contains(name) }) {
            registry.unregister(name)
            return .unregistered
        }
        removed.withLock { _ = $0.insert(name) }
        p.finish()
        return .ended
    }
}

@Suite struct ControlAPITests {
    static let token = "api-s3cret"

    static func makeServer(token: String? = Self.token, access: AccessControl = AccessControl()) -> (PresentationRegistry, OriginServer) {
        let root = TestStream(windowSize: 3, targetDuration: 1)
        root.setInitSegment(Fixture.initBytes, tracks: Fixture.tracks)
        for i in 0..<2 { root.publish(Fixture.liveSegment(payload: 1000 + i, at: WallClock.now.millisecondsSince1970 + 60_000 + Int64(i) * 1000)) }
        // (Dated a minute ahead: the root stream stays `live`, not `idle`, however slowly the test runs.)
        let registry = PresentationRegistry(root: root.presentation)
        var logger = Logger(label: "origin-test")
        logger.logLevel = .warning
        var config = OriginConfiguration(port: 0, firstSegmentWait: .milliseconds(100))
        config.streams = FakeControl(registry)
        config.apiToken = token
        config.access = access
        return (registry, OriginServer(registry: registry, configuration: config, logger: logger))
    }

    static let auth: HTTPFields = [.authorization: "Bearer \(token)"]
    static var json: HTTPFields { var h = auth; h[.contentType] = "application/json"; return h }

    static func object(_ body: ByteBuffer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]) ?? [:]
    }

    @Test func withoutATokenThereIsNoAPI() async throws {
        let (_, server) = Self.makeServer(token: nil)
        try await server.makeApplication().test(.router) { client in
            let list = try await client.execute(uri: "/api/v1/streams", method: .get, headers: Self.auth)
            #expect(list.status == .notFound)
            let add = try await client.execute(uri: "/api/v1/streams", method: .post, headers: Self.json, body: ByteBuffer(string: "{}"))
            #expect(add.status == .notFound)
        }
    }

    @Test func theTokenIsChecked() async throws {
        let (_, server) = Self.makeServer()
        try await server.makeApplication().test(.router) { client in
            for headers: HTTPFields in [[:], [.authorization: "Bearer wrong"], [.authorization: "Bearer \(Self.token)x"],
                                        [.authorization: "Basic \(Self.token)"], [.authorization: Self.token]] {
                let r = try await client.execute(uri: "/api/v1/streams", method: .get, headers: headers)
                #expect(r.status == .unauthorized, "\(headers)")
                #expect(r.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
                #expect(String(buffer: r.body).contains("unauthorized") && !String(buffer: r.body).contains(Self.token))
            }
            let list = try await client.execute(uri: "/api/v1/streams", method: .get, headers: [.authorization: "bearer \(Self.token)"])
            #expect(list.status == .ok && list.headers[.contentType] == "application/json" && list.headers[.cacheControl] == "no-store")
            #expect((Self.object(list.body)["streams"] as? [Any])?.count == 1)
        }
    }

    @Test func addChangeEndRemove() async throws {
        let (registry, server) = Self.makeServer()
        try await server.makeApplication().test(.router) { client in
            let body = ByteBuffer(string: #"{"name": "cam4", "input": "testpattern:"}"#)
            let added = try await client.execute(uri: "/api/v1/streams", method: .post, headers: Self.json, body: body)
            #expect(added.status == .created && added.headers[.location] == "/api/v1/streams/cam4")
            #expect(Self.object(added.body)["name"] as? String == "cam4" && Self.object(added.body)["state"] as? String == "waiting")
            #expect(registry.presentation(named: "cam4") != nil)
            let again = try await client.execute(uri: "/api/v1/streams", method: .post, headers: Self.json, body: body)
            #expect(again.status == .conflict && Self.object(again.body)["field"] as? String == "name")
            let one = try await client.execute(uri: "/api/v1/streams/cam4", method: .get, headers: Self.auth)
            #expect(one.status == .ok && Self.object(one.body)["playlist"] as? String == "/cam4/index.m3u8")

            let patched = try await client.execute(uri: "/api/v1/streams/cam4", method: .patch, headers: Self.json,
                                                   body: ByteBuffer(string: #"{"window": 3}"#))
            #expect(patched.status == .unprocessableContent && Self.object(patched.body)["fields"] as? [String] == ["window"])

            let ended = try await client.execute(uri: "/api/v1/streams/cam4", method: .delete, headers: Self.auth)
            #expect(ended.status == .ok && Self.object(ended.body)["state"] as? String == "ended")
            #expect(registry.presentation(named: "cam4")?.isFinished == true, "ended, still served")
            let gone = try await client.execute(uri: "/api/v1/streams/cam4", method: .delete, headers: Self.auth)
            #expect(gone.status == .noContent && registry.presentation(named: "cam4") == nil)
            #expect(try await client.execute(uri: "/api/v1/streams/cam4", method: .get, headers: Self.auth).status == .notFound)
            #expect(try await client.execute(uri: "/api/v1/streams/cam4", method: .delete, headers: Self.auth).status == .notFound)
            #expect(try await client.execute(uri: "/api/v1/streams/cam4", method: .patch, headers: Self.json,
                                             body: ByteBuffer(string: "{}")).status == .notFound)
        }
    }

    @Test func badRequestsAreClear4xx() async throws {
        let (_, server) = Self.makeServer()
        try await server.makeApplication().test(.router) { client in
            let ok = ByteBuffer(string: #"{"name": "a"}"#)
            #expect(try await client.execute(uri: "/api/v1/streams", method: .post, headers: Self.auth, body: ok).status == .unsupportedMediaType)
            var text = Self.auth
            text[.contentType] = "text/plain"
            #expect(try await client.execute(uri: "/api/v1/streams", method: .post, headers: text, body: ok).status == .unsupportedMediaType)
            let huge = ByteBuffer(string: "{\"name\": \"" + String(repeating: "a", count: 70_000) + "\"}")
            #expect(try await client.execute(uri: "/api/v1/streams", method: .post, headers: Self.json, body: huge).status == .contentTooLarge)
            let bad = try await client.execute(uri: "/api/v1/streams", method: .post, headers: Self.json,
                                               body: ByteBuffer(string: #"{"name": "b", "window": 0}"#))
            #expect(bad.status == .badRequest && Self.object(bad.body)["field"] as? String == "window")
            #expect((Self.object(bad.body)["error"] as? String)?.contains("window must be") == true)
            let notJSON = try await client.execute(uri: "/api/v1/streams", method: .post, headers: Self.json, body: ByteBuffer(string: "{nope"))
            #expect(notJSON.status == .badRequest)
            #expect(try await client.execute(uri: "/api/v1/streams", method: .delete, headers: Self.auth).status == .methodNotAllowed)
            #expect(try await client.execute(uri: "/api/v1/streams/a", method: .post, headers: Self.json, body: ok).status == .methodNotAllowed)
            #expect(try await client.execute(uri: "/api/v1/other", method: .get, headers: Self.auth).status == .notFound)
            let weird = try await client.execute(uri: "/api/v1/streams/%3Cscript%3E", method: .delete, headers: Self.auth)
            #expect(weird.status == .notFound)
            let long = try await client.execute(uri: "/api/v1/streams/" + String(repeating: "x", count: 300), method: .delete, headers: Self.auth)
            #expect(long.status == .uriTooLong)
        }
    }

    @Test func healthAndReadiness() async throws {
        var access = AccessControl()
        access.signer = URLSigner(secret: "viewers")
        access.bearerToken = "viewers"
        let (registry, server) = Self.makeServer(access: access)
        try await server.makeApplication().test(.router) { client in
            // Open without credentials, whatever the access control.
            let h = try await client.execute(uri: "/healthz", method: .get)
            #expect(h.status == .ok && String(buffer: h.body) == "ok\n")
            #expect(try await client.execute(uri: "/readyz", method: .get).status == .ok, "the root stream is live")
            #expect(try await client.execute(uri: "/index.m3u8", method: .get).status == .forbidden)
            registry.register(.live(), at: "cam1")
            let waiting = try await client.execute(uri: "/readyz", method: .get)
            #expect(waiting.status == .serviceUnavailable && String(buffer: waiting.body) == "cam1: waiting\n")
            #expect(try await client.execute(uri: "/readyz?stream=default", method: .get).status == .ok)
            let unknown = try await client.execute(uri: "/readyz?stream=cam1,cam9", method: .get)
            #expect(String(buffer: unknown.body) == "cam1: waiting\ncam9: unknown\n")
            #expect(try await client.execute(uri: "/readyz?stream=%3Cx%3E", method: .get).status == .badRequest)
            #expect(try await client.execute(uri: "/healthz", method: .post).status == .methodNotAllowed)
            registry.presentation(named: "cam1")?.finish()
            #expect(String(buffer: try await client.execute(uri: "/readyz", method: .get).body) == "cam1: ended\n")
        }
    }
}
