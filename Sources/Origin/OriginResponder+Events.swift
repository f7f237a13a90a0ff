import Foundation
import Hummingbird
import MediaCore
import MediaPresentation
import NIOCore

/// `POST /NAME/events`: a timed event for a stream (docs/events.md), behind the control API's credential (`--api-token`:
/// `Authorization: Bearer SECRET`; without a token the route does not exist, 404). The body is JSON, at most 64 KB:
///
/// ```
/// {"type": "splice_out", "id": "break-7", "duration": 30, "delay": 2}
/// {"type": "splice_in", "id": "break-7"}
/// {"type": "time_signal", "segmentation_type_id": 52, "duration": 30, "start_date": "2026-11-26T21:30:00Z"}
/// ```
/// 201 `{"id": "break-7", "type": "splice_out"}`; 400 a malformed body or value, 409 an id already posted with that type,
/// 413 a body over 64 KB, 415 not JSON, 422 a cue in the past. The event is written as an SCTE-35 section (an immediate
/// `splice_insert`, or a `time_signal` with a segmentation descriptor) and placed at the live edge (`delay` seconds
/// after it, or at `start_date`).
extension OriginResponder {
    func postEvent(_ request: Request, _ presentation: LivePresentation) async -> Response {
        await authorizedPost(request) { body in
            do {
                let event = try EventRequest.event(body, now: .now, generatedID: { "api-\(UInt64(WallClock.now.millisecondsSince1970))" })
                try presentation.eventInbox.post(event)
                return send(Self.apiJSON(.created, Self.encode(EventRequest.Accepted(id: event.id, type: event.kind.rawValue))), request)
            } catch let refusal as EventRequest.Refusal {
                return send(Self.apiError(refusal.status, APIError(error: refusal.message, field: refusal.field)), request)
            } catch EventInbox.Refusal.duplicate(let id) {
                return send(Self.apiError(.conflict, APIError(error: "an event '\(id)' of this type was already posted", field: "id")), request)
            } catch {
                return send(Self.apiError(.badRequest, APIError(error: "\(error)")), request)
            }
        }
    }
}

extension OriginResponder {
    /// A stream API `POST` (`events`, `subtitles`): `accept` answers its JSON body once the credential, method and
    /// body passed: the control API's bearer token (no token: the route does not exist, 404), `POST` only (405),
    /// `application/json` of at most 64 KB (415, 413).
    func authorizedPost(_ request: Request, accept: ([UInt8]) -> Response) async -> Response {
        guard let apiToken else { return send(Self.notFound, request) }
        guard AccessControl.bearerMatches(request.headers[.authorization], apiToken) else {
            return send(Self.apiError(.unauthorized, APIError(error: "unauthorized: send Authorization: Bearer and the --api-token secret"),
                                      extra: [.wwwAuthenticate: "Bearer realm=\"hls-origin api\""]), request)
        }
        guard request.method == .post else {
            return send(Self.apiError(.methodNotAllowed, APIError(error: "use POST"), extra: [.allow: "POST"]), request)
        }
        switch await Self.jsonBody(request) {
        case .failure(let refusal): return send(refusal.response, request)
        case .success(let body): return accept(body)
        }
    }
}

/// The body of `POST /NAME/events`, read and checked (pure: `OriginTests` test it without a server).
struct EventRequest: Decodable {
    var type: String
    var id: String?
    /// Seconds: the break's planned duration (`splice_out`), the segmentation duration (`time_signal`).
    var duration: Double?
    /// Seconds after the live edge (`0`: now).
    var delay: Double?
    /// ISO 8601: when, on the program date-time clock; instead of `delay`.
    var startDate: String?
    var segmentationTypeID: Int?
    /// `id3`: a text (a `TIT2` frame of an ID3v2.4 tag made here), or a whole ID3 tag in base64.
    var text: String?
    var id3: String?

    enum CodingKeys: String, CodingKey {
        case type, id, duration, delay, text, id3
        case startDate = "start_date"
        case segmentationTypeID = "segmentation_type_id"
    }

    struct Accepted: Encodable {
        var id: String
        var type: String
    }

    struct Refusal: Error, Equatable {
        var status: HTTPResponse.Status
        var message: String
        var field: String?
    }

    /// The longest a posted break or signal may last, and the furthest ahead it may be.
    static let maxDuration = 86_400.0
    static let maxDelay = 3_600.0
    /// How far behind the clock a `start_date` may be and still count as now (a client's clock and a request's trip).
    static let pastTolerance = 1.0

    /// The timed event `body` posts; `Refusal` says why not.
    static func event(_ body: [UInt8], now: WallClock, generatedID: () -> String) throws(Refusal) -> TimedEvent {
        let r: EventRequest
        do {
            r = try JSONDecoder().decode(EventRequest.self, from: Data(body))
        } catch {
            throw Refusal(status: .badRequest, message: "the body is not an event: \(Self.describe(error))")
        }
        guard let kind = TimedEvent.Kind(rawValue: r.type) else {
            throw Refusal(status: .badRequest, message: "type must be splice_out, splice_in, time_signal or id3", field: "type")
        }
        let id = r.id ?? generatedID()
        guard (1...64).contains(id.utf8.count),
              id.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E })
        else {
            throw Refusal(status: .badRequest, message: "id must be 1 to 64 letters, digits, '-', '_' or '.'", field: "id")
        }
        if let d = r.duration, !(d.isFinite && d > 0 && d <= maxDuration) {
            throw Refusal(status: .badRequest, message: "duration must be seconds above 0, at most \(Int(maxDuration))", field: "duration")
        }
        if r.duration != nil, kind == .spliceIn {
            throw Refusal(status: .badRequest, message: "a splice_in has no duration", field: "duration")
        }
        if let t = r.segmentationTypeID, !(0...255).contains(t) {
            throw Refusal(status: .badRequest, message: "segmentation_type_id is one byte (0 to 255)", field: "segmentation_type_id")
        }
        guard r.delay == nil || r.startDate == nil else {
            throw Refusal(status: .badRequest, message: "give delay or start_date, not both", field: "start_date")
        }
        var delay = r.delay ?? 0
        if let text = r.startDate {
            guard let date = Self.date(text) else {
                throw Refusal(status: .badRequest, message: "start_date must be ISO 8601 (2026-11-26T21:30:00.000Z)", field: "start_date")
            }
            delay = date.timeIntervalSince1970 - Double(now.millisecondsSince1970) / 1000
            if delay < 0 && delay >= -pastTolerance { delay = 0 }
        }
        guard delay.isFinite, delay >= 0 else {
            throw Refusal(status: .unprocessableContent, message: "the cue is in the past", field: r.startDate != nil ? "start_date" : "delay")
        }
        guard delay <= maxDelay else {
            throw Refusal(status: .badRequest, message: "a cue is at most \(Int(maxDelay)) s ahead", field: r.startDate != nil ? "start_date" : "delay")
        }
        let at = TimedEvent.Time.liveEdge(after: .milliseconds(Int64((delay * 1000).rounded())))
        if kind == .id3 { return TimedEvent(id: id, kind: .id3, time: at, section: try Self.id3Tag(r)) }
        let ticks = r.duration.map { Int64(($0 * Double(TimedEvent.ticks)).rounded()) }
        let eventID = Self.eventID(id)
        let section: SpliceInfoSection
        var placedKind = kind
        switch kind {
        case .spliceOut, .spliceIn:
            section = SpliceInfoSection(command: .insert(SpliceInsert(eventID: eventID, outOfNetwork: kind == .spliceOut,
                                                                      immediate: true, spliceTime: nil, breakDuration: ticks)))
        case .id3:
            preconditionFailure("returned above")
        case .timeSignal:
            let descriptor = SegmentationDescriptor(eventID: eventID, typeID: UInt8(r.segmentationTypeID ?? 0x34), duration: ticks)
            section = SpliceInfoSection(command: .timeSignal(nil), segmentations: [descriptor])
            placedKind = descriptor.startsBreak ? .spliceOut : descriptor.endsBreak ? .spliceIn : .timeSignal
        }
        return TimedEvent(id: id, kind: placedKind, time: at,
                          plannedDuration: placedKind == .spliceOut ? ticks.map { MediaTime(value: $0, timescale: TimedEvent.ticks) } : nil,
                          section: section.bytes)
    }

    /// The ID3 tag of an `id3` event: the given one (base64, an ID3v2 tag: `ID3` and its size), or an ID3v2.4 tag of
    /// one `TIT2` frame (UTF-8) of `text`.
    static func id3Tag(_ r: EventRequest) throws(Refusal) -> [UInt8] {
        switch (r.text, r.id3) {
        case (let text?, nil):
            let utf8 = Array(text.utf8)
            guard !utf8.isEmpty, utf8.count <= 4096 else {
                throw Refusal(status: .badRequest, message: "text is 1 to 4096 bytes of UTF-8", field: "text")
            }
            let frame = Array("TIT2".utf8) + synchsafe(utf8.count + 1) + [0, 0, 3] + utf8
            return Array("ID3".utf8) + [4, 0, 0] + synchsafe(frame.count) + frame
        case (nil, let encoded?):
            guard let data = Data(base64Encoded: encoded).map(Array.init), data.count >= 10, data.starts(with: Array("ID3".utf8)),
                  data[6..<10].allSatisfy({ $0 < 0x80 }) else {
                throw Refusal(status: .badRequest, message: "id3 is an ID3v2 tag in base64 (it starts with 'ID3')", field: "id3")
            }
            return data
        default:
            throw Refusal(status: .badRequest, message: "an id3 event has text or id3 (base64), one of them", field: "text")
        }
    }

    /// A 28-bit synchsafe integer (ID3v2.4 §6.2): 7 bits a byte.
    static func synchsafe(_ n: Int) -> [UInt8] {
        [UInt8(n >> 21 & 0x7F), UInt8(n >> 14 & 0x7F), UInt8(n >> 7 & 0x7F), UInt8(n & 0x7F)]
    }

    /// A `splice_event_id` for an id: FNV-1a of its bytes, so the same id always signals the same event.
    static func eventID(_ id: String) -> UInt32 { FNV1a.hash32(id.utf8) }

    static func date(_ text: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = f.date(from: text) { return d }
        f.formatOptions = [.withInternetDateTime]
        return f.date(from: text)
    }

    static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "'\(key.stringValue)' is missing"
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c):
            "'\(c.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type"
        default: "malformed JSON"
        }
    }
}
