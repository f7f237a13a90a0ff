import ISOBMFF
import MediaCore
import MediaPresentation
import Producer
import Testing

/// Subtitle cues through the chain: a WebVTT segment per subtitle rendition on every segment of the first rendition,
/// with its sequence number, start, duration and date; cues placed with the samples' shift.
@Suite struct SubtitleChainTests {
    @Test func cuesBecomeSegmentsOnTheVideosBoundaries() throws {
        let out = Recorded()
        var plan = RenditionPlan.muxed(trackCount: 2)
        plan.subtitles = [.subtitles(SubtitleLabel(language: LanguageTag("en"), name: "English"), position: 0)]
        var c = ProducerChain(plan: plan, kinds: [.video, .audio],
                              settings: .init(segmentDuration: .seconds(1), partDuration: MediaTime(value: 333, timescale: 1000)),
                              output: out, logger: quiet)
        let offset: Int64 = 900_000  // the input clock starts at 10 s: the output timeline at 0
        let ms = { (v: Int64) in MediaTime(value: v, timescale: 1000) }
        try c.accept(.cues(subtitle: 0, [SubtitleCue(start: ms(10_500), end: ms(11_500), text: "across"),
                                         SubtitleCue(start: ms(12_200), end: ms(12_400), text: "third")]))
        for e in events(seconds: 4, offset: offset) { try c.accept(e) }
        try c.finish()
        let all = out.all
        guard case .layout(let renditions, _)? = all.first else { Issue.record("no layout"); return }
        #expect(renditions.map(\.name) == ["stream", "subs-en", "subs-en-wvtt"] && renditions[1].kind == .subtitles)
        #expect(renditions[1].isWebVTTSubtitles && !renditions[2].isWebVTTSubtitles && renditions[2].scheme.wholeSegments)
        #expect(renditions[1].scheme.segmentURI(3) == "subs-en/seg3.vtt")
        let inits = all.compactMap { if case .initSegment(1, let b, let t) = $0 { (b, t) } else { nil } }
        #expect(inits.count == 1 && inits[0].0.isEmpty && inits[0].1.isEmpty)
        let subs = all.compactMap { if case .segment(1, let i, let b) = $0 { (i, String(decoding: b.joined, as: UTF8.self)) } else { nil } }
        let video = out.segments
        #expect(subs.map(\.0.sequence) == video.map(\.sequence))
        #expect(subs.map(\.0.startTime) == video.map(\.startTime) && subs.map(\.0.duration) == video.map(\.duration))
        #expect(subs.map(\.0.programDateTime) == video.map(\.programDateTime))
        #expect(subs.allSatisfy { $0.0.byteCount == $0.1.utf8.count })
        let header = "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000\n"
        let across = "\n00:00:00.500 --> 00:00:01.500\nacross\n\n"
        #expect(subs.map(\.1) == [header + across, header + across, header + "\n00:00:02.200 --> 00:00:02.400\nthird\n\n", header + "\n"])
        // Each subtitle segment follows its video segment: a playlist lists both at once.
        let order = all.compactMap { e -> Int? in if case .segment(let r, _, _) = e { r } else { nil } }
        #expect(order == [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2])
        // The wvtt form (DASH): its init is a text track's, each segment the same span as one wvtt fragment.
        let twinInit = all.compactMap { if case .initSegment(2, let b, _) = $0 { b } else { nil } }
        #expect(twinInit == [try WebVTTTrack.initSegment(timescale: 90_000, language: "eng")])
        let twin = all.compactMap { if case .segment(2, let i, let b) = $0 { (i, b.joined) } else { nil } }
        #expect(twin.map(\.0.startTime) == video.map(\.startTime) && twin.map(\.0.duration) == video.map(\.duration))
        let acrossCue = SubtitleCue(start: MediaTime(value: 45_000, timescale: 90_000), end: MediaTime(value: 135_000, timescale: 90_000),
                                 text: "across")
        #expect(twin[0].1 == (try WebVTTTrack.segment([acrossCue], from: video[0].startTime,
                                                      to: video[0].startTime + video[0].duration, sequenceNumber: 1)))
        // No parts for WebVTT.
        #expect(!all.contains { if case .part(1, _, _) = $0 { true } else { false } })
    }

    /// A posted cue counts from the live edge (the newest media taken); a followed rendition's cue (`onInputClock`) is
    /// on the input's clock already, and is taken before any media too.
    @Test func postedCuesOnEitherClock() throws {
        var plan = RenditionPlan.muxed(trackCount: 2)
        plan.subtitles = [.subtitles(SubtitleLabel(language: LanguageTag("en"), name: "English"), position: 0)]
        var c = ProducerChain(plan: plan, kinds: [.video, .audio],
                              settings: .init(segmentDuration: .seconds(1), partDuration: nil), output: Recorded(), logger: quiet)
        let ms = { (v: Int64) in MediaTime(value: v, timescale: 1000) }
        let cue = SubtitleCue(start: ms(500), end: ms(1500), text: "x")
        #expect(c.resolve(PostedCue(language: "en", cue: cue)) == nil)  // no media yet: no live edge
        guard case .cues(0, let early)? = c.resolve(PostedCue(language: "en", cue: cue, onInputClock: true)) else {
            Issue.record("an input-clock cue before any media was dropped"); return
        }
        #expect(early == [cue])
        for e in events(seconds: 2, offset: 900_000) { try c.accept(e) }
        guard case .cues(0, let relative)? = c.resolve(PostedCue(language: "en", cue: cue)),
              case .cues(0, let absolute)? = c.resolve(PostedCue(language: "en", cue: cue, onInputClock: true)) else {
            Issue.record("not resolved"); return
        }
        #expect(absolute == [cue])
        #expect(relative[0].start > MediaTime.seconds(11) && relative[0].end - relative[0].start == ms(1000))
        #expect(c.resolve(PostedCue(language: "fr", cue: cue, onInputClock: true)) == nil)
    }

    /// A followed rendition's cue is placed by its segment's `X-TIMESTAMP-MAP` MPEGTS value, 33 bits of 90 kHz; past a
    /// wrap (26.5 h) the demuxer's clock runs on: the cue goes to the turn nearest the media, not a wrap before it.
    @Test func followedCuePastTheMPEGTSWrap() throws {
        var plan = RenditionPlan.muxed(trackCount: 2)
        plan.subtitles = [.subtitles(SubtitleLabel(language: LanguageTag("en"), name: "English"), position: 0)]
        var c = ProducerChain(plan: plan, kinds: [.video, .audio],
                              settings: .init(segmentDuration: .seconds(1), partDuration: nil), output: Recorded(), logger: quiet)
        let wrap: Int64 = 1 << 33
        for e in events(seconds: 2, offset: wrap + 900_000) { try c.accept(e) }
        let ms = { (v: Int64) in MediaTime(value: v, timescale: 1000) }
        guard case .cues(0, let placed)? = c.resolve(PostedCue(language: "en", cue: SubtitleCue(start: ms(10_500), end: ms(11_500), text: "x"),
                                                               onInputClock: true)) else {
            Issue.record("not resolved"); return
        }
        #expect(placed[0].start == MediaTime(value: wrap + 945_000, timescale: 90_000))
        #expect(placed[0].end == MediaTime(value: wrap + 1_035_000, timescale: 90_000))
        #expect(placed[0].text == "x")
    }

    /// Through a presentation: the subtitle playlist has no map and no parts, answers by segment, and the multivariant
    /// playlist names the group on its variant.
    @Test func playlists() throws {
        let p = Presentation<Void>(payloads: PayloadMaker<Void>.none)
        var plan = RenditionPlan.muxed(trackCount: 2)
        plan.subtitles = [.subtitles(SubtitleLabel(language: LanguageTag("fr"), name: "Français", forced: true), position: 0)]
        var c = ProducerChain(plan: plan, kinds: [.video, .audio],
                              settings: .init(segmentDuration: .seconds(1), partDuration: MediaTime(value: 333, timescale: 1000)),
                              output: p, logger: quiet)
        try c.accept(.cues(subtitle: 0, [SubtitleCue(start: .seconds(1, timescale: 1000), end: .seconds(2, timescale: 1000), text: "x")]))
        for e in events(seconds: 3) { try c.accept(e) }
        let layout = try #require(p.layout)
        let snaps = layout.snapshots()
        let media = try #require(PlaylistBuilder.mediaPlaylist(snaps[1], scheme: layout.renditions[1].scheme, playlistType: nil))
        let text = media.render()
        #expect(!text.contains("EXT-X-MAP") && !text.contains("EXT-X-PART") && !text.contains("PRELOAD-HINT"))
        #expect(text.contains("#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,HOLD-BACK=3.0"))
        #expect(text.contains("#EXTINF:1.0,\nsubs-fr/seg0.vtt\n"))
        #expect(media.segments.map(\.sequence) == snaps[0].window.map(\.sequence))
        let mv = try #require(PlaylistBuilder.multivariant(layout.renditions, snaps))
        #expect(mv.validate().isEmpty)
        #expect(mv.render().contains("#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"subs\",NAME=\"Français\",DEFAULT=NO,AUTOSELECT=YES,FORCED=YES,LANGUAGE=\"fr\",URI=\"subs-fr.m3u8\"\n"))
        #expect(mv.variants.count == 1 && mv.variants[0].subtitlesGroup == "subs" && mv.iFrameStreams.isEmpty)
        // The route table finds the WebVTT segment, and no init segment.
        #expect(layout.resolve("subs-fr/seg1.vtt")?.rendition == 1)
        #expect(layout.resolve("subs-fr/init.mp4") == nil && layout.resolve("subs-fr/seg1.m4s") == nil)
        #expect(layout.resolve("subs-fr.m3u8")?.rendition == 1 && layout.resolve("subs-fr.iframes.m3u8") == nil)
    }
}
