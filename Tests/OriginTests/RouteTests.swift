import MediaCore
import MediaPresentation
import Testing
@testable import Origin

/// The route table (`Route`), on its own: one resolution per path, read by the full path, the fast paths and the
/// metric labels.
@Suite struct RouteTests {
    /// A registry with a root stream (a ladder: `720p` + `audio`) and a named one whose layout is not announced yet.
    static func registry() throws -> (PresentationRegistry, LivePresentation, LivePresentation) {
        let root = LivePresentation.live()
        try root.consume(.layout([Rendition(name: "720p", kind: .video, scheme: .nested("720p"), audioGroup: "audio"),
                                  Rendition(name: "audio", kind: .audio, scheme: .nested("audio"), audioGroup: "audio")],
                                 TimingPolicy(targetDuration: 1)))
        let cam = LivePresentation.live()
        let registry = PresentationRegistry()
        registry.register(root, at: "")
        registry.register(cam, at: "cam1")
        return (registry, root, cam)
    }

    static func describe(_ r: Route) -> String {
        switch r {
        case .page: "page"
        case .hlsJS: "hls.js"
        case .streamsJSON: "streams.json"
        case .metrics: "metrics"
        case .time: "time"
        case .redirect(let to): "redirect \(to)"
        case .notFound: "404"
        case .healthz: "healthz"
        case .readyz: "readyz"
        case .api(let a): "api \(a)"
        case .stream(let name, _, let s):
            "\(name.isEmpty ? "root" : name): " + {
                switch s {
                case .page: "page"
                case .hlsJS: "hls.js"
                case .qoe: "qoe"
                case .events: "events"
                case .subtitles: "subtitles"
                case .thumbnail: "thumbnail"
                case .multivariant: "multivariant"
                case .manifest: "manifest"
                case .time: "time"
                case .object(let r, let o, _): "rendition \(r) \(o)"
                case .tiles(_, let t): "tiles \(t)"
                case .beforeLayout(let p): "before layout \(p)"
                case .key(let id): "key \(id)"
                case .unknown: "unknown"
                }
            }()
        }
    }

    @Test func pathsResolveOnce() throws {
        let (registry, _, _) = try Self.registry()
        let table: [(String, String)] = [
            ("/", "page"), ("/index.html", "page"), ("/hls.mjs", "hls.js"), ("/streams.json", "streams.json"),
            ("/metrics", "metrics"), ("/time", "time"), ("/cam1", "redirect /cam1/"),
            ("/index.m3u8", "root: multivariant"), ("/manifest.mpd", "root: manifest"),
            ("/720p.m3u8", "root: rendition 0 playlist"), ("/720p.iframes.m3u8", "root: rendition 0 iFramePlaylist"),
            ("/audio.iframes.m3u8", "root: unknown"), ("/cam1/stream.iframes.m3u8", "cam1: before layout stream.iframes.m3u8"),
            ("/720p/init.mp4", "root: rendition 0 initSegment(0)"),
            ("/720p/init2.mp4", "root: rendition 0 initSegment(2)"), ("/audio/seg7.m4s", "root: rendition 1 segment(7)"),
            ("/720p/seg7.2.m4s", "root: rendition 0 part(7, 2)"), ("/720p/seg07.m4s", "root: unknown"),
            ("/1080p.m3u8", "root: unknown"), ("/thumbnail.jpg", "root: thumbnail"), ("/qoe", "root: qoe"),
            ("/cam1/", "cam1: page"), ("/cam1/hls.mjs", "cam1: hls.js"), ("/cam1/index.m3u8", "cam1: multivariant"),
            ("/cam1/time", "cam1: time"), ("/cam1/stream.m3u8", "cam1: before layout stream.m3u8"),
            ("/cam1/events", "cam1: events"), ("/cam1/subtitles", "cam1: subtitles"), ("/subtitles", "root: subtitles"),
            // The origin's own paths come before the root stream's.
            ("/healthz", "healthz"), ("/readyz", "readyz"), ("/api/v1/streams", "api streams"),
            ("/api/v1/streams/", "api streams"), ("/api/v1/streams/cam1", "api stream(\"cam1\")"),
            ("/api/v1/streams/cam1/x", "api unknown"), ("/api", "api unknown"), ("/api/v2/streams", "api unknown"),
            ("/apix", "root: unknown"),
        ]
        for (path, expected) in table {
            #expect(Self.describe(Route.resolve(Substring(path), in: registry)) == expected, "\(path)")
        }
        // Without a root presentation, an unknown path is nobody's.
        let named = PresentationRegistry()
        named.register(LivePresentation.live(), at: "cam1")
        #expect(Self.describe(Route.resolve("/nothing.m3u8", in: named)) == "404")
    }

    @Test func labelsComeFromTheRegistryAndTheLayout() throws {
        let (registry, _, _) = try Self.registry()
        func labels(_ p: String) -> [String] { let l = Route.resolve(Substring(p), in: registry).labels; return [l.stream, l.rendition, l.kind] }
        #expect(labels("/metrics") == ["", "", "metrics"])
        #expect(labels("/720p/seg3.m4s") == ["default", "720p", "segment"], "the root stream is labelled default")
        #expect(labels("/audio/seg3.1.m4s") == ["default", "audio", "part"])
        #expect(labels("/720p/init.mp4") == ["default", "720p", "init"])
        #expect(labels("/720p.iframes.m3u8") == ["default", "720p", "playlist"])
        #expect(labels("/index.m3u8") == ["default", "", "playlist"])
        #expect(labels("/cam1/qoe") == ["cam1", "", "qoe"])
        #expect(labels("/cam1/whatever") == ["cam1", "", "other"])
        #expect(labels("/streams.json") == ["", "", "other"])
    }

    /// With `--thumbnails`, a stream's tiles resolve before its renditions (and before its layout); without, they are
    /// nothing.
    @Test func thumbnailTilesResolveWhenTheStreamHasThem() throws {
        let (registry, _, _) = try Self.registry()
        #expect(Self.describe(Route.resolve("/thumbnails.m3u8", in: registry)) == "root: unknown")
        registry.setTileSheets(.live(retention: .seconds(10)), for: "")
        registry.setTileSheets(.live(retention: .seconds(10)), for: "cam1")
        let table: [(String, String)] = [
            ("/thumbnails.m3u8", "root: tiles playlist"), ("/thumbnails.vtt", "root: tiles vtt"),
            ("/thumbnails/3.jpg", "root: tiles sheet(3)"), ("/thumbnails/03.jpg", "root: unknown"),
            ("/cam1/thumbnails/0.jpg", "cam1: tiles sheet(0)"), ("/cam1/thumbnails.m3u8", "cam1: tiles playlist"),
        ]
        for (path, expected) in table {
            #expect(Self.describe(Route.resolve(Substring(path), in: registry)) == expected, "\(path)")
        }
        let l = Route.resolve("/thumbnails/3.jpg", in: registry).labels
        #expect([l.stream, l.rendition, l.kind] == ["default", "", "thumbnail"])
    }

    @Test func malformedPathsHaveNoRoute() {
        #expect(Route.validate("/ok/seg1.m4s") == nil)
        #expect(Route.validate(Substring("/" + String(repeating: "a", count: Route.maxPathLength))) == .tooLong)
        #expect(Route.validate("/a/../b") == .malformed)
        #expect(Route.validate("seg1.m4s") == .malformed)
    }

    @Test func oneListOfHeaderFieldsSendsRequestsToTheFullPath() {
        for name in ["Range", "if-none-match", "If-Modified-Since", "Expect", "upgrade", "Content-Length", "TRANSFER-ENCODING"] {
            #expect(FullPathFields.contains(name), "\(name)")
        }
        for name in ["Host", "Accept", "Connection", "User-Agent", "if"] { #expect(!FullPathFields.contains(name), "\(name)") }
    }
}
