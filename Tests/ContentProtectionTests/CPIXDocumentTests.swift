import ContentProtection
import ISOBMFF
import Foundation
import Testing

/// DASH-IF CPIX 2.3: the one content key, its KID, the scheme and the DRM systems; what is refused.
@Suite struct CPIXDocumentTests {
    static let document = """
        <?xml version="1.0" encoding="UTF-8"?>
        <cpix:CPIX contentId="movie" version="2.3" xmlns:cpix="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc">
          <cpix:ContentKeyList>
            <cpix:ContentKey kid="01234567-89ab-cdef-0123-456789abcdef" commonEncryptionScheme="cbcs">
              <cpix:Data>
                <pskc:Secret>
                  <pskc:PlainValue>
                    ABEiM0RVZneImaq7zN3u/w==
                  </pskc:PlainValue>
                </pskc:Secret>
              </cpix:Data>
            </cpix:ContentKey>
          </cpix:ContentKeyList>
          <cpix:DRMSystemList>
            <cpix:DRMSystem kid="01234567-89ab-cdef-0123-456789abcdef" systemId="9a04f079-9840-4286-ab92-e65be0885f95"/>
            <cpix:DRMSystem kid="01234567-89ab-cdef-0123-456789abcdef" systemId="edef8ba9-79d6-4ace-a3c8-27dcd51d21ed">
              <cpix:PSSH>AAAA</cpix:PSSH>
            </cpix:DRMSystem>
            <cpix:DRMSystem kid="01234567-89ab-cdef-0123-456789abcdef" systemId="11111111-2222-3333-4444-555555555555"/>
          </cpix:DRMSystemList>
        </cpix:CPIX>
        """

    @Test func readsTheKeyAndTheSystems() throws {
        let d = try CPIXDocument.parse(Self.document)
        #expect(d.keyID == [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF])
        #expect(d.key == [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
        #expect(d.scheme == .cbcs)
        #expect(d.systems == [.playready, .widevine], "an unknown system is not signalled")
    }

    static let secondKey = """
        <cpix:ContentKey kid="01234567-89ab-cdef-0123-456789abcde0"><cpix:Data><pskc:Secret><pskc:PlainValue>EBESExQVFhcYGRobHB0eHw==</pskc:PlainValue></pskc:Secret></cpix:Data></cpix:ContentKey>
        <cpix:ContentKey kid="01234567-89ab-cdef-0123-456789abcde1"><cpix:Data><pskc:Secret><pskc:PlainValue>ICEiIyQlJicoKSorLC0uLw==</pskc:PlainValue></pskc:Secret></cpix:Data></cpix:ContentKey>
        """
    /// Three keys as SPEKE v2's encryption contract gives them: SD video, HD video and up, audio.
    static let perTrack = document.replacingOccurrences(of: "</cpix:ContentKeyList>", with: secondKey + "</cpix:ContentKeyList>")
        .replacingOccurrences(of: "</cpix:CPIX>", with: """
            <cpix:ContentKeyUsageRuleList>
              <cpix:ContentKeyUsageRule kid="01234567-89ab-cdef-0123-456789abcdef" intendedTrackType="SD"><cpix:VideoFilter maxPixels="442368"/></cpix:ContentKeyUsageRule>
              <cpix:ContentKeyUsageRule kid="01234567-89ab-cdef-0123-456789abcde0" intendedTrackType="HD"><cpix:VideoFilter minPixels="442369"/></cpix:ContentKeyUsageRule>
              <cpix:ContentKeyUsageRule kid="01234567-89ab-cdef-0123-456789abcde1" intendedTrackType="AUDIO"><cpix:AudioFilter/></cpix:ContentKeyUsageRule>
            </cpix:ContentKeyUsageRuleList>
            </cpix:CPIX>
            """)

    @Test func readsPerTrackKeysByTheirUsageRules() throws {
        let d = try CPIXDocument.parse(Self.perTrack)
        #expect(d.keys.map(\.usage.label) == ["SD", "HD", "AUDIO"])
        #expect(d.keys.map { $0.keyID.last! } == [0xEF, 0xE0, 0xE1])
        #expect(d.keys[1].key == Array(0x10...0x1F) && d.keys[2].key == Array(0x20...0x2F))
        #expect(d.keys[0].usage.video == [0...442_368] && d.keys[0].usage.audio.isEmpty)
        #expect(d.keys[1].usage.video == [442_369...Int.max] && d.keys[2].usage.audio == [0...Int.max])
        // One key, no rule: every track.
        #expect(try CPIXDocument.parse(Self.document).keys.map(\.usage) == [.all])
    }

    /// Two keys, one per key period (index 0 and 1).
    static let periods = document.replacingOccurrences(of: "</cpix:ContentKeyList>", with: secondKey.components(separatedBy: "\n")[0] + "</cpix:ContentKeyList>")
        .replacingOccurrences(of: "</cpix:CPIX>", with: """
            <cpix:ContentKeyPeriodList><cpix:ContentKeyPeriod id="p0" index="0"/><cpix:ContentKeyPeriod id="p1" index="1"/></cpix:ContentKeyPeriodList>
            <cpix:ContentKeyUsageRuleList>
              <cpix:ContentKeyUsageRule kid="01234567-89ab-cdef-0123-456789abcdef" intendedTrackType="ALL"><cpix:KeyPeriodFilter periodId="p0"/></cpix:ContentKeyUsageRule>
              <cpix:ContentKeyUsageRule kid="01234567-89ab-cdef-0123-456789abcde0" intendedTrackType="ALL"><cpix:KeyPeriodFilter periodId="p1"/></cpix:ContentKeyUsageRule>
            </cpix:ContentKeyUsageRuleList>
            </cpix:CPIX>
            """)

    @Test func readsKeyPeriods() throws {
        let d = try CPIXDocument.parse(Self.periods)
        #expect(d.hasPeriods && d.keys.map(\.period) == [0, 1])
        #expect(d.keys.map(\.usage.label) == ["ALL", "ALL"] && d.keys[1].key == Array(0x10...0x1F))
        #expect(try !CPIXDocument.parse(Self.perTrack).hasPeriods)
    }

    @Test func refusals() {
        let key = "ABEiM0RVZneImaq7zN3u/w=="
        let cases: [(String, String)] = [
            ("<html/>", "not a CPIX document"),
            ("<cpix:CPIX><cpix:ContentKeyList/></cpix:CPIX>", "no ContentKey"),
            (Self.document.replacingOccurrences(of: "</cpix:ContentKeyList>", with: Self.secondKey + "</cpix:ContentKeyList>"),
             "has no ContentKeyUsageRule"),
            (Self.perTrack.replacingOccurrences(of: "<cpix:VideoFilter maxPixels=\"442368\"/>", with: "<cpix:VideoFilter maxPixels=\"442368\" hdr=\"true\"/>"),
             "VideoFilter@hdr is not read"),
            (Self.perTrack.replacingOccurrences(of: "<cpix:AudioFilter/>", with: "<cpix:BitrateFilter minBitrate=\"1\"/>"), "BitrateFilter is not read"),
            (Self.perTrack.replacingOccurrences(of: "<cpix:AudioFilter/>", with: "<cpix:KeyPeriodFilter periodId=\"p\"/>"), "names no ContentKeyPeriod"),
            (Self.periods.replacingOccurrences(of: "index=\"0\"", with: "index=\"7\""), "no key is for key period 0"),
            (Self.periods.replacingOccurrences(of: "id=\"p1\" index=\"1\"", with: "id=\"p1\" start=\"2026-01-01T00:00:00Z\""), "has no index"),
            (Self.periods.replacingOccurrences(of: "index=\"1\"", with: "index=\"0\""), "two content keys are for the same tracks in key period 0"),
            (Self.periods.replacingOccurrences(of: "<cpix:KeyPeriodFilter periodId=\"p1\"/>", with: ""), "has no KeyPeriodFilter"),
            (Self.perTrack.replacingOccurrences(of: "maxPixels=\"442368\"", with: "maxPixels=\"many\""), "is not a whole number"),
            (Self.perTrack.replacingOccurrences(of: "minPixels=\"442369\"", with: "minPixels=\"442369\" maxPixels=\"5\""), "above its maxPixels"),
            (Self.perTrack.replacingOccurrences(of: "kid=\"01234567-89ab-cdef-0123-456789abcde0\" intendedTrackType", with: "kid=\"99999999-89ab-cdef-0123-456789abcde0\" intendedTrackType"),
             "names no ContentKey"),
            (Self.perTrack.replacingOccurrences(of: "commonEncryptionScheme=\"cbcs\"", with: "commonEncryptionScheme=\"cenc\"").replacingOccurrences(of: Self.secondKey, with: Self.secondKey.replacingOccurrences(of: "<cpix:ContentKey ", with: "<cpix:ContentKey commonEncryptionScheme=\"cbcs\" ")),
             "both cenc and cbcs"),
            (Self.document.replacingOccurrences(of: "<pskc:PlainValue>", with: "<pskc:EncryptedValue>").replacingOccurrences(of: "</pskc:PlainValue>", with: "</pskc:EncryptedValue>"),
             "the content key is encrypted"),
            (Self.document.replacingOccurrences(of: key, with: "AAEC"), "no 16-byte PlainValue"),
            (Self.document.replacingOccurrences(of: "commonEncryptionScheme=\"cbcs\"", with: "commonEncryptionScheme=\"cens\""), "is not cenc or cbcs"),
            (Self.document.replacingOccurrences(of: "kid=\"01234567-89ab-cdef-0123-456789abcdef\" commonEncryptionScheme", with: "commonEncryptionScheme"), "no kid"),
        ]
        for (text, says) in cases {
            do {
                _ = try CPIXDocument.parse(text)
                Issue.record("accepted: \(says)")
            } catch {
                #expect(error.description.contains(says), "\(error)")
                #expect(!error.description.contains(key))
            }
        }
    }
}
