import Foundation
import Hummingbird
import HummingbirdTesting
import MediaCore
import MediaPresentation
import Testing
@testable import Origin

/// `POST /NAME/events`: the body's checks (pure), and the route behind the API token.
@Suite struct EventAPITests {
    static let now = WallClock(millisecondsSince1970: 1_764_192_610_000)  // 2025-11-26T21:30:10.000Z

    static func event(_ json: String) throws(EventRequest.Refusal) -> TimedEvent {
        try EventRequest.event(Array(json.utf8), now: now, generatedID: { "generated" })
    }

    static func refusal(_ json: String) -> EventRequest.Refusal? {
        do {
            _ = try event(json)
            return nil
        } catch {
            return error
        }
    }

    @Test func spliceOutBecomesAnImmediateSpliceInsert() throws {
        let e = try Self.event(#"{"type": "splice_out", "id": "break-7", "duration": 30, "delay": 2}"#)
        #expect(e.id == "break-7" && e.kind == .spliceOut)
        #expect(e.time == .liveEdge(after: .milliseconds(2000)))
        #expect(e.plannedDuration == MediaTime(value: 2_700_000, timescale: 90_000))
        let s = try SpliceInfoSection(e.section)
        guard case .insert(let i) = s.command else { Issue.record("not a splice_insert"); return }
        #expect(i.outOfNetwork && i.immediate && i.breakDuration == 2_700_000 && i.eventID == EventRequest.eventID("break-7"))
    }

    @Test func spliceInAndTimeSignal() throws {
        let back = try Self.event(#"{"type": "splice_in", "id": "break-7"}"#)
        #expect(back.kind == .spliceIn && back.plannedDuration == nil)
        let signal = try Self.event(#"{"type": "time_signal", "segmentation_type_id": 16, "start_date": "2025-11-26T21:30:15.500Z"}"#)
        #expect(signal.kind == .timeSignal && signal.id == "generated")
        #expect(signal.time == .liveEdge(after: .milliseconds(5500)))
        let s = try SpliceInfoSection(signal.section)
        #expect(s.command == .timeSignal(nil) && s.segmentations.first?.typeID == 16)
        // A placement opportunity start opens a break.
        #expect(try Self.event(#"{"type": "time_signal", "duration": 10}"#).kind == .spliceOut)
    }

    @Test func malformedBodiesAre400() {
        for body in ["", "[]", "{", #"{"id": "x"}"#, #"{"type": "splice_sideways"}"#, #"{"type": "splice_out", "duration": -1}"#,
                     #"{"type": "splice_out", "duration": "30"}"#, #"{"type": "splice_out", "id": "has space"}"#,
                     #"{"type": "splice_in", "duration": 5}"#, #"{"type": "time_signal", "segmentation_type_id": 300}"#,
                     #"{"type": "splice_out", "start_date": "yesterday"}"#, #"{"type": "splice_out", "delay": 7200}"#,
                     #"{"type": "splice_out", "delay": 1, "start_date": "2025-11-26T21:30:15Z"}"#] {
            #expect(Self.refusal(body)?.status == .badRequest, "\(body)")
        }
    }

    @Test func aCueInThePastIs422() {
        #expect(Self.refusal(#"{"type": "splice_out", "delay": -5}"#)?.status == .unprocessableContent)
        #expect(Self.refusal(#"{"type": "splice_out", "start_date": "2025-11-26T21:29:00Z"}"#)?.status == .unprocessableContent)
        // Within the tolerance of a client's clock: now.
        #expect(Self.refusal(#"{"type": "splice_out", "start_date": "2025-11-26T21:30:09.500Z"}"#) == nil)
    }

    @Test func routeNeedsTheTokenAndAnswersTheId() async throws {
        let (registry, server) = ControlAPITests.makeServer()
        let p = try #require(registry.presentation(named: ""))
        try await server.makeApplication().test(.router) { client in
            let body = ByteBuffer(string: #"{"type": "splice_out", "id": "b1", "duration": 30}"#)
            let json: HTTPFields = [.contentType: "application/json"]
            try await client.execute(uri: "/events", method: .post, headers: json, body: body) { r in
                #expect(r.status == .unauthorized)
            }
            try await client.execute(uri: "/events", method: .post, headers: ControlAPITests.json, body: body) { r in
                #expect(r.status == .created)
                #expect(String(buffer: r.body).contains(#""id":"b1""#))
            }
            try await client.execute(uri: "/events", method: .post, headers: ControlAPITests.json, body: body) { r in
                #expect(r.status == .conflict)
            }
            let big = #"{"type": "splice_out", "pad": ""# + String(repeating: "x", count: 70_000) + #""}"#
            try await client.execute(uri: "/events", method: .post, headers: ControlAPITests.json, body: ByteBuffer(string: big)) { r in
                #expect(r.status == .contentTooLarge)
            }
            try await client.execute(uri: "/events", method: .get, headers: ControlAPITests.auth) { r in
                #expect(r.status == .methodNotAllowed)
            }
        }
        #expect(p.eventInbox.take().map(\.id) == ["b1"])
    }

    @Test func withoutATokenThereIsNoEventsRoute() async throws {
        let (_, server) = ControlAPITests.makeServer(token: nil)
        try await server.makeApplication().test(.router) { client in
            let r = try await client.execute(uri: "/events", method: .post, headers: ControlAPITests.json,
                                             body: ByteBuffer(string: #"{"type": "splice_in"}"#))
            #expect(r.status == .notFound)
        }
    }
}

@Suite struct ID3EventTests {
    @Test func textBecomesAnID3v24TagWithATitle() throws {
        let e = try EventAPITests.event(#"{"type": "id3", "id": "song", "text": "Hé"}"#)
        #expect(e.kind == .id3 && e.id == "song")
        // "ID3" v2.4, size 11 (synchsafe), TIT2 of 4 bytes: UTF-8 (3) + "Hé".
        #expect(e.section == Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 14] + Array("TIT2".utf8) + [0, 0, 0, 4, 0, 0, 3]
                + Array("Hé".utf8))
    }

    @Test func aGivenTagIsKeptAndCheckedAndBadOnesAre400() throws {
        let tag = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 0]
        let e = try EventAPITests.event(#"{"type": "id3", "id3": ""# + Data(tag).base64EncodedString() + #""}"#)
        #expect(e.section == tag)
        for body in [#"{"type": "id3"}"#, #"{"type": "id3", "text": ""}"#, #"{"type": "id3", "id3": "bm90IGlkMw=="}"#,
                     #"{"type": "id3", "text": "a", "id3": "SUQzBAAAAAAAAA=="}"#] {
            #expect(EventAPITests.refusal(body)?.status == .badRequest, "\(body)")
        }
    }
}
