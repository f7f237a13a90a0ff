import Logging
import MediaCore
import MediaPresentation

/// A producer's samples to its consumers' events: format gate → timeline supervisor (segmenters) → segment publisher
/// (STYLE.md §10; shaka-packager's handler graph). Each stage is a value tested on its own; this only passes each
/// stage's output to the next and the last one's to `output` (one producer → a fan-out of consumers).
public struct ProducerChain {
    public struct Settings: Sendable {
        public var segmentDuration: MediaTime
        /// LL-HLS part duration; `nil`: one fragment per segment.
        public var partDuration: MediaTime?
        /// What is known of the keyframes before the stream starts (`nil`: measure the first GOP, for copied live
        /// video; `.onGrid` when encoded here).
        public var keyframes: TimingPlanner.Keyframes?
        /// `--epoch-from-input` (see `TimelineAnchor.inputClock`).
        public var epochLocked: Bool

        public init(segmentDuration: MediaTime, partDuration: MediaTime?, keyframes: TimingPlanner.Keyframes? = .onGrid,
                    epochLocked: Bool = false) {
            self.segmentDuration = segmentDuration
            self.partDuration = partDuration
            self.keyframes = keyframes
            self.epochLocked = epochLocked
        }
    }

    public let plan: RenditionPlan
    public let settings: Settings
    let output: any PresentationConsumer
    let logger: Logger
    private var gate: FormatGate
    private var supervisor: TimelineSupervisor
    private var publisher: SegmentPublisher
    /// The layout was announced (the stream started).
    public private(set) var started = false

    public init(plan: RenditionPlan, kinds: [TrackFormat.Kind], settings: Settings, output: any PresentationConsumer,
                logger: Logger) {
        self.plan = plan
        self.settings = settings
        self.output = output
        self.logger = logger
        gate = FormatGate(kinds: kinds, measureGOP: settings.keyframes == nil)
        supervisor = TimelineSupervisor(groups: plan.groups, trackCount: kinds.count, segmentDuration: settings.segmentDuration,
                                        partDuration: settings.partDuration, epochLocked: settings.epochLocked, logger: logger)
        publisher = SegmentPublisher(targetDuration: TimingPlanner.targetDuration(segmentDuration: settings.segmentDuration,
                                                                                  keyframes: .onGrid),
                                     epochLocked: settings.epochLocked, logger: logger)
    }

    public mutating func accept(_ event: SourceEvent) throws {
        if case .samples(let track, let samples, let wallClock) = event {
            publisher.arrival = wallClock
            // The open gate passes samples through: straight to the supervisor, without an array of its outputs.
            if gate.isOpen {
                for s in samples { try emit(try supervisor.accept(s, track: track, wallClock: wallClock)) }
                return
            }
        }
        for g in try gate.accept(event) { try pass(g) }
    }

    /// The input is being opened again (see `TimelineSupervisor.reconnect`, `FormatGate.reconnect`).
    public mutating func reconnect() throws {
        gate.reconnect(resume: started)
        try emit(try supervisor.reconnect())
        publisher.reconnected()
    }

    /// The end of input: the last segments, then `end` (when the stream started).
    public mutating func finish() throws {
        for g in gate.finish() { try pass(g) }
        guard started else { return }
        try emit(try supervisor.finish())
        try output.consume(.end)
    }

    private mutating func pass(_ g: FormatGate.Output) throws {
        switch g {
        case .start(let formats, let frameDurations, let gop, _):
            if !started {
                let keyframes = settings.keyframes ?? gop.map { .measuredGOP($0) } ?? .unknown
                let policy = TimingPlanner.policy(segmentDuration: settings.segmentDuration, partDuration: settings.partDuration,
                                                  formats: formats, groups: plan.groups, keyframes: keyframes,
                                                  frameDurations: frameDurations)
                try output.consume(.layout(plan.renditions, policy))
                publisher.targetDuration = policy.targetDuration
                started = true
            } else if gate.droppedBeforeKeyframe > 0 {
                logger.info("the new connection starts at its first keyframe: \(gate.droppedBeforeKeyframe) earlier frames dropped")
            }
            try emit(try supervisor.start(formats))
        case .sample(let track, let sample, let wallClock):
            try emit(try supervisor.accept(sample, track: track, wallClock: wallClock))
        case .formatChange(let track, let formats):
            supervisor.formatChange(track: track, formats)
        }
    }

    private mutating func emit(_ outputs: [TimelineSupervisor.Output]) throws {
        for o in outputs {
            for e in publisher.events(o, epochSlips: supervisor.epochSlips) { try output.consume(e) }
        }
    }
}
