import MediaCore
import Testing
@testable import DASH

/// `ContentProtection` (ISO/IEC 23009-1 §5.8.4.1, ISO/IEC 23001-7 §11.2): first in its AdaptationSet, the `cenc`
/// namespace declared once on the MPD, `cenc:pssh` as element text.
@Suite struct ContentProtectionTests {
    @Test func rendersTheCommonSchemeAndASystem() {
        var set = MPD.AdaptationSet(id: 0, contentType: .audio, mimeType: "audio/mp4", representations: [])
        set.contentProtection = [
            MPD.ContentProtection(schemeIdUri: MPD.ContentProtection.mp4Protection, value: "cbcs",
                                  defaultKID: "01234567-89ab-cdef-0123-456789abcdef"),
            MPD.ContentProtection(schemeIdUri: "urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed", pssh: "AAAAIHBzc2g="),
        ]
        let mpd = MPD(type: .static, profiles: [MPD.onDemandProfile], minBufferTime: .seconds(1),
                      periods: [MPD.Period(id: "0", adaptationSets: [set])])
        let xml = mpd.render()
        #expect(xml.contains("<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" xmlns:cenc=\"urn:mpeg:cenc:2013\""))
        #expect(xml.contains("""
                  <ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" value="cbcs" cenc:default_KID="01234567-89ab-cdef-0123-456789abcdef"/>
                  <ContentProtection schemeIdUri="urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed">
                    <cenc:pssh>AAAAIHBzc2g=</cenc:pssh>
                  </ContentProtection>
                  <Role schemeIdUri="urn:mpeg:dash:role:2011" value="main"/>
            """))
        set.contentProtection = []
        let clear = MPD(type: .static, profiles: [MPD.onDemandProfile], minBufferTime: .seconds(1),
                        periods: [MPD.Period(id: "0", adaptationSets: [set])]).render()
        #expect(!clear.contains("cenc"))
    }
}
