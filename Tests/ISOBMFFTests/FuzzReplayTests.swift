import Foundation
import Testing
import TestSupport

/// Every committed seed and crash regression of `Tests/FuzzSeeds/<target>/` (inputs `scripts/fuzz` found or
/// started from) goes through the same body as the libFuzzer target, so a fixed crash stays fixed without
/// building the fuzzers. A trap would crash this test process; a broken invariant fails the test.
@Suite struct FuzzReplayTests {
    @Test(arguments: ["annexb", "sps", "avcc", "adts", "boxreader", "codecs", "cues"])
    func replaySeeds(target: String) throws {
        let files = try FuzzSeeds.files(target)
        for (name, bytes) in files {
            do {
                switch target {
                case "annexb": try ISOBMFFFuzz.annexB(bytes)
                case "sps": try ISOBMFFFuzz.sps(bytes)
                case "avcc": try ISOBMFFFuzz.avcc(bytes)
                case "adts": try ISOBMFFFuzz.adts(bytes)
                case "codecs": try ISOBMFFFuzz.codecs(bytes)
                case "cues": try ISOBMFFFuzz.cues(bytes)
                default: try ISOBMFFFuzz.boxReader(bytes)
                }
            } catch { Issue.record("\(target)/\(name): \(error)") }
        }
    }

    /// The box reader's findings, read directly: each is a `ReadError`, not a trap or an out-of-memory.
    @Test func boxReaderFindingsThrow() throws {
        let files = try FuzzSeeds.files("boxreader")
        #expect(files.count >= 2)
        for (name, bytes) in files {
            #expect(throws: ReadError.self, "\(name)") { _ = try FragmentReader.readSegment(bytes) }
        }
    }
}

enum FuzzSeeds {
    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("FuzzSeeds")
    }

    /// The files of `Tests/FuzzSeeds/<target>/`, sorted by name; the folder must exist.
    static func files(_ target: String) throws -> [(String, [UInt8])] {
        let dir = root.appendingPathComponent(target)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasPrefix(".") }.sorted()
        return try names.map { ($0, [UInt8](try Data(contentsOf: dir.appendingPathComponent($0)))) }
    }
}
