import FFmpegBridge
import ISOBMFF
import Foundation
import Logging
import MediaCore
import MediaPresentation
import Producer
import Segmenter

/// A live input whose publisher went away: opened again, by its reconnect policy.
extension DemuxedSource {
    /// Opens the input again after its publisher went away: at once for a listener (the open waits for the next
    /// publisher), after a back-off (1, 2, 4 … 10 s) for a caller. A connection whose tracks do not match the stream's
    /// renditions is refused with a log line, and the next one awaited. `false` once stopped, or when an HTTP input now
    /// has a duration (the upstream playlist ended).
    func reopen() -> Bool {
        guard let reconnect else { return false }
        demuxer.close()
        var attempt = 0
        while !stopped() {
            let delay = reconnect.delay(attempt: attempt)
            attempt += 1
            if delay > .zero {
                logger.notice("reconnecting to \(Self.redacted(url)) in \(delay.components.seconds) s")
                let until = ContinuousClock.now + delay
                while !stopped() && ContinuousClock.now < until { Thread.sleep(forTimeInterval: 0.1) }
                if stopped() { return false }
            }
            do {
                let d = try open(url)
                if inputKind == .http, d.duration != nil {
                    logger.notice("\(Self.redacted(url)) has ended (it now has a duration: EXT-X-ENDLIST upstream); so does this stream")
                    d.close()
                    return false
                }
                let s = try OutputSetup.make(demuxer: d, url: url, options: options,
                                             rungLaneDepth: Self.rungLaneDepth(options, isLive), logger: logger)
                guard s.kinds == setup.kinds, s.plan.groups == setup.plan.groups else {
                    d.close()
                    logger.warning("a new publisher on \(Self.redacted(url)) sends \(s.kinds.map(\.rawValue).joined(separator: "+")), not the stream's \(setup.kinds.map(\.rawValue).joined(separator: "+")): refused; waiting for another")
                    continue
                }
                logger.notice("publisher connected on \(Self.redacted(url)): the stream continues after EXT-X-DISCONTINUITY")
                adopt(d, s)
                return true
            } catch {
                if stopped() { return false }
                logger.warning("\(Self.redacted(url)): \(error)")
                if reconnect == .listen {
                    // A listener that cannot listen (the port is taken): do not spin.
                    let until = ContinuousClock.now + .seconds(1)
                    while !stopped() && ContinuousClock.now < until { Thread.sleep(forTimeInterval: 0.1) }
                }
            }
        }
        return false
    }

    /// A URL for the log: a password or a stream key in the query (`passphrase=`, `streamid=`) is not printed.
    static func redacted(_ url: String) -> String {
        guard let q = url.firstIndex(of: "?") else { return url }
        let items = url[url.index(after: q)...].split(separator: "&").map { item -> String in
            let key = item.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return ["passphrase", "streamid", "password", "pass", "token", "key"].contains(key.lowercased()) ? "\(key)=***" : String(item)
        }
        return String(url[..<q]) + "?" + items.joined(separator: "&")
    }
}
