import ContentProtection
import Testing

/// `CPIXDelivery` on a document sealed by pycryptodome (`Tests/e2e/hlsharness/cpixseal.py`, made once for this test:
/// RSA-2048 recipient, RSA-OAEP document and MAC keys, AES-256-CBC content key 00112233…eeff, HMAC-SHA512 ValueMAC),
/// and what is refused. The e2e tests make a new one each run (`test_cenc.py`, `test_key_server.py`).
@Suite struct CPIXDeliveryTests {
    static let privateKey = """
        -----BEGIN RSA PRIVATE KEY-----
        MIIEowIBAAKCAQEAthMLkJsX1cyGSCqIPZw0FlYhaknbXZKqxUtDviZ03ymioRbA
        c88M4LYMUo1UzY31BpZ/5akAlQNcS9jPrDVdIESi8AEhyMZdrvgF7A2fg1rXPJM0
        LjCm51BvqzSsOwekhwjP9wdIMbjTRgnyhyq6HJoFBGceiful5ts3GDxYcvEIIQsD
        4KjCMbwkxVbQ9toMktmrHi6JkP2LYfCf61dk3s9/k2u3NRghY/LNZZOlJXWcy8Dq
        Fmw49a75qlb6X8QXutln0YQzIBED8AliZ08zDCfrwddjITQR9DgIyVuXPV3ZLLgk
        bbuynaS6CvW/Dgz1xwGcQegotieUcrXVmNn87wIDAQABAoIBACbaBIc8WQcxp9vB
        W6YN7V1wzpuQHAOpFtCXwWJTcW/nQgEuyi1MGrrejd2Vs+lS59yag7sdZ3bkqy6y
        GopsLq2Ch+Q/0ZY2oeoCmbznoUiVu0T9Qk6y6gKE+vck+7Vy6Yw4+KuFPcYCYu7Y
        k4x9NQ6CXRy15mHaNWoAEA8XXWZVJL6JluoGUJGnaOKASygZo3jLNxCzJ4533izj
        G0hwsV/JcrW2UmBYxnJImfgMURvwIVuhabvzDjujwZYupnU+yUJDkdzM7whPj8IW
        AgMC6yrJ18hLxTp8TMf2VgFIMYM5CUWwob7Bno5RqbzWlCqT+kjejRbAtti251Jp
        7lXwGZUCgYEAwFpGVEdzF/Qj6rTMvubMUxq+9VaGE/ZOrfk2rC4al5rQ92GhiH6y
        XUFIJJMRbpCC8fyQ8xptX8iUO8vMJmzgXTsM3LmlUSPTLNQoQN21lq9EhRWBOyi4
        EFkFnu5wVoYWtSuOQxk/b2vul1N0XsQvLyEffkK5KugzIFB95tSB21MCgYEA8lIg
        KWw1lw53XesjD1ZJy1Pv/IsSBCHiHnbAtDLDKXbL7zCuguhjbUEQFpm8j4ajLV85
        F8EsTtM9l5Vec5/ncc4kgFKSjxwS7gZ5kCkCgoww1YXDzvsHRfcSj8rJqkK2sofh
        CrjN/jM3u1Vxj0bxoZ4m6Wz1f+pjfz+tZckkQHUCgYATfdJcnfTiu4GcOf/5ZEfW
        MAKjt8XUZgQpCvToU6+sJyr/tmv4+eW3H3NhCWodyxUJ0m8Zw1bL+vZSbN9eEXBW
        4jH2d/VxmHDAvSrrD8xj3ZTS64/x37lvJqY0KbNGgUXxy90ZnYhZERXXTcSgCb9C
        Rlf7omVDHM55es6XQnd6MwKBgHF9cT61RWwYBGPiSqtWOH2YNF/NKoTw8Zxe9eXv
        mGQFFYJTBIifGmIDBOvw2NVHs4j+fhjYCk5otQIXnQL+M0Gj0IihI68O8Pa15Z1U
        9634xq5aVdjMzR1BmFnsGgM596Mp7IY/A4s4pbOBUwxNp8GP9p2AwIJGXo8sXaO8
        TtQ5AoGBAJKoGkSV3rhmagP/9P+7oRfOKfLBawn0mAqgYdaK07it0hs3lJCDyv/+
        erMgmfMkYRgaFtUCR2uXec79C1tz5N5Uul3cbuttEkE90vnyVxWC3rxQgLeYu7ck
        gaAtwwZswTILOPX3eiGrkC0PifB3qu8Iw74PU/Z8Pvs0CqPUomEA
        -----END RSA PRIVATE KEY-----
        """

    static let document = """
        <cpix:CPIX xmlns:cpix="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc" xmlns:enc="http://www.w3.org/2001/04/xmlenc#" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" version="2.3">
        <cpix:DeliveryDataList><cpix:DeliveryData>
            <cpix:DeliveryKey><ds:X509Data><ds:X509Certificate>MAA=</ds:X509Certificate></ds:X509Data></cpix:DeliveryKey>
            <cpix:DocumentKey Algorithm="http://www.w3.org/2001/04/xmlenc#aes256-cbc"><cpix:Data><pskc:Secret><pskc:EncryptedValue>
              <enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"/><enc:CipherData><enc:CipherValue>eYGOW9bpelVK+OqZqMRuKxqSYCPz732uduAeejDjPke+qxFP275QM3vQB7dKfih1bYA0b0gPSqiTbEZ1w1yVK5tTw2Z6gr6/kvMcksqlrXE4BBy0QlCAdBmFvMQ14Y5nKeYiiumkH7dDZPYM41sUFiXkF+2gHjHtzCYynTgWaf+NtNsJe866N9gKjt9OoAwWKQa9iipp5UfHhS50jkj1ot8wurBlGxmnowOxyzu0pbgDvjdhj+OLnuPgYfE5by9FFPRDixyfEZkE5O6j3F/4JnkWXLoeAzsqgitLhdn/LHi/H5Jgj300hK0pN+Z8LusmU15ZkVueOf4lq9XbxY82vA==</enc:CipherValue></enc:CipherData>
            </pskc:EncryptedValue></pskc:Secret></cpix:Data></cpix:DocumentKey>
            <cpix:MACMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#hmac-sha512"><cpix:Key>
              <enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"/><enc:CipherData><enc:CipherValue>dHybeF52utcIo67jadx1Y2Y1X0lIJG7unG3hdk5FFghdfFENU6ZxX1P4UJ2Ku8giE6aTm0Ph+VP6DXxMgaCNEaMJrNeIhHt8WaBxk5ehEX1+2WhcQjDTpxkXm6tAsHSbhkO/yhmK4oazqu9Zv/bOtvflolYTV4CynoQc1450kiRCn5tTtqgeSCgL3xIP4J2LEnd1TkW2HWSeu3oE8lT3DipRudVpwNvc/lFyX6bpBuJ31ZMECYRZFUFAvIwKQiAs/b7CW2Ekef5pzM5a7sv47XKb6hrEY1L4I193DUZ1CsfSyn8ILisZ94eeifrtR75S/ZQBELAOvWCgv0e56W4vIw==</enc:CipherValue></enc:CipherData>
            </cpix:Key></cpix:MACMethod>
          </cpix:DeliveryData></cpix:DeliveryDataList>
        <cpix:ContentKeyList><cpix:ContentKey kid="01234567-89ab-cdef-0123-456789abcdef"><cpix:Data><pskc:Secret><pskc:EncryptedValue><enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes256-cbc"/><enc:CipherData><enc:CipherValue>5/GWXNBietVu6Pd3x3ou51iSh00Ffn/7XDmlin4amwilkGntdoMHuA2v6GxLmH9h</enc:CipherValue></enc:CipherData></pskc:EncryptedValue><pskc:ValueMAC>CD/jR+YHCq0P2Quv5AFIy+AkmfRDR6OVwmPaBQNgH1ndJLjA3mzvnuVzmBI/JK67Rn5ZvokwUzBEmMw7jMAN+g==</pskc:ValueMAC></pskc:Secret></cpix:Data></cpix:ContentKey></cpix:ContentKeyList>
        </cpix:CPIX>
        """

    @Test func opensTheContentKey() throws {
        let d = try CPIXDocument.parse(Self.document, privateKeyPEM: Self.privateKey)
        #expect(d.key == [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
    }

    @Test func refusals() {
        let mac = Self.document.range(of: "<pskc:ValueMAC>")!.upperBound
        let forged = Self.document.replacingCharacters(in: mac..<Self.document.index(after: mac),
                                                      with: Self.document[mac] == "A" ? "B" : "A")
        let cases: [(String, String?, String)] = [
            (Self.document, nil, "give its private key"),
            (Self.document, "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----", "not an RSA private key"),
            (forged, Self.privateKey, "fails its MAC"),
            (Self.document.replacingOccurrences(of: "xmlenc#aes256-cbc\"><cpix:Data>", with: "xmlenc#aes128-cbc\"><cpix:Data>"),
             Self.privateKey, "is not aes256-cbc"),
            (Self.document.replacingOccurrences(of: "DeliveryData>", with: "Other>"), Self.privateKey, "no DeliveryData"),
        ]
        for (text, key, says) in cases {
            do {
                _ = try CPIXDocument.parse(text, privateKeyPEM: key)
                Issue.record("accepted: \(says)")
            } catch {
                #expect(error.description.contains(says), "\(error)")
            }
        }
    }
}
