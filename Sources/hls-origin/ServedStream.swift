import ArgumentParser
import Foundation
import Logging
import MediaCore
import MediaPresentation
import Origin
import Pipeline
import Push
import Synchronization

/// A stream's `thumbnail.jpg`: its newest keyframe, decoded and encoded by FFmpeg's libraries.
extension Thumbnailer: ThumbnailSource {}

/// One input's pipeline, its live presentation (and recording), and the thread that runs it.
final class ServedStream: @unchecked Sendable {
    // @unchecked: every stored property is Sendable or set in init only.
    let name: String
    let presentation: LivePresentation
    let pipeline: Pipeline
    let recorder: Recorder?
    /// `--push`: feeds an HTTP ingest.
    let pusher: Pusher?
    /// `--thumbnails`: the stream's tile sheets, kept as long as its window.
    let tileSheets: LiveTileSheets?
    let outcome = PipelineOutcome()
    private let done = DispatchSemaphore(value: 0)
    private let thread: StartOnce

    /// `serve`: the live presentation is fed (`false` with `--no-serve`: only the recorder and the pusher are).
    init(name: String, options: PipelineOptions, window: Int, history: MediaTime?, recordDirectory: String?,
         serve: Bool = true, pusher: Pusher? = nil, encryption: EncryptionSetup? = nil, logger: Logger) throws {
        self.name = name
        self.pusher = pusher
        recorder = try recordDirectory.map { try Recorder(directory: URL(fileURLWithPath: $0), logger: logger) }
        let recorded = recorder.map { r in
            RecordedSegments(directory: r.directory.path) { r.isRecorded(rendition: $0, sequence: $1) }
        }
        // The recorder comes first in the fan-out: a segment is on disk before the live window lists it, so a
        // time-shift window can always spill it.
        let presentation = LivePresentation.live(windowSize: window, history: history, recording: recorded,
                                                 dashTrickMode: options.dashTrickMode,
                                                 eventSignalling: options.eventSignalling)
        self.presentation = presentation
        var consumers: [any PresentationConsumer] = []
        var sheets: LiveTileSheets?
        if let settings = options.thumbnails, serve {
            // First in the fan-out: a sheet is listed no later than the segment that completed it.
            let s = LiveTileSheets.live(retention: history ?? MediaTime(value: options.segmentDuration.value * Int64(window),
                                                                       timescale: options.segmentDuration.timescale))
            consumers.append(ThumbnailTiler(settings: settings, segmentDuration: options.segmentDuration, sink: s, logger: logger))
            sheets = s
        }
        tileSheets = sheets
        if let recorder { consumers.append(recorder) }
        if serve { consumers.append(presentation) }
        if let pusher { consumers.append(pusher) }
        let fanOut: any PresentationConsumer = consumers.count == 1 ? consumers[0] : FanOut(consumers)
        // Encrypted once, before the fan-out: every consumer stores (and the origin serves) the same bytes.
        let output = encryption?.stage(fanOut) ?? fanOut
        let pipeline = Pipeline(options: options, output: output, logger: logger, events: presentation.eventInbox)
        self.pipeline = pipeline
        let outcome = self.outcome
        let recorder = self.recorder
        let tileSheets = sheets
        let done = self.done
        // The pipeline blocks on reads: it gets its own thread. Its end (or failure) ends the playlist.
        thread = StartOnce(Thread {
            do {
                try pipeline.run()
                outcome.set(.finished)
            } catch {
                outcome.set(.failed(describe(error)))
            }
            presentation.finish()
            tileSheets?.finish()
            recorder?.finish()
            pusher?.finish()
            done.signal()
        })
    }

    /// Opens a local file now, so one that cannot be opened or probed fails before anything is served.
    func open() throws { try pipeline.open() }

    func start() { thread.start() }

    /// Whether nothing was ever published (a failure then is a startup error).
    var publishedNothing: Bool { (presentation.layout?.windows.first?.snapshot().nextSequence ?? 0) == 0 }

    /// Stops the input; with a recording or a push, waits (up to 5 s) for the pipeline to flush its last segment into
    /// them (then ends them: the push still has to drain, `finishPush`).
    func stop() {
        pipeline.stop()
        if recorder != nil || pusher != nil {
            waitForExit()
            recorder?.finish()
            pusher?.finish()
        }
    }

    /// Ends the stream while the process goes on (the control API's DELETE, a reload): the input stops, the pipeline
    /// flushes its last segment (waited for up to 5 s), and the playlists end with `EXT-X-ENDLIST`, the recording
    /// becomes VOD, the push ends (still to drain). Blocks: call it off the event loops.
    func end() {
        removed.withLock { $0 = true }
        pipeline.stop()
        waitForExit()
        presentation.finish()
        recorder?.finish()
        pusher?.finish()
    }

    /// Whether `end()` ended it (its input's end is then no news).
    var wasRemoved: Bool { removed.withLock { $0 } }
    private let removed = Mutex(false)

    /// Waits (up to 5 s) for the pipeline thread to be done, if it ever started; at once when it was done already.
    private func waitForExit() {
        guard thread.started else { return }
        // Signalled again at once, so that every later wait passes too.
        if done.wait(timeout: .now() + 5) == .success { done.signal() }
    }

    var isRunning: Bool { outcome.isRunning }

    /// `"cam1: "` for messages about a named stream, `""` for the root one.
    var label: String { name.isEmpty ? "" : "\(name): " }
}
