import HLS
import Hummingbird
import Logging
import MediaCore
import MediaPresentation
import Dispatch
import NIOCore

/// Playlists and what LL-HLS clients wait for: the multivariant and media playlists (rendered once per change,
/// `PlaylistCache`), delivery directives (RFC 8216bis §6.2.5: blocking reloads, `_HLS_skip`) and parts not published
/// yet, each wait holding a slot of the blocking budget.
extension OriginResponder {
    func multivariant(_ p: LivePresentation, _ request: Request, _ uriQuery: String, tiles: LiveTileSheets? = nil) async -> Response {
        if !(p.layout.map { $0.snapshots().allSatisfy(\.isPlayable) } ?? false) {
            _ = await p.waitUntilPlayable(timeout: firstWait(p.layout))
        }
        guard let layout = p.layout else { return send(Self.retryLater(p), request) }
        let snaps = layout.snapshots()
        let key = PlaylistCache.Key(presentation: p.serial, rendition: -1, skip: false, uriQuery: uriQuery)
        let tileSnap = tiles?.snapshot()
        guard let (body, headers) = playlists.get(key, versions: snaps.map(\.version) + [tileSnap?.version ?? 0], render: {
            guard var m = PlaylistBuilder.multivariant(layout.renditions, snaps, uriQuery: uriQuery, iFrames: true) else { return nil }
            if let tileSnap { ThumbnailManifests.add(tileSnap, to: &m, uriQuery: uriQuery) }
            return m.render()
        }) else { return send(Self.retryLater(p), request) }
        return send(.ok, headers, body, request)
    }

    func mediaPlaylist(_ p: LivePresentation, _ layout: LivePresentation.Layout, _ r: Int,
                               _ request: Request, _ uriQuery: String, _ remote: SocketAddress?,
                               stream: String) async -> Response {
        let window = layout.windows[r]
        var skip = false
        var skipDateRanges = false
        var directive = false
        if let partTarget = layout.policy.partTarget {
            // Delivery directives (RFC 8216bis §6.2.5): only for LL-HLS streams, which offer them.
            let query = request.uri.queryParameters
            // A directive given twice has no meaning: 400 rather than a guess at which one counts.
            if Self.directives.contains(where: { query.getAll($0).count > 1 }) { return send(Self.badRequest, request) }
            if let s = query.get("_HLS_skip") {
                // §6.2.5.1: "_HLS_skip=YES", or "v2", which also skips older dateranges (CAN-SKIP-DATERANGES=YES).
                guard s == "YES" || s == "v2" else { return send(Self.badRequest, request) }
                skip = true
                skipDateRanges = s == "v2"
            }
            let msnText = query.get("_HLS_msn"), partText = query.get("_HLS_part")
            if let msnText {
                guard let msn = Self.decimal(msnText) else { return send(Self.badRequest, request) }
                directive = true
                var part: Int?
                if let partText {
                    guard let v = Self.decimal(partText), v <= UInt64(Int32.max) else { return send(Self.badRequest, request) }
                    part = Int(v)
                }
                let snap = window.snapshot()
                // §6.2.5.2: "If the _HLS_msn is greater than the Media Sequence Number of the last Media Segment in
                // the current Playlist plus two, or if the _HLS_part exceeds the last Partial Segment in the current
                // Playlist by the Advance Part Limit, then the server SHOULD immediately return Bad Request".
                if msn > snap.nextSequence + 1 { return send(Self.badRequest, request) }
                if let part, Self.beyondAdvancePartLimit(msn: msn, part: part, snap, partTarget: partTarget) {
                    return send(Self.badRequest, request)
                }
                let timeout = blockingReloadTimeout ?? .seconds(3 * snap.targetDuration)
                let satisfied = await held(remote, request, labels: (stream, layout.renditions[r].name)) {
                    await window.wait(for: .playlist(msn: msn, part: part), timeout: timeout)
                }
                switch satisfied {
                case .failure(let refusal): return refusal.response
                case .success(false): return send(Self.serviceUnavailable, request)
                case .success(true): break
                }
            } else if partText != nil {
                return send(Self.badRequest, request)  // _HLS_part needs _HLS_msn
            }
        }
        if !window.snapshot().isPlayable {
            _ = await window.wait(for: .playable, timeout: firstWait(layout))
        }
        guard let (body, headers) = renderedMediaPlaylist(p, layout, r, skip: skip, skipDateRanges: skipDateRanges,
                                                          uriQuery: uriQuery) else {
            return send(Self.retryLater(p), request)
        }
        if directive {
            return send(.ok, ResponseHeaders.directivePlaylist(headers, targetDuration: layout.policy.targetDuration), body, request)
        }
        return send(.ok, headers, body, request)
    }

    func part(_ window: LiveWindow<ServedObject>, _ n: UInt64, _ i: Int, _ request: Request,
                      _ remote: SocketAddress?, labels: (String, String)) async -> Response {
        if let o = window.snapshot().part(n, i) { return send(.ok, o.payload.headers, o.payload.body, request) }
        guard let target = window.policy.partTarget else { return send(Self.notFound, request) }
        let timeout = partWait ?? .microseconds(3 * MediaTime.rescale(target.value, from: target.timescale, to: 1_000_000,
                                                                      rounding: .up))
        if case .failure(let refusal) = await held(remote, request, labels: labels, {
            await window.wait(for: .part(msn: n, index: i), timeout: timeout)
        }) { return refusal.response }
        let snap = window.snapshot()
        if let o = snap.part(n, i) { return send(.ok, o.payload.headers, o.payload.body, request) }
        // Never will exist → 404; still possible (timed out) → 503.
        return send(snap.partMayAppear(n, i) ? Self.serviceUnavailable : Self.notFound, request)
    }

    /// Rendition `r`'s media playlist as it is now (rendered once per change of the windows, `PlaylistCache`).
    func renderedMediaPlaylist(_ p: LivePresentation, _ layout: LivePresentation.Layout, _ r: Int, skip: Bool,
                               skipDateRanges: Bool = false, uriQuery: String) -> (ByteBuffer, HTTPFields)? {
        mediaPlaylistEntry(p, layout, r, skip: skip, skipDateRanges: skipDateRanges, uriQuery: uriQuery)
            .map { ($0.body, $0.headers) }
    }

    /// The plain media playlist (no skip, no signature) with its `200` head as bytes, for `FastPath`.
    func preparedMediaPlaylist(_ p: LivePresentation, _ layout: LivePresentation.Layout,
                               _ r: Int) -> (ByteBuffer, HTTPFields, ByteBuffer)? {
        mediaPlaylistEntry(p, layout, r, skip: false, uriQuery: "").map { ($0.body, $0.headers, $0.head) }
    }

    func mediaPlaylistEntry(_ p: LivePresentation, _ layout: LivePresentation.Layout, _ r: Int, skip: Bool,
                            skipDateRanges: Bool = false, uriQuery: String) -> PlaylistCache.Entry? {
        let snaps = layout.snapshots()
        var key = PlaylistCache.Key(presentation: p.serial, rendition: r, skip: skip, uriQuery: uriQuery)
        key.skipDateRanges = skipDateRanges
        return playlists.entry(key, versions: snaps.map(\.version), render: {
            let reports = layout.policy.partTarget == nil ? [] : layout.renditions.indices.compactMap { o in
                o == r || !layout.renditions[o].isListedInHLS ? nil
                    : PlaylistBuilder.renditionReport(snaps[o], scheme: layout.renditions[o].scheme, uriQuery: uriQuery)
            }
            return PlaylistBuilder.mediaPlaylist(snaps[r], scheme: layout.renditions[r].scheme,
                                                 playlistType: p.playlistType, reports: reports, skip: skip,
                                                 skipDateRanges: skipDateRanges, uriQuery: uriQuery,
                                                 events: p.eventSignalling)?.render()
        })
    }

    /// Rendition `r`'s I-frame playlist (RFC 8216 §4.3.3.6), answered like a media playlist without delivery
    /// directives (it lists whole segments only). 404 once the rendition is playable without video.
    func iFramePlaylist(_ p: LivePresentation, _ layout: LivePresentation.Layout, _ r: Int, _ request: Request,
                        _ uriQuery: String) async -> Response {
        let window = layout.windows[r]
        if !window.snapshot().isPlayable {
            _ = await window.wait(for: .playable, timeout: firstWait(layout))
        }
        guard let entry = iFramePlaylistEntry(p, layout, r, uriQuery: uriQuery) else {
            let snap = window.snapshot()
            let noVideo = snap.isPlayable && !(snap.inits.last?.tracks.contains { $0.kind == .video } ?? false)
            return send(noVideo ? Self.notFound : Self.retryLater(p), request)
        }
        return send(.ok, entry.headers, entry.body, request)
    }

    /// The I-frame playlist as it is now, rendered once per change of its window (`PlaylistCache`); also `FastPath`'s.
    func iFramePlaylistEntry(_ p: LivePresentation, _ layout: LivePresentation.Layout, _ r: Int,
                             uriQuery: String) -> PlaylistCache.Entry? {
        let snap = layout.windows[r].snapshot()
        let key = PlaylistCache.Key(presentation: p.serial, rendition: r, skip: false, uriQuery: uriQuery, iFrames: true)
        return playlists.entry(key, versions: [snap.version], render: {
            PlaylistBuilder.iFramePlaylist(snap, scheme: layout.renditions[r].scheme, playlistType: p.playlistType,
                                           uriQuery: uriQuery)?.render()
        })
    }

    static let directives = ["_HLS_msn", "_HLS_part", "_HLS_skip"]

    /// Runs `wait` holding a slot of `budget`; without a slot, the refusal (429 for this client, 503 for all).
    func held(_ remote: SocketAddress?, _ request: Request, labels: (stream: String, rendition: String),
                      _ wait: () async -> Bool) async -> Result<Bool, Refusal> {
        switch budget.acquire(remote) {
        case .admitted: break
        case .clientOverLimit: return .failure(Refusal(send(BlockingBudget.tooManyFromClient, request)))
        case .serverOverLimit: return .failure(Refusal(send(BlockingBudget.tooManyInAll, request)))
        }
        metrics?.blocked(stream: labels.stream, rendition: labels.rendition, 1)
        let result = await wait()
        metrics?.blocked(stream: labels.stream, rendition: labels.rendition, -1)
        budget.release(remote)
        return .success(result)
    }

    struct Refusal: Error {
        let response: Response
        init(_ response: Response) { self.response = response }
    }

    /// RFC 8216bis §6.2.5.2: the Advance Part Limit is "three divided by the Part Target Duration if the Part Target
    /// Duration is less than one second, or three otherwise". Positions are counted in parts, a segment counting as
    /// the most parts it can hold (its target duration over the part target, rounded up), so a request the playlist
    /// can still satisfy soon is never refused.
    static func beyondAdvancePartLimit(msn: UInt64, part: Int, _ snap: WindowSnapshot<ServedObject>,
                                       partTarget: MediaTime) -> Bool {
        let targetMicros = MediaTime.rescale(partTarget.value, from: partTarget.timescale, to: 1_000_000, rounding: .up)
        guard targetMicros > 0 else { return false }
        let limit = targetMicros < 1_000_000 ? Int64(3_000_000 / targetMicros) : 3
        let perSegment = (Int64(snap.targetDuration) * 1_000_000 + targetMicros - 1) / targetMicros
        // The last part listed: the newest of the segment in progress, or the end of the last complete segment.
        let last = Int64(snap.nextSequence) * perSegment + Int64(snap.partial.count) - 1
        let requested = Int64(msn) * perSegment + Int64(part)
        return requested - last > limit
    }

    /// Strict unsigned decimal (1–19 digits, no sign, no leading zero).
    static func decimal(_ s: String) -> UInt64? { URIScheme.strictDecimal(Substring(s)) }
}
