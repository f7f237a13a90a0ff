import Foundation
import Hummingbird
import MediaPresentation
import NIOCore

/// The control API (`/api/v1/streams`), on the same server behind its own credential (`--api-token`:
/// `Authorization: Bearer SECRET`, compared in constant time). Without a token it does not exist (404). Answers are
/// JSON, `no-store`; a refusal is `{"error": "one line", "field": "segment_duration"}`.
///
/// ```
/// GET    /api/v1/streams          200 {"streams": [...]}  (as /streams.json)
/// POST   /api/v1/streams          201 the stream's summary; 400 bad body or value, 409 name taken, 413, 415
/// GET    /api/v1/streams/NAME     200 the stream's summary; 404
/// PATCH  /api/v1/streams/NAME     200 {"changed": [...], "stream": ...}; 400, 404, 422 needs a re-add
/// DELETE /api/v1/streams/NAME     200 the ended stream's summary; again: 204, no longer served; 404
/// ```
extension OriginResponder {
    /// The largest request body the API reads.
    static let maxAPIBody = 64 * 1024

    func api(_ route: Route.APIRoute, _ request: Request) async -> Response {
        guard let apiToken, let control else { return send(Self.notFound, request) }
        guard AccessControl.bearerMatches(request.headers[.authorization], apiToken) else {
            return send(Self.apiError(.unauthorized, APIError(error: "unauthorized: send Authorization: Bearer and the --api-token secret"),
                                      extra: [.wwwAuthenticate: "Bearer realm=\"hls-origin api\""]), request)
        }
        switch (route, request.method) {
        case (.streams, .get), (.streams, .head):
            return send(Self.apiJSON(.ok, StreamDirectory.json(registry, stats)), request)
        case (.streams, .post):
            return await addStream(request, control)
        case (.stream(let name), .get), (.stream(let name), .head):
            return send(summaryAnswer(.ok, name) ?? Self.apiNotFound(name), request)
        case (.stream(let name), .patch):
            return await patchStream(name, request, control)
        case (.stream(let name), .delete):
            return await removeStream(name, request, control)
        case (.unknown, _):
            return send(Self.apiError(.notFound, APIError(error: "no such API path (see /api/v1/streams)")), request)
        case (.streams, _):
            return send(Self.apiError(.methodNotAllowed, APIError(error: "use GET or POST"), extra: [.allow: "GET, HEAD, POST"]), request)
        case (.stream, _):
            return send(Self.apiError(.methodNotAllowed, APIError(error: "use GET, PATCH or DELETE"),
                                      extra: [.allow: "GET, HEAD, PATCH, DELETE"]), request)
        }
    }

    private func addStream(_ request: Request, _ control: any StreamControl) async -> Response {
        let body: [UInt8]
        switch await Self.jsonBody(request) {
        case .failure(let refusal): return send(refusal.response, request)
        case .success(let bytes): body = bytes
        }
        do {
            let name = try await control.add(json: body)
            var answer = summaryAnswer(.created, name) ?? Self.apiNotFound(name)
            var headers = answer.headers
            headers[.location] = Route.APIRoute.prefix + "/" + name
            answer = PreparedResponse(status: answer.status, headers: headers, body: answer.body)
            return send(answer, request)
        } catch {
            return send(Self.apiError(error), request)
        }
    }

    private func patchStream(_ name: String, _ request: Request, _ control: any StreamControl) async -> Response {
        let body: [UInt8]
        switch await Self.jsonBody(request) {
        case .failure(let refusal): return send(refusal.response, request)
        case .success(let bytes): body = bytes
        }
        do {
            let changed = try await control.patch(name: name, json: body)
            guard let p = registry.presentation(named: name) else { return send(Self.apiNotFound(name), request) }
            let summary = StreamSummary.make(name: name, presentation: p, viewers: stats.activeViewersByStream()[name] ?? 0)
            return send(Self.apiJSON(.ok, Self.encode(Patched(changed: changed, stream: summary))), request)
        } catch {
            return send(Self.apiError(error), request)
        }
    }

    private func removeStream(_ name: String, _ request: Request, _ control: any StreamControl) async -> Response {
        do {
            switch try await control.remove(name: name) {
            case .ended:
                return send(summaryAnswer(.ok, name) ?? Self.apiNotFound(name), request)
            case .unregistered:
                return send(PreparedResponse(status: .noContent, headers: [.cacheControl: "no-store"], body: ByteBuffer()), request)
            }
        } catch {
            return send(Self.apiError(error), request)
        }
    }

    /// One stream's summary (as in `/streams.json`), `nil` when it is not served.
    private func summaryAnswer(_ status: HTTPResponse.Status, _ name: String) -> PreparedResponse? {
        guard Rendition.isValidName(name), let p = registry.presentation(named: name) else { return nil }
        let summary = StreamSummary.make(name: name, presentation: p, viewers: stats.activeViewersByStream()[name] ?? 0)
        return Self.apiJSON(status, Self.encode(summary))
    }

    // MARK: Requests and answers

    /// The body of a POST or PATCH: JSON (415 otherwise), at most `maxAPIBody` bytes (413 otherwise).
    static func jsonBody(_ request: Request) async -> Result<[UInt8], APIRefusal> {
        let type = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard type == "application/json" else {
            return .failure(APIRefusal(apiError(.unsupportedMediaType, APIError(error: "send the body as Content-Type: application/json"))))
        }
        let tooLarge = APIRefusal(apiError(.contentTooLarge, APIError(error: "the body is over \(maxAPIBody) bytes")))
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maxAPIBody { return .failure(tooLarge) }
        do {
            let body = request.body
            return .success(Array(buffer: try await body.collect(upTo: maxAPIBody)))
        } catch {
            return .failure(tooLarge)
        }
    }

    struct APIRefusal: Error { let response: PreparedResponse; init(_ r: PreparedResponse) { response = r } }

    struct APIError: Encodable {
        var error: String
        var field: String?
        var fields: [String]?
    }

    private struct Patched: Encodable {
        var changed: [String]
        var stream: StreamSummary
    }

    static func apiNotFound(_ name: String) -> PreparedResponse {
        let shown = Rendition.isValidName(name) ? "'\(name)'" : "(not a stream name)"
        return apiError(.notFound, APIError(error: "no stream \(shown)"))
    }

    static func apiError(_ error: StreamControlError) -> PreparedResponse {
        let status: HTTPResponse.Status = switch error.kind {
        case .invalid: .badRequest
        case .notFound: .notFound
        case .conflict: .conflict
        case .unprocessable: .unprocessableContent
        }
        return apiError(status, APIError(error: error.message, field: error.field, fields: error.fields))
    }

    static func apiError(_ status: HTTPResponse.Status, _ error: APIError, extra: HTTPFields = [:]) -> PreparedResponse {
        apiJSON(status, encode(error), extra: extra)
    }

    static func apiJSON(_ status: HTTPResponse.Status, _ body: ByteBuffer, extra: HTTPFields = [:]) -> PreparedResponse {
        var headers = ResponseHeaders.make(contentType: "application/json", cacheControl: "no-store",
                                           contentLength: body.readableBytes)
        headers.append(contentsOf: extra)
        return PreparedResponse(status: status, headers: headers, body: body)
    }

    static func encode(_ value: some Encodable) -> ByteBuffer { StreamDirectory.encode(value) }
}
