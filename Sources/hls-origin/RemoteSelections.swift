import AsyncHTTPClient
import Foundation
import HLS
import Logging
import MediaCore
import NIOCore

/// `package URL` of an HLS presentation (issue 21 §4, an app's offline copy): what libavformat 5.1's HLS demuxer
/// leaves out of the media it reads.
/// - **Subtitle renditions** (`EXT-X-MEDIA:TYPE=SUBTITLES` with a URI): it does not read them. Each is fetched here:
///   its media playlist, then every WebVTT segment, each cue placed on the media timeline by the segment's
///   `X-TIMESTAMP-MAP` (RFC 8216 §3.5: `LOCAL` cue time = `MPEGTS` 90 kHz media time), a cue repeated in the segments
///   it spans (§3.5 asks for that) kept once. They are written as one WebVTT file per rendition and read as
///   `--subtitles LANG=FILE` sidecars are (their time 0 is the input's, which for our own output is `tfdt` 0).
/// - **The default audio language**: the demuxer lists every audio rendition's track, in its own order; the
///   multivariant's `DEFAULT=YES` audio says which one the copy offers first (unless `--default-audio` says).
///
/// Anything else (a plain file, a media playlist, a URL that is not HLS) gives `nil`: the input is read as it is.
struct RemoteSelections {
    var subtitles: [SubtitleSidecar] = []
    var defaultAudio: String?

    /// At most this much text per playlist or WebVTT segment: a subtitle segment is a few KB.
    static let maxBytes = 4 << 20

    static func read(_ input: String, into directory: String, logger: Logger) async throws -> RemoteSelections? {
        guard let (multivariant, base) = await multivariant(input) else { return nil }
        var out = RemoteSelections()
        out.defaultAudio = multivariant.media.first { $0.type == .audio && $0.isDefault }?.language
        for (i, (tag, url, what)) in subtitleRenditions(of: multivariant, base: base, logger: logger).enumerated() {
            let cues: [SubtitleCue]
            do {
                cues = try await Self.cues(of: url, logger: logger)
            } catch {
                throw RemoteSelectionsError("\(what): \(error)")
            }
            let path = directory + "/subtitles-\(i).vtt"
            do {
                if i == 0 { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
                try Data(WebVTTSegment.make(cues, from: MediaTime(value: 0, timescale: 1), to: MediaTime(value: Int64(Int32.max), timescale: 1))).write(to: URL(fileURLWithPath: path))
            } catch {
                throw RemoteSelectionsError("cannot write '\(path)': \(error.localizedDescription)")
            }
            logger.info("\(what): \(cues.count) cues")
            out.subtitles.append(SubtitleSidecar(language: tag, path: path, format: .webVTT))
        }
        return out
    }

    /// The multivariant playlist at `url`, or `nil` when it is not one (or cannot be fetched).
    /// Only a URL whose path ends in `.m3u8` or that answers with an `mpegurl` type is read (a live MPEG-TS or an MP4
    /// over HTTP is left to the demuxer at once, not read here first).
    static func multivariant(_ input: String) async -> (MultivariantPlaylist, URL)? {
        guard let base = URL(string: input), ["http", "https"].contains(base.scheme?.lowercased() ?? "") else { return nil }
        guard let text = try? await fetch(base, onlyPlaylists: true), text.hasPrefix("#EXTM3U"), text.contains("#EXT-X-STREAM-INF"),
              let multivariant = try? MultivariantPlaylist.parse(text) else { return nil }
        return (multivariant, base)
    }

    /// The subtitle renditions (`EXT-X-MEDIA:TYPE=SUBTITLES` with a URI and a `LANGUAGE`) of a multivariant playlist
    /// fetched from `base`: each one's language, media playlist URL and a name for messages.
    static func subtitleRenditions(of multivariant: MultivariantPlaylist, base: URL,
                                   logger: Logger) -> [(LanguageTag, URL, String)] {
        multivariant.media.filter { $0.type == .subtitles }.compactMap { m in
            guard let uri = m.uri, let url = URL(string: uri, relativeTo: base)?.absoluteURL else { return nil }
            let what = "subtitle rendition '\(m.name)' (\(url.absoluteString))"
            guard let tag = m.language.flatMap(LanguageTag.init) else {
                logger.warning("\(what): no LANGUAGE, skipped")
                return nil
            }
            return (tag, url, what)
        }
    }

    /// Every cue of a WebVTT media playlist, on the media timeline, in order, each once.
    static func cues(of playlistURL: URL, logger: Logger) async throws -> [SubtitleCue] {
        let playlist = try MediaPlaylist.parse(try await fetch(playlistURL))
        var cues: [SubtitleCue] = []
        var seen = Set<SubtitleCue>()
        for segment in playlist.segments {
            guard let url = URL(string: segment.uri, relativeTo: playlistURL)?.absoluteURL else {
                throw RemoteSelectionsError("segment URI '\(segment.uri)' is not a URL")
            }
            for placed in try segmentCues(try await fetch(url), from: url, logger: logger) where seen.insert(placed).inserted {
                cues.append(placed)
            }
        }
        return cues.sorted { $0.start != $1.start ? $0.start < $1.start : $0.end < $1.end }
    }

    /// The cues of one WebVTT segment (`text`, fetched from `url`), on the media timeline by its `X-TIMESTAMP-MAP`.
    static func segmentCues(_ text: String, from url: URL, logger: Logger) throws -> [SubtitleCue] {
        let file: SubtitleFile
        do {
            file = try SubtitleFile(parsing: text, format: .webVTT)
        } catch {
            // A segment with no cue is the header alone (§3.5): nothing to take.
            if text.hasPrefix("WEBVTT") || text.hasPrefix("\u{FEFF}WEBVTT") { return [] }
            throw RemoteSelectionsError("\(url.absoluteString): \(error)")
        }
        for w in file.warnings { logger.warning("\(url.absoluteString): \(w)") }
        let offset = timestampMap(text)
        return file.cues.map { $0.shifted(by: offset) }
    }

    /// What to add to a segment's cue times to put them on the media timeline: `MPEGTS/90000 - LOCAL` from its
    /// `X-TIMESTAMP-MAP=MPEGTS:<90 kHz>,LOCAL:<hh:mm:ss.ttt>` header line (RFC 8216 §3.5), zero without one.
    static func timestampMap(_ text: String) -> MediaTime {
        guard let line = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).prefix(while: { !$0.isEmpty })
            .first(where: { $0.hasPrefix("X-TIMESTAMP-MAP=") }) else { return .zero(1000) }
        var mpegts: Int64 = 0
        var local: Int64 = 0
        for field in line.dropFirst("X-TIMESTAMP-MAP=".count).split(separator: ",") {
            let kv = field.split(separator: ":", maxSplits: 1).map(String.init)
            guard kv.count == 2 else { continue }
            if kv[0] == "MPEGTS" { mpegts = Int64(kv[1]) ?? 0 }
            if kv[0] == "LOCAL" { local = milliseconds(kv[1]) ?? 0 }
        }
        return MediaTime(value: mpegts, timescale: 90_000).converted(to: 1000, rounding: .nearest)
            - MediaTime(value: local, timescale: 1000)
    }

    /// WebVTT `[hh:]mm:ss.ttt` in milliseconds.
    static func milliseconds(_ s: String) -> Int64? {
        let parts = s.split(separator: ":")
        guard (2...3).contains(parts.count), let last = parts.last else { return nil }
        let sec = last.split(separator: ".")
        guard sec.count == 2, let whole = Int64(sec[0]), let frac = Int64(sec[1]), sec[1].count == 3 else { return nil }
        var total: Int64 = 0
        for p in parts.dropLast() {
            guard let v = Int64(p) else { return nil }
            total = total * 60 + v
        }
        return (total * 60 + whole) * 1000 + frac
    }

    static func fetch(_ url: URL, onlyPlaylists: Bool = false) async throws -> String {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(30))
        guard response.status == .ok else { throw RemoteSelectionsError("\(url.absoluteString): HTTP \(response.status.code)") }
        if onlyPlaylists, !url.path.lowercased().hasSuffix(".m3u8"),
           !(response.headers.first(name: "content-type") ?? "").lowercased().contains("mpegurl") {
            throw RemoteSelectionsError("\(url.absoluteString): not a playlist")
        }
        let body = try await response.body.collect(upTo: maxBytes)
        return String(buffer: body)
    }
}

struct RemoteSelectionsError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
