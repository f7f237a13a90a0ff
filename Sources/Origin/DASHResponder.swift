import DASH
import Hummingbird
import MediaCore
import MediaPresentation
import NIOCore

/// MPEG-DASH from the same presentation: `manifest.mpd` beside `index.m3u8`, the `time` endpoint its `UTCTiming`
/// names, and low-latency DASH's segment in progress sent by chunked transfer as its parts are published.
extension OriginResponder {

    /// The origin's wall clock for `UTCTiming` (`urn:mpeg:dash:utc:http-iso:2014`): an ISO 8601 date-time.
    func time(_ request: Request) -> Response {
        let body = ByteBuffer(string: WallClock.now.iso8601)
        return send(.ok, ResponseHeaders.make(contentType: "text/plain; charset=utf-8", cacheControl: "no-store",
                                              contentLength: body.readableBytes), body, request)
    }

    /// The live MPD. It names the time endpoint by absolute URL (players resolve `UTCTiming@value` against the
    /// page, not the MPD), built from the request's host when that is a plain host name or address.
    /// `uriQuery`: the signature query its URIs carry (`""`: none).
    func manifest(_ p: LivePresentation, _ request: Request, _ uriQuery: String = "", tiles: LiveTileSheets? = nil) async -> Response {
        if !(p.layout.map { $0.snapshots().allSatisfy(\.isPlayable) } ?? false) {
            _ = await p.waitUntilPlayable(timeout: firstSegmentWait ?? .seconds(2 * (p.layout?.policy.targetDuration ?? 1)))
        }
        guard let layout = p.layout else { return send(Self.retryLater(p), request) }
        let snaps = layout.snapshots()
        // Whole-segment AES-128 is HLS's alone (RFC 8216 §5.2): DASH has no way to say it (docs/encryption.md).
        // Sample encryption (cbcs/cenc) is signalled by the MPD's ContentProtection.
        if snaps.contains(where: { $0.encryption == .aes128 }) { return send(Self.notFound, request) }
        let timeURL = Self.timeURL(request, scheme: urlScheme) + (uriQuery.isEmpty ? "" : "?" + uriQuery)
        let key = PlaylistCache.Key(presentation: p.serial, rendition: -2, skip: false, uriQuery: uriQuery)
        let tileSnap = tiles?.snapshot()
        guard let (body, headers) = playlists.get(key, versions: snaps.map(\.version) + [tileSnap?.version ?? 0], tag: timeURL,
                                                  headers: ResponseHeaders.manifest, render: {
            guard var mpd = ManifestBuilder.live(layout.renditions, snaps,
                                                 options: .init(now: .now, timeURL: timeURL, uriQuery: uriQuery,
                                                                trickMode: p.dashTrickMode)) else { return nil }
            if let tileSnap { ThumbnailManifests.add(tileSnap, to: &mpd, uriQuery: uriQuery) }
            return mpd.render()
        }) else { return send(Self.retryLater(p), request) }
        return send(.ok, headers, body, request)
    }

    /// `http(s)://host/dir/time` for a request of `/dir/manifest.mpd`; just `time` (relative) without a usable host.
    static func timeURL(_ request: Request, scheme: String) -> String {
        let path = request.uri.path
        let directory = path.lastIndex(of: "/").map { String(path[...$0]) } ?? "/"
        guard let host = request.head.authority, !host.isEmpty, host.utf8.count <= 255, host.utf8.allSatisfy({ c in
            (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: ".") || c == UInt8(ascii: "-")
                || c == UInt8(ascii: ":") || c == UInt8(ascii: "[") || c == UInt8(ascii: "]")
        }) else { return Route.timeName }
        return scheme + "://" + host + directory + Route.timeName
    }

    /// A segment that is not complete yet. With LL parts, the segment in progress (or the next one, once it starts)
    /// is sent by chunked transfer: a segment is its parts in turn (the first opens with its `styp`), so each part as
    /// it is published, then what the finished segment holds beyond them (its last part, published with it). Without parts, the segment in progress is waited for (up to a target duration and a
    /// half). Anything else is 404.
    func pendingSegment(_ window: LiveWindow<ServedObject>, _ n: UInt64, _ request: Request) async -> Response {
        let snap = window.snapshot()
        guard let target = window.policy.partTarget else {
            guard !snap.finished, n == snap.nextSequence else { return send(Self.notFound, request) }
            let timeout = Duration.milliseconds(1500 * Int64(snap.targetDuration))
            guard await window.wait(for: .playlist(msn: n, part: nil), timeout: timeout),
                  let o = window.snapshot().segment(n) else { return send(Self.notFound, request) }
            return send(.ok, o.payload.headers, o.payload.body, request)
        }
        guard snap.partMayAppear(n, 0) || n == snap.nextSequence else { return send(Self.notFound, request) }
        let partMicros = MediaTime.rescale(target.value, from: target.timescale, to: 1_000_000, rounding: .up)
        // The next segment starts one segment from now at the latest: wait that long (plus the usual part wait) for
        // its first part; after that, each part comes within a part target or so.
        let firstWait = Duration.microseconds(partMicros * 3) + .seconds(Int64(snap.targetDuration))
        guard await window.wait(for: .part(msn: n, index: 0), timeout: firstWait) || window.snapshot().segment(n) != nil else {
            return send(Self.notFound, request)
        }
        if let o = window.snapshot().segment(n) { return send(.ok, o.payload.headers, o.payload.body, request) }
        if request.method == .head { return Response(status: .ok, headers: ResponseHeaders.segmentInProgress, body: .init()) }
        let partWait = partWait ?? .microseconds(3 * partMicros)
        // An input that stalls mid-segment ends the body short after this long without a new part.
        let stallLimit = Duration.seconds(3 * Int64(snap.targetDuration))
        let stats = self.stats
        return Response(status: .ok, headers: ResponseHeaders.segmentInProgress, body: ResponseBody { writer in
            var sent = 0
            var index = 0
            var lastProgress = ContinuousClock.now
            while true {
                let snap = window.snapshot()
                if let p = snap.part(n, index) {
                    for chunk in p.payload.body.chunks { try await writer.write(chunk) }
                    sent += p.payload.body.count
                    index += 1
                    lastProgress = .now
                    continue
                }
                if let seg = snap.segment(n) {
                    // Finished: send what the segment has beyond the parts already sent (its last part).
                    let tail = seg.payload.body.slice(sent..<seg.payload.body.count)
                    for chunk in tail.chunks { try await writer.write(chunk) }
                    sent += tail.count
                    break
                }
                // Give up (ending the body short) when the part can no longer come and the segment did not
                // finish, or nothing came for too long (the input stopped); otherwise wait and look again.
                if !snap.partMayAppear(n, index) || ContinuousClock.now - lastProgress > stallLimit { break }
                _ = await window.wait(for: .part(msn: n, index: index), timeout: partWait)
            }
            stats.countRequest(bytes: sent)
            try await writer.finish(nil)
        })
    }
}
