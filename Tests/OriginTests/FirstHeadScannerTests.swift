@testable import Origin
import Testing

/// Where the TLS port's first request head ends (TLSFirstRequestDeadline): RFC 9112 §2.1 for HTTP/1.1, RFC 9113 §3.4
/// (preface) and §6.2/§6.10 (HEADERS, CONTINUATION, END_HEADERS) for HTTP/2.
@Suite struct FirstHeadScannerTests {
    typealias Progress = TLSFirstRequestDeadline.Progress
    static let head = Array("GET /index.m3u8 HTTP/1.1\r\nHost: a\r\n\r\n".utf8)

    static func frame(type: UInt8, flags: UInt8, stream: UInt32, payload: Int) -> [UInt8] {
        [UInt8(payload >> 16 & 0xFF), UInt8(payload >> 8 & 0xFF), UInt8(payload & 0xFF), type, flags,
         UInt8(stream >> 24), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)]
            + [UInt8](repeating: 0x41, count: payload)
    }

    /// Feeds `bytes` in pieces of `piece` bytes; the progress after each piece.
    static func feed(_ bytes: [UInt8], piece: Int, max: Int = 16_384) -> [Progress] {
        var scanner = FirstHeadScanner(maxHeadBytes: max)
        return stride(from: 0, to: bytes.count, by: piece).map { scanner.feed(bytes[$0..<min($0 + piece, bytes.count)]) }
    }

    @Test(arguments: [1, 2, 7, 1000])
    func anHTTP1HeadEndsAtItsBlankLine(piece: Int) {
        let progress = Self.feed(Self.head, piece: piece)
        #expect(progress.last == .complete)
        #expect(progress.dropLast().allSatisfy { $0 == .reading })
        #expect(Self.feed(Array(Self.head.dropLast()), piece: piece).last == .reading)
    }

    @Test(arguments: [1, 5, 1000])
    func anHTTP2HeadEndsWithTheFrameThatEndsItsHeaderBlock(piece: Int) {
        let settings = Self.frame(type: 0x4, flags: 0, stream: 0, payload: 18)
        let window = Self.frame(type: 0x8, flags: 0, stream: 0, payload: 4)
        let headers = Self.frame(type: 0x1, flags: 0x4 | 0x1, stream: 1, payload: 40)
        let bytes = FirstHeadScanner.preface + settings + window + headers
        #expect(Self.feed(bytes, piece: piece).last == .complete)
        // The preface's own blank line is not a head; nor are the frames before HEADERS, nor a HEADERS cut short.
        #expect(Self.feed(FirstHeadScanner.preface + settings + window, piece: piece).last == .reading)
        #expect(Self.feed(Array(bytes.dropLast()), piece: piece).last == .reading)
    }

    @Test func aHeaderBlockGoesOnInContinuationFrames() {
        let preface = FirstHeadScanner.preface + Self.frame(type: 0x4, flags: 0, stream: 0, payload: 0)
        let open = Self.frame(type: 0x1, flags: 0x1, stream: 1, payload: 10)
        let more = Self.frame(type: 0x9, flags: 0, stream: 1, payload: 10)
        let last = Self.frame(type: 0x9, flags: 0x4, stream: 1, payload: 3)
        #expect(Self.feed(preface + open + more, piece: 3).last == .reading)
        #expect(Self.feed(preface + open + more + last, piece: 3).last == .complete)
    }

    @Test func aHeadLongerThanTheLimitIsRefused() {
        let trickle = Array("GET / HTTP/1.1\r\nX: ".utf8) + [UInt8](repeating: 0x61, count: 200)
        #expect(Self.feed(trickle, piece: 1, max: 100).last == .refused)
        // An HTTP/2 client that never ends a header block (a CONTINUATION flood's first half) is refused too.
        let flood = FirstHeadScanner.preface + Self.frame(type: 0x1, flags: 0, stream: 1, payload: 50)
            + (0..<10).flatMap { _ in Self.frame(type: 0x9, flags: 0, stream: 1, payload: 50) }
        #expect(Self.feed(flood, piece: 64, max: 300).last == .refused)
    }

    /// Payloads are skipped by their length, not byte by byte: the limit still falls on the same byte whatever the
    /// split, so a header block that ends on the limit's last byte completes and one that needs two bytes more is
    /// refused, fed one byte at a time or in one piece.
    @Test(arguments: [1, 3, 64, 100_000])
    func theLimitFallsOnTheSameByteWhateverTheSplit(piece: Int) {
        let preface = FirstHeadScanner.preface + Self.frame(type: 0x4, flags: 0, stream: 0, payload: 6)
        let open = Self.frame(type: 0x1, flags: 0, stream: 1, payload: 100)
        let more = Self.frame(type: 0x9, flags: 0, stream: 1, payload: 5_000)
        func block(endingWith payload: Int) -> [UInt8] {
            preface + open + more + Self.frame(type: 0x9, flags: 0x4, stream: 1, payload: payload)
        }
        let exact = block(endingWith: 50).count
        #expect(Self.feed(block(endingWith: 50), piece: piece, max: exact).last == .complete)
        #expect(Self.feed(block(endingWith: 50), piece: piece, max: exact - 2).last == .refused)
        // After the first head, a frame is pending until its last payload byte, in any split.
        var scanner = FirstHeadScanner(maxHeadBytes: 16_384)
        #expect(scanner.feed(preface + Self.frame(type: 0x1, flags: 0x5, stream: 1, payload: 20)) == .complete)
        let flood = Self.frame(type: 0x1, flags: 0, stream: 3, payload: 16_000)
            + (0..<20).flatMap { _ in Self.frame(type: 0x9, flags: 0, stream: 3, payload: 16_000) }
            + Self.frame(type: 0x9, flags: 0x4, stream: 3, payload: 7)
        for start in stride(from: 0, to: flood.count - 1, by: piece) {
            _ = scanner.feed(flood[start..<min(start + piece, flood.count - 1)])
            #expect(scanner.framePending)
        }
        _ = scanner.feed(flood.suffix(1))
        #expect(!scanner.framePending)
    }

    @Test func anHTTP1RequestThatBeginsLikeThePrefaceIsHTTP1() {
        let bytes = Array("PRI * HTTP/2.0\r\n\r\nXY".utf8)
        #expect(Self.feed(bytes, piece: 1).last == .complete)
    }

    /// After the first head an HTTP/2 connection's frames are still followed: a later frame cut short, or a header
    /// block waiting for its CONTINUATION frames, is pending (TLSFirstRequestDeadline times it); a DATA frame's
    /// payload is not (a body may take its time), its frame header is.
    @Test func afterTheFirstHeadLaterFramesAndHeaderBlocksArePending() {
        var scanner = FirstHeadScanner(maxHeadBytes: 16_384)
        let settings = Self.frame(type: 0x4, flags: 0, stream: 0, payload: 6)
        let first = FirstHeadScanner.preface + settings + Self.frame(type: 0x1, flags: 0x4 | 0x1, stream: 1, payload: 20)
        #expect(scanner.feed(first) == .complete)
        #expect(!scanner.framePending)
        let later = Self.frame(type: 0x1, flags: 0x4, stream: 3, payload: 40)
        let unit = scanner.pendingUnit
        _ = scanner.feed(later.prefix(5))
        #expect(scanner.framePending)   // frame header cut short
        #expect(scanner.pendingUnit == unit + 1)
        _ = scanner.feed(later.dropFirst(5).dropLast())
        #expect(scanner.framePending)   // payload cut short
        _ = scanner.feed(later.suffix(1))
        #expect(!scanner.framePending)
        _ = scanner.feed(Self.frame(type: 0x1, flags: 0, stream: 5, payload: 10))
        #expect(scanner.framePending)   // HEADERS without END_HEADERS
        _ = scanner.feed(Self.frame(type: 0x9, flags: 0x4, stream: 5, payload: 10))
        #expect(!scanner.framePending)
        #expect(scanner.pendingUnit == unit + 2)   // the HEADERS and its CONTINUATION: one block
        let data = Self.frame(type: 0x0, flags: 0, stream: 7, payload: 100)
        _ = scanner.feed(data.prefix(4))
        #expect(scanner.framePending)
        _ = scanner.feed(data.dropFirst(4).prefix(30))
        #expect(!scanner.framePending)
        // More than maxHeadBytes after the first head is no refusal: the limit is the first head's.
        #expect(scanner.feed([UInt8](repeating: 0, count: 20_000)) == .complete)
    }

    @Test func anHTTP1ConnectionHasNoPendingFrames() {
        var scanner = FirstHeadScanner(maxHeadBytes: 16_384)
        #expect(scanner.feed(Self.head) == .complete)
        #expect(!scanner.isHTTP2 && !scanner.framePending)
    }
}
