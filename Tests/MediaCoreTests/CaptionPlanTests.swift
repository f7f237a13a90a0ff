import Testing
@testable import MediaCore

/// `--captions`: which closed-caption services are signalled, and in which language.
@Suite struct CaptionPlanTests {
    static let found = CaptionPresence(field1: true, dtvcc: true).services

    @Test func readsItsForms() {
        #expect(CaptionPlan("auto") == .auto && CaptionPlan("none") == CaptionPlan.none && CaptionPlan("") == .auto)
        #expect(CaptionPlan("cc1=eng, SERVICE2=fr")?.description == "CC1=en,SERVICE2=fr")
        for bad in ["CC5=en", "SERVICE64=fr", "CC1=x1", "CC1=en,CC1=fr", "en,,", "CC1="] {
            #expect(CaptionPlan(bad) == nil, "\(bad)")
        }
    }

    @Test func resolvesAgainstWhatWasFound() {
        #expect(CaptionPlan.auto.services(found: Self.found).map(\.description) == ["CC1", "SERVICE1"])
        #expect(CaptionPlan.none.services(found: Self.found).isEmpty)
        // A bare language names the next found service no entry named; beyond those, the next free 608 channel.
        let plan = CaptionPlan("SERVICE1=fr,en,es")!
        #expect(plan.services(found: Self.found).map(\.description) == ["SERVICE1=fr", "CC1=en", "CC3=es"])
        // Named services are signalled even when the first pictures carried none (captions that start later).
        #expect(CaptionPlan("CC3=de")!.services(found: []).map(\.description) == ["CC3=de"])
    }

    @Test func namesForAMenu() {
        let en = CaptionService(instreamID: "cc1", language: LanguageTag("eng"))!
        #expect(en.instreamID == "CC1" && en.name == "English" && !en.is708 && en.number == 1)
        let s = CaptionService(instreamID: "SERVICE12")!
        #expect(s.name == "SERVICE12" && s.is708 && s.number == 12)
        #expect(CaptionService(instreamID: "CC0") == nil && CaptionService(instreamID: "T1") == nil)
    }
}
