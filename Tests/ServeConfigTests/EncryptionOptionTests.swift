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

    @Test func errorsNameTheFlagNotTheKey() {
        let cases: [([String], String)] = [
            (["--encrypt", "aes-128", "--key", String(Self.key.dropLast(2))], "--key takes 32 hexadecimal digits (16 bytes); the value given has 30"),
            (["--encrypt", "aes-128", "--key", String(Self.key.dropLast()) + "z"], "--key takes 32 hexadecimal digits (16 bytes); the value given has other characters"),
            (["--key", Self.key], "--key needs --encrypt aes-128"),
            (["--encrypt", "aes-128", "--key-period", "0s"], "--key-period takes a duration"),
            (["--encrypt", "cbcs"], "--encrypt is aes-128"),
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
