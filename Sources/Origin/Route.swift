import MediaPresentation

/// What a request names, resolved once per request from its path (STYLE.md §10): the full path
/// (`OriginResponder.serve`), the HTTP/1.1 and HTTP/2 fast paths (`FastPath`) and the metric labels all read it. A new
/// object kind is one case here and its answer.
enum Route: Sendable {
    /// The player page (`/`, `/index.html`) or, with several named streams and none at the root, the stream list.
    case page
    /// The local hls.js the page loads.
    case hlsJS
    case streamsJSON
    case metrics
    /// The origin's clock, DASH `UTCTiming` (`/time`, `/NAME/time`).
    case time
    /// `/healthz`: the process is up. Open to all (load balancers probe it), not a viewer, not logged per request.
    case healthz
    /// `/readyz`: every configured stream (or those of `?stream=a,b`) is live. As open as `healthz`.
    case readyz
    /// The control API (`/api/...`), behind its own credential; 404 without one.
    case api(APIRoute)
    /// `/cam1` → `/cam1/` (the page's relative URLs need the slash).
    case redirect(String)
    /// Something of a registered presentation.
    case stream(name: String, LivePresentation, StreamRoute)
    case notFound

    /// Under a presentation: its page and the objects of its renditions.
    enum StreamRoute: Sendable {
        case page
        case hlsJS
        case qoe
        /// `events`: the events API (POST, behind the API token).
        case events
        /// `subtitles`: the live cue API (POST, behind the API token, like `events`).
        case subtitles
        case thumbnail
        case multivariant
        case manifest
        case time
        /// A rendition's playlist, I-frame playlist, init segment, segment or part (the layout is announced).
        case object(rendition: Int, URIScheme.Object, LivePresentation.Layout)
        /// Thumbnail tiles (`--thumbnails`): the image playlist, the WebVTT list or a sheet.
        case tiles(LiveTileSheets, TileObject)
        /// A content key (`keys/<N>.key`, `URIScheme.keyURI`): served while a listed segment or part uses it.
        case key(UInt64)
        /// A path under a presentation whose renditions are not announced yet (only a playlist can be waited for).
        case beforeLayout(Substring)
        case unknown
    }

    /// Under `/api/v1/`.
    enum APIRoute: Sendable, Equatable {
        /// `/api/v1/streams`: list (GET) or add (POST).
        case streams
        /// `/api/v1/streams/NAME`: one stream (GET, PATCH, DELETE).
        case stream(String)
        case unknown

        static let prefix = "/api/v1/streams"

        init(_ path: Substring) {
            guard path.hasPrefix(Self.prefix) else { self = .unknown; return }
            let rest = path.dropFirst(Self.prefix.count)
            if rest.isEmpty || rest == "/" {
                self = .streams
            } else if rest.first == "/", !rest.dropFirst().contains("/") {
                self = .stream(String(rest.dropFirst()))
            } else {
                self = .unknown
            }
        }
    }

    static let maxPathLength = 256
    static let manifestName = "manifest.mpd"
    static let timeName = "time"
    static let thumbnailName = "thumbnail.jpg"

    /// The route of `path` (absolute, as the request names it after any mount point). A path that is too long or
    /// malformed has no route: the caller answers 414 or 400 first (`validate`).
    static func resolve(_ path: Substring, in registry: PresentationRegistry) -> Route {
        switch path {
        case "/", "/index.html": return .page
        case "/hls.mjs": return .hlsJS
        case "/streams.json": return .streamsJSON
        case "/metrics": return .metrics
        case "/" + timeName: return .time
        case "/healthz": return .healthz
        case "/readyz": return .readyz
        default: break
        }
        if path == "/api" || path.hasPrefix("/api/") { return .api(APIRoute(path)) }
        let name = path.dropFirst()
        if !name.isEmpty, !name.contains("/"), registry.presentation(named: String(name)) != nil { return .redirect(String(path) + "/") }
        guard let (name, presentation, inner) = registry.resolveNamed(name) else { return .notFound }
        let route: StreamRoute
        switch inner {
        case "", "index.html": route = .page
        case "hls.mjs": route = .hlsJS
        case "qoe": route = .qoe
        case "events": route = .events
        case "subtitles": route = .subtitles
        case Substring(thumbnailName): route = .thumbnail
        case "index.m3u8": route = .multivariant
        case Substring(manifestName): route = .manifest
        case Substring(timeName): route = .time
        default:
            if let object = TileObject(inner), let sheets = registry.tileSheets(for: name) {
                route = .tiles(sheets, object)
            } else if let id = URIScheme.keyObject(inner) {
                route = .key(id)
            } else if let layout = presentation.layout {
                route = layout.resolve(inner).map { .object(rendition: $0.rendition, $0.object, layout) } ?? .unknown
            } else {
                route = .beforeLayout(inner)
            }
        }
        return .stream(name: name, presentation, route)
    }

    /// What a path must be before it is resolved: `nil` when it is fine, else the answer's reason.
    enum Invalid { case tooLong, malformed }
    static func validate(_ path: Substring) -> Invalid? {
        guard path.utf8.count <= maxPathLength else { return .tooLong }
        guard path.utf8.first == UInt8(ascii: "/"), !hasDotDot(path.utf8) else { return .malformed }
        return nil
    }

    static func hasDotDot(_ utf8: Substring.UTF8View) -> Bool {
        var previousDot = false
        for c in utf8 {
            let dot = c == UInt8(ascii: ".")
            if dot && previousDot { return true }
            previousDot = dot
        }
        return false
    }

    /// The `stream`, `rendition` and `kind` labels of a request (`OriginMetrics`): from the registry and the layout,
    /// never the path's own text.
    var labels: (stream: String, rendition: String, kind: String) {
        switch self {
        case .metrics: return ("", "", "metrics")
        case .stream(let name, _, let route):
            let stream = OriginMetrics.streamLabel(name)
            switch route {
            case .qoe: return (stream, "", "qoe")
            case .events: return (stream, "", "events")
            case .subtitles: return (stream, "", "subtitles")
            case .multivariant, .manifest: return (stream, "", "playlist")
            case .tiles(_, let object): return (stream, "", object.label)
            case .key: return (stream, "", "key")
            case .object(let r, let object, let layout):
                let kind = switch object {
                case .playlist, .iFramePlaylist: "playlist"
                case .initSegment: "init"
                case .segment: "segment"
                case .part: "part"
                }
                return (stream, layout.renditions[r].name, kind)
            default: return (stream, "", "other")
            }
        default: return ("", "", "other")
        }
    }
}
