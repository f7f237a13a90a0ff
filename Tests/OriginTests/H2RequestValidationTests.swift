import NIOHPACK
import Testing
@testable import Origin

/// RFC 9113's rules on a request's header block and trailers (`H2RequestValidation`), one case each; the same blocks
/// over a real TLS connection: `Tests/e2e/test_h2_attacks.py::test_malformed_requests_are_reset`.
@Suite struct H2RequestValidationTests {
    static let base: [(String, String)] = [(":method", "GET"), (":scheme", "https"), (":authority", "a"), (":path", "/x")]

    func problem(_ fields: [(String, String)], trailers: Bool = false) -> String? {
        H2RequestValidation.problem(HPACKHeaders(fields), trailers: trailers)
    }

    @Test func aPlainRequestIsValid() {
        #expect(problem(Self.base) == nil)
        #expect(problem(Self.base + [("accept", "*/*"), ("te", "trailers"), ("user-agent", "x y")]) == nil)
        #expect(problem([(":method", "GET"), (":scheme", "https"), (":path", "/")]) == nil, ":authority is optional")
        #expect(problem([(":method", "CONNECT"), (":authority", "a:443")]) == nil)
        #expect(problem([("x-checksum", "1")], trailers: true) == nil)
    }

    @Test(arguments: [
        // §8.2.1 field names and values
        [("X-Upper", "1")], [("x a", "1")], [("", "1")], [("x-a", "a\rb")], [("x-a", "a\nb")], [("x-a", "a\u{0}b")],
        [("x:a", "1")],
        // §8.2.2 connection-specific fields; TE other than trailers
        [("connection", "keep-alive")], [("keep-alive", "1")], [("proxy-connection", "1")], [("transfer-encoding", "chunked")],
        [("upgrade", "h2c")], [("te", "gzip")],
        // §8.3 pseudo-header fields: unknown, repeated, RFC 8441's without the setting
        [(":foo", "1")], [(":path", "/y")], [(":status", "200")], [(":protocol", "websocket")],
    ])
    func aBrokenRuleIsMalformed(_ extra: [(String, String)]) {
        #expect(problem(Self.base + extra) != nil, "\(extra)")
    }

    @Test func pseudoHeaderFieldsComeFirstAndTheRequestOnesAreThere() {
        #expect(problem([(":method", "GET"), ("x-a", "1"), (":scheme", "https"), (":path", "/")]) != nil)
        #expect(problem([(":method", "GET"), (":scheme", "https")]) != nil, "no :path")
        #expect(problem([(":method", "GET"), (":path", "/")]) != nil, "no :scheme")
        #expect(problem([(":scheme", "https"), (":path", "/")]) != nil, "no :method")
        #expect(problem([(":method", "GET"), (":scheme", "https"), (":path", "")]) != nil, "empty :path")
        #expect(problem([(":method", "GET"), (":scheme", "https"), (":path", "/\r")]) != nil)
        #expect(problem([(":method", "CONNECT"), (":authority", "a"), (":path", "/")]) != nil, "CONNECT with :path")
    }

    @Test func trailersHaveNoPseudoHeaderFields() {
        #expect(problem([(":path", "/")], trailers: true) != nil)
        #expect(problem([("connection", "close")], trailers: true) != nil)
        #expect(problem([("te", "gzip")], trailers: true) == nil, "TE's rule is a request's")
    }
}
