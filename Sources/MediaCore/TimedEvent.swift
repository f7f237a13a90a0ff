/// A timed event of a stream: an SCTE-35 cue from the input (its 0x86 data stream) or from the events API, a fact in
/// the input's timeline that travels with the samples through the producer chain (`SourceEvent.event`) and is placed
/// on the output timeline once, where the segmenter's timeline is known (`ProducerChain`).
public struct TimedEvent: Sendable, Equatable {
    /// What the event does to the presentation; it decides the `SCTE35-*` attribute its section is written in.
    public enum Kind: String, Sendable, Equatable, Codable {
        /// A break starts (`splice_insert` out of network, a segmentation start): `SCTE35-OUT`.
        case spliceOut = "splice_out"
        /// A break ends (`splice_insert` back to the network, a segmentation end): `SCTE35-IN`.
        case spliceIn = "splice_in"
        /// Any other signal (`time_signal` with another segmentation type): `SCTE35-CMD`.
        case timeSignal = "time_signal"
        /// ID3 timed metadata (`section` is the ID3 tag): an `emsg` in the next segment of every rendition.
        case id3

        /// A break starts or ends here: a splice (an IDR and a segment boundary when it can be).
        public var isSplice: Bool { self == .spliceOut || self == .spliceIn }
    }

    /// Where the event is.
    public enum Time: Sendable, Equatable {
        /// A presentation time on the input's clock (an SCTE-35 `pts_time`, `pts_adjustment` applied).
        case input(MediaTime)
        /// This long after the newest sample the chain has taken (the events API: "now", or a few seconds ahead).
        case liveEdge(after: MediaTime)
    }

    /// The daterange `ID`: the same for every tag of the one break (`splice-<splice_event_id>`,
    /// `seg-<segmentation_event_id>`), or the API's id.
    public var id: String
    public var kind: Kind
    public var time: Time
    /// The break's announced length (`break_duration`, `segmentation_duration`): `PLANNED-DURATION`.
    public var plannedDuration: MediaTime?
    /// The original `splice_info_section` (an ID3 tag for `.id3`).
    public var section: [UInt8]

    public init(id: String, kind: Kind, time: Time, plannedDuration: MediaTime? = nil, section: [UInt8]) {
        self.id = id
        self.kind = kind
        self.time = time
        self.plannedDuration = plannedDuration
        self.section = section
    }

    public static let ticks: Int32 = 90_000
    /// The `emsg` scheme of ID3 timed metadata (AOM "Carriage of ID3 Timed Metadata in CMAF"): the boxes' and the
    /// MPD's `InbandEventStream`.
    public static let id3Scheme = "https://aomedia.org/emsg/ID3"
    /// The `emsg` scheme of SCTE-35 sections carried in the segments (SCTE 214-1 §6.7.3, DASH-IF IOP 4.3 §5.6.6.2:
    /// `message_data` the binary `splice_info_section`): `--events inband`.
    public static let scte35InbandScheme = "urn:scte:scte35:2013:bin"

    /// The event an input's section signals, `nil` for one that signals nothing an origin places (`splice_null`, a
    /// cancelled event, another command). `packetTime`: the presentation time the section's packet carried, where an
    /// immediate splice happens.
    public init?(_ s: SpliceInfoSection, packetTime: MediaTime?) {
        let at: MediaTime? = s.spliceTime.map { MediaTime(value: $0, timescale: Self.ticks) } ?? packetTime
        let time: Time = at.map { .input($0) } ?? .liveEdge(after: .zero(Self.ticks))
        switch s.command {
        case .insert(let i) where !i.cancel:
            self.init(id: "splice-\(i.eventID)", kind: i.outOfNetwork ? .spliceOut : .spliceIn, time: time,
                      plannedDuration: i.outOfNetwork ? i.breakDuration.map { MediaTime(value: $0, timescale: Self.ticks) } : nil,
                      section: s.bytes)
        case .timeSignal:
            guard let d = s.segmentations.first(where: { !$0.cancel }) else {
                self.init(id: "signal-\(at?.value ?? 0)", kind: .timeSignal, time: time, section: s.bytes)
                return
            }
            let kind: Kind = d.startsBreak ? .spliceOut : d.endsBreak ? .spliceIn : .timeSignal
            self.init(id: kind == .timeSignal ? "seg-\(d.eventID)-\(d.typeID)" : "seg-\(d.eventID)", kind: kind, time: time,
                      plannedDuration: kind == .spliceOut ? d.duration.map { MediaTime(value: $0, timescale: Self.ticks) } : nil,
                      section: s.bytes)
        default:
            return nil
        }
    }
}
