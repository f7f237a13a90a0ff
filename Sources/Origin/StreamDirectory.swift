import Foundation
import MediaCore
import MediaPresentation
import NIOCore

/// What the origin says about the streams it serves: `/streams.json` (for dashboards and scripts) and the stream
/// list at `/` when several named streams are served. Built from the presentations' snapshots on request.
struct StreamSummary: Encodable, Equatable {
    struct RenditionSummary: Encodable, Equatable {
        var name: String
        var kind: String
        /// RFC 6381 codecs of its current init segment.
        var codecs: String
        var width: Int?
        var height: Int?
        /// Bits per second over the segments the playlist lists now.
        var bandwidth: Int?
        /// Segments published so far (the next media sequence number).
        var segments: UInt64
    }
    var name: String
    /// The player page.
    var path: String
    var playlist: String
    /// The newest keyframe as a small JPEG (503 until there is one).
    var thumbnail: String
    /// `waiting` (no media yet), `live`, `idle` (live, but nothing new for 3 target durations: the publisher is
    /// away), or `ended` (`EXT-X-ENDLIST`).
    var state: String
    /// Distinct client addresses that fetched one of its playlists or segments in the last `OriginStats.viewerWindow`.
    var viewers: Int
    var renditions: [RenditionSummary]

    static func make(name: String, presentation: LivePresentation, viewers: Int = 0, now: Date = Date()) -> StreamSummary {
        let base = name.isEmpty ? "/" : "/\(name)/"
        var summary = StreamSummary(name: name, path: base, playlist: base + "index.m3u8",
                                    thumbnail: base + Route.thumbnailName, state: "waiting", viewers: viewers,
                                    renditions: [])
        summary.state = state(of: presentation, now: now)
        guard let layout = presentation.layout else { return summary }
        for (rendition, window) in zip(layout.renditions, layout.windows) {
            let snap = window.snapshot()
            let tracks = snap.inits.last?.tracks ?? []
            let video = tracks.first { $0.kind == .video }
            var bytes = 0
            var micros: Int64 = 0
            for s in snap.window {
                bytes += s.info.byteCount
                micros += MediaTime.rescale(s.info.duration.value, from: s.info.duration.timescale, to: 1_000_000)
            }
            summary.renditions.append(RenditionSummary(
                name: rendition.name, kind: "\(rendition.kind)", codecs: tracks.map(\.codecString).joined(separator: ","),
                width: video?.width, height: video?.height,
                bandwidth: micros > 0 ? Int(Int64(bytes) * 8_000_000 / micros) : nil, segments: snap.nextSequence))
        }
        return summary
    }

    /// `waiting`, `live`, `idle` or `ended` (`state`): one snapshot of the first window, nothing walked.
    static func state(of presentation: LivePresentation, now: Date = Date()) -> String {
        guard let first = presentation.layout?.windows.first?.snapshot() else {
            return presentation.isFinished ? "ended" : "waiting"
        }
        if first.finished { return "ended" }
        guard let last = first.window.last, let pdt = last.info.programDateTime else {
            return first.isPlayable ? "live" : "waiting"
        }
        let endMillis = pdt.millisecondsSince1970 + MediaTime.rescale(last.info.duration.value, from: last.info.duration.timescale, to: 1000)
        let idleMillis = Int64(now.timeIntervalSince1970 * 1000) - endMillis
        return idleMillis > Int64(3 * first.targetDuration) * 1000 ? "idle" : "live"
    }
}

enum StreamDirectory {
    static func summaries(_ registry: PresentationRegistry, _ stats: OriginStats?) -> [StreamSummary] {
        let viewers = stats?.activeViewersByStream() ?? [:]
        return registry.names.compactMap { name in
            registry.presentation(named: name).map { StreamSummary.make(name: name, presentation: $0, viewers: viewers[name] ?? 0) }
        }
    }

    /// `{"streams": [...]}`, keys sorted.
    static func json(_ registry: PresentationRegistry, _ stats: OriginStats? = nil) -> ByteBuffer {
        encode(["streams": summaries(registry, stats)])
    }

    /// A JSON answer's body (`/streams.json`, the control API): keys sorted, slashes as they are, a final newline.
    static func encode(_ value: some Encodable) -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var buffer = ByteBuffer(bytes: (try? encoder.encode(value)) ?? Data("{}".utf8))
        buffer.writeString("\n")
        return buffer
    }

    /// The page at `/` with several named streams: one row per stream, a link to its player page; it refreshes
    /// itself from `/streams.json` every 2 s.
    static func html(_ registry: PresentationRegistry, _ stats: OriginStats? = nil) -> String {
        let rows = summaries(registry, stats).map { s -> String in
            let video = s.renditions.first { $0.width != nil }
            let size = video.flatMap { v in v.width.map { "\($0)x\(v.height ?? 0)" } } ?? "—"
            let rate = s.renditions.compactMap(\.bandwidth).reduce(0, +)
            let segments = s.renditions.first?.segments ?? 0
            return "<tr><td><a href=\"\(escape(s.path))\"><img class=\"thumb\" alt=\"\" src=\"\(escape(s.thumbnail))?v=\(segments)\"></a></td>"
                + "<td><a href=\"\(escape(s.path))\">\(escape(s.name))</a></td><td class=\"\(s.state)\">\(s.state)</td>"
                + "<td>\(size)</td><td>\(rate > 0 ? String(format: "%.2f Mb/s", Double(rate) / 1e6) : "—")</td>"
                + "<td>\(s.viewers)</td><td>\(s.renditions.count)</td><td><code>\(escape(s.playlist))</code></td></tr>"
        }.joined(separator: "\n")
        return """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>hls-origin streams</title>
        <style>
          :root { color-scheme: dark; }
          body { margin: 0; background: #0f1115; color: #e6e8ee; font: 14px/1.4 system-ui, sans-serif; }
          main { max-width: 1100px; margin: 0 auto; padding: 16px; }
          h1 { font-size: 18px; font-weight: 600; }
          table { border-collapse: collapse; width: 100%; }
          th, td { text-align: left; padding: 8px 10px; border-bottom: 1px solid #2a2f3a; }
          th { color: #8b93a7; font-weight: 500; font-size: 12px; text-transform: uppercase; letter-spacing: .06em; }
          a { color: #5ab0ff; } code { color: #8b93a7; }
          img.thumb { display: block; width: 160px; aspect-ratio: 16 / 9; object-fit: contain; background: #000; border-radius: 4px; }
          .live { color: #ff5a5a; font-weight: 700; } .idle, .waiting { color: #ffb35a; } .ended { color: #8b93a7; }
        </style>
        </head>
        <body><main>
        <h1>Streams</h1>
        <table>
        <thead><tr><th></th><th>stream</th><th>state</th><th>video</th><th>bit rate</th><th>viewers</th><th>renditions</th><th>playlist</th></tr></thead>
        <tbody id="rows">
        \(rows)
        </tbody>
        </table>
        <p><a href="streams.json">streams.json</a></p>
        </main>
        <script>
        const esc = s => String(s).replace(/[&<>"']/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
        async function refresh() {
          try {
            const r = await fetch('streams.json', {cache: 'no-store'});
            const {streams} = await r.json();
            document.getElementById('rows').innerHTML = streams.map(s => {
              const v = s.renditions.find(x => x.width);
              const rate = s.renditions.reduce((a, x) => a + (x.bandwidth || 0), 0);
              const seg = s.renditions.length ? s.renditions[0].segments : 0;
              return `<tr><td><a href="${esc(s.path)}"><img class="thumb" alt="" src="${esc(s.thumbnail)}?v=${seg}"></a></td>` +
                `<td><a href="${esc(s.path)}">${esc(s.name)}</a></td><td class="${esc(s.state)}">${esc(s.state)}</td>` +
                `<td>${v ? v.width + 'x' + v.height : '—'}</td><td>${rate ? (rate / 1e6).toFixed(2) + ' Mb/s' : '—'}</td>` +
                `<td>${s.viewers}</td><td>${s.renditions.length}</td><td><code>${esc(s.playlist)}</code></td></tr>`;
            }).join('');
          } catch (e) {}
        }
        setInterval(refresh, 2000);
        </script>
        </body>
        </html>
        """
    }

    private static func escape(_ s: String) -> String { XMLEscaping.escape(s) }
}
