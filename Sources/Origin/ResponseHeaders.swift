import Hummingbird

/// Prebuilt header sets. Segment and playlist headers (with `Content-Length`) are built once per publish,
/// so a request only copies a value and never formats a header.
enum ResponseHeaders {
    static let allowMethods = "GET, HEAD, OPTIONS"
    static let exposeHeaders = "Content-Length, Content-Type, Date, Age, Cache-Control, Retry-After, Accept-Ranges, Content-Range, ETag, Last-Modified"
    static let defaultAllowHeaders = "Range, Accept, Accept-Encoding, Content-Type, Cache-Control, If-None-Match, If-Modified-Since"
    static let playlistType = "application/vnd.apple.mpegurl"
    static let immutable = "public, max-age=31536000, immutable"

    /// `Access-Control-*` fields every response carries.
    static let cors: HTTPFields = [
        .accessControlAllowOrigin: "*",
        .accessControlExposeHeaders: exposeHeaders,
    ]

    /// `acceptRanges`: the headers of a served object (page, hls.js, playlist, init, segment, part), which answers
    /// `Range` requests (`OriginResponder.send`): `Accept-Ranges: bytes` is part of the prebuilt set, so a 200 costs
    /// nothing more (RFC 9110 §14.3: "A server that supports range requests MAY send Accept-Ranges: bytes").
    static func make(contentType: String, cacheControl: String, contentLength: Int, acceptRanges: Bool = false) -> HTTPFields {
        var h = HTTPFields()
        h.reserveCapacity(8)
        h[.contentType] = contentType
        h[.contentLength] = String(contentLength)
        h[.cacheControl] = cacheControl
        if acceptRanges { h[.acceptRanges] = "bytes" }
        h.append(contentsOf: cors)
        return h
    }

    static func playlist(contentLength: Int) -> HTTPFields {
        make(contentType: playlistType, cacheControl: "no-cache", contentLength: contentLength, acceptRanges: true)
    }

    /// ISO/IEC 23009-1 Annex C: `application/dash+xml`. A live MPD changes with every segment, like a playlist.
    static func manifest(contentLength: Int) -> HTTPFields {
        make(contentType: "application/dash+xml", cacheControl: "no-cache", contentLength: contentLength)
    }

    /// A segment sent by chunked transfer while it is produced (low-latency DASH): no length yet, and not
    /// cacheable as the finished object is, since a broken transfer would leave a truncated copy in a cache.
    static let segmentInProgress: HTTPFields = {
        var h = HTTPFields()
        h[.contentType] = "video/iso.segment"
        h[.cacheControl] = "no-cache"
        h.append(contentsOf: cors)
        return h
    }()

    /// A segment or part: immutable, with its validators (RFC 9110 §8.8) for revalidation by a cache.
    static func segment(contentLength: Int, etag: String, lastModified: String?) -> HTTPFields {
        var h = make(contentType: "video/iso.segment", cacheControl: immutable, contentLength: contentLength, acceptRanges: true)
        h[.eTag] = etag
        if let lastModified { h[.lastModified] = lastModified }
        return h
    }

    static func initSegment(contentLength: Int, etag: String, lastModified: String) -> HTTPFields {
        var h = make(contentType: "video/mp4", cacheControl: immutable, contentLength: contentLength, acceptRanges: true)
        h[.eTag] = etag
        h[.lastModified] = lastModified
        return h
    }

    /// The answer to a blocking playlist reload (`_HLS_msn`, with or without `_HLS_part` and `_HLS_skip`): the
    /// playlist that satisfied it never stops satisfying it, so an edge may keep and share it (request collapsing)
    /// for a few target durations. A plain playlist, or `_HLS_skip` alone (which asks for the latest playlist),
    /// stays `no-cache`.
    static func directivePlaylist(_ headers: HTTPFields, targetDuration: Int) -> HTTPFields {
        var h = headers
        h[.cacheControl] = "public, max-age=\(3 * max(1, targetDuration))"
        return h
    }
}

/// A response body prepared once: bytes plus complete headers.
struct PreparedResponse: Sendable {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let body: ByteBuffer

    init(status: HTTPResponse.Status = .ok, headers: HTTPFields, body: ByteBuffer) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A plain-text (error) response, `no-store`.
    static func text(_ status: HTTPResponse.Status, _ text: String, extra: HTTPFields = [:]) -> PreparedResponse {
        let body = ByteBuffer(string: text)
        var h = ResponseHeaders.make(contentType: "text/plain; charset=utf-8", cacheControl: "no-store",
                                     contentLength: body.readableBytes)
        h.append(contentsOf: extra)
        return PreparedResponse(status: status, headers: h, body: body)
    }
}
