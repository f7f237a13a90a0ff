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

    @Test func refusals() {
        let key = "ABEiM0RVZneImaq7zN3u/w=="
        let cases: [(String, String)] = [
            ("<html/>", "not a CPIX document"),
            ("<cpix:CPIX><cpix:ContentKeyList/></cpix:CPIX>", "no ContentKey"),
            (Self.document.replacingOccurrences(of: "</cpix:ContentKeyList>", with: "<cpix:ContentKey kid=\"01234567-89ab-cdef-0123-456789abcde0\"/></cpix:ContentKeyList>"),
             "2 content keys"),
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
