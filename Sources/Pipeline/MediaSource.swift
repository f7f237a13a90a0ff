import MediaCore
import Producer

/// Where a pipeline's media comes from (STYLE.md §10): the renditions it makes, planned once, and its samples in
/// order, each track's format announced before its samples (`SourceEvent`). A demuxed input with its processors
/// (`DemuxedSource`), the built-in test pattern (`TestPatternSource`); an app's own samples go through
/// `SamplePublisher` into the same producer chain. Not `Sendable`: one run loop owns it.
protocol MediaSource: AnyObject {
    var plan: RenditionPlan { get }
    var kinds: [TrackFormat.Kind] { get }
    /// What is known of the keyframes before the stream starts (`ProducerChain.Settings.keyframes`).
    var keyframes: TimingPlanner.Keyframes? { get }
    /// Pace the input at real time by default (a file); not what arrives as it is produced.
    var pacedByDefault: Bool { get }
    /// How the input is taken up again when it ends or fails; `nil`: its end is the end of the stream.
    var reconnect: ReconnectPolicy? { get }
    /// Whether a clean end of input is a publisher going away (a listener, a caller, a live pull) rather than the end.
    var endIsDisconnect: Bool { get }

    /// The next events, or `nil` at the end of input. Blocks while the input has nothing.
    func next() throws -> SourceBatch?
    /// What the processors still hold (at the end of input, and before a reconnect).
    func flush() throws -> [SourceEvent]
    /// Opens the input again after its publisher went away (`reconnect`); `false` when the stream ends instead.
    func reopen() -> Bool
    /// A posted event (the events API) placed on the input's clock where the source can (the live edge is its newest
    /// video frame), its encoders told of a splice; as it is otherwise (the chain places it at the edge it has seen).
    func resolve(_ event: TimedEvent) -> TimedEvent
}

extension MediaSource {
    func resolve(_ event: TimedEvent) -> TimedEvent { event }
}

/// One read's worth of a source's output.
struct SourceBatch {
    var events: [SourceEvent] = []
    /// Where the input is, in microseconds of media since the start (loops included), for pacing and the status line.
    var position: Int64?
    /// Input video frames this read consumed (the status line's `in … fps`).
    var videoFrames = 0
    /// The input started again (`--loop`) before this read: how far its timestamps now run on (what a sidecar's cues
    /// are shifted by for the new pass).
    var loopedBy: MediaTime?
}
