import HLS
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import TestSupport
import Testing
@testable import Origin

/// `Range` (RFC 9110 §14): the pure parser, then the routes.
@Suite struct RangeRequestParseTests {
    @Test(arguments: [
        ("bytes=0-0", RangeRequest.partial(0..<1)),
        ("bytes=2-5", .partial(2..<6)),
        ("bytes=2-", .partial(2..<10)),
        ("bytes=9-", .partial(9..<10)),
        ("bytes=5-100", .partial(5..<10)),               // last-pos clamped to the last byte
        ("bytes=0-99999999999999999999999", .partial(0..<10)),  // saturates, then clamped
        ("bytes=-3", .partial(7..<10)),                  // suffix
        ("bytes=-10", .partial(0..<10)),
        ("bytes=-11", .partial(0..<10)),                 // suffix longer than the representation: all of it
        ("BYTES=1-2", .partial(1..<3)),                  // units are case-insensitive (§14.1)
        ("bytes= 1-2 ", .partial(1..<3)),                // OWS around list elements
        ("bytes=1-2, ", .partial(1..<3)),                // empty list elements are ignored (§5.6.1.2)
        ("bytes=10-", .unsatisfiable),                   // first-byte-pos ≥ length
        ("bytes=10-20", .unsatisfiable),
        ("bytes=99999999999999999999-", .unsatisfiable),
        ("bytes=-0", .unsatisfiable),                    // suffix-length 0
        ("bytes=0-1,5-6", .whole),                       // several ranges: refused with the whole body
        ("bytes=0-1,20-30", .whole),
        ("bytes=5-1", .whole),                           // last < first: invalid, ignored
        ("bytes=", .whole),
        ("bytes=-", .whole),
        ("bytes=a-b", .whole),
        ("bytes=1-2-3", .whole),
        ("bytes=+1-2", .whole),
        ("bytes 1-2", .whole),
        ("items=1-2", .whole),                           // unit not understood: ignored (§14.2)
        ("bytesx=1-2", .whole),
        ("", .whole),
    ])
    func parses(_ header: String, _ expected: RangeRequest) {
        #expect(RangeRequest.parse(header, length: 10) == expected, "\(header)")
    }

    @Test func emptyRepresentationIsAlwaysWhole() {
        #expect(RangeRequest.parse("bytes=0-0", length: 0) == .whole)
        #expect(RangeRequest.parse("bytes=-5", length: 0) == .whole)
    }

    @Test func contentRangeText() {
        #expect(RangeRequest.contentRange(2..<6, length: 10) == "bytes 2-5/10")
        #expect(RangeRequest.unsatisfiedRange(length: 10) == "bytes */10")
    }

    /// Random single ranges against a model written straight from §14.1.1/§14.1.2.
    @Test func matchesTheModelOnRandomRanges() {
        var rng = SplitMix64(seed: 0x5EED_0009)
        for _ in 0..<5_000 {
            let length = Int.random(in: 1...64, using: &rng)
            let a = Int.random(in: 0...80, using: &rng), b = Int.random(in: 0...80, using: &rng)
            let form = Int.random(in: 0..<3, using: &rng)
            let header: String, expected: RangeRequest
            switch form {
            case 0:
                header = "bytes=\(a)-\(b)"
                expected = b < a ? .whole : a >= length ? .unsatisfiable : .partial(a..<min(b + 1, length))
            case 1:
                header = "bytes=\(a)-"
                expected = a >= length ? .unsatisfiable : .partial(a..<length)
            default:
                header = "bytes=-\(a)"
                expected = a == 0 ? .unsatisfiable : .partial(max(0, length - a)..<length)
            }
            let got = RangeRequest.parse(header, length: length)
            #expect(got == expected, "\(header) of \(length)")
            if case .partial(let r) = got { #expect(!r.isEmpty && r.lowerBound >= 0 && r.upperBound <= length) }
        }
    }
}

@Suite struct RangeRouteTests {
    @Test func segmentRangesAre206SlicesOfTheSameBytes() async throws {
        let (stream, server) = OriginServerTests.makeServer()
        let whole = Array(buffer: try #require(stream.segmentBytes(0)))
        let n = whole.count
        try await server.makeApplication().test(.router) { client in
            let full = try await client.execute(uri: "/seg0.m4s", method: .get)
            #expect(full.status == .ok && full.headers[.acceptRanges] == "bytes")
            for (header, range) in [("bytes=0-99", 0..<100), ("bytes=100-", 100..<n), ("bytes=-50", (n - 50)..<n),
                                    ("bytes=\(n - 1)-\(n + 5)", (n - 1)..<n)] {
                let r = try await client.execute(uri: "/seg0.m4s", method: .get, headers: [.range: header])
                #expect(r.status == .partialContent, "\(header)")
                #expect(Array(buffer: r.body) == Array(whole[range]), "\(header)")
                #expect(r.headers[.contentLength] == String(range.count))
                #expect(r.headers[.contentRange] == "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(n)")
                #expect(r.headers[.contentType] == "video/iso.segment")
                OriginServerTests.expectCORS(r)
                let head = try await client.execute(uri: "/seg0.m4s", method: .head, headers: [.range: header])
                #expect(head.status == .partialContent && head.body.readableBytes == 0)
                #expect(head.headers[.contentLength] == String(range.count))
                #expect(head.headers[.contentRange] == r.headers[.contentRange])
            }
        }
    }

    @Test func unsatisfiableIs416WithTheLength() async throws {
        let (stream, server) = OriginServerTests.makeServer()
        let n = try #require(stream.segmentBytes(1)).readableBytes
        try await server.makeApplication().test(.router) { client in
            for header in ["bytes=\(n)-", "bytes=-0"] {
                let r = try await client.execute(uri: "/seg1.m4s", method: .get, headers: [.range: header])
                #expect(r.status == .rangeNotSatisfiable, "\(header)")
                #expect(r.headers[.contentRange] == "bytes */\(n)")
                #expect(r.headers[.contentLength] == String(r.body.readableBytes))
                OriginServerTests.expectCORS(r)
            }
        }
    }

    @Test func ignoredRangesGiveTheWholeBody() async throws {
        let (stream, server) = OriginServerTests.makeServer()
        let whole = Array(buffer: try #require(stream.segmentBytes(0)))
        try await server.makeApplication().test(.router) { client in
            var headerSets: [HTTPFields] = ["bytes=0-1,5-6", "bytes=9-2", "items=0-1"].map { [.range: $0] }
            // No validator is sent, so none can match an If-Range: Range is ignored (RFC 9110 §13.1.5).
            headerSets.append([.range: "bytes=0-1", .ifRange: "\"abc\""])
            for h in headerSets {
                let r = try await client.execute(uri: "/seg0.m4s", method: .get, headers: h)
                #expect(r.status == .ok, "\(h)")
                #expect(Array(buffer: r.body) == whole)
                #expect(r.headers[.contentRange] == nil)
            }
        }
    }

    @Test func everyServedObjectAcceptsRangesErrorsDoNot() async throws {
        let (_, server) = OriginServerTests.makeServer()
        try await server.makeApplication().test(.router) { client in
            for uri in ["/", "/index.m3u8", "/stream.m3u8", "/init.mp4", "/seg1.m4s"] {
                let r = try await client.execute(uri: uri, method: .get)
                #expect(r.status == .ok && r.headers[.acceptRanges] == "bytes", "\(uri)")
                let part = try await client.execute(uri: uri, method: .get, headers: [.range: "bytes=0-6"])
                #expect(part.status == .partialContent, "\(uri)")
                #expect(Array(buffer: part.body) == Array(Array(buffer: r.body)[0..<7]), "\(uri)")
            }
            let missing = try await client.execute(uri: "/seg99.m4s", method: .get, headers: [.range: "bytes=0-1"])
            #expect(missing.status == .notFound && missing.headers[.acceptRanges] == nil)
            #expect(missing.headers[.contentRange] == nil)
        }
    }
}
