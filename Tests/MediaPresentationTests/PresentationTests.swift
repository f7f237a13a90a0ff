import HLS
import MediaCore
import Testing
import TestSupport
@testable import MediaPresentation

@Suite struct PresentationTests {
    static let policy = TimingPolicy(targetDuration: 1, partTarget: MediaTime(value: 334, timescale: 1000))

    static func ladder() -> [Rendition] {
        [Rendition(name: "720p", kind: .video, scheme: .nested("720p"), audioGroup: "audio", declaredBitRate: 2_800_000,
                   declaredFrameRate: 30),
         Rendition(name: "360p", kind: .video, scheme: .nested("360p"), audioGroup: "audio", declaredBitRate: 800_000,
                   declaredFrameRate: 30),
         Rendition(name: "audio", kind: .audio, scheme: .nested("audio"), audioGroup: "audio", declaredBitRate: 128_000)]
    }

    static func tracks(_ r: Int) -> [TrackFormat] {
        switch r {
        case 0: [Fixture.video]
        case 1: [TrackFormat(trackID: 2, kind: .video, timescale: 90_000, codec: .h264(avcC: [1, 0x42, 0xC0, 0x1E]),
                             width: 640, height: 360)]
        default: [Fixture.audio]
        }
    }

    /// A presentation fed `segments` whole segments (each with 3 parts) in every rendition, bytes scaled per rung.
    static func fed(segments: Int, finish: Bool = false) throws -> Presentation<Int> {
        let p = Presentation<Int>(windowSize: 6) { bytes, _ in bytes.count }
        try p.consume(.layout(ladder(), policy))
        for r in 0..<3 { try p.consume(.initSegment(rendition: r, bytes: [UInt8(r)], tracks: tracks(r))) }
        let sizes = [350_000, 100_000, 16_000]
        for n in 0..<UInt64(segments) {
            for r in 0..<3 {
                for i in 0..<3 {
                    try p.consume(.part(rendition: r, Fixture.part(n, i, millis: 333, bytes: sizes[r] / 3),
                                        bytes: [UInt8](repeating: 0, count: sizes[r] / 3)))
                }
                var info = Fixture.info(n, bytes: sizes[r])
                if r == 2 { info.videoSampleCount = nil }
                try p.consume(.segment(rendition: r, info, bytes: [UInt8](repeating: 0, count: sizes[r])))
            }
        }
        if finish { try p.consume(.end) }
        return p
    }

    @Test func resolvesEveryRenditionsObjects() throws {
        let p = try Self.fed(segments: 1)
        let layout = try #require(p.layout)
        #expect(layout.resolve("720p.m3u8")! == (0, .playlist))
        #expect(layout.resolve("360p/seg0.m4s")! == (1, .segment(0)))
        #expect(layout.resolve("audio/seg0.2.m4s")! == (2, .part(0, 2)))
        #expect(layout.resolve("audio/init.mp4")! == (2, .initSegment(0)))
        #expect(layout.resolve("seg0.m4s") == nil)     // no rendition at the root
        #expect(layout.resolve("1080p/seg0.m4s") == nil)
        #expect(layout.resolve("index.m3u8") == nil)   // the multivariant is the router's, not a rendition's
    }

    @Test func changeCountMovesWithEveryEventAndTheEnd() throws {
        let p = Presentation<Int>(windowSize: 6) { bytes, _ in bytes.count }
        #expect(p.changeCount == 0)
        try p.consume(.layout(Self.ladder(), Self.policy))
        #expect(p.changeCount == 1)
        try p.consume(.initSegment(rendition: 0, bytes: [0], tracks: Self.tracks(0)))
        try p.consume(.part(rendition: 0, Fixture.part(0, 0, millis: 333, bytes: 10), bytes: [UInt8](repeating: 0, count: 10)))
        #expect(p.changeCount == 3)
        let fed = try Self.fed(segments: 2)
        #expect(fed.changeCount == 1 + 3 + 2 * 3 * 4)
        fed.finish()
        #expect(fed.changeCount == 1 + 3 + 2 * 3 * 4 + 1)
    }

    @Test func duplicateNamesAreRefused() throws {
        let p = Presentation<Int>(windowSize: 6) { b, _ in b.count }
        let r = Rendition(name: "a", kind: .video, scheme: .nested("a"))
        #expect(throws: PresentationError.duplicateName("a")) { try p.consume(.layout([r, r], Self.policy)) }
        #expect(throws: PresentationError.unknownRendition(0)) {
            try Presentation<Int>(windowSize: 1) { b, _ in b.count }.consume(.segment(rendition: 0, Fixture.info(0), bytes: []))
        }
    }

    @Test func multivariantListsEveryRungWithTheAudioGroup() throws {
        let p = try Self.fed(segments: 3)
        let layout = try #require(p.layout)
        let mv = try #require(PlaylistBuilder.multivariant(layout.renditions, layout.snapshots()))
        #expect(mv.media.count == 1)
        let audio = try #require(mv.media.first)
        #expect(audio.type == .audio && audio.groupID == "audio" && audio.isDefault && audio.autoselect)
        #expect(audio.uri == "audio.m3u8" && audio.channels == "2")
        #expect(mv.variants.map(\.uri) == ["720p.m3u8", "360p.m3u8"])      // highest bandwidth first
        let top = mv.variants[0]
        // Peak of 1 s segments: video 350 kB + audio 16 kB, in bits.
        #expect(top.bandwidth == (350_000 + 16_000) * 8)
        #expect(top.averageBandwidth == (350_000 + 16_000) * 8)
        #expect(top.codecs == "avc1.64001f,mp4a.40.2")
        #expect(top.resolution == .init(width: 1280, height: 720))
        #expect(top.frameRate == 30)
        #expect(top.audioGroup == "audio")
        #expect(mv.variants[1].resolution == .init(width: 640, height: 360))
        #expect(mv.validate().isEmpty)
        #expect(try MultivariantPlaylist.parse(mv.render()) == mv)
    }

    @Test func multivariantWaitsForEveryRendition() throws {
        let p = Presentation<Int>(windowSize: 6) { b, _ in b.count }
        try p.consume(.layout(Self.ladder(), Self.policy))
        try p.consume(.initSegment(rendition: 0, bytes: [0], tracks: Self.tracks(0)))
        try p.consume(.part(rendition: 0, Fixture.part(0, 0), bytes: [0]))
        let layout = try #require(p.layout)
        try p.consume(.segment(rendition: 0, Fixture.info(0), bytes: [0]))
        #expect(PlaylistBuilder.multivariant(layout.renditions, layout.snapshots()) == nil)
        for r in 1..<3 {
            try p.consume(.initSegment(rendition: r, bytes: [UInt8(r)], tracks: Self.tracks(r)))
            try p.consume(.part(rendition: r, Fixture.part(0, 0, bytes: 100), bytes: [0]))
            #expect(PlaylistBuilder.multivariant(layout.renditions, layout.snapshots()) == nil)
            try p.consume(.segment(rendition: r, Fixture.info(0), bytes: [0]))
        }
        let mv = try #require(PlaylistBuilder.multivariant(layout.renditions, layout.snapshots()))
        #expect(mv.variants.count == 2)
        #expect(mv.variants.allSatisfy { $0.bandwidth > 0 })
    }

    @Test func renditionReportsNameTheLastPartOfEveryOtherRendition() throws {
        let p = try Self.fed(segments: 2)
        let layout = try #require(p.layout)
        try p.consume(.part(rendition: 1, Fixture.part(2, 0), bytes: [0]))
        let snaps = layout.snapshots()
        let reports = [1, 2].compactMap { PlaylistBuilder.renditionReport(snaps[$0], scheme: layout.renditions[$0].scheme) }
        #expect(reports == [RenditionReport(uri: "360p.m3u8", lastMSN: 2, lastPart: 0),
                            RenditionReport(uri: "audio.m3u8", lastMSN: 1, lastPart: 2)])
        let playlist = try #require(PlaylistBuilder.mediaPlaylist(snaps[0], scheme: layout.renditions[0].scheme,
                                                                  playlistType: nil, reports: reports))
        #expect(playlist.renditionReports == reports)
        #expect(playlist.segments.map(\.uri) == ["720p/seg0.m4s", "720p/seg1.m4s"])
        #expect(playlist.mapURI == "720p/init.mp4")
        #expect(playlist.preloadHint?.uri == "720p/seg2.0.m4s")
        #expect(try MediaPlaylist.parse(playlist.render()) == playlist)
    }

    @Test func deltaUpdateSkipsTheOldSegments() throws {
        let p = try Self.fed(segments: 20)
        let layout = try #require(p.layout)
        let snap = layout.windows[0].snapshot()
        let full = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: layout.renditions[0].scheme, playlistType: nil))
        let delta = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: layout.renditions[0].scheme, playlistType: nil,
                                                               skip: true))
        #expect(full.serverControl?.canSkipUntil == .seconds(6))
        let skipped = try #require(delta.skippedSegments)
        #expect(Int(skipped) + delta.segments.count == full.segments.count)
        #expect(delta.segments.map(\.uri) == full.segments.suffix(delta.segments.count).map(\.uri))
    }

    @Test func waitUntilPlayableReturnsOnceEveryRenditionCanBePlayed() async throws {
        let p = Presentation<Int>(windowSize: 6) { b, _ in b.count }
        #expect(await p.waitUntilPlayable(timeout: .milliseconds(20)) == false)
        async let waited = p.waitUntilPlayable(timeout: .seconds(10))
        try await Task.sleep(for: .milliseconds(30))
        try p.consume(.layout(Self.ladder(), Self.policy))
        for r in 0..<3 {
            try p.consume(.initSegment(rendition: r, bytes: [UInt8(r)], tracks: Self.tracks(r)))
            try p.consume(.part(rendition: r, Fixture.part(0, 0), bytes: [0]))
            try p.consume(.segment(rendition: r, Fixture.info(0), bytes: [0]))
        }
        #expect(await waited == true)
        // A presentation whose input ends before its layout releases its readers.
        let q = Presentation<Int>(windowSize: 6) { b, _ in b.count }
        async let ended = q.waitUntilPlayable(timeout: .seconds(10))
        try await Task.sleep(for: .milliseconds(30))
        q.finish()
        #expect(await ended == false)
    }
}

@Suite struct VariantStatisticsTests {
    @Test func averageNeverExceedsPeak() throws {
        // A third of a second truncates to 333 333 µs: the average computed over it would round above the peak.
        let third = MediaTime(value: 30_000, timescale: 90_000)
        for bytes in [1, 7, 41_666, 126_488, 999_999] {
            let s = try #require(VariantStatistics.measure([.init(bytes: bytes, duration: third), .init(bytes: bytes, duration: third)]))
            #expect(s.averageBitRate <= s.peakBitRate, "\(bytes)")
            #expect(s.peakBitRate == (bytes * 8 * 3))
        }
        #expect(VariantStatistics.measure([]) == nil)
        #expect(VariantStatistics.measure([.init(bytes: 10, duration: .zero(90_000))]) == nil)
    }
}
