import CryptoPrimitives
import Foundation
import Testing
@testable import Origin

@Suite struct URLSignerTests {
    let signer = URLSigner(secret: "s3cret")

    func items(_ query: String) -> (prefix: [Substring], expires: [Substring], signature: [Substring]) {
        var p: [Substring] = [], e: [Substring] = [], s: [Substring] = []
        for item in query.split(separator: "&") {
            let kv = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let v = kv.count > 1 ? kv[1] : ""
            switch kv[0] {
            case "hls_prefix": p.append(v)
            case "hls_exp": e.append(v)
            case "hls_sig": s.append(v)
            default: break
            }
        }
        return (p, e, s)
    }

    func verify(_ path: String, _ query: String, now: Int64 = 1_000, with s: URLSigner? = nil) -> URLSigner.Verdict {
        let i = items(query)
        return (s ?? signer).verify(path: Substring(path), prefix: i.prefix, expires: i.expires, signature: i.signature, now: now)
    }

    /// The documented format, computed independently of `URLSigner` (HMAC over the message, base64url by hand),
    /// and libcrypto's HMAC-SHA256 checked against RFC 4231 test case 2, so the format is reproducible elsewhere.
    @Test func signatureIsHMACSHA256OverPrefixNewlineExpiresInBase64URL() {
        let expected = SHA2.sha256.authenticationCode(for: Array("/live/\n1767225600".utf8), key: Array("s3cret".utf8))
        let b64 = Data(expected).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(signer.signature(prefix: "/live/", expires: 1_767_225_600) == b64)
        #expect(b64.count == 43)
        // RFC 4231 §4.3 (key "Jefe"): the HMAC is what the standard says, so the format is reproducible elsewhere.
        let jefe = SHA2.sha256.authenticationCode(for: Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))
        #expect(Data(jefe).map { String(format: "%02x", $0) }.joined()
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(Base64URL.encode(Array(jefe)) == "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM")
    }

    /// The debug request log names the query without the signature's value.
    @Test func theRequestLogLeavesTheSignatureOut() {
        #expect(OriginResponder.redacted("hls_prefix=/&hls_exp=1767312000&hls_sig=abcDEF_-12") ==
                "hls_prefix=/&hls_exp=1767312000&hls_sig=(redacted)")
        #expect(OriginResponder.redacted("_HLS_msn=3&hls_sig=x&_HLS_part=1") == "_HLS_msn=3&hls_sig=(redacted)&_HLS_part=1")
        #expect(OriginResponder.redacted("_HLS_msn=3") == "_HLS_msn=3")
    }

    @Test func signedPathVerifies() throws {
        let path = try signer.signedPath("/index.m3u8", prefix: "/", expires: 2_000)
        #expect(path.hasPrefix("/index.m3u8?hls_prefix=/&hls_exp=2000&hls_sig="))
        let query = String(path.split(separator: "?")[1])
        #expect(verify("/index.m3u8", query) == .valid(query: query))
        // The prefix covers every path below it.
        #expect(verify("/720p/seg3.m4s", query) == .valid(query: query))
        #expect(verify("/", query) == .valid(query: query))
    }

    @Test func expiredTamperedAndWrongSecretAreRefused() {
        let query = signer.query(prefix: "/", expires: 2_000)
        #expect(verify("/index.m3u8", query, now: 2_000) == .valid(query: query))
        #expect(verify("/index.m3u8", query, now: 2_001) == .expired)
        // A later expiry with the old signature.
        #expect(verify("/index.m3u8", query.replacingOccurrences(of: "hls_exp=2000", with: "hls_exp=9000")) == .invalid)
        // One signature character changed.
        let sig = query.split(separator: "=").last!
        var chars = Array(sig)
        chars[5] = chars[5] == "A" ? "B" : "A"
        #expect(verify("/index.m3u8", query.replacingOccurrences(of: String(sig), with: String(chars))) == .invalid)
        // Another secret.
        #expect(verify("/index.m3u8", query, with: URLSigner(secret: "other")) == .invalid)
        // A wider prefix than was signed.
        let narrow = signer.query(prefix: "/cam1/", expires: 2_000)
        #expect(verify("/cam1/index.m3u8", narrow) == .valid(query: narrow))
        #expect(verify("/cam2/index.m3u8", narrow) == .invalid)
        #expect(verify("/cam2/index.m3u8", narrow.replacingOccurrences(of: "/cam1/", with: "/")) == .invalid)
    }

    @Test func pathsOutsideThePrefixAreRefused() throws {
        let dir = signer.query(prefix: "/cam1/", expires: 2_000)
        #expect(verify("/cam1", dir) == .invalid)
        #expect(verify("/cam10/index.m3u8", dir) == .invalid)
        #expect(verify("/index.m3u8", dir) == .invalid)
        // A prefix without a trailing slash is one exact path.
        let exact = signer.query(prefix: "/index.m3u8", expires: 2_000)
        #expect(verify("/index.m3u8", exact) == .valid(query: exact))
        #expect(verify("/index.m3u8x", exact) == .invalid)
        #expect(verify("/stream.m3u8", exact) == .invalid)
        #expect(throws: URLSigner.SigningError.outsidePrefix(path: "/cam2/a.m3u8", prefix: "/cam1/")) {
            try signer.signedPath("/cam2/a.m3u8", prefix: "/cam1/", expires: 1)
        }
        #expect(throws: URLSigner.SigningError.invalidPrefix("cam1/")) { try signer.signedPath("cam1/x", prefix: "cam1/", expires: 1) }
    }

    @Test func malformedItemsAreInvalidAndNoItemsAreMissing() {
        let query = signer.query(prefix: "/", expires: 2_000)
        #expect(verify("/index.m3u8", "") == .missing)
        #expect(verify("/index.m3u8", "_HLS_msn=3") == .missing)
        #expect(verify("/index.m3u8", query + "&hls_exp=2000") == .invalid)  // repeated
        #expect(verify("/index.m3u8", query + "&hls_sig=x") == .invalid)
        #expect(verify("/index.m3u8", query.replacingOccurrences(of: "hls_exp=2000", with: "hls_exp=02000")) == .invalid)
        #expect(verify("/index.m3u8", query.replacingOccurrences(of: "hls_exp=2000", with: "hls_exp=-2000")) == .invalid)
        #expect(verify("/index.m3u8", "hls_prefix=/&hls_exp=2000") == .invalid)  // no signature
        #expect(verify("/index.m3u8", query + "=") == .invalid)  // padded signature
        #expect(URLSigner.isValidPrefix("/x/../") == false)
        #expect(URLSigner.isValidPrefix("/a b/") == false)
        #expect(URLSigner.isValidPrefix("/a%2F/") == false)
    }

    @Test func base64URLRoundTripsAndRejectsNonCanonicalText() {
        var g = SystemRandomNumberGenerator()
        for n in 0..<40 {
            let bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &g) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(Substring(text)) == bytes)
        }
        #expect(Base64URL.decode("AB") == nil)   // stray low bits: canonical is "AA"
        #expect(Base64URL.decode("AA") == [0])
        #expect(Base64URL.decode("A") == nil)
        #expect(Base64URL.decode("AA==") == nil)
        #expect(Base64URL.decode("+/8") == nil)
    }

    @Test func constantTimeEqual() {
        #expect(ConstantTime.equal(Array("token".utf8), Array("token".utf8)))
        #expect(!ConstantTime.equal(Array("token".utf8), Array("tokem".utf8)))
        #expect(!ConstantTime.equal(Array("token".utf8), Array("token2".utf8)))
        #expect(!ConstantTime.equal(Array("".utf8), Array("x".utf8)))
        #expect(ConstantTime.equal([UInt8](), [UInt8]()))
        #expect(ConstantTime.equalBytes([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equalBytes([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equalBytes([0, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equalBytes([1, 2], [1, 2, 3]))
    }

    /// The comparison reads every byte: a difference in the first byte costs as long as one in the last. Timed
    /// over many runs of long inputs with the minimum of several trials, to stay clear of scheduling noise.
    @Test func constantTimeEqualTakesAsLongWhereverTheInputsDiffer() {
        let n = 1 << 16
        let a = [UInt8](repeating: 7, count: n)
        var first = a, last = a
        first[0] = 8
        last[n - 1] = 8
        func time(_ b: [UInt8]) -> Duration {
            var best = Duration.seconds(1000)
            for _ in 0..<7 {
                let clock = ContinuousClock()
                var r = false
                let t = clock.measure { for _ in 0..<20 { r = ConstantTime.equalBytes(a, b) || r } }
                #expect(!r)
                best = min(best, t)
            }
            return best
        }
        let tFirst = time(first), tLast = time(last)
        let ratio = Double(tFirst.components.attoseconds + tFirst.components.seconds * 1_000_000_000_000_000_000)
            / Double(tLast.components.attoseconds + tLast.components.seconds * 1_000_000_000_000_000_000)
        #expect(ratio > 0.25 && ratio < 4, "first-byte difference \(tFirst), last-byte \(tLast)")
    }
}
