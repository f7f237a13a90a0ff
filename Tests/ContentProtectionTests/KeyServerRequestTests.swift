import ContentProtection
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import MediaPresentation
import Synchronization
import Testing

/// `--key-server`: the CPIX 2.3 request (well-formed XML, the KIDs and periods asked), the answer's keys, what is
/// refused, and the keys of periods that did not come in time.
@Suite struct KeyServerRequestTests {
    static let live = KeyServerRequest(contentID: "live", scheme: .cbcs, rotating: true)
    /// SHA-256("hls-origin key-server kid " ‖ "live" ‖ 0 ‖ n), first 16 bytes, computed with Python's hashlib.
    static let kid4 = "3a0622f6-5d48-442a-ea5b-fbffe94210f0", kid5 = "28b88bcd-1b91-012e-0184-39ad792d7a80"
    static let kid0 = "f37f9fa9-6bef-ac63-19c4-fd1482d4a9f9"

    func attributes(_ doc: XMLDocument, _ element: String, _ attribute: String) throws -> [String] {
        try doc.nodes(forXPath: "//*[local-name()='\(element)']").compactMap {
            ($0 as? XMLElement)?.attribute(forName: attribute)?.stringValue
        }
    }

    @Test func theRequestListsEachPeriodsKeyPeriodAndRule() throws {
        let text = Self.live.document(periods: [4, 5])
        let doc = try XMLDocument(xmlString: text)            // well-formed, or this throws
        #expect(doc.rootElement()?.localName == "CPIX")
        #expect(doc.rootElement()?.uri == "urn:dashif:org:cpix")
        #expect(try attributes(doc, "CPIX", "contentId") == ["live"])
        #expect(try attributes(doc, "CPIX", "version") == ["2.3"])
        #expect(try attributes(doc, "ContentKey", "kid") == [Self.kid4, Self.kid5])
        #expect(try attributes(doc, "ContentKey", "commonEncryptionScheme") == ["cbcs", "cbcs"])
        #expect(try attributes(doc, "ContentKeyPeriod", "index") == ["4", "5"])
        #expect(try attributes(doc, "ContentKeyPeriod", "id") == ["period-4", "period-5"])
        #expect(try attributes(doc, "ContentKeyUsageRule", "kid") == [Self.kid4, Self.kid5])
        #expect(try attributes(doc, "KeyPeriodFilter", "periodId") == ["period-4", "period-5"])
        #expect(try attributes(doc, "DRMSystem", "systemId").isEmpty)
        #expect(text.contains("intendedTrackType=\"ALL\"><cpix:KeyPeriodFilter periodId=\"period-4\"/><cpix:VideoFilter/><cpix:AudioFilter/></cpix:ContentKeyUsageRule>"))
        // The order CPIX 2.3's schema gives the lists.
        #expect(doc.rootElement()?.children?.compactMap(\.localName) == ["ContentKeyList", "ContentKeyPeriodList", "ContentKeyUsageRuleList"])
    }

    @Test func withoutPeriodsOneKeyAndNoPeriodLists() throws {
        var r = KeyServerRequest(contentID: "a&b\"<", scheme: .cenc, rotating: false, systems: [.widevine, .clearkey])
        let doc = try XMLDocument(xmlString: r.document(periods: [3, 4]))
        #expect(try attributes(doc, "CPIX", "contentId") == ["a&b\"<"])
        #expect(try attributes(doc, "ContentKey", "commonEncryptionScheme") == ["cenc"])
        #expect(try attributes(doc, "ContentKey", "kid").count == 1)
        #expect(try attributes(doc, "ContentKeyPeriod", "index").isEmpty)
        #expect(try attributes(doc, "DRMSystem", "systemId") == ["edef8ba9-79d6-4ace-a3c8-27dcd51d21ed", "1077efec-c0b2-4d02-ace3-3c1e52e2fb4b"])
        // SPEKE v2: every key its usage rule; one key for every track is `ALL` with both filters, no attributes.
        #expect(try attributes(doc, "ContentKeyUsageRule", "intendedTrackType") == ["ALL"])
        #expect(r.document(periods: [0]).contains("intendedTrackType=\"ALL\"><cpix:VideoFilter/><cpix:AudioFilter/></cpix:ContentKeyUsageRule>"))
        #expect(doc.rootElement()?.children?.compactMap(\.localName) == ["ContentKeyList", "DRMSystemList", "ContentKeyUsageRuleList"])
        r.contentID = "live"
        #expect(r.keyID(period: 0) == Self.live.keyID(period: 0))
        #expect(KeyServerRequest.uuid(r.keyID(period: 0)) == Self.kid0)
        #expect(Self.live.keyID(period: 4) != KeyServerRequest(contentID: "other", scheme: .cbcs, rotating: true).keyID(period: 4))
    }

    static func answer(_ keys: [(kid: String, key: String)], scheme: String = "cbcs", extra: String = "") -> String {
        let list = keys.map { k in
            "<cpix:ContentKey kid=\"\(k.kid)\" commonEncryptionScheme=\"\(scheme)\"><cpix:Data><pskc:Secret><pskc:PlainValue>\(k.key)</pskc:PlainValue></pskc:Secret></cpix:Data></cpix:ContentKey>"
        }.joined()
        return """
            <cpix:CPIX xmlns:cpix="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc" contentId="live" version="2.3">
            <cpix:ContentKeyList>\(list)</cpix:ContentKeyList>
            <cpix:DRMSystemList><cpix:DRMSystem kid="\(Self.kid4)" systemId="edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"/></cpix:DRMSystemList>
            \(extra)</cpix:CPIX>
            """
    }
    static let key4 = Data((0..<16).map { UInt8($0) }).base64EncodedString()
    static let key5 = Data((0..<16).map { UInt8(100 + $0) }).base64EncodedString()

    @Test func theAnswerGivesEachPeriodsKeyByKID() throws {
        // The server may answer in any order, with more keys than asked.
        let text = Self.answer([(Self.kid5, Self.key5), (Self.kid0, Self.key4), (Self.kid4, Self.key4)])
        let (tracks, systems) = try Self.live.keys(periods: [4, 5], answer: text)
        #expect(tracks.count == 1)
        let keys = tracks[0]
        #expect(keys.map(\.id) == [4, 5])
        #expect(keys[0].bytes == Array(0..<16) && keys[1].bytes == (0..<16).map { UInt8(100 + $0) })
        #expect(keys[0].keyID == Self.live.keyID(period: 4))
        #expect(systems == [.widevine])
    }

    /// Per-track keys (`--track-keys sd,audio`): a key per track type and period, each with SPEKE v2's usage rule
    /// (its filter, then its period); the answer's keys per track type. KIDs computed with Python's hashlib:
    /// SHA-256("hls-origin key-server kid " ‖ "live" ‖ 0 ‖ label ‖ 0 ‖ n).
    @Test func perTrackKeysAskOneKeyPerTrackTypeAndPeriod() throws {
        let r = KeyServerRequest(contentID: "live", scheme: .cbcs, rotating: true, tracks: [.sd, .audio])
        let sd4 = "34fdcd48-1a19-3f63-d1d3-537515914a0b", sd5 = "1d8859ef-e783-f214-25d0-a0616ed707f1"
        let audio4 = "81cfdc8c-f52b-a6b6-a5e2-7cef090deb42", audio5 = "16f4dd36-08e8-6907-b2ff-722f78c7c3e9"
        let text = r.document(periods: [4, 5])
        let doc = try XMLDocument(xmlString: text)
        #expect(try attributes(doc, "ContentKey", "kid") == [sd4, sd5, audio4, audio5])
        #expect(try attributes(doc, "ContentKeyUsageRule", "kid") == [sd4, sd5, audio4, audio5])
        #expect(try attributes(doc, "ContentKeyUsageRule", "intendedTrackType") == ["SD", "SD", "AUDIO", "AUDIO"])
        #expect(try attributes(doc, "VideoFilter", "maxPixels") == ["442368", "442368"])
        #expect(try attributes(doc, "VideoFilter", "minPixels").isEmpty)
        #expect(try doc.nodes(forXPath: "//*[local-name()='AudioFilter']").count == 2)
        #expect(try attributes(doc, "KeyPeriodFilter", "periodId") == ["period-4", "period-5", "period-4", "period-5"])
        // CPIX 2.3's ContentKeyUsageRuleType is a sequence: KeyPeriodFilter, LabelFilter, VideoFilter, AudioFilter.
        #expect(text.contains("intendedTrackType=\"SD\"><cpix:KeyPeriodFilter periodId=\"period-4\"/><cpix:VideoFilter maxPixels=\"442368\"/></cpix:ContentKeyUsageRule>"))
        let answer = Self.answer([(audio5, Self.key5), (sd4, Self.key4), (sd5, Self.key5), (audio4, Self.key4)])
        let keys = try r.keys(periods: [4, 5], answer: answer).keys
        #expect(keys.map { $0.map { KeyServerRequest.uuid($0.keyID!) } } == [[sd4, sd5], [audio4, audio5]])
        #expect(keys[1][1].bytes == (0..<16).map { UInt8(100 + $0) } && keys[1].map(\.id) == [4, 5])
        #expect(throws: CPIXError("no key of the AUDIO tracks for period 5 (KID \(audio5))")) {
            try r.keys(periods: [4, 5], answer: Self.answer([(sd4, Self.key4), (sd5, Self.key5), (audio4, Self.key4)]))
        }
        // Without key periods: a rule per track type, no period filter.
        let one = KeyServerRequest(contentID: "live", scheme: .cbcs, rotating: false, tracks: [.hd, .audio]).document(periods: [0])
        let oneDoc = try XMLDocument(xmlString: one)
        #expect(try attributes(oneDoc, "VideoFilter", "minPixels") == ["442369"] && attributes(oneDoc, "VideoFilter", "maxPixels") == ["2073600"])
        #expect(try attributes(oneDoc, "KeyPeriodFilter", "periodId").isEmpty && attributes(oneDoc, "ContentKeyPeriod", "id").isEmpty)
        #expect(oneDoc.rootElement()?.children?.compactMap(\.localName) == ["ContentKeyList", "ContentKeyUsageRuleList"])
    }

    @Test func refusalsAreOneLineWithoutTheKey() {
        let cases: [(String, String)] = [
            (Self.answer([(Self.kid4, Self.key4)]), "no key for period 5 (KID \(Self.kid5))"),
            (Self.answer([(Self.kid4, Self.key4), (Self.kid5, Self.key5)], scheme: "cenc"), "is for cenc, not cbcs"),
            (Self.answer([(Self.kid4, "AAEC"), (Self.kid5, Self.key5)]), "is not 16 bytes of base64"),
            ("<html>nope</html>", "the answer is not a CPIX document"),
            (Self.answer([(Self.kid4, Self.key4), (Self.kid5, Self.key5)]).replacingOccurrences(of: "PlainValue", with: "EncryptedValue"),
             "is encrypted (DeliveryData): give --cpix-cert and --cpix-key"),
        ]
        for (text, message) in cases {
            #expect(throws: CPIXError.self) { try Self.live.keys(periods: [4, 5], answer: text) }
            do {
                _ = try Self.live.keys(periods: [4, 5], answer: text)
            } catch {
                #expect(error.description.contains(message), "\(error.description)")
                #expect(!error.description.contains(Self.key4) && !error.description.contains(Self.key5))
                #expect(!error.description.contains("\n"))
            }
        }
    }

    static func key(_ n: UInt64) -> ContentKey {
        ContentKey(id: n, bytes: [UInt8](repeating: UInt8(n), count: 16), keyID: [UInt8](repeating: UInt8(0x80 | n), count: 16))
    }

    @Test func aPeriodWithoutItsKeyKeepsTheLastOneOnceAndRotationResumes() {
        let events = Mutex<[FetchedPeriodKeys.Event]>([])
        let needs = Mutex(0)
        let keys = FetchedPeriodKeys([Self.key(0), Self.key(1)], onEvent: { e in events.withLock { $0.append(e) } },
                                     onNeed: { needs.withLock { $0 += 1 } })
        #expect(keys.key(period: 0) == Self.key(0))
        #expect(keys.wanted == nil)                              // period 1 is here already
        #expect(keys.key(period: 1) == Self.key(1))
        #expect(keys.wanted == 2)
        #expect(needs.withLock { $0 } == 1)                      // period 1 began
        // Period 2 never came: it keeps period 1's key (under its own number), decided once for the whole period.
        let kept = keys.key(period: 2)
        #expect(kept.id == 2 && kept.bytes == Self.key(1).bytes && kept.keyID == Self.key(1).keyID)
        keys.store([Self.key(2)])                                // too late for period 2: it stays as decided
        #expect(keys.key(period: 2) == kept)
        #expect(keys.key(period: 1) == Self.key(1))              // a slower rendition still in period 1
        #expect(keys.key(period: 3).bytes == Self.key(1).bytes)  // still none: no second warning
        #expect(keys.wanted == 4)
        keys.store([Self.key(4), Self.key(5)])
        #expect(keys.key(period: 4) == Self.key(4))
        #expect(keys.key(period: 5) == Self.key(5))
        #expect(events.withLock { $0 } == [.keeping(period: 2, keeping: 1), .resumed(period: 4)])
        // The stream's end stops the fetcher (woken to see it).
        let before = needs.withLock { $0 }
        #expect(!keys.isFinished)
        keys.finish()
        #expect(keys.isFinished && needs.withLock { $0 } == before + 1)
    }

    @Test func theProtectionOfEachPeriodComesFromTheSource() throws {
        let keys = FetchedPeriodKeys([Self.key(0), Self.key(1)])
        let p = try SampleProtection(scheme: .cbcs, systems: [.widevine], keyPeriod: .seconds(2), keys: keys)
        #expect(p.keyID == Self.key(0).keyID! && p.key.bytes == Self.key(0).bytes)
        #expect(p.period(1).keyID == Self.key(1).keyID! && p.period(1).key.bytes == Self.key(1).bytes)
        #expect(p.systems == [.widevine, .clearkey])
        #expect(p.period(1).constantIV != p.constantIV)
        #expect(!"\(p.period(1))".contains("0101010101"))
        p.period(1).finish()
        #expect(keys.isFinished)
    }
}
