import Foundation
import Testing
import TestSupport

/// Every committed seed and crash regression of `Tests/FuzzSeeds/timeline/` goes through the `timeline` fuzz body
/// (`SegmenterFuzz.timeline`), so a fixed trap stays fixed without building the fuzzers.
@Suite struct TimelineFuzzReplayTests {
    @Test func replaySeeds() throws {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FuzzSeeds/timeline")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasPrefix(".") }.sorted()
        #expect(names.count >= 3)
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: dir.appendingPathComponent(name)))
            do { try SegmenterFuzz.timeline(bytes) } catch { Issue.record("timeline/\(name): \(error)") }
        }
    }
}
