import Foundation
import HLS
import MediaCore
import MediaPresentation
import Pipeline
import Producer
import TestSupport
import Testing

/// `VODWriter` with `singleFile`: one CMAF file per rendition, `ftyp moov [free] sidx (styp moof mdat)*`, and
/// playlists whose byte ranges land on its boxes.
@Suite struct SingleFileTests {
    /// 30 fps video whose presentation runs 2 frames behind decoding (as with B-frames), keyframe every second,
    /// and AAC.
    static func publish(seconds: Int, to writer: VODWriter) throws {
        let p = try SamplePublisher(tracks: [SamplePublisherTests.video, SamplePublisherTests.audio], partDuration: nil, output: writer)
        var audioNext: Int64 = 0
        for i in 0..<(seconds * 30) {
            let t = Int64(i) * 3000
            try p.append(Sample(data: [UInt8](repeating: UInt8(i & 0xFF), count: 40 + i % 7), dts: t, pts: t + 6000,
                                isSync: i % 30 == 0, durationHint: 3000), track: 0)
            while audioNext * 90_000 < (t + 3000) * 48_000 {
                try p.append(Sample(data: [0x21, 0x10], dts: audioNext, pts: audioNext, isSync: true, durationHint: 1024), track: 1)
                audioNext += 1024
            }
        }
        try p.finish()
    }

    static func package(seconds: Int, expected: MediaTime?) throws -> (URL, VODWriter) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("single-file-\(UUID().uuidString)")
        let writer = try VODWriter(directory: dir, singleFile: SingleFileOptions(segmentDuration: .seconds(1),
                                                                                 expectedDuration: { expected }))
        try publish(seconds: seconds, to: writer)
        #expect(try writer.finish() == seconds)
        return (dir, writer)
    }

    @Test(arguments: [(MediaTime?.some(.seconds(12)), true), (.some(.seconds(1)), false), (nil, true)])
    func fileIsInitIndexThenSegments(expected: MediaTime?, reservedEnough: Bool) throws {
        let seconds = 12
        let (dir, writer) = try Self.package(seconds: seconds, expected: expected)
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
                == ["index.m3u8", "manifest.mpd", "stream.iframes.m3u8", "stream.m3u8", "stream.mp4"])
        // The MPD addresses the same file: SegmentBase with the sidx's range (inclusive) and the init segment's.
        let mpd = try String(contentsOf: dir.appendingPathComponent("manifest.mpd"), encoding: .utf8)
        let written = try #require(writer.singleFiles.first)
        #expect(mpd.contains("<BaseURL>stream.mp4</BaseURL>"))
        #expect(mpd.contains("indexRange=\"\(written.indexRange.lowerBound)-\(written.indexRange.upperBound - 1)\""))
        #expect(mpd.contains("<Initialization range=\"0-\(written.initRange.upperBound - 1)\"/>"))
        let file = [UInt8](try Data(contentsOf: dir.appendingPathComponent("stream.mp4")))
        let boxes = try BoxReader.walk(file)
        let index = try #require(writer.singleFiles.first)
        #expect(writer.singleFiles.count == 1 && index.fileURI == "stream.mp4")

        // ftyp moov, then free only when room was left over, then sidx right before the first segment.
        let head = boxes.prefix { $0.type != "styp" }.map(\.type)
        #expect(head == (reservedEnough ? ["ftyp", "moov", "free", "sidx"] : ["ftyp", "moov", "sidx"]))
        let moov = try #require(boxes.first { $0.type == "moov" })
        let sidx = try #require(boxes.first { $0.type == "sidx" })
        #expect(index.initRange == 0..<moov.end)
        #expect(index.indexRange == sidx.offset..<sidx.end && index.mediaStart == sidx.end)

        // Segments: styp+moof+mdat, tiling the rest of the file.
        let tail = boxes.drop { $0.type != "styp" }
        var segments: [Range<Int>] = []
        for b in tail {
            if b.type == "styp" { segments.append(b.offset..<b.end) } else { segments[segments.count - 1] = segments.last!.lowerBound..<b.end }
        }
        #expect(segments.count == seconds && segments.last?.upperBound == file.count)

        // sidx v1 (§8.16.3.2): reference track 1 at 90 kHz, EPT = first tfdt + the 2-frame delay, first_offset 0,
        // one reference per segment with its exact size, 1-s durations, SAP type 1.
        let d = Bytes(file), c = sidx.contentStart
        #expect(try d.u8(c) == 1 && d.u32(c + 4) == 1 && d.u32(c + 8) == 90_000)
        #expect(try d.u64(c + 12) == 6000 && d.u64(c + 20) == 0)
        #expect(try Int(d.u16(c + 30)) == seconds)
        for (k, seg) in segments.enumerated() {
            let at = c + 32 + 12 * k
            #expect(try Int(d.u32(at)) == seg.count)
            #expect(try d.u32(at + 4) == 90_000)
            #expect(try d.u32(at + 8) == 0x9000_0000)
        }

        // Playlists: EXT-X-MAP and EXT-X-BYTERANGE name exactly those boxes.
        let playlist = try MediaPlaylist.parse(String(decoding: try Data(contentsOf: dir.appendingPathComponent("stream.m3u8")), as: UTF8.self))
        #expect(playlist.mapURI == "stream.mp4" && playlist.mapByteRange?.range == index.initRange)
        #expect(playlist.segments.map { $0.byteRange?.range } == segments)
        #expect(playlist.segments.allSatisfy { $0.uri == "stream.mp4" })
    }

    @Test func ladderWritesOneFilePerRendition() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("single-file-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let writer = try VODWriter(directory: dir, singleFile: SingleFileOptions(segmentDuration: .seconds(1), expectedDuration: { nil }))
        let p = try SamplePublisher(tracks: [SamplePublisherTests.video, SamplePublisherTests.audio],
                                    renditions: [(Rendition(name: "720p", kind: .video, scheme: .nested("720p")), [0]),
                                                 (Rendition(name: "audio", kind: .audio, scheme: .nested("audio")), [1])],
                                    partDuration: nil, output: writer)
        try SamplePublisherTests.feed(p, seconds: 3)
        try p.finish()
        try writer.finish()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
                == ["720p.iframes.m3u8", "720p.m3u8", "720p.mp4", "audio.m3u8", "audio.mp4", "index.m3u8", "manifest.mpd"])
        #expect(writer.singleFiles.map(\.fileURI) == ["720p.mp4", "audio.mp4"])
        for (name, index) in zip(["720p", "audio"], writer.singleFiles) {
            let file = [UInt8](try Data(contentsOf: dir.appendingPathComponent(name + ".mp4")))
            let boxes = try BoxReader.walk(file)
            let sidx = try #require(boxes.first { $0.type == "sidx" })
            #expect(index.indexRange == sidx.offset..<sidx.end)
            // The audio rendition's reference track is its only track (ID 2), at 48 kHz.
            #expect(try Bytes(file).u32(sidx.contentStart + 4) == (name == "audio" ? 2 : 1))
            #expect(try Bytes(file).u32(sidx.contentStart + 8) == (name == "audio" ? 48_000 : 90_000))
        }
    }

    @Test func aCodecChangeIsRefused() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("single-file-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let writer = try VODWriter(directory: dir, singleFile: SingleFileOptions(segmentDuration: .seconds(1), expectedDuration: { nil }))
        let p = try SamplePublisher(tracks: [SamplePublisherTests.video, SamplePublisherTests.audio], partDuration: nil, output: writer)
        try SamplePublisherTests.feed(p, seconds: 2)
        var changed = SamplePublisherTests.video
        changed.codec = .h264(avcC: SamplePublisherTests.avcB)
        try p.update(changed, track: 0)
        #expect(throws: SingleFileError.self) {
            try SamplePublisherTests.feed(p, seconds: 2, from: 2)
            try p.finish()
        }
    }
}
