import Foundation
import LogFormats
import Logging
import Synchronization
import Testing

/// The lines a handler wrote, in order.
private final class Lines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// A logger whose JSON lines land in `lines`, at a fixed time.
private func logger(_ lines: Lines, level: Logger.Level = .trace) -> Logger {
    let handler = JSONLogHandler(level: level, clock: { Timestamp(secondsSince1970: 1_795_700_709, milliseconds: 42) },
                                 write: { lines.append($0) })
    return Logger(label: "test") { _ in handler }
}

/// `line` parsed back with JSONSerialization: one object, exactly one trailing newline and no other.
private func parsed(_ line: String) throws -> [String: Any] {
    #expect(line.hasSuffix("\n"))
    #expect(line.dropLast().firstIndex(of: "\n") == nil, "a JSON line must not contain a raw newline")
    let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
    return try #require(object as? [String: Any])
}

@Suite struct JSONLogHandlerTests {
    @Test func fieldsOfALine() throws {
        let lines = Lines()
        var log = logger(lines)
        log[metadataKey: "stream"] = "cam1"
        log.notice("publisher connected", metadata: ["rendition": "720p", "segments": "\(42)"])
        let line = try #require(lines.all.first)
        let object = try parsed(line)
        #expect(object["time"] as? String == "2026-11-26T13:45:09.042Z")
        #expect(object["level"] as? String == "notice")
        #expect(object["stream"] as? String == "cam1")
        #expect(object["message"] as? String == "publisher connected")
        #expect(object["rendition"] as? String == "720p")
        #expect(object["segments"] as? String == "42")
        #expect(line.hasPrefix("{\"time\":\"2026-11-26T13:45:09.042Z\",\"level\":\"notice\",\"stream\":\"cam1\","))
    }

    @Test func quotesNewlinesAndControlCharactersStayOnOneLine() throws {
        let lines = Lines()
        let log = logger(lines)
        let nasty = "a \"quoted\" \\ path\nsecond line\r\tthird\u{0}\u{1}\u{1B}[K\u{7F} \u{2028}\u{2029} é 🎥"
        log.error("\(nasty)", metadata: [nasty: .string(nasty)])
        let line = try #require(lines.all.first)
        #expect(lines.all.count == 1)
        let object = try parsed(line)
        #expect(object["message"] as? String == nasty)
        #expect(object[nasty] as? String == nasty)
        // Nothing below U+0020 is written raw, nor DEL, nor the two Unicode line separators.
        #expect(!line.dropLast().unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0 == "\u{2028}" || $0 == "\u{2029}" })
    }

    @Test func bytesThatAreNotUTF8BecomeReplacementCharacters() throws {
        let lines = Lines()
        let log = logger(lines)
        let broken = String(decoding: [0x61, 0xFF, 0xC3, 0x28, 0x62] as [UInt8], as: UTF8.self)
        log.warning("\(broken)")
        let line = try #require(lines.all.first)
        #expect(try parsed(line)["message"] as? String == "a\u{FFFD}\u{FFFD}(b")
    }

    @Test func nestedMetadataAndReservedKeys() throws {
        let lines = Lines()
        let log = logger(lines)
        log.info("scrape", metadata: [
            "time": "not the time", "level": "x", "message": "y",
            "labels": ["kind": "segment", "status": "200"], "list": ["a", .stringConvertible(7)],
        ])
        let object = try parsed(try #require(lines.all.first))
        #expect(object["time"] as? String == "2026-11-26T13:45:09.042Z")
        #expect(object["level"] as? String == "info")
        #expect(object["message"] as? String == "scrape")
        #expect(object["meta.time"] as? String == "not the time")
        #expect(object["meta.level"] as? String == "x")
        #expect(object["meta.message"] as? String == "y")
        #expect(object["labels"] as? [String: String] == ["kind": "segment", "status": "200"])
        #expect(object["list"] as? [String] == ["a", "7"])
        #expect(object["stream"] == nil)
    }

    @Test func levelAndMetadataAreValues() throws {
        let lines = Lines()
        var a = logger(lines, level: .notice)
        var b = a
        a[metadataKey: "stream"] = "a"
        b.logLevel = .trace
        a.info("hidden: below notice")
        a.notice("from a")
        b.debug("from b")
        #expect(lines.all.count == 2)
        #expect(try parsed(lines.all[0])["stream"] as? String == "a")
        #expect(try parsed(lines.all[1])["stream"] == nil)
    }

    @Test func errorsAndProvidedMetadata() throws {
        struct Broken: Error, CustomStringConvertible { var description: String { "disk \"full\"" } }
        let lines = Lines()
        let handler = JSONLogHandler(level: .trace, metadataProvider: .init { ["request": "r1"] },
                                     write: { lines.append($0) })
        let log = Logger(label: "test") { _ in handler }
        log.error("recording stopped", error: Broken(), metadata: ["request": "r2"])
        let object = try parsed(try #require(lines.all.first))
        #expect(object["error"] as? String == "disk \"full\"")
        #expect(object["request"] as? String == "r2")
        // A real clock: RFC 3339 in UTC with milliseconds.
        let now = Timestamp.now().rfc3339
        #expect(now.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)
    }

    @Test func timestamps() {
        #expect(Timestamp(secondsSince1970: 0, milliseconds: 0).rfc3339 == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp(secondsSince1970: 951_782_400, milliseconds: 999).rfc3339 == "2000-02-29T00:00:00.999Z")
        #expect(Timestamp(secondsSince1970: 4_102_444_799, milliseconds: 7).rfc3339 == "2099-12-31T23:59:59.007Z")
    }
}
