import MediaCore
import Testing
@testable import DASH

/// Closed captions in a video AdaptationSet: `Accessibility` per ANSI/SCTE 214-1 §6.7.3 and DASH-IF IOP 4.3 §6.4.3.
@Suite struct AccessibilityTests {
    @Test func captionDescriptors() {
        let services = ["CC1=eng", "CC3=spa", "SERVICE1=fr", "SERVICE2"].compactMap { s -> CaptionService? in
            let p = s.split(separator: "=").map(String.init)
            return CaptionService(instreamID: p[0], language: p.count > 1 ? LanguageTag(p[1]) : nil)
        }
        let d = MPD.Descriptor.closedCaptions(services)
        #expect(d == [MPD.Descriptor(schemeIdUri: "urn:scte:dash:cc:cea-608:2015", value: "CC1=eng;CC3=spa"),
                      MPD.Descriptor(schemeIdUri: "urn:scte:dash:cc:cea-708:2015", value: "1=lang:fra;2")])
        #expect(MPD.Descriptor.closedCaptions([]).isEmpty)
    }

    @Test func renderedBeforeRoleInTheSchemaOrder() {
        var set = MPD.AdaptationSet(id: 0, contentType: .video, mimeType: "video/mp4", role: "main", representations: [])
        set.accessibility = MPD.Descriptor.closedCaptions([CaptionService(instreamID: "CC1")!])
        let mpd = MPD(type: .static, profiles: [MPD.onDemandProfile], minBufferTime: .seconds(1),
                      periods: [MPD.Period(id: "0", adaptationSets: [set])])
        let text = mpd.render()
        let a = text.range(of: "<Accessibility schemeIdUri=\"urn:scte:dash:cc:cea-608:2015\" value=\"CC1\"/>")
        let r = text.range(of: "<Role ")
        #expect(a != nil && r != nil && a!.lowerBound < r!.lowerBound)
    }
}
