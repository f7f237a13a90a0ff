import Foundation
import HLS
import Testing

/// Every committed seed and crash regression of `Tests/FuzzSeeds/playlist/` goes through `HLSFuzz.playlist`, the
/// body of the libFuzzer target, so a fixed crash stays fixed without building the fuzzers.
@Suite struct FuzzReplayTests {
    @Test func replayPlaylistSeeds() throws {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FuzzSeeds/playlist")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasPrefix(".") }.sorted()
        #expect(!names.isEmpty)
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: dir.appendingPathComponent(name)))
            do { try HLSFuzz.playlist(bytes) } catch { Issue.record("playlist/\(name): \(error)") }
        }
    }

    /// §4.1: lines end with LF or CR LF. CR LF is one `Character` in Swift, so splitting on "\n" Characters read a
    /// CRLF playlist as a single line; an LF followed by a combining mark was not a line end either.
    @Test func crlfAndCombiningMarkLineEnds() throws {
        let lf = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:1.5,\nseg0.m4s\n"
        let crlf = lf.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(crlf.utf8.count == lf.utf8.count + 5)
        let p = try MediaPlaylist.parse(lf)
        #expect(try MediaPlaylist.parse(crlf) == p)
        #expect(p.segments.map(\.uri) == ["seg0.m4s"])
        let combining = try MediaPlaylist.parse(lf.replacingOccurrences(of: "seg0.m4s", with: "\u{301}seg0.m4s"))
        #expect(combining.segments.map(\.uri) == ["\u{301}seg0.m4s"])
    }

    /// The minimized input of the first playlist finding: an unquoted attribute value holding a double quote.
    @Test func unquotedValueWithQuoteIsRejected() {
        #expect(throws: (any Error).self) { try MediaPlaylist.parse("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MAP:URI=s\"\n") }
    }
}
