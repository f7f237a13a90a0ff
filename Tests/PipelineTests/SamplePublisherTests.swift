import HLS
import MediaCore
import MediaPresentation
import Pipeline
import Producer
import Synchronization
import Testing

/// An app's own samples through `SamplePublisher` into a presentation: segments, parts, and a codec change.
@Suite struct SamplePublisherTests {
    static let avcA: [UInt8] = [1, 0x64, 0, 0x1F, 0xFF, 0xE1, 0, 4, 0x67, 0x64, 0, 0x1F, 1, 0, 2, 0x68, 0xEE]
    static let avcB: [UInt8] = [1, 0x42, 0xC0, 0x1E, 0xFF, 0xE1, 0, 4, 0x67, 0x42, 0xC0, 0x1E, 1, 0, 2, 0x68, 0xCE]
    static let video = TrackFormat(trackID: 1, kind: .video, timescale: 90_000, codec: .h264(avcC: avcA), width: 1280, height: 720)
    static let audio = TrackFormat(trackID: 2, kind: .audio, timescale: 48_000, codec: .aac(audioSpecificConfig: [0x11, 0x90]),
                                   sampleRate: 48_000, channelCount: 2)

    /// `seconds` of 30 fps video (keyframe each second) and AAC, interleaved, starting at `from` seconds.
    static func feed(_ p: SamplePublisher, seconds: Int, from: Int = 0) throws {
        var audioNext = Int64(from) * 48_000
        for i in (from * 30)..<((from + seconds) * 30) {
            let t = Int64(i) * 3000
            try p.append(Sample(data: [0, 0, 0, 1, 0x65], dts: t, pts: t, isSync: i % 30 == 0, durationHint: 3000), track: 0)
            while audioNext * 90_000 < (t + 3000) * 48_000 {
                try p.append(Sample(data: [0x21], dts: audioNext, pts: audioNext, isSync: true, durationHint: 1024), track: 1)
                audioNext += 1024
            }
        }
    }

    @Test func publishesSegmentsPartsAndEndList() throws {
        let presentation = Presentation<[UInt8]>(windowSize: 10) { bytes, _ in bytes }
        let publisher = try SamplePublisher(tracks: [Self.video, Self.audio], output: presentation)
        try Self.feed(publisher, seconds: 4)
        try publisher.finish()
        let layout = try #require(presentation.layout)
        #expect(layout.renditions.map(\.name) == ["stream"])
        let snap = layout.windows[0].snapshot()
        #expect(snap.finished)
        #expect(snap.window.count == 4)
        #expect(snap.window.allSatisfy { $0.info.startsWithSyncSample && $0.info.videoSampleCount == 30 })
        #expect(snap.window.allSatisfy { $0.parts.count == 3 })
        let playlist = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: layout.renditions[0].scheme, playlistType: nil))
        #expect(playlist.endList && playlist.segments.count == 4)
    }

    /// What a `PublicationObserver` is told: every segment and part once its window has it, each part with the
    /// wall clock of the sample that closed it (the samples are stamped 1 ms apart here).
    @Test func observerSeesPublicationsWithClosingArrival() throws {
        final class Seen: PublicationObserver {
            let log = Mutex<(segments: [SegmentInfo], parts: [PartInfo])>(([], []))
            func didPublish(segment: SegmentInfo, rendition: Rendition) { log.withLock { $0.segments.append(segment) } }
            func didPublish(part: PartInfo, rendition: Rendition) { log.withLock { $0.parts.append(part) } }
        }
        let presentation = Presentation<[UInt8]>(windowSize: 10) { bytes, _ in bytes }
        let seen = Seen()
        presentation.observePublications(seen)
        let publisher = try SamplePublisher(tracks: [Self.video, Self.audio], output: presentation)
        let base: Int64 = 1_763_785_226_000
        for i in 0..<(3 * 30) {
            let t = Int64(i) * 3000
            try publisher.append(Sample(data: [0, 0, 0, 1, 0x65], dts: t, pts: t, isSync: i % 30 == 0, durationHint: 3000),
                                 track: 0, wallClock: WallClock(millisecondsSince1970: base + Int64(i)))
        }
        try publisher.finish()
        let (segments, parts) = seen.log.withLock { $0 }
        let snap = try #require(presentation.layout).windows[0].snapshot()
        #expect(segments.map(\.sequence) == snap.window.map(\.sequence))
        #expect(parts.count == snap.window.reduce(0) { $0 + $1.parts.count })
        // Parts cut while samples arrive carry the arrival of the sample that closed them; those cut by finish() none.
        let stamped = parts.compactMap(\.closedAt).map(\.millisecondsSince1970)
        #expect(!stamped.isEmpty && stamped.allSatisfy { (base..<base + 90).contains($0) })
        #expect(stamped == stamped.sorted())
    }

    /// Timestamps that jump an hour forward, then back (a splice): each jump is a discontinuity on the same init
    /// segment, the timeline goes on, no segment spans a jump, every second is listed and the target duration stays.
    @Test func timestampJumpsBecomeDiscontinuitiesOnAContinuingTimeline() throws {
        let presentation = Presentation<[UInt8]>(windowSize: 20) { bytes, _ in bytes }
        let publisher = try SamplePublisher(tracks: [Self.video, Self.audio], partDuration: nil, output: presentation)
        try Self.feed(publisher, seconds: 3)
        try Self.feed(publisher, seconds: 3, from: 3600)
        try Self.feed(publisher, seconds: 3, from: 10)
        try publisher.finish()
        let layout = try #require(presentation.layout)
        let snap = layout.windows[0].snapshot()
        #expect(snap.inits.count == 1)
        #expect(snap.window.count == 9)
        #expect(snap.window.map(\.discontinuity) == [false, false, false, true, false, false, true, false, false])
        #expect(snap.window.allSatisfy { $0.info.duration == .seconds(1) })
        #expect(snap.targetDuration == 1)
        for (a, b) in zip(snap.window, snap.window.dropFirst()) {
            #expect(b.info.startTime == a.info.startTime + a.info.duration)
        }
    }

    /// Small steps back (a muxer's jitter) and short gaps are not jumps.
    @Test func smallTimestampStepsAreNotJumps() throws {
        let presentation = Presentation<[UInt8]>(windowSize: 20) { bytes, _ in bytes }
        let publisher = try SamplePublisher(tracks: [Self.video, Self.audio], partDuration: nil, output: presentation)
        try Self.feed(publisher, seconds: 3)
        try Self.feed(publisher, seconds: 2, from: 5)  // a 2-s gap: under the 5-s limit
        try publisher.finish()
        let snap = try #require(presentation.layout).windows[0].snapshot()
        #expect(snap.window.allSatisfy { !$0.discontinuity })
    }

    /// A source that reconnects and starts its timestamps over: one discontinuity, the numbering and the timeline
    /// go on, the same init segment.
    @Test func aRestartedSourceContinuesAfterADiscontinuity() throws {
        let presentation = Presentation<[UInt8]>(windowSize: 20) { bytes, _ in bytes }
        let publisher = try SamplePublisher(tracks: [Self.video, Self.audio], partDuration: nil, output: presentation)
        try Self.feed(publisher, seconds: 3, from: 100)
        try publisher.restart()
        try Self.feed(publisher, seconds: 3)   // back to 0: less than the 1-s step back would not be a jump either
        try publisher.finish()
        let snap = try #require(presentation.layout).windows[0].snapshot()
        #expect(snap.inits.count == 1)
        #expect(snap.window.map(\.sequence) == Array(0..<6))
        #expect(snap.window.map(\.discontinuity) == [false, false, false, true, false, false])
        for (a, b) in zip(snap.window, snap.window.dropFirst()) {
            #expect(b.info.startTime == a.info.startTime + a.info.duration)
        }
    }

    /// A pull that joins mid-GOP after a reconnect: the frames before the first keyframe, and the audio before it,
    /// are dropped, so the segment after the discontinuity starts on the keyframe where the last one ended.
    @Test func aRestartJoiningMidGOPStartsAtTheKeyframe() throws {
        let presentation = Presentation<[UInt8]>(windowSize: 20) { bytes, _ in bytes }
        let publisher = try SamplePublisher(tracks: [Self.video, Self.audio], partDuration: nil, output: presentation)
        try Self.feed(publisher, seconds: 2)
        try publisher.restart()
        var audioNext: Int64 = 10 * 1600
        for i in 10..<90 {
            let t = Int64(i) * 3000
            while audioNext * 90_000 < (t + 3000) * 48_000 {
                try publisher.append(Sample(data: [0x21], dts: audioNext, pts: audioNext, isSync: true, durationHint: 1024), track: 1)
                audioNext += 1024
            }
            try publisher.append(Sample(data: [0, 0, 0, 1, 0x65], dts: t, pts: t, isSync: i % 30 == 0, durationHint: 3000), track: 0)
        }
        try publisher.finish()
        let snap = try #require(presentation.layout).windows[0].snapshot()
        #expect(snap.window.map(\.discontinuity) == [false, false, true, false])
        #expect(snap.window[2].info.startsWithSyncSample)
        #expect(snap.window[2].info.startTime == .seconds(2, timescale: 90_000))
        #expect(snap.window[2].info.duration == .seconds(1, timescale: 90_000))
        #expect(snap.window[2].info.videoSampleCount == 30)
    }

    @Test func aCodecChangeGivesANewInitAndADiscontinuity() throws {
        let presentation = Presentation<[UInt8]>(windowSize: 10) { bytes, _ in bytes }
        let publisher = try SamplePublisher(tracks: [Self.video, Self.audio], partDuration: nil, output: presentation)
        try Self.feed(publisher, seconds: 3)
        var smaller = Self.video
        smaller.codec = .h264(avcC: Self.avcB)
        smaller.width = 640
        smaller.height = 360
        try publisher.update(smaller, track: 0)
        try Self.feed(publisher, seconds: 3, from: 3)
        try publisher.finish()
        let layout = try #require(presentation.layout)
        let snap = layout.windows[0].snapshot()
        #expect(snap.inits.map(\.index) == [0, 1])
        #expect(snap.inits.last?.tracks.first?.width == 640)
        #expect(snap.window.map(\.sequence) == Array(0..<6))
        #expect(snap.window.map(\.discontinuity) == [false, false, false, true, false, false])
        #expect(snap.window.map(\.initIndex) == [0, 0, 0, 1, 1, 1])
        // The timeline continues: the segment after the change starts where the last one ended.
        #expect(snap.window[3].info.startTime == snap.window[2].info.startTime + snap.window[2].info.duration)
        let text = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: layout.renditions[0].scheme, playlistType: nil)).render()
        #expect(text.contains("#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"init1.mp4\"\n"))
        #expect(throws: ProducerError.self) { try publisher.update(Self.audio, track: 0) }
    }
}

