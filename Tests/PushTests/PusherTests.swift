import HLS
import Logging
import MediaCore
import MediaPresentation
import Push
import Synchronization
import Testing

/// `Pusher` against a scripted transport: what reaches the ingest and in which order, an outage (one log line, back-off,
/// oldest objects dropped, newest playlists sent once it is back), a refusing ingest, deletions. Time is injected: the
/// back-off sleeps are recorded, not slept, and the retention clock moves by hand. No timing assertions.
@Suite struct PusherTests {
    static let video = TrackFormat(trackID: 1, kind: .video, timescale: 90_000,
                                   codec: .h264(avcC: [1, 0x64, 0, 0x1F, 0xFF, 0xE1, 0, 4, 0x67, 0x64, 0, 0x1F, 1, 0, 2, 0x68, 0xEE]),
                                   width: 1280, height: 720)
    static let audio = TrackFormat(trackID: 2, kind: .audio, timescale: 48_000, codec: .aac(audioSpecificConfig: [0x11, 0x90]),
                                   sampleRate: 48_000, channelCount: 2)
    static let base = "http://ingest.test/live"

    /// The ingest as the pusher sees it: every request in arrival order, and a switch for how it answers.
    final class ScriptedIngest: PushTransport {
        enum Mode: Sendable { case up, down, refuse(Int, String) }
        let mode = Mutex(Mode.up)
        let requests = Mutex<[(PushRequest, PushResult)]>([])
        let shutDown = Mutex(false)

        func send(_ request: PushRequest) async -> PushResult {
            let result: PushResult = switch mode.withLock({ $0 }) {
            case .up: .accepted
            case .down: .failed("connection refused")
            case .refuse(let status, let reason): .refused(status: status, reason: reason)
            }
            requests.withLock { $0.append((request, result)) }
            return result
        }
        func shutdown() async { shutDown.withLock { $0 = true } }

        /// Accepted requests: (method, path under the push URL, body).
        var accepted: [(method: PushRequest.Method, path: String, body: [UInt8])] {
            requests.withLock { $0 }.filter { $0.1 == .accepted }.map { r, _ in
                (r.method, String(r.url.dropFirst(PusherTests.base.count + 1)), r.body.joined)
            }
        }
    }

    /// Log lines at notice level and above.
    final class LogLines: Sendable {
        let lines = Mutex<[(Logger.Level, String)]>([])
        func logger() -> Logger {
            Logger(label: "push-test") { _ in Handler(sink: self) }
        }
        func count(_ level: Logger.Level, containing text: String) -> Int {
            lines.withLock { $0 }.filter { $0.0 == level && $0.1.contains(text) }.count
        }
        struct Handler: LogHandler {
            let sink: LogLines
            var metadata: Logger.Metadata = [:]
            var logLevel: Logger.Level = .notice
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) {
                sink.lines.withLock { $0.append((event.level, "\(event.message)")) }
            }
        }
    }

    /// Back-off sleeps: recorded, and held until `open()` when closed.
    final class Gate: Sendable {
        private struct State { var open = true; var waiting: [CheckedContinuation<Void, Never>] = []; var slept: [Duration] = [] }
        private let state = Mutex(State())
        init(open: Bool) { state.withLock { $0.open = open } }
        var slept: [Duration] { state.withLock { $0.slept } }
        func sleep(_ d: Duration) async {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now: Bool = state.withLock { s in
                    s.slept.append(d)
                    if s.open { return true }
                    s.waiting.append(c)
                    return false
                }
                if now { c.resume() }
            }
            await Task.yield()
        }
        /// Returns `true` once `n` sleeps have begun; `false` if they have not after 4,000 polls (a broken test,
        /// not a slow machine: the workers start at once).
        func waitForSleepers(_ n: Int) async -> Bool {
            for _ in 0..<4000 {
                if state.withLock({ $0.slept.count }) >= n { return true }
                try? await Task.sleep(for: .milliseconds(5))
            }
            return false
        }
        func open() {
            let waiting: [CheckedContinuation<Void, Never>] = state.withLock { s in
                s.open = true
                defer { s.waiting = [] }
                return s.waiting
            }
            waiting.forEach { $0.resume() }
        }
    }

    static func info(_ n: UInt64) -> SegmentInfo {
        SegmentInfo(sequence: n, startTime: MediaTime(value: Int64(n) * 90_000, timescale: 90_000),
                    duration: MediaTime(value: 90_000, timescale: 90_000), byteCount: 500,
                    programDateTime: WallClock(millisecondsSince1970: 1_763_785_226_000 + Int64(n) * 1000), videoSampleCount: 30)
    }

    static let ladder = [Rendition(name: "720p", kind: .video, scheme: .nested("720p"), audioGroup: "audio"),
                         Rendition(name: "audio", kind: .audio, scheme: .nested("audio"), audioGroup: "audio")]

    static func start(_ pusher: Pusher, parts: Bool) {
        let policy = TimingPolicy(targetDuration: 1, partTarget: parts ? MediaTime(value: 500, timescale: 1000) : nil)
        pusher.consume(.layout(ladder, policy))
        pusher.consume(.initSegment(rendition: 0, bytes: [1, 2, 3], tracks: [video]))
        pusher.consume(.initSegment(rendition: 1, bytes: [4, 5, 6], tracks: [audio]))
    }

    /// Segment `n` of both renditions, with two parts each when `parts`.
    static func segment(_ pusher: Pusher, _ n: UInt64, parts: Bool) {
        for r in 0..<2 {
            if parts {
                for i in 0..<2 {
                    pusher.consume(.part(rendition: r, PartInfo(segmentSequence: n, index: i, duration: .seconds(1, timescale: 2),
                                                               byteCount: 10, independent: i == 0, endsSegment: i == 1),
                                         bytes: [UInt8](repeating: UInt8(i), count: 10)))
                }
            }
            pusher.consume(.segment(rendition: r, info(n), bytes: [UInt8](repeating: UInt8(truncatingIfNeeded: n), count: 500)))
        }
    }

    static func makePusher(_ ingest: ScriptedIngest, _ log: LogLines, gate: Gate = Gate(open: true),
                           clock: @escaping @Sendable () -> Int64 = { 0 },
                           configure: (inout Pusher.Configuration) -> Void = { _ in }) -> Pusher {
        var c = Pusher.Configuration(url: base)
        c.windowSize = 3
        configure(&c)
        return Pusher(configuration: c, transport: ingest, logger: log.logger(), clock: clock, sleep: { await gate.sleep($0) })
    }

    /// Every URI a pushed playlist lists (map, segments, parts unless `parts` is false; not the preload hint) was
    /// accepted before it.
    static func playlistsListOnlyWhatArrived(_ accepted: [(method: PushRequest.Method, path: String, body: [UInt8])],
                                             parts: Bool = true) throws {
        var present = Set<String>()
        for (i, a) in accepted.enumerated() {
            if a.method == .delete { present.remove(a.path); continue }
            defer { present.insert(a.path) }
            guard a.path.hasSuffix(".m3u8"), a.path != "index.m3u8" else { continue }
            let p = try MediaPlaylist.parse(String(decoding: a.body, as: UTF8.self))
            var listed = (p.mapURI.map { [$0] } ?? []) + (parts ? p.trailingParts.map(\.uri) : [])
            for s in p.segments { listed += [s.uri] + (parts ? s.parts.map(\.uri) : []) + (s.mapURI.map { [$0] } ?? []) }
            for uri in listed { #expect(present.contains(uri), "request \(i): \(a.path) lists \(uri) before it arrived") }
        }
    }

    @Test(arguments: [false, true])
    func everyObjectArrivesBeforeThePlaylistThatListsIt(parts: Bool) async throws {
        let ingest = ScriptedIngest(), log = LogLines()
        let pusher = Self.makePusher(ingest, log)
        Self.start(pusher, parts: parts)
        for n in 0..<6 {
            Self.segment(pusher, UInt64(n), parts: parts)
            // As a live stream goes: each segment reaches the ingest before the window moves on.
            #expect(await pusher.drain(timeout: .seconds(30)))
        }
        pusher.consume(.end)
        #expect(await pusher.drain(timeout: .seconds(30)))
        await pusher.shutdown()
        #expect(ingest.shutDown.withLock { $0 })

        let accepted = ingest.accepted
        try Self.playlistsListOnlyWhatArrived(accepted)
        #expect(accepted.allSatisfy { $0.method == .put })
        let paths = Set(accepted.map(\.path))
        for r in ["720p", "audio"] {
            #expect(paths.contains("\(r)/init.mp4"))
            for n in 0..<6 { #expect(paths.contains("\(r)/seg\(n).m4s")) }
            if parts { #expect(paths.contains("\(r)/seg5.1.m4s")) } else { #expect(!paths.contains { $0.hasPrefix("\(r)/seg0.0") }) }
            // The last state of each playlist is the ended one, with the live window.
            let last = try #require(accepted.last { $0.path == "\(r).m3u8" })
            let p = try MediaPlaylist.parse(String(decoding: last.body, as: UTF8.self))
            #expect(p.endList)
            #expect(p.segments.map(\.sequence) == [3, 4, 5])
        }
        // index.m3u8 arrives after the media playlists it names.
        let firstIndex = try #require(accepted.firstIndex { $0.path == "index.m3u8" })
        for r in ["720p", "audio"] { #expect(accepted[..<firstIndex].contains { $0.path == "\(r).m3u8" }) }
        let index = try #require(accepted.last { $0.path == "index.m3u8" })
        #expect(String(decoding: index.body, as: UTF8.self).contains("720p.m3u8"))
        #expect(pusher.stats.refused == 0 && pusher.stats.dropped == 0 && pusher.stats.outages == 0)
        #expect(log.lines.withLock { $0 }.isEmpty)
        // The segment bytes went out as they came.
        #expect(accepted.first { $0.path == "720p/seg4.m4s" }?.body == [UInt8](repeating: 4, count: 500))
    }

    @Test func anOutageIsOneLineAndTheNewestPlaylistsArriveOnceTheIngestIsBack() async throws {
        let ingest = ScriptedIngest(), log = LogLines()
        let gate = Gate(open: false)
        let pusher = Self.makePusher(ingest, log, gate: gate, configure: { $0.queueLimit = 4 })
        ingest.mode.withLock { $0 = .down }
        Self.start(pusher, parts: true)
        Self.segment(pusher, 0, parts: true)
        // Each rendition's worker fails its first object and sleeps (index.m3u8 waits for the media playlists);
        // then the lanes fill up.
        try #require(await gate.waitForSleepers(2))
        for n in 1..<12 { Self.segment(pusher, UInt64(n), parts: true) }
        ingest.mode.withLock { $0 = .up }
        gate.open()
        for n in 12..<14 { Self.segment(pusher, UInt64(n), parts: true) }
        #expect(await pusher.drain(timeout: .seconds(30)))
        await pusher.shutdown()

        let stats = pusher.stats
        #expect(stats.outages == 1)
        #expect(stats.dropped > 0)
        #expect(stats.failedAttempts >= 1)
        #expect(log.count(.warning, containing: "push: PUT \(Self.base)/") == 1)
        #expect(log.count(.warning, containing: "retrying with back-off") == 1)
        #expect(log.count(.notice, containing: "reachable again") == 1)
        #expect(log.lines.withLock { $0 }.count == 2)
        #expect(gate.slept.allSatisfy { $0 >= .milliseconds(250) && $0 <= .milliseconds(4000) })

        let accepted = ingest.accepted
        // Parts go first when a lane is full: the playlists may list parts that were dropped, never a segment that
        // is still in the window (the lane kept the newest segments).
        try Self.playlistsListOnlyWhatArrived(accepted, parts: false)
        for r in ["720p", "audio"] {
            #expect(accepted.contains { $0.path == "\(r)/init.mp4" }, "an init segment is never dropped")
            let last = try #require(accepted.last { $0.path == "\(r).m3u8" })
            let p = try MediaPlaylist.parse(String(decoding: last.body, as: UTF8.self))
            #expect(p.segments.last?.sequence == 13, "the newest playlist state arrives")
            #expect(accepted.contains { $0.path == "\(r)/seg13.m4s" })
        }
    }

    @Test func aRefusingIngestIsOneErrorLineAndNoRetry() async throws {
        let ingest = ScriptedIngest(), log = LogLines()
        let gate = Gate(open: true)
        let pusher = Self.makePusher(ingest, log, gate: gate)
        ingest.mode.withLock { $0 = .refuse(403, "Forbidden") }
        Self.start(pusher, parts: false)
        for n in 0..<4 { Self.segment(pusher, UInt64(n), parts: false) }
        pusher.consume(.end)
        #expect(await pusher.drain(timeout: .seconds(30)))
        await pusher.shutdown()

        let requests = ingest.requests.withLock { $0 }
        #expect(Set(requests.map(\.0.url)).count == requests.count - countRepeatedPlaylists(requests.map(\.0)),
                "no object is sent twice")
        #expect(gate.slept.isEmpty, "a refusal is not retried")
        #expect(pusher.stats.refused == requests.count)
        #expect(log.count(.error, containing: "refused: 403 Forbidden") == 1)
        #expect(log.lines.withLock { $0 }.count == 1)
        let line = log.lines.withLock { $0 }.first?.1 ?? ""
        #expect(line.hasPrefix("push: PUT \(Self.base)/"), "names the method and URL: \(line)")
    }

    /// Playlists are sent again when they change; everything else once.
    private func countRepeatedPlaylists(_ requests: [PushRequest]) -> Int {
        var seen = Set<String>(), repeated = 0
        for r in requests where r.url.hasSuffix(".m3u8") {
            if !seen.insert(r.url).inserted { repeated += 1 }
        }
        return repeated
    }

    @Test func expiredSegmentsAndTheirPartsAreDeletedAfterTheRetention() async throws {
        let ingest = ScriptedIngest(), log = LogLines()
        let now = Mutex<Int64>(0)
        let pusher = Self.makePusher(ingest, log, clock: { now.withLock { $0 } }, configure: { $0.deleteExpired = true })
        Self.start(pusher, parts: true)
        for n in 0..<12 {
            Self.segment(pusher, UInt64(n), parts: true)
            #expect(await pusher.drain(timeout: .seconds(30)))
            now.withLock { $0 += 1000 }
        }
        pusher.consume(.end)
        #expect(await pusher.drain(timeout: .seconds(30)))
        await pusher.shutdown()

        let accepted = ingest.accepted
        try Self.playlistsListOnlyWhatArrived(accepted)
        let deleted = Set(accepted.filter { $0.method == .delete }.map(\.path))
        // Window 3: segment n (published at n s) is evicted by segment n + 3, at (n + 3) s, from a playlist of 4 s
        // (LiveWindow counts the segment that pushes it out); it may go 1 s (its duration) + 4 s later, at (n + 8) s,
        // and goes at the first publish after that: segment n + 9. The last publish is segment 11: 0, 1, 2 go.
        for r in ["720p", "audio"] {
            for n in 0..<3 {
                #expect(deleted.contains("\(r)/seg\(n).m4s"), "seg\(n)")
                #expect(deleted.contains("\(r)/seg\(n).0.m4s") && deleted.contains("\(r)/seg\(n).1.m4s"))
            }
            for n in 3..<12 { #expect(!deleted.contains("\(r)/seg\(n).m4s"), "seg\(n) is still listed or retained") }
        }
        #expect(!deleted.contains { $0.hasSuffix(".m3u8") || $0.hasSuffix(".mp4") })
        // Each DELETE comes after that object's PUT.
        for (i, a) in accepted.enumerated() where a.method == .delete {
            #expect(accepted[..<i].contains { $0.method == .put && $0.path == a.path })
        }
    }
}

extension PusherTests {
    /// After a long outage the queue holds objects that left the window meanwhile: they are skipped, not sent.
    @Test func objectsThatLeftTheWindowWhileQueuedAreNotSent() async throws {
        let ingest = ScriptedIngest(), log = LogLines()
        let gate = Gate(open: false)
        let pusher = Self.makePusher(ingest, log, gate: gate)
        ingest.mode.withLock { $0 = .down }
        Self.start(pusher, parts: false)
        Self.segment(pusher, 0, parts: false)
        try #require(await gate.waitForSleepers(2))
        for n in 1..<10 { Self.segment(pusher, UInt64(n), parts: false) }
        ingest.mode.withLock { $0 = .up }
        gate.open()
        #expect(await pusher.drain(timeout: .seconds(30)))
        await pusher.shutdown()

        let sent = Set(ingest.accepted.map(\.path))
        for r in ["720p", "audio"] {
            for n in 1..<7 { #expect(!sent.contains("\(r)/seg\(n).m4s"), "seg\(n) left the window (7, 8, 9) while queued") }
            for n in 7..<10 { #expect(sent.contains("\(r)/seg\(n).m4s")) }
        }
        #expect(pusher.stats.dropped >= 12)
        try Self.playlistsListOnlyWhatArrived(ingest.accepted)
    }
}

extension PusherTests {
    /// `--push-method POST` sends objects and playlists with POST (deletions stay DELETE), each to the URL + its
    /// path, whether or not the URL ends with `/`, with the content type the origin serves it with.
    @Test func postToTheURLWithoutATrailingSlash() async throws {
        let ingest = ScriptedIngest(), log = LogLines()
        var c = Pusher.Configuration(url: Self.base)
        #expect(c.url == Self.base + "/")
        #expect(Pusher.Configuration(url: Self.base + "/").url == Self.base + "/")
        c.method = .post
        c.windowSize = 3
        let pusher = Pusher(configuration: c, transport: ingest, logger: log.logger(), clock: { 0 }, sleep: { _ in })
        Self.start(pusher, parts: false)
        Self.segment(pusher, 0, parts: false)
        pusher.consume(.end)
        #expect(await pusher.drain(timeout: .seconds(30)))
        await pusher.shutdown()
        let requests = ingest.requests.withLock { $0 }.map(\.0)
        #expect(!requests.isEmpty && requests.allSatisfy { $0.method == .post })
        let types = Dictionary(requests.map { ($0.url.split(separator: "/").last.map(String.init) ?? "", $0.contentType) },
                               uniquingKeysWith: { a, _ in a })
        #expect(types["init.mp4"] == "video/mp4")
        #expect(types["seg0.m4s"] == "video/iso.segment")
        #expect(types["720p.m3u8"] == "application/vnd.apple.mpegurl")
        #expect(types["index.m3u8"] == "application/vnd.apple.mpegurl")
        #expect(requests.contains { $0.url == Self.base + "/720p/seg0.m4s" })
    }
}

extension PusherTests {
    /// A WebVTT subtitle rendition is pushed without an init segment, its segments as `text/vtt`, its playlist without a
    /// map, and the multivariant playlist names it.
    @Test func aSubtitleRenditionIsPushedAsWebVTT() async throws {
        let ingest = ScriptedIngest(), log = LogLines()
        let pusher = Self.makePusher(ingest, log)
        let subs = Rendition.subtitles(SubtitleLabel(language: LanguageTag("en"), name: "English"), position: 0)
        pusher.consume(.layout(Self.ladder + [subs], TimingPolicy(targetDuration: 1)))
        pusher.consume(.initSegment(rendition: 0, bytes: [1, 2, 3], tracks: [Self.video]))
        pusher.consume(.initSegment(rendition: 1, bytes: [4, 5, 6], tracks: [Self.audio]))
        pusher.consume(.initSegment(rendition: 2, bytes: [], tracks: []))
        let vtt = Array("WEBVTT\n\n".utf8)
        for n in 0..<2 {
            Self.segment(pusher, UInt64(n), parts: false)
            var info = Self.info(UInt64(n))
            info.byteCount = vtt.count
            info.format = .webVTT
            pusher.consume(.segment(rendition: 2, info, bytes: vtt))
            #expect(await pusher.drain(timeout: .seconds(30)))
        }
        await pusher.shutdown()
        let requests = ingest.requests.withLock { $0 }.map(\.0)
        let paths = requests.map { String($0.url.dropFirst(Self.base.count + 1)) }
        #expect(!paths.contains { $0.hasPrefix("subs-en/init") })
        #expect(requests.first { $0.url.hasSuffix("/subs-en/seg1.vtt") }?.contentType == "text/vtt; charset=utf-8")
        try Self.playlistsListOnlyWhatArrived(ingest.accepted, parts: false)
        let playlist = try #require(ingest.accepted.last { $0.path == "subs-en.m3u8" })
        #expect(!String(decoding: playlist.body, as: UTF8.self).contains("EXT-X-MAP"))
        let index = try #require(ingest.accepted.last { $0.path == "index.m3u8" })
        #expect(String(decoding: index.body, as: UTF8.self).contains("TYPE=SUBTITLES,GROUP-ID=\"subs\""))
    }
}
