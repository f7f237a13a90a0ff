import Foundation
import HLS
import Logging
import MediaCore
import MediaPresentation
import Pipeline
import Testing

/// `Recorder`: what is on disk after every event, the append path, the end, and the failure modes.
@Suite struct RecorderTests {
    static let video = TrackFormat(trackID: 1, kind: .video, timescale: 90_000,
                                   codec: .h264(avcC: [1, 0x64, 0, 0x1F, 0xFF, 0xE1, 0, 4, 0x67, 0x64, 0, 0x1F, 1, 0, 2, 0x68, 0xEE]),
                                   width: 1280, height: 720)
    static let audio = TrackFormat(trackID: 2, kind: .audio, timescale: 48_000, codec: .aac(audioSpecificConfig: [0x11, 0x90]),
                                   sampleRate: 48_000, channelCount: 2)
    static let logger = Logger(label: "test")

    static func tempDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("recorder-\(UUID().uuidString)")
    }

    static func info(_ n: UInt64, millis: Int64 = 1000, bytes: Int = 500) -> SegmentInfo {
        SegmentInfo(sequence: n, startTime: MediaTime(value: Int64(n) * 90 * millis, timescale: 90_000),
                    duration: MediaTime(value: 90 * millis, timescale: 90_000), byteCount: bytes,
                    programDateTime: WallClock(millisecondsSince1970: 1_763_785_226_000 + Int64(n) * millis),
                    videoSampleCount: 30)
    }

    /// A ladder of two renditions (nested layout) with LL parts, then `count` segments each.
    static func events(count: Int, longAt: Int? = nil) -> [PresentationEvent] {
        let renditions = [Rendition(name: "720p", kind: .video, scheme: .nested("720p"), audioGroup: "audio"),
                          Rendition(name: "audio", kind: .audio, scheme: .nested("audio"), audioGroup: "audio")]
        var out: [PresentationEvent] = [
            .layout(renditions, TimingPolicy(targetDuration: 1, partTarget: MediaTime(value: 334, timescale: 1000))),
            .initSegment(rendition: 0, bytes: [1, 2, 3], tracks: [video]),
            .initSegment(rendition: 1, bytes: [4, 5, 6], tracks: [audio]),
        ]
        for n in 0..<UInt64(count) {
            let millis: Int64 = longAt == Int(n) ? 2600 : 1000
            for r in 0..<2 {
                out.append(.part(rendition: r, PartInfo(segmentSequence: n, index: 0, duration: .seconds(1, timescale: 3),
                                                       byteCount: 10, independent: true), bytes: [UInt8](repeating: 9, count: 10)))
                out.append(.segment(rendition: r, info(n, millis: millis, bytes: 500 + r),
                                    bytes: [UInt8](repeating: UInt8(truncatingIfNeeded: n), count: 500 + r)))
            }
        }
        return out
    }

    static func read(_ dir: URL, _ name: String) -> String? {
        FileManager.default.contents(atPath: dir.appendingPathComponent(name).path).flatMap { String(data: $0, encoding: .utf8) }
    }

    /// Every segment a playlist on disk lists exists, whole.
    static func listedSegmentsAreComplete(_ dir: URL, _ playlist: String, sizes: (UInt64) -> Int) throws -> [UInt64] {
        guard let text = read(dir, playlist) else { return [] }
        let p = try MediaPlaylist.parse(text)
        for s in p.segments {
            let attrs = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent(s.uri).path)
            #expect((attrs[.size] as? Int) == sizes(s.sequence), "\(s.uri)")
        }
        return p.segments.map(\.sequence)
    }

    @Test func eachSegmentIsOnDiskBeforeItsPlaylistLineAndTheEndMakesAVOD() throws {
        let dir = Self.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let recorder = try Recorder(directory: dir, logger: Self.logger)
        var inode: Int?
        var segments = 0
        for e in Self.events(count: 8) {
            recorder.consume(e)
            guard case .segment(let r, let info, _) = e else { continue }
            segments += 1
            let listed = try Self.listedSegmentsAreComplete(dir, r == 0 ? "720p.m3u8" : "audio.m3u8") { _ in 500 + r }
            #expect(listed == Array(0...info.sequence))
            #expect(recorder.isRecorded(rendition: r, sequence: info.sequence))
            #expect(!recorder.isRecorded(rendition: r, sequence: info.sequence + 1))
            let text = try #require(Self.read(dir, r == 0 ? "720p.m3u8" : "audio.m3u8"))
            #expect(text.contains("#EXT-X-PLAYLIST-TYPE:EVENT") && !text.contains("#EXT-X-ENDLIST"))
            #expect(!text.contains("EXT-X-PART"))
            // The append path: the same file grows (no rewrite, no rename) after its first segment.
            if r == 0 {
                let attrs = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("720p.m3u8").path)
                let ino = attrs[.systemFileNumber] as? Int
                if let inode { #expect(ino == inode) }
                inode = ino
            }
            // index.m3u8 once every rendition has a segment.
            #expect((Self.read(dir, "index.m3u8") != nil) == (segments >= 2))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("720p/seg0.0.m4s").path))
        recorder.consume(.end)
        let p = try MediaPlaylist.parse(try #require(Self.read(dir, "720p.m3u8")))
        #expect(p.playlistType == .vod && p.endList && p.segments.count == 8)
        #expect(try MultivariantPlaylist.parse(try #require(Self.read(dir, "index.m3u8"))).variants.count == 1)
    }

    /// At the end, the recording's playlists are byte for byte what `package` (VODWriter) writes for the same
    /// events, including a segment longer than the target duration (the one case that rewrites the header).
    @Test func finishedRecordingEqualsThePackagedVOD() throws {
        for longAt in [nil, 5] {
            let recorded = Self.tempDirectory(), packaged = Self.tempDirectory()
            defer { try? FileManager.default.removeItem(at: recorded); try? FileManager.default.removeItem(at: packaged) }
            let recorder = try Recorder(directory: recorded, logger: Self.logger)
            let writer = try VODWriter(directory: packaged)
            for e in Self.events(count: 10, longAt: longAt) {
                recorder.consume(e)
                try writer.consume(e)
            }
            if longAt != nil {
                let growing = try MediaPlaylist.parse(try #require(Self.read(recorded, "720p.m3u8")))
                #expect(growing.targetDuration == 3 && growing.playlistType == .event && growing.segments.count == 10)
            }
            recorder.consume(.end)
            try writer.finish()
            for name in ["720p.m3u8", "audio.m3u8", "index.m3u8"] {
                #expect(Self.read(recorded, name) == Self.read(packaged, name), "\(name)")
            }
            let files = { (d: URL) in try FileManager.default.subpathsOfDirectory(atPath: d.path).sorted() }
            #expect(try files(recorded) == files(packaged))
        }
    }

    @Test func finishHookGetsTheTimeline() throws {
        let dir = Self.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        final class Box: @unchecked Sendable { var summary: RecordingSummary? }
        let box = Box()
        let recorder = try Recorder(directory: dir, logger: Self.logger) { box.summary = $0 }
        for e in Self.events(count: 10, longAt: 5) { recorder.consume(e) }
        recorder.finish()
        recorder.finish()
        let s = try #require(box.summary)
        #expect(s.renditions.map(\.segmentCount) == [10, 10])
        let t = s.renditions[0].timeline
        // 0-4 one second each, 5 is 2.6 s, 6-9 one second each: three runs.
        #expect(t.map(\.firstSequence) == [0, 5, 6] && t.map(\.repeatCount) == [4, 0, 3])
        #expect(t[2].start.value == 6 * 90_000 && t[2].duration.value == 90_000)
        #expect(s.renditions[0].inits.map(\.uri) == ["720p/init.mp4"])
    }

    @Test func refusesADirectoryWithFilesInIt() throws {
        let dir = Self.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: dir.appendingPathComponent("old.txt").path, contents: Data())
        #expect(throws: RecorderError.notEmpty(dir.path)) { try Recorder(directory: dir, logger: Self.logger) }
    }

    /// A segment that cannot be written is never listed, and the recording stops without throwing (the live
    /// stream beside it goes on); the end still makes what was recorded a VOD.
    @Test func aWriteErrorStopsTheRecordingQuietly() throws {
        let dir = Self.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let recorder = try Recorder(directory: dir, logger: Self.logger)
        let events = Self.events(count: 6)
        for e in events.prefix(3 + 4 * 3) { recorder.consume(e) }  // layout, inits, 3 segments each
        try FileManager.default.removeItem(at: dir.appendingPathComponent("720p"))
        for e in events.dropFirst(3 + 4 * 3) { recorder.consume(e) }
        #expect(recorder.isRecorded(rendition: 0, sequence: 2) && !recorder.isRecorded(rendition: 0, sequence: 3))
        recorder.consume(.end)
        let p = try MediaPlaylist.parse(try #require(Self.read(dir, "720p.m3u8")))
        #expect(p.segments.map(\.sequence) == [0, 1, 2] && p.endList)
    }
}
