import Foundation
import MediaCore
import Testing
@testable import DASH

@Suite struct MPDTests {
    @Test func timelineCompressesRunsAndWritesTAfterGaps() {
        let s = MPD.TimelineEntry.compress([(0, 90), (90, 90), (180, 90), (270, 45), (400, 45), (445, 45)])
        #expect(s == [MPD.TimelineEntry(time: 0, duration: 90, repeatCount: 2),
                      MPD.TimelineEntry(time: nil, duration: 45),
                      MPD.TimelineEntry(time: 400, duration: 45, repeatCount: 1)])
        #expect(MPD.TimelineEntry.compress([]).isEmpty)
    }

    /// Expanding the compressed entries gives back every (start, duration): §5.3.9.6 semantics of `t`, `d`, `r`.
    @Test func timelineRoundTripsRandomSegments() {
        var rng = UInt64(12345)
        func next(_ n: Int64) -> Int64 { rng = rng &* 6364136223846793005 &+ 1442695040888963407; return Int64((rng >> 33) % UInt64(n)) }
        for _ in 0..<200 {
            var segments: [(start: Int64, duration: Int64)] = []
            var t = next(1000)
            for _ in 0..<Int(next(30)) {
                let d = [90_000, 90_000, 89_100, 45_000][Int(next(4))] as Int64
                segments.append((t, d))
                t += d + (next(10) == 0 ? next(5000) : 0)
            }
            var expanded: [(Int64, Int64)] = []
            var cursor: Int64 = 0
            for e in MPD.TimelineEntry.compress(segments) {
                if let time = e.time { cursor = time }
                for _ in 0...e.repeatCount {
                    expanded.append((cursor, e.duration))
                    cursor += e.duration
                }
            }
            #expect(expanded.map(\.0) == segments.map(\.start))
            #expect(expanded.map(\.1) == segments.map(\.duration))
        }
    }

    @Test func durationsAreExactMillisecondsNeverRoundedUp() {
        #expect(MPD.duration(.seconds(1)) == "PT1S")
        #expect(MPD.duration(MediaTime(value: 2001, timescale: 3000)) == "PT0.667S")
        #expect(MPD.duration(MediaTime(value: 60060, timescale: 1000)) == "PT60.06S")
        #expect(MPD.duration(.seconds(86_400)) == "PT86400S")
    }

    @Test func rendersADynamicCMAFManifest() {
        let template = MPD.SegmentTemplate(timescale: 90_000, initialization: "720p/init.mp4", media: "720p/seg$Number$.m4s",
                                           startNumber: 7, availabilityTimeOffset: MediaTime(value: 667, timescale: 1000),
                                           availabilityTimeComplete: false,
                                           timeline: [MPD.TimelineEntry(time: 630_000, duration: 90_000, repeatCount: 5)])
        let mpd = MPD(type: .dynamic, profiles: [MPD.liveProfile, MPD.cmafProfile], minBufferTime: .seconds(1),
                      periods: [MPD.Period(id: "0", adaptationSets: [
                        MPD.AdaptationSet(id: 0, contentType: .video, mimeType: "video/mp4", representations: [
                            MPD.Representation(id: "720p", bandwidth: 3_000_000, codecs: "avc1.64001f", width: 1280, height: 720,
                                               frameRate: Rational(30000, 1001), segments: .template(template)),
                        ]),
                        MPD.AdaptationSet(id: 1, contentType: .audio, mimeType: "audio/mp4", language: "en&fr", representations: [
                            MPD.Representation(id: "audio", bandwidth: 130_000, codecs: "mp4a.40.2", audioSamplingRate: 48_000,
                                               audioChannelConfiguration: .mpeg(channelCount: 2), segments: .template(template)),
                        ]),
                      ])],
                      availabilityStartTime: WallClock(millisecondsSince1970: 1_763_785_226_123),
                      publishTime: WallClock(millisecondsSince1970: 1_763_785_300_000),
                      minimumUpdatePeriod: .seconds(1), timeShiftBufferDepth: .seconds(6),
                      suggestedPresentationDelay: MediaTime(value: 1, timescale: 1), maxSegmentDuration: .seconds(1),
                      targetLatencyMilliseconds: 1000,
                      utcTimings: [MPD.UTCTiming(schemeIdUri: MPD.UTCTiming.httpISO, value: "http://127.0.0.1:8080/time")])
        let xml = mpd.render()
        #expect(xml.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" type=\"dynamic\""))
        #expect(xml.contains("availabilityStartTime=\"2025-11-22T04:20:26.123Z\""))
        #expect(xml.contains("profiles=\"urn:mpeg:dash:profile:isoff-live:2011,urn:mpeg:dash:profile:cmaf:2019\""))
        #expect(xml.contains("<S t=\"630000\" d=\"90000\" r=\"5\"/>"))
        #expect(xml.contains("startNumber=\"7\" availabilityTimeOffset=\"0.667\" availabilityTimeComplete=\"false\""))
        #expect(xml.contains("frameRate=\"30000/1001\""))
        #expect(xml.contains("lang=\"en&amp;fr\""))
        #expect(xml.contains("<Latency target=\"1000\" referenceId=\"0\"/>"))
        // §5.3.1.2: UTCTiming comes after the Periods.
        let utc = xml.range(of: "<UTCTiming")!.lowerBound
        #expect(xml.range(of: "</Period>")!.lowerBound < utc)
        #expect(xml.hasSuffix("</MPD>\n"))
        // Balanced elements.
        #expect(xml.components(separatedBy: "<AdaptationSet").count == xml.components(separatedBy: "</AdaptationSet>").count)
    }

    @Test func rendersSegmentBase() {
        let base = MPD.SegmentBase(url: "720p.mp4", timescale: 90_000, indexRange: 800...1023, initializationRange: 0...799)
        let mpd = MPD(type: .static, profiles: [MPD.onDemandProfile], minBufferTime: .seconds(1), periods: [
            MPD.Period(id: "0", adaptationSets: [MPD.AdaptationSet(id: 0, contentType: .video, mimeType: "video/mp4", representations: [
                MPD.Representation(id: "720p", bandwidth: 1, codecs: "avc1.64001f", segments: .base(base)),
            ])]),
        ], mediaPresentationDuration: .seconds(30))
        let xml = mpd.render()
        #expect(xml.contains("<BaseURL>720p.mp4</BaseURL>"))
        #expect(xml.contains("<SegmentBase timescale=\"90000\" indexRange=\"800-1023\" indexRangeExact=\"true\">"))
        #expect(xml.contains("<Initialization range=\"0-799\"/>"))
        #expect(xml.contains("mediaPresentationDuration=\"PT30S\""))
        #expect(!xml.contains("availabilityStartTime"))
    }
}

@Suite struct MPDColourTests {
    private func render(_ colour: ColourInfo?) -> String {
        let base = MPD.SegmentBase(url: "v.mp4", timescale: 90_000, indexRange: 800...1023, initializationRange: 0...799)
        return MPD(type: .static, profiles: [MPD.onDemandProfile], minBufferTime: .seconds(1), periods: [
            MPD.Period(id: "0", adaptationSets: [MPD.AdaptationSet(id: 0, contentType: .video, mimeType: "video/mp4", representations: [
                MPD.Representation(id: "v", bandwidth: 1, codecs: "hvc1.2.4.L123.B0", colour: colour, segments: .base(base)),
            ])]),
        ], mediaPresentationDuration: .seconds(30)).render()
    }

    /// DASH-IF IOP 4.3 §6.2.5 (PQ: the three CICP code points as EssentialProperty) and §6.2.6 (HLG: transfer 14
    /// essential, 18 supplemental); nothing for SDR.
    @Test func hdrRepresentationsCarryTheCICPDescriptors() {
        let cicp = "urn:mpeg:mpegB:cicp:"
        let pq = render(ColourInfo(primaries: 9, transfer: 16, matrix: 9))
        #expect(pq.contains("<EssentialProperty schemeIdUri=\"\(cicp)TransferCharacteristics\" value=\"16\"/>"))
        #expect(pq.contains("<EssentialProperty schemeIdUri=\"\(cicp)ColourPrimaries\" value=\"9\"/>"))
        #expect(pq.contains("<EssentialProperty schemeIdUri=\"\(cicp)MatrixCoefficients\" value=\"9\"/>"))
        #expect(!pq.contains("SupplementalProperty"))
        let hlg = render(ColourInfo(primaries: 9, transfer: 18, matrix: 9))
        #expect(hlg.contains("<EssentialProperty schemeIdUri=\"\(cicp)TransferCharacteristics\" value=\"14\"/>"))
        #expect(hlg.contains("<SupplementalProperty schemeIdUri=\"\(cicp)TransferCharacteristics\" value=\"18\"/>"))
        #expect(!render(ColourInfo(primaries: 1, transfer: 1, matrix: 1)).contains("cicp"))
        #expect(!render(nil).contains("cicp"))
    }
}

@Suite struct MPDTrickModeTests {
    /// ISO/IEC 23009-1 §5.3.9.3 SegmentList (Initialization, SegmentTimeline, then SegmentURL@mediaRange inclusive) and
    /// DASH-IF IOP §3.2.9's trick-mode EssentialProperty naming the main set.
    @Test func segmentListAndTrickModeRender() {
        let list = MPD.SegmentList(timescale: 90_000, initialization: "720p/init.mp4", startNumber: 7,
                                   timeline: [MPD.TimelineEntry(time: 630_000, duration: 90_000, repeatCount: 1)],
                                   urls: [.init(media: "720p/seg7.m4s", range: 28..<1028), .init(media: "720p/seg8.m4s", range: 28..<928)])
        var rep = MPD.Representation(id: "720p-trick", bandwidth: 80_000, codecs: "avc1.64001f", segments: .list(list))
        rep.maxPlayoutRate = 30
        rep.codingDependency = false
        var set = MPD.AdaptationSet(id: 2, contentType: .video, mimeType: "video/mp4", representations: [rep])
        set.trickModeOf = 0
        let xml = MPD(type: .static, profiles: [MPD.liveProfile], minBufferTime: .seconds(1),
                      periods: [MPD.Period(id: "0", adaptationSets: [set])], mediaPresentationDuration: .seconds(2)).render()
        #expect(xml.contains("<EssentialProperty schemeIdUri=\"http://dashif.org/guidelines/trickmode\" value=\"0\"/>"))
        #expect(xml.contains("maxPlayoutRate=\"30\" codingDependency=\"false\""))
        #expect(xml.contains("<SegmentList timescale=\"90000\" startNumber=\"7\">"))
        #expect(xml.contains("<Initialization sourceURL=\"720p/init.mp4\"/>"))
        #expect(xml.contains("<SegmentURL media=\"720p/seg7.m4s\" mediaRange=\"28-1027\"/>"))
        let timeline = xml.range(of: "<SegmentTimeline>")!.lowerBound, firstURL = xml.range(of: "<SegmentURL")!.lowerBound
        #expect(timeline < firstURL)
    }
}

@Suite struct MPDSupplementalCodecsTests {
    /// SCTE 214-1 `supplementalCodecs`/`supplementalProfiles` (Dolby Vision profile 8 over its HEVC base layer): on the
    /// Representation, and the namespace on the MPD only when one is used.
    @Test func supplementalCodecsRenderInTheirNamespace() {
        func xml(_ dv: Bool) -> String {
            var rep = MPD.Representation(id: "v", bandwidth: 9_000_000, codecs: "hvc1.2.4.L153.B0",
                                         segments: .template(MPD.SegmentTemplate(timescale: 90_000, initialization: "init.mp4",
                                                                                 media: "seg$Number$.m4s", startNumber: 0,
                                                                                 timeline: [MPD.TimelineEntry(time: 0, duration: 90_000, repeatCount: 1)])))
            if dv {
                rep.supplementalCodecs = "dvh1.08.06"
                rep.supplementalProfiles = "db1p"
            }
            let set = MPD.AdaptationSet(id: 0, contentType: .video, mimeType: "video/mp4", representations: [rep])
            return MPD(type: .static, profiles: [MPD.liveProfile], minBufferTime: .seconds(1),
                       periods: [MPD.Period(id: "0", adaptationSets: [set])], mediaPresentationDuration: .seconds(2)).render()
        }
        let with = xml(true)
        #expect(with.contains("xmlns:scte214=\"urn:scte:dash:scte214-extensions\""))
        #expect(with.contains("codecs=\"hvc1.2.4.L153.B0\" scte214:supplementalCodecs=\"dvh1.08.06\" scte214:supplementalProfiles=\"db1p\""))
        #expect(!xml(false).contains("scte214"))
    }
}
