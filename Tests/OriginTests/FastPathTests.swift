import NIOCore
import Testing
@testable import Origin

/// `RawFastPathHandler.frame`: which requests the fast path may answer, and where each request ends.
@Suite struct FastPathFramingTests {
    static func frame(_ text: String, max: Int = 32 * 1024) -> RawFastPathHandler.Request? {
        RawFastPathHandler.frame(ByteBuffer(string: text), maxHeadBytes: max)
    }

    @Test func plainGetAndHead() throws {
        let text = "GET /cam1/seg12.m4s HTTP/1.1\r\nHost: a\r\nUser-Agent: x\r\nAccept: */*\r\n\r\nGET /next"
        let get = try #require(Self.frame(text))
        #expect(get.plain && !get.headOnly && !get.hasBody && get.path(in: ByteBuffer(string: text)) == "/cam1/seg12.m4s")
        #expect(get.length == "GET /cam1/seg12.m4s HTTP/1.1\r\nHost: a\r\nUser-Agent: x\r\nAccept: */*\r\n\r\n".utf8.count)
        let headText = "HEAD /stream.m3u8 HTTP/1.1\r\nhOsT: a\r\n\r\n"
        let head = try #require(Self.frame(headText))
        #expect(head.plain && head.headOnly && head.path(in: ByteBuffer(string: headText)) == "/stream.m3u8")
        // What Chromium sends over HTTP/1.1.
        #expect(Self.frame("GET /seg1.m4s HTTP/1.1\r\nHost: a\r\nConnection: Keep-Alive\r\nOrigin: http://a\r\n\r\n")?.plain == true)
    }

    @Test func everythingElseTakesTheFullPath() throws {
        let cases = [
            "GET /stream.m3u8?_HLS_msn=3 HTTP/1.1\r\nHost: a\r\n\r\n",  // delivery directives, signatures
            "GET /seg%31.m4s HTTP/1.1\r\nHost: a\r\n\r\n",  // percent-encoding
            "GET /seg1.m4s HTTP/1.0\r\nHost: a\r\n\r\n",  // HTTP/1.0 (closes after the response)
            "GET /seg1.m4s HTTP/1.1\r\n\r\n",  // no Host: 400
            "GET /seg1.m4s HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",  // two: 400
            "GET /seg1.m4s HTTP/1.1\r\nHost: a\r\nRange: bytes=0-9\r\n\r\n",
            "GET /seg1.m4s HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"x\"\r\n\r\n",
            "GET /seg1.m4s HTTP/1.1\r\nHost: a\r\nCONNECTION: close\r\n\r\n",
            "GET /seg1.m4s HTTP/1.1\r\nHost: a\r\nUpgrade: h2c\r\n\r\n",
            "GET /seg1.m4s HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
            "GET /seg1.m4s HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n folded\r\n\r\n",  // obsolete line folding
            "GET http://a/seg1.m4s HTTP/1.1\r\nHost: a\r\n\r\n",  // absolute form
            "POST /qoe HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}",
            "OPTIONS /seg1.m4s HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n",
        ]
        for text in cases {
            let r = try #require(Self.frame(text), "\(text)")
            #expect(!r.plain, "\(text)")
        }
        #expect(Self.frame("POST /qoe HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}")?.hasBody == true)
        #expect(Self.frame("POST /qoe HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n")?.hasBody == true)
        #expect(Self.frame("GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")?.hasBody == false)
    }

    @Test func incompleteOrOversizedHeadsAreNotFramed() {
        #expect(Self.frame("GET /seg1.m4s HTTP/1.1\r\nHost: a\r\n") == nil)
        #expect(Self.frame("GET /seg1.m4s HTTP/1.1\r\nHost: a\r\n\r") == nil)
        #expect(Self.frame("") == nil)
        let long = "GET /seg1.m4s HTTP/1.1\r\nHost: a\r\nX-Pad: " + String(repeating: "a", count: 200) + "\r\n\r\n"
        #expect(Self.frame(long, max: 100) == nil)
        #expect(Self.frame(long, max: 1000)?.plain == true)
    }

    @Test func preparedHeadIsTheStatusLineAndFields() {
        let head = FastPath.head(ResponseHeaders.segment(contentLength: 10, etag: "\"e\"", lastModified: nil))
        let text = String(buffer: head)
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: video/iso.segment\r\nContent-Length: 10\r\n"))
        #expect(text.contains("ETag: \"e\"\r\n") && text.hasSuffix("\r\n") && !text.contains("Date:"))
    }
}
