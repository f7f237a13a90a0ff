import HLS
import Logging
import MediaCore
import MediaPresentation
import Synchronization

// The delivery side of `Pusher`: a worker per lane sends its queue in order, retrying with backoff, and keeps the
// health figures (outages, refusals) that the producer side reads.
extension Pusher {
    func work(_ lane: Int, _ wake: AsyncStream<Void>) async {
        for await _ in wake {
            while !Task.isCancelled, let item = state.withLock({ s in
                lane == s.renditions.count && !s.playlistArrived.allSatisfy { $0 } ? nil : s.lanes[lane].next()
            }) {
                await deliver(item, lane: lane)
                state.withLock { $0.lanes[lane].done() }
            }
        }
    }

    private func request(for item: PushItem) -> PushRequest {
        let url = configuration.url + item.path
        let method: PushRequest.Method = switch configuration.method {
        case .put: .put
        case .post: .post
        }
        switch item.kind {
        case .delete: return PushRequest(method: .delete, url: url, contentType: nil, body: [])
        case .playlist: return PushRequest(method: method, url: url, contentType: "application/vnd.apple.mpegurl", body: item.body)
        case .initSegment: return PushRequest(method: method, url: url, contentType: "video/mp4", body: item.body)
        case .segment, .part:
            let type = item.format == .webVTT ? "text/vtt; charset=utf-8" : "video/iso.segment"
            return PushRequest(method: method, url: url, contentType: type, body: item.body)
        }
    }

    private func deliver(_ item: PushItem, lane: Int) async {
        // Queued while the ingest was down and out of the window since: not worth a request. (A playlist with a
        // newer state queued behind it is not lost: the newer one goes next.)
        guard stillWanted(item, lane: lane) else {
            if item.kind != .playlist { health.withLock { $0.stats.dropped += 1 } }
            return
        }
        let request = request(for: item)
        var failures = 0
        while !Task.isCancelled {
            switch await transport.send(request) {
            case .accepted:
                succeeded(item)
                decided(item, lane: lane)
                return
            case .refused(let status, let reason):
                refused(request, status: status, reason: reason)
                decided(item, lane: lane)
                return
            case .failed(let why):
                failures += 1
                failed(request, why)
                if item.kind == .delete && failures >= configuration.deleteAttempts { break }
                guard stillWanted(item, lane: lane) else { break }
                await sleep(.milliseconds(configuration.backoff.delayMilliseconds(afterFailures: failures)))
                guard stillWanted(item, lane: lane) else { break }
                continue
            }
            break
        }
        // A playlist with a newer state queued is not lost: the newer one goes next.
        if item.kind == .playlist, state.withLock({ $0.lanes[lane].inFlightIsSuperseded }) { return }
        health.withLock { $0.stats.abandoned += 1 }
    }

    /// Whether another attempt at `item` (in flight on `lane`) is worth it.
    private func stillWanted(_ item: PushItem, lane: Int) -> Bool {
        state.withLock { s in
            guard !s.givingUp else { return false }
            switch item.kind {
            case .playlist:
                return !s.lanes[lane].inFlightIsSuperseded
            case .delete:
                return true
            case .initSegment(let i):
                return snapshot(lane)?.inits.contains { $0.index == i } ?? false
            case .segment(let n), .part(let n, _):
                guard let snap = snapshot(lane) else { return false }
                return n >= snap.mediaSequence
            }
        }
    }

    /// A rendition's playlist was answered: once every rendition's was, `index.m3u8` may go.
    private func decided(_ item: PushItem, lane: Int) {
        guard item.kind == .playlist else { return }
        state.withLock { s in
            guard s.playlistArrived.indices.contains(lane), !s.playlistArrived[lane] else { return }
            s.playlistArrived[lane] = true
            if s.playlistArrived.allSatisfy({ $0 }) { s.wakes[s.renditions.count].yield() }
        }
    }

    private func succeeded(_ item: PushItem) {
        let back: String? = health.withLock { h in
            if item.kind == .delete { h.stats.deleted += 1 } else { h.stats.pushed += 1 }
            h.lastRefusal = nil
            guard h.down else { return nil }
            h.down = false
            let seconds = (ContinuousClock.now - h.outageStart).components.seconds
            return "after \(seconds) s and \(h.failuresThisOutage) failed attempts; \(h.stats.dropped - h.droppedAtOutageStart) objects dropped while it was down"
        }
        if let back {
            logger.notice("push: ingest \(configuration.url) reachable again \(back)")
        }
    }

    private func failed(_ request: PushRequest, _ why: String) {
        let first: Bool = health.withLock { h in
            h.stats.failedAttempts += 1
            h.failuresThisOutage += 1
            guard !h.down else { return false }
            h.down = true
            h.outageStart = .now
            h.failuresThisOutage = 1
            h.stats.outages += 1
            h.droppedAtOutageStart = h.stats.dropped
            return true
        }
        if first {
            logger.warning("push: \(request.method.rawValue) \(request.url) failed: \(why); retrying with back-off up to \(configuration.backoff.capMilliseconds) ms, dropping the oldest objects while the ingest is unreachable")
        }
    }

    private func refused(_ request: PushRequest, status: Int, reason: String) {
        let log: Bool = health.withLock { h in
            h.stats.refused += 1
            h.down = false
            defer { h.lastRefusal = status }
            return h.lastRefusal != status
        }
        if log {
            logger.error("push: \(request.method.rawValue) \(request.url) refused: \(status) \(reason)")
        }
    }
}
