import HLS
import Hummingbird
import MediaCore
import MediaPresentation
import NIOCore
import NIOPosix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A presentation as the live origin holds it.
public typealias LivePresentation = Presentation<ServedObject>

/// A live stream's thumbnail sheets, each made into a served object once.
public typealias LiveTileSheets = TileSheets<ServedObject>

extension TileSheets where Payload == ServedObject {
    /// `retention`: the window's span (sheets leave with the window).
    public static func live(retention: MediaTime) -> LiveTileSheets {
        LiveTileSheets(retention: retention) { ServedObject(sheet: $0) }
    }
}

extension Presentation where Payload == ServedObject {
    /// A live presentation for the origin: a sliding window of `windowSize` segments per rendition.
    /// - Parameter clock: monotonic milliseconds, for retention (tests move it by hand).
    /// - Parameters:
    ///   - history: time-shift depth (`--dvr-window`): the playlists list that much media; segments older than
    ///     the newest `windowSize` are read back from `recording` (without it they stay in memory).
    public static func live(windowSize: Int = 6, playlistType: MediaPlaylist.PlaylistType? = nil,
                            clock: @escaping @Sendable () -> Int64 = LiveWindowClock.monotonicMilliseconds,
                            history: MediaTime? = nil, recording: RecordedSegments? = nil,
                            dashTrickMode: Bool = false, eventSignalling: EventSignalling = EventSignalling()) -> LivePresentation {
        var spill: LivePresentation.Spill?
        if let recording { spill = { index, rendition, segment in recording.standIn(index, rendition, segment) } }
        return LivePresentation(windowSize: windowSize, playlistType: playlistType, clock: clock, history: history,
                                spill: spill, dashTrickMode: dashTrickMode, eventSignalling: eventSignalling,
                                payloads: ServedObject.maker)
    }
}

/// The presentations an origin serves, by path prefix: `""` serves at the root (`/index.m3u8`), `"cam1"` under
/// `/cam1/`. Presentations can be added, replaced and removed while serving.
public final class PresentationRegistry: Sendable {
    private let entries = Mutex<[String: LivePresentation]>([:])
    private let thumbnailSources = Mutex<[String: any ThumbnailSource]>([:])
    private let tileSheets = Mutex<[String: LiveTileSheets]>([:])
    private let registrations = Atomic<UInt64>(0)

    /// Moves whenever a presentation is registered, replaced or unregistered.
    var generation: UInt64 { registrations.load(ordering: .acquiring) }

    public init() {}

    /// One presentation at the root.
    public convenience init(root: LivePresentation) {
        self.init()
        register(root, at: "")
    }

    /// Registers (or replaces) the presentation served under `/<name>/` (`""`: the root).
    public func register(_ presentation: LivePresentation, at name: String) {
        precondition(name.isEmpty || Rendition.isValidName(name), "a stream name is 1-32 of [A-Za-z0-9_-]")
        entries.withLock { $0[name] = presentation }
        registrations.add(1, ordering: .releasing)
    }

    public func presentation(named name: String) -> LivePresentation? { entries.withLock { $0[name] } }

    /// Stops serving the presentation under `name` (its paths answer 404 from now on) and its thumbnails.
    public func unregister(_ name: String) {
        entries.withLock { $0[name] = nil }
        thumbnailSources.withLock { $0[name] = nil }
        tileSheets.withLock { $0[name] = nil }
        registrations.add(1, ordering: .releasing)
    }

    /// Where the stream `name`'s `thumbnail.jpg` comes from (none: 404).
    public func setThumbnails(_ source: any ThumbnailSource, for name: String) {
        thumbnailSources.withLock { $0[name] = source }
    }

    func thumbnails(for name: String) -> (any ThumbnailSource)? { thumbnailSources.withLock { $0[name] } }

    /// The stream `name`'s thumbnail tiles (`--thumbnails`): its image playlist, sheets and WebVTT list.
    public func setTileSheets(_ sheets: LiveTileSheets, for name: String) {
        tileSheets.withLock { $0[name] = sheets }
        registrations.add(1, ordering: .releasing)
    }

    func tileSheets(for name: String) -> LiveTileSheets? { tileSheets.withLock { $0[name] } }

    public var names: [String] { entries.withLock { Array($0.keys).sorted() } }

    /// The presentation a request path (after the leading `/`) belongs to, and the path inside it.
    func resolve(_ path: Substring) -> (LivePresentation, Substring)? {
        resolveNamed(path).map { ($0.presentation, $0.inner) }
    }

    /// `resolve` with the name the presentation is registered under.
    func resolveNamed(_ path: Substring) -> (name: String, presentation: LivePresentation, inner: Substring)? {
        entries.withLock { e in
            if let slash = path.firstIndex(of: "/") {
                let name = String(path[..<slash])
                if let p = e[name] { return (name, p, path[path.index(after: slash)...]) }
            }
            return e[""].map { ("", $0, path) }
        }
    }
}

/// A stream's still picture for the stream list (`/NAME/thumbnail.jpg`): made outside the origin (it decodes video).
public protocol ThumbnailSource: Sendable {
    /// The current thumbnail as a JPEG, `nil` before there is one. May block for a few milliseconds: the origin calls
    /// it off its event loops.
    func jpeg() throws -> [UInt8]?
}
