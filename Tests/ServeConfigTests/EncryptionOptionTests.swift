import ArgumentParser
import Foundation
import ServeConfig
import Testing

/// `--encrypt`, `--key`, `--key-period` (and their config keys): values, rules, and a key that never shows.
@Suite struct EncryptionOptionTests {
    static let key = "00112233445566778899aabbccddeeff"

    @Test func flags() throws {
        let o = try MediaOptions.parse(["--encrypt", "aes-128", "--key", "0x" + Self.key, "--key-period", "60s"]).options()
        #expect(o.encrypt == .aes128 && o.keyPeriod?.seconds == 60)
        #expect(o.key?.bytes == [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
        #expect("\(o.key!)" == "(secret)")
        let encoded = String(decoding: try JSONEncoder().encode(o), as: UTF8.self)
        #expect(!encoded.contains(Self.key) && encoded.contains("(secret)"))
    }

    @Test func sampleEncryptionWithKIDAndSystems() throws {
        let kid = "0123456789abcdef0123456789abcdef"
        let o = try MediaOptions.parse(["--encrypt", "cbcs", "--key", kid + ":" + Self.key, "--drm", "widevine, fairplay,widevine"]).options()
        #expect(o.encrypt == .cbcs && o.key?.keyID?.count == 16 && o.key?.bytes.count == 16)
        #expect(o.drm?.systems == [.widevine, .fairplay])
        #expect("\(o.key!)" == "(secret)")
        #expect(try MediaOptions.parse(["--encrypt", "cenc", "--cpix", "k.xml"]).options().cpix == "k.xml")
    }

    @Test func keyServerWithItsCAAndHeaders() throws {
        let o = try MediaOptions.parse(["--encrypt", "cbcs", "--key-period", "10s", "--key-server", "https://user:pw@keys.example/cpix",
                                        "--key-server-ca", "ca.pem", "--key-server-header", "Authorization: Bearer t0ken",
                                        "--key-server-header", "X-Tenant:a"]).options()
        #expect(o.keyServer?.text == "https://user:pw@keys.example/cpix")
        #expect("\(o.keyServer!)" == "https://keys.example/cpix")
        #expect(o.keyServerCa == "ca.pem")
        #expect(o.keyServerHeader?.map(\.name) == ["Authorization", "X-Tenant"])
        #expect(o.keyServerHeader?.map(\.value) == ["Bearer t0ken", "a"])
        let encoded = String(decoding: try JSONEncoder().encode(o), as: UTF8.self)
        #expect(!encoded.contains("t0ken") && encoded.contains("Authorization: (secret)"))
        #expect(!encoded.contains("pw@") && encoded.contains("keys.example"))
    }

    @Test func errorsNameTheFlagNotTheKey() {
        let cases: [([String], String)] = [
            (["--encrypt", "aes-128", "--key", String(Self.key.dropLast(2))], "--key takes 32 hexadecimal digits (16 bytes); the value given has 30"),
            (["--encrypt", "aes-128", "--key", String(Self.key.dropLast()) + "z"], "--key takes 32 hexadecimal digits (16 bytes); the value given has other characters"),
            (["--key", Self.key], "--key needs --encrypt aes-128"),
            (["--encrypt", "aes-128", "--key-period", "0s"], "--key-period takes a duration"),
            (["--encrypt", "sample-aes"], "--encrypt is aes-128, cbcs or cenc"),
            (["--drm", "widevine"], "--drm needs --encrypt cbcs or cenc"),
            (["--encrypt", "cbcs", "--drm", "widevine,marlin"], "--drm lists widevine, playready, fairplay, clearkey"),
            (["--encrypt", "cenc", "--key", "00" + Self.key.dropFirst(2) + ":" + Self.key, "--key-period", "60s"], "--key-period derives each period's KID and key"),
            (["--encrypt", "cbcs"], "--encrypt cbcs needs --key KID:KEY, $HLS_ORIGIN_KEY, --cpix or --key-server"),
            (["--key-server", "https://k/cpix"], "--key-server needs --encrypt (aes-128, cbcs or cenc)"),
            (["--encrypt", "aes-128", "--key-server", "https://k/cpix", "--key", Self.key], "--key-server and --key both give the key"),
            (["--encrypt", "cbcs", "--key-server", "https://k/cpix", "--key", Self.key], "--key-server and --key both give the key"),
            (["--encrypt", "cbcs", "--key-server", "https://k/cpix", "--cpix", "k.xml"], "--key-server and --cpix both give the key"),
            (["--encrypt", "cbcs", "--key", Self.key, "--key-server-ca", "ca.pem"], "--key-server-ca needs --key-server"),
            (["--encrypt", "cbcs", "--key-server", "ftp://k/cpix"], "--key-server is an http:// or https:// URL"),
            (["--encrypt", "cbcs", "--key-server", "https://k/cpix", "--key-server-header", "Bad Name: x"], "--key-server-header takes 'Name: value'"),
            (["--encrypt", "cbcs", "--cpix", "k.xml", "--key", Self.key], "--cpix and --key both give the key"),
            (["--cpix", "k.xml"], "--cpix needs --encrypt cbcs or cenc"),
            (["--encrypt", "cenc", "--key", "00:" + Self.key], "--key takes KID:KEY, each 32 hexadecimal digits"),
            (["--encrypt", "aes-128", "--key", Self.key + ":" + Self.key], "--key KID:KEY is for --encrypt cbcs or cenc"),
        ]
        for (args, message) in cases {
            do {
                _ = try MediaOptions.parse(args).options()
                Issue.record("\(args) was accepted")
            } catch {
                let text = "\(error)"
                #expect(text.hasPrefix(message) || text.contains(message), "\(text)")
                #expect(!text.contains(String(Self.key.dropLast(2))), "the key must not be shown")
            }
        }
    }
}
