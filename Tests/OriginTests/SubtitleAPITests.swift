import Foundation
import Hummingbird
import HummingbirdTesting
import MediaCore
import MediaPresentation
import Testing
@testable import Origin

/// `POST /NAME/subtitles`: the body's checks (pure), and the route behind the same credential as `POST /NAME/events`.
@Suite struct SubtitleAPITests {
    static func cue(_ json: String, languages: [String] = ["en", "fr"]) throws(EventRequest.Refusal) -> PostedCue {
        try SubtitleRequest.cue(Array(json.utf8), languages: languages)
    }

    static func refusal(_ json: String, languages: [String] = ["en", "fr"]) -> EventRequest.Refusal? {
        do {
            _ = try cue(json, languages: languages)
            return nil
        } catch {
            return error
        }
    }

    @Test func aCueFromTheLiveEdge() throws {
        let c = try Self.cue(#"{"language": "fra", "text": "Bonjour\r\n\r\nà tous", "duration": 2.5, "delay": 1, "id": "c1", "settings": "line:0"}"#)
        #expect(c.language == "fr")
        #expect(c.cue == SubtitleCue(start: .milliseconds(1000), end: .milliseconds(3500), text: "Bonjour\nà tous", id: "c1",
                                     settings: "line:0"))
        // Without a language: the first subtitle rendition's; without a delay: now.
        let d = try Self.cue(#"{"text": "Hi", "duration": 1}"#)
        #expect(d.language == "en" && d.cue.start == .milliseconds(0))
    }

    @Test func refusalsNameTheirField() {
        #expect(Self.refusal(#"{"text": "x"}"#)?.status == .badRequest)
        #expect(Self.refusal(#"not json"#)?.status == .badRequest)
        #expect(Self.refusal(#"{"text": "", "duration": 1}"#)?.field == "text")
        #expect(Self.refusal(#"{"text": "\n\n", "duration": 1}"#)?.field == "text")
        #expect(Self.refusal(#"{"text": "x", "duration": 0}"#)?.field == "duration")
        #expect(Self.refusal(#"{"text": "x", "duration": 61}"#)?.field == "duration")
        #expect(Self.refusal(#"{"text": "x", "duration": 1, "delay": -1}"#)?.field == "delay")
        #expect(Self.refusal(#"{"text": "x", "duration": 1, "language": "x y"}"#)?.field == "language")
        #expect(Self.refusal(#"{"text": "x", "duration": 1, "settings": "a --> b"}"#)?.field == "settings")
        #expect(Self.refusal(#"{"text": "x", "duration": 1, "id": "a\nb"}"#)?.field == "id")
        // A language the stream has no rendition in, or a stream without subtitles: 422.
        let de = Self.refusal(#"{"text": "x", "duration": 1, "language": "de"}"#)
        #expect(de?.status == .unprocessableContent && de?.message == "the stream has no subtitle rendition in de (it has en, fr)")
        #expect(Self.refusal(#"{"text": "x", "duration": 1}"#, languages: [])?.status == .unprocessableContent)
    }

    @Test func routeNeedsTheToken() async throws {
        let (_, server) = ControlAPITests.makeServer()
        try await server.makeApplication().test(.router) { client in
            let body = ByteBuffer(string: #"{"text": "Hi", "duration": 1}"#)
            try await client.execute(uri: "/subtitles", method: .post, headers: [.contentType: "application/json"], body: body) { r in
                #expect(r.status == .unauthorized)
            }
            // Authorized, but this stream has no subtitle rendition.
            try await client.execute(uri: "/subtitles", method: .post, headers: ControlAPITests.json, body: body) { r in
                #expect(r.status == .unprocessableContent)
            }
            try await client.execute(uri: "/subtitles", method: .get, headers: ControlAPITests.auth) { r in
                #expect(r.status == .methodNotAllowed)
            }
        }
        let (_, open) = ControlAPITests.makeServer(token: nil)
        try await open.makeApplication().test(.router) { client in
            let r = try await client.execute(uri: "/subtitles", method: .post, headers: ControlAPITests.json,
                                             body: ByteBuffer(string: #"{"text": "Hi", "duration": 1}"#))
            #expect(r.status == .notFound)
        }
    }
}
