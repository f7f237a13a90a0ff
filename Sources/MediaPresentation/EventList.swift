import MediaCore

/// A timed event as the windows list it (one `EXT-X-DATERANGE` per ID, one MPD `Event`): a break's out and in merged
/// under the one ID, with its `DURATION` once it ended.
public struct ListedEvent: Sendable, Equatable {
    public var id: String
    public var startDate: WallClock
    /// On the output timeline (`EventInfo.mediaTime`).
    public var mediaTime: MediaTime
    public var plannedDuration: MediaTime?
    /// Known once the break ended: its in cue came, or its planned duration passed with the media.
    public var duration: MediaTime?
    /// The sections: `SCTE35-OUT`, `SCTE35-IN`, `SCTE35-CMD`.
    public var outSection: [UInt8]?
    public var inSection: [UInt8]?
    public var commandSection: [UInt8]?
    /// An ID3 event's text frames (`X-ID3-TIT2`, …): listed in HLS only (the tag itself is in the segments' `emsg`).
    public var id3Frames: [ID3TextFrame] = []

    public var isID3: Bool { !id3Frames.isEmpty }
    /// Carried in the segments as an `emsg` (an ID3 event, or SCTE-35 with `--events inband`): not in DASH's
    /// `EventStream`.
    public var inband = false

    /// The section that opened the entry (what a DASH `Event` carries).
    public var section: [UInt8] { outSection ?? commandSection ?? inSection ?? [] }

    /// Where it ends on the program date-time clock (its start when no length is known).
    var endDate: WallClock {
        let length = duration ?? plannedDuration
        return WallClock(millisecondsSince1970: startDate.millisecondsSince1970 + (length.map(Self.millis) ?? 0))
    }

    static func millis(_ t: MediaTime) -> Int64 { MediaTime.rescale(t.value, from: t.timescale, to: 1000) }
}

/// A daterange a live window stopped listing, and the first listed segment's date when it did.
public struct RemovedEvent: Sendable, Equatable {
    public var id: String
    public var at: WallClock
}

/// The events of a window, merged by ID, oldest first. Pure: `LiveWindow` keeps one under its lock.
public struct EventList: Sendable, Equatable {
    public private(set) var events: [ListedEvent] = []
    /// The latest ones removed (`RECENTLY-REMOVED-DATERANGES`), oldest first, at most `capacity`.
    public private(set) var removed: [RemovedEvent] = []
    /// The `emsg` schemes the segments have carried (ID3; SCTE-35 with `--events inband`), in order of their first
    /// event: the MPD declares them from then on.
    public private(set) var inbandSchemes: [String] = []
    public var carriesID3: Bool { inbandSchemes.contains(TimedEvent.id3Scheme) }
    /// The most kept (a stream that signals every second must not grow a playlist without bound).
    public static let capacity = 64

    public init() {}

    /// Adds `e`; `false` when it changed nothing (a cue repeated ahead of its splice, as encoders do).
    /// `scheme` is carried from now on; `true` when it is new.
    private mutating func declare(_ scheme: String) -> Bool {
        guard !inbandSchemes.contains(scheme) else { return false }
        inbandSchemes.append(scheme)
        return true
    }

    public mutating func add(_ e: EventInfo) -> Bool {
        if e.kind == .id3 {
            // In the segments (`emsg`); the first one changes the MPD (its InbandEventStream). Its text frames, if
            // any, are listed as an HLS daterange's X- attributes.
            let first = declare(TimedEvent.id3Scheme)
            let frames = TimedID3.textFrames(e.section)
            guard !frames.isEmpty, !events.contains(where: { $0.id == e.id }) else { return first }
            var l = ListedEvent(id: e.id, startDate: e.startDate, mediaTime: e.mediaTime, plannedDuration: nil)
            l.id3Frames = frames
            l.inband = true
            events.append(l)
            if events.count > Self.capacity { events.removeFirst(events.count - Self.capacity) }
            return true
        }
        if let i = events.firstIndex(where: { $0.id == e.id }) {
            switch e.kind {
            case .spliceIn where events[i].inSection == nil && events[i].outSection != nil:
                events[i].inSection = e.section
                let d = e.mediaTime.converted(to: events[i].mediaTime.timescale, rounding: .nearest) - events[i].mediaTime
                if d.value >= 0 { events[i].duration = d }
                return true
            default:
                return false
            }
        }
        if e.inband { _ = declare(TimedEvent.scte35InbandScheme) }
        var l = ListedEvent(id: e.id, startDate: e.startDate, mediaTime: e.mediaTime, plannedDuration: e.plannedDuration)
        l.inband = e.inband
        switch e.kind {
        case .spliceOut: l.outSection = e.section
        case .spliceIn: l.inSection = e.section
        case .timeSignal, .id3: l.commandSection = e.section  // .id3 returned above
        }
        events.append(l)
        if events.count > Self.capacity { events.removeFirst(events.count - Self.capacity) }
        return true
    }

    /// The media reached `date`: a break whose planned duration has passed without an in cue ends as planned
    /// (`auto_return`). `true` when one did.
    public mutating func elapse(to date: WallClock) -> Bool {
        var changed = false
        for i in events.indices where events[i].duration == nil && events[i].outSection != nil {
            guard let planned = events[i].plannedDuration, events[i].endDate <= date else { continue }
            events[i].duration = planned
            changed = true
        }
        return changed
    }

    /// Drops the events that ended before `date` (the first listed segment's start): a daterange is listed while its
    /// segments are.
    public mutating func prune(before date: WallClock) -> Bool {
        let before = events.count
        let gone = { (e: ListedEvent) in e.endDate < date || (e.endDate == date && e.startDate < date) }
        removed += events.filter(gone).map { RemovedEvent(id: $0.id, at: date) }
        if removed.count > Self.capacity { removed.removeFirst(removed.count - Self.capacity) }
        events.removeAll(where: gone)
        return events.count != before
    }
}
