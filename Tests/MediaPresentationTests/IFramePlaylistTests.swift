import HLS
import MediaCore
import Testing
@testable import MediaPresentation

/// `PlaylistBuilder.iFramePlaylist` and the multivariant's `EXT-X-I-FRAME-STREAM-INF`: I-frames are the segments'
/// keyframe facts (`SegmentInfo.keyframe`), listed as byte ranges of the same segments (RFC 8216 §4.3.3.6).
@Suite struct IFramePlaylistTests {
    static let styp = 24

    /// A segment whose keyframe fragment is its first fragment (after the `styp`), `keyframeAt` ticks in.
    static func info(_ sequence: UInt64, start: Int64, duration: Int64 = 90_000, bytes: Int = 1000, keyframeBytes: Int = 600,
                     keyframeAt: Int64 = 0, keyframe: Bool = true, discontinuity: Bool = false) -> SegmentInfo {
        SegmentInfo(sequence: sequence, startTime: MediaTime(value: start, timescale: 90_000),
                    duration: MediaTime(value: duration, timescale: 90_000), byteCount: bytes,
                    programDateTime: WallClock(millisecondsSince1970: 1_000_000 + start / 90),
                    discontinuity: discontinuity, videoSampleCount: 30,
                    keyframe: keyframe ? KeyframeFragment(range: styp..<(styp + keyframeBytes),
                                                          decodeTime: MediaTime(value: start + keyframeAt, timescale: 90_000)) : nil)
    }

    static func window(size: Int = 10, tracks: [TrackFormat] = Fixture.tracks, _ infos: [SegmentInfo],
                       finish: Bool = false) -> LiveWindow<[UInt8]> {
        let w = LiveWindow<[UInt8]>(windowSize: size, playlistType: finish ? .vod : nil, policy: TimingPolicy(targetDuration: 1))
        w.setInit(Fixture.initBytes, digest: Fixture.initBytes, tracks: tracks)
        for i in infos { w.publishSegment(i, []) }
        if finish { w.finish() }
        return w
    }

    @Test func rendersOneByteRangePerSegmentWithTheTimeToTheNextIFrame() throws {
        let w = Self.window([Self.info(0, start: 0, keyframeBytes: 500), Self.info(1, start: 90_000, duration: 135_000),
                             Self.info(2, start: 225_000, duration: 45_000, keyframeBytes: 200)], finish: true)
        let p = try #require(PlaylistBuilder.iFramePlaylist(w.snapshot(), scheme: .nested("720p"), playlistType: .vod))
        #expect(p.render() == """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:2
            #EXT-X-MEDIA-SEQUENCE:0
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXT-X-I-FRAMES-ONLY
            #EXT-X-MAP:URI="720p/init.mp4"
            #EXT-X-PROGRAM-DATE-TIME:1970-01-01T00:16:40.000Z
            #EXTINF:1.0,
            #EXT-X-BYTERANGE:500@24
            720p/seg0.m4s
            #EXT-X-PROGRAM-DATE-TIME:1970-01-01T00:16:41.000Z
            #EXTINF:1.5,
            #EXT-X-BYTERANGE:600@24
            720p/seg1.m4s
            #EXT-X-PROGRAM-DATE-TIME:1970-01-01T00:16:42.500Z
            #EXTINF:0.5,
            #EXT-X-BYTERANGE:200@24
            720p/seg2.m4s
            #EXT-X-ENDLIST

            """)
        // It parses back as what it is.
        let parsed = try MediaPlaylist.parse(p.render())
        #expect(parsed.iFramesOnly && parsed.segments.map(\.byteRange) == p.segments.map(\.byteRange))
    }

    @Test func durationsRunBetweenKeyframesAndOverSegmentsWithoutOne() throws {
        // Keyframe 0.2 s into segment 1; segment 2 has none (left out: segment 1's I-frame runs to segment 3's).
        let w = Self.window([Self.info(0, start: 0), Self.info(1, start: 90_000, keyframeAt: 18_000),
                             Self.info(2, start: 180_000, keyframe: false), Self.info(3, start: 270_000)])
        let p = try #require(PlaylistBuilder.iFramePlaylist(w.snapshot(), scheme: .root("stream"), playlistType: nil))
        #expect(p.segments.map(\.uri) == ["seg0.m4s", "seg1.m4s", "seg3.m4s"])
        #expect(p.segments.map(\.duration) == [MediaTime(value: 108_000, timescale: 90_000), MediaTime(value: 162_000, timescale: 90_000),
                                               MediaTime(value: 90_000, timescale: 90_000)])
        // Dated at the keyframe, not at its segment's start.
        #expect(p.segments[1].programDateTime == WallClock(millisecondsSince1970: 1_000_000 + 1_200))
        #expect(p.targetDuration == 2 && !p.endList && p.playlistType == nil)
        #expect(!p.render().contains("#EXT-X-INDEPENDENT-SEGMENTS"))
    }

    @Test func aDiscontinuityEndsTheIFrameBeforeItAtItsSegmentsEnd() throws {
        // Segment 1 is cut short by a new timeline that starts at 10 s.
        let w = Self.window([Self.info(0, start: 0), Self.info(1, start: 90_000, duration: 45_000),
                             Self.info(2, start: 900_000, discontinuity: true)])
        let p = try #require(PlaylistBuilder.iFramePlaylist(w.snapshot(), scheme: .root("stream"), playlistType: nil))
        #expect(p.segments.map(\.duration.value) == [90_000, 45_000, 90_000])
        #expect(p.segments.map(\.discontinuity) == [false, false, true])
        // A left-out segment that starts a timeline still puts the discontinuity before the next I-frame.
        let w2 = Self.window([Self.info(0, start: 0), Self.info(1, start: 900_000, keyframe: false, discontinuity: true),
                              Self.info(2, start: 990_000)])
        let p2 = try #require(PlaylistBuilder.iFramePlaylist(w2.snapshot(), scheme: .root("stream"), playlistType: nil))
        #expect(p2.segments.map(\.duration.value) == [90_000, 90_000])
        #expect(p2.segments.map(\.discontinuity) == [false, true])
    }

    @Test func aSlidingWindowKeepsTheMediaPlaylistsNumbering() throws {
        let w = Self.window(size: 3, (0..<8).map { Self.info(UInt64($0), start: Int64($0) * 90_000) })
        let snap = w.snapshot()
        let media = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: .nested("720p"), playlistType: nil))
        let iFrames = try #require(PlaylistBuilder.iFramePlaylist(snap, scheme: .nested("720p"), playlistType: nil))
        #expect(iFrames.mediaSequence == media.mediaSequence && iFrames.mediaSequence == 5)
        #expect(iFrames.discontinuitySequence == media.discontinuitySequence)
        #expect(iFrames.segments.map(\.uri) == media.segments.map(\.uri))
        // Signed URLs: every URI carries the query.
        let signed = try #require(PlaylistBuilder.iFramePlaylist(snap, scheme: .nested("720p"), playlistType: nil, uriQuery: "s=1"))
        #expect(signed.segments.allSatisfy { $0.uri.hasSuffix(".m4s?s=1") } && signed.mapURI == "720p/init.mp4?s=1")
    }

    @Test func singleFileRangesAreOffsetBySegmentsBefore() throws {
        let w = Self.window([Self.info(0, start: 0, bytes: 1000, keyframeBytes: 500), Self.info(1, start: 90_000, bytes: 2500)],
                            finish: true)
        let index = SingleFileIndex(fileURI: "720p.mp4", initRange: 0..<600, indexRange: 700..<788)
        let p = try #require(PlaylistBuilder.iFramePlaylist(w.snapshot(), scheme: .nested("720p"), playlistType: .vod,
                                                            singleFile: index))
        #expect(p.mapURI == "720p.mp4" && p.mapByteRange == PlaylistByteRange(length: 600, offset: 0))
        #expect(p.segments.map(\.byteRange) == [PlaylistByteRange(length: 500, offset: 788 + 24),
                                                PlaylistByteRange(length: 600, offset: 1788 + 24)])
        #expect(p.segments.allSatisfy { $0.uri == "720p.mp4" && $0.mapURI == nil })
    }

    @Test func noIFramesNoPlaylist() {
        // Audio only (no keyframe facts), or a producer that gives none.
        let audio = Self.window(tracks: [Fixture.audio], [Self.info(0, start: 0, keyframe: false)])
        #expect(PlaylistBuilder.iFramePlaylist(audio.snapshot(), scheme: .nested("audio"), playlistType: nil) == nil)
        #expect(PlaylistBuilder.iFrameStream(audio.snapshot(), scheme: .nested("audio"), uriQuery: "") == nil)
        let empty = Self.window([])
        #expect(PlaylistBuilder.iFramePlaylist(empty.snapshot(), scheme: .nested("720p"), playlistType: nil) == nil)
    }

    @Test func multivariantListsAnIFrameStreamPerVideoRendition() throws {
        let renditions = [Rendition(name: "720p", kind: .video, scheme: .nested("720p"), audioGroup: "audio"),
                          Rendition(name: "360p", kind: .video, scheme: .nested("360p"), audioGroup: "audio"),
                          Rendition(name: "audio", kind: .audio, scheme: .nested("audio"), audioGroup: "audio")]
        let small = TrackFormat(trackID: 1, kind: .video, timescale: 90_000, codec: Fixture.video.codec, width: 640, height: 360)
        let windows = [Self.window(tracks: [Fixture.video], [Self.info(0, start: 0, bytes: 4000, keyframeBytes: 2000),
                                                             Self.info(1, start: 90_000, duration: 45_000, bytes: 4000, keyframeBytes: 1500)]),
                       Self.window(tracks: [small], [Self.info(0, start: 0, keyframeBytes: 800)]),
                       Self.window(tracks: [Fixture.audio], [Self.info(0, start: 0, keyframe: false)])]
        let snaps = windows.map { $0.snapshot() }
        let plain = try #require(PlaylistBuilder.multivariant(renditions, snaps))
        #expect(plain.iFrameStreams.isEmpty)
        let mv = try #require(PlaylistBuilder.multivariant(renditions, snaps, iFrames: true))
        // Peak: 1500 bytes over 0.5 s = 24,000 bit/s; average 3500 bytes over 1.5 s.
        #expect(mv.iFrameStreams == [
            IFrameStream(bandwidth: 24_000, averageBandwidth: 18_667, codecs: Fixture.video.codecString,
                         resolution: .init(width: 1280, height: 720), uri: "720p.iframes.m3u8"),
            IFrameStream(bandwidth: 6_400, averageBandwidth: 6_400, codecs: small.codecString,
                         resolution: .init(width: 640, height: 360), uri: "360p.iframes.m3u8"),
        ])
        let text = mv.render()
        #expect(text.hasSuffix("""
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=24000,AVERAGE-BANDWIDTH=18667,CODECS="avc1.64001f",RESOLUTION=1280x720,URI="720p.iframes.m3u8"
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=6400,AVERAGE-BANDWIDTH=6400,CODECS="avc1.64001f",RESOLUTION=640x360,URI="360p.iframes.m3u8"

            """))
        #expect(try MultivariantPlaylist.parse(text) == mv)
        #expect(mv.validate().isEmpty)
    }

    @Test func thePresentationRoutesIFramePlaylistsOfVideoRenditionsOnly() throws {
        let p = Presentation<Void>(windowSize: 3, payloads: .none)
        try p.consume(.layout([Rendition(name: "720p", kind: .video, scheme: .nested("720p")),
                               Rendition(name: "audio", kind: .audio, scheme: .nested("audio"))], TimingPolicy(targetDuration: 1)))
        let layout = try #require(p.layout)
        #expect(layout.resolve("720p.iframes.m3u8")! == (0, .iFramePlaylist))
        #expect(layout.resolve("720p.m3u8")! == (0, .playlist))
        #expect(layout.resolve("audio.iframes.m3u8") == nil)
    }
}
