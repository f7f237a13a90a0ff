import Dispatch
import Hummingbird
import MediaPresentation
import NIOCore

/// The routes beside the media: players' QoE beacons and the stream list's thumbnails.
extension OriginResponder {
    static let qoeAccepted = PreparedResponse(status: .noContent, headers: [.cacheControl: "no-store"], body: ByteBuffer())
    static let qoeMethod = PreparedResponse.text(.methodNotAllowed, "Method Not Allowed: POST a QoE report\n", extra: [.allow: "POST"])

    /// `POST qoe`: one player's QoE beacon (`QoEReport`), at most `QoEIntake.maxBody` bytes and one per half second per
    /// client address: 204, or 400 / 413 / 429. Without `/metrics` there is nowhere to count it: 404.
    func qoe(_ request: Request, stream: String, remote: SocketAddress?) async -> Response {
        guard request.method == .post else { return send(Self.qoeMethod, request) }
        guard let metrics else { return send(Self.notFound, request) }
        let body = request.body
        let bytes: ByteBuffer
        do {
            bytes = try await body.collect(upTo: QoEIntake.maxBody)
        } catch {
            metrics.countQoE(stream: stream, verdict: .tooLarge)
            return send(.text(.contentTooLarge, "QoE report over \(QoEIntake.maxBody) bytes\n"), request)
        }
        let verdict = qoeIntake.judge(Array(buffer: bytes), client: remote?.ipAddress ?? "-")
        metrics.countQoE(stream: stream, verdict: verdict)
        switch verdict {
        case .accepted: return send(Self.qoeAccepted, request)
        case .malformed: return send(.text(.badRequest, "Bad QoE report\n"), request)
        case .tooLarge: return send(.text(.contentTooLarge, "QoE report over \(QoEIntake.maxBody) bytes\n"), request)
        case .tooFrequent: return send(.text(.tooManyRequests, "Too many QoE reports\n", extra: [.retryAfter: "1"]), request)
        }
    }

    /// `thumbnail.jpg`: the stream's newest keyframe as a small JPEG (the stream list shows it), made off the event
    /// loop. 503 with `Retry-After` before the first keyframe; cacheable for 2 s (a new one comes with a new keyframe).

    func thumbnail(_ name: String, _ request: Request) async -> Response {
        guard let source = registry.thumbnails(for: name) else { return send(Self.notFound, request) }
        let made: Result<[UInt8]?, any Error> = await withCheckedContinuation { done in
            DispatchQueue.global().async { done.resume(returning: Result { try source.jpeg() }) }
        }
        switch made {
        case .success(let jpeg?):
            let body = ByteBuffer(bytes: jpeg)
            var headers = ResponseHeaders.make(contentType: "image/jpeg", cacheControl: "max-age=2", contentLength: body.readableBytes)
            headers[.eTag] = Validators.entityTag(jpeg)
            return send(.ok, headers, body, request)
        case .success(nil):
            return send(.text(.serviceUnavailable, "No keyframe yet, retry shortly\n", extra: [.retryAfter: "1"]), request)
        case .failure(let error):
            Self.logger.warning("thumbnail", metadata: ["stream": "\(name)", "error": "\(error)"])
            return send(.text(.serviceUnavailable, "No thumbnail\n", extra: [.retryAfter: "2"]), request)
        }
    }
}

extension OriginResponder {
    /// Thumbnail tiles (`--thumbnails`): the image playlist and the WebVTT list, rendered from the sheets kept now
    /// (`no-cache`: they move with the window), and a sheet (immutable; 404 once it left the window).
    func tiles(_ sheets: LiveTileSheets, _ object: Route.TileObject, _ request: Request, _ uriQuery: String) -> Response {
        let snap = sheets.snapshot()
        switch object {
        case .playlist:
            guard let playlist = ThumbnailManifests.imagePlaylist(snap, uriQuery: uriQuery) else {
                return send(.text(.serviceUnavailable, "No thumbnails yet, retry shortly\n", extra: [.retryAfter: "1"]), request)
            }
            let body = ByteBuffer(string: playlist.render())
            return send(.ok, ResponseHeaders.playlist(contentLength: body.readableBytes), body, request)
        case .vtt:
            let body = ByteBuffer(string: ThumbnailManifests.vtt(snap, uriQuery: uriQuery))
            let headers = ResponseHeaders.make(contentType: "text/vtt; charset=utf-8", cacheControl: "no-cache",
                                               contentLength: body.readableBytes)
            return send(.ok, headers, body, request)
        case .sheet(let n):
            guard let o = snap.sheet(n)?.payload else { return send(Self.notFound, request) }
            return send(.ok, o.headers, o.body, request)
        }
    }
}
