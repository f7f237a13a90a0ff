import TestSupport
import Foundation
import Testing
import MediaCore
@testable import ISOBMFF

/// A real H.264 + AAC sample set (Fixtures/, from scripts/regen-fixtures.sh) written as init.mp4 + seg0.m4s and
/// read back by ffprobe and by the independent reader.
@Suite("ffprobe reads our init + fragment")
struct FFprobeFixtureTests {
    struct Packet: Equatable, CustomStringConvertible {
        var stream: Int, pts: Int64, dts: Int64, duration: Int64, size: Int, key: Bool
        var description: String { "\(stream):\(pts)/\(dts)/\(duration)/\(size)\(key ? "K" : "")" }
    }

    /// "stream,pts,dts,duration,size,flags" lines.
    static func packets(csv: String) throws -> [Packet] {
        try csv.split(separator: "\n").map { line in
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            // duration is N/A (-1 here) when ffprobe cannot tell.
            guard f.count >= 6, let s = Int(f[0]), let pts = Int64(f[1]), let dts = Int64(f[2]),
                  let size = Int(f[4]) else { throw ReadError("bad packet line \(line)") }
            return Packet(stream: s, pts: pts, dts: dts, duration: Int64(f[3]) ?? -1, size: size, key: f[5].hasPrefix("K"))
        }
    }

    struct Source {
        var video: [Packet], audio: [Packet]
        var videoData: [UInt8], audioData: [UInt8]
        var avcC: [UInt8], asc: [UInt8]
        var streams: [[String: String]]
    }

    static func loadSource() throws -> Source {
        let all = try packets(csv: Fixture.text("h264_aac_packets.csv"))
        let streams = try Fixture.text("h264_aac_streams.txt").split(separator: "\n").map { line in
            Dictionary(uniqueKeysWithValues: line.split(separator: "|").map { kv in
                let p = kv.split(separator: "=", maxSplits: 1).map(String.init)
                return (p[0], p.count > 1 ? p[1] : "")
            })
        }
        return Source(video: all.filter { $0.stream == 0 }, audio: all.filter { $0.stream == 1 },
                      videoData: try Fixture.bytes("h264_aac_video.bin"), audioData: try Fixture.bytes("h264_aac_audio.bin"),
                      avcC: try Fixture.bytes("h264_aac_avcC.bin"), asc: try Fixture.bytes("h264_aac_asc.bin"),
                      streams: streams)
    }

    /// Samples of one stream in decode order: durations from the next DTS, the last from the packet's own duration;
    /// tfdt = first DTS shifted to 0 (the fixture's first DTS is negative because of B-frames / AAC priming).
    static func fragment(_ ps: [Packet], data: [UInt8], trackID: UInt32, isVideo: Bool) throws
        -> (TrackFragment, [[UInt8]]) {
        var samples: [FragmentSample] = []
        var payloads: [[UInt8]] = []
        var offset = 0
        for (i, p) in ps.enumerated() {
            let duration = i + 1 < ps.count ? ps[i + 1].dts - p.dts : p.duration
            samples.append(FragmentSample(duration: UInt32(duration), size: UInt32(p.size), isSync: p.key,
                                          compositionOffset: Int32(p.pts - p.dts)))
            payloads.append(Array(data[offset..<offset + p.size]))
            offset += p.size
        }
        #expect(offset == data.count)
        return (TrackFragment(trackID: trackID, baseMediaDecodeTime: 0, samples: samples, isVideo: isVideo), payloads)
    }

    static func checkGolden(_ name: String, _ bytes: [UInt8]) throws {
        if ProcessInfo.processInfo.environment["ISOBMFF_UPDATE_GOLDEN"] != nil {
            let src = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)")
            try Data(bytes).write(to: src)
            return
        }
        let golden = try Fixture.bytes(name)
        #expect(golden.count == bytes.count, "\(name): \(bytes.count) bytes, golden \(golden.count)")
        if let i = zip(golden, bytes).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            Issue.record("\(name) differs from the golden file at byte \(i)")
        }
    }

    static func run(_ executable: String, _ args: [String]) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    @Test func ffprobeReadsInitPlusFragment() throws {
        let src = try Self.loadSource()
        try #require(src.video.count == 30)
        try #require(src.audio.count >= 47)
        let videoTimescale = try #require(src.streams[0]["time_base"]?.split(separator: "/").last.flatMap { Int32($0) })
        let sps = try #require(try AVCTests.parameterSets(ofAVCC: src.avcC).sps.first)
        let info = try SPSInfo(nal: sps)

        let videoFormat = TrackFormat(trackID: 1, kind: .video, timescale: videoTimescale, codec: .h264(avcC: src.avcC),
                                      width: info.width, height: info.height,
                                      sampleAspectRatio: info.sampleAspectRatio ?? Rational(1, 1))
        let audioFormat = TrackFormat(trackID: 2, kind: .audio, timescale: 48000, codec: .aac(audioSpecificConfig: src.asc),
                                      sampleRate: 48000, channelCount: 2)
        let initSegment = try InitSegment.make(tracks: [videoFormat, audioFormat])

        let (vFrag, vPayloads) = try Self.fragment(src.video, data: src.videoData, trackID: 1, isVideo: true)
        let (aFrag, aPayloads) = try Self.fragment(src.audio, data: src.audioData, trackID: 2, isVideo: false)
        var segment = MediaSegmentBoxes.styp()
        segment += try MediaSegmentBoxes.fragmentHeader(sequenceNumber: 1, tracks: [vFrag, aFrag])
        for p in vPayloads + aPayloads { segment += p }

        // Whole-file goldens: any byte change in the writer shows up as a reviewed fixture diff.
        // ISOBMFF_UPDATE_GOLDEN=1 rewrites them in the source tree (scripts/regen-fixtures.sh does).
        try Self.checkGolden("init_h264_aac.mp4", initSegment)
        try Self.checkGolden("seg_h264_aac.m4s", segment)

        // Independent parse first: payload bytes at each trun offset equal the source samples.
        let read = try FragmentReader.read(segment)
        for (track, payloads) in zip(read.tracks, [vPayloads, aPayloads]) {
            #expect(track.sampleRanges.map { Array(segment[$0]) } == payloads)
        }

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("isobmff-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        // ISOBMFF_KEEP_OUTPUT=1 keeps init.mp4 / seg0.m4s for inspection (the path is printed).
        let keep = ProcessInfo.processInfo.environment["ISOBMFF_KEEP_OUTPUT"] != nil
        defer { if keep { print("ISOBMFF output kept in \(dir.path)") } else { try? FileManager.default.removeItem(at: dir) } }
        try Data(initSegment).write(to: dir.appendingPathComponent("init.mp4"))
        try Data(segment).write(to: dir.appendingPathComponent("seg0.m4s"))
        let all = dir.appendingPathComponent("all.mp4")
        try Data(initSegment + segment).write(to: all)

        let probe = try Self.run("/usr/bin/ffprobe", ["-v", "error", "-show_packets", "-show_entries",
                                                       "packet=stream_index,pts,dts,duration,size,flags",
                                                       "-of", "csv=p=0", all.path])
        #expect(probe.status == 0)
        #expect(probe.err.isEmpty, "ffprobe stderr: \(probe.err)")
        let got = try Self.packets(csv: probe.out)

        // Expected: same sizes and key flags, timestamps shifted by each track's first DTS, durations from DTS deltas.
        func expected(_ ps: [Packet], stream: Int) -> [Packet] {
            let shift = ps[0].dts
            return ps.enumerated().map { i, p in
                Packet(stream: stream, pts: p.pts - shift, dts: p.dts - shift,
                       duration: i + 1 < ps.count ? ps[i + 1].dts - p.dts : p.duration, size: p.size, key: p.key)
            }
        }
        #expect(got.count == src.video.count + src.audio.count)
        #expect(got.filter { $0.stream == 0 } == expected(src.video, stream: 0))
        // Audio durations of the first and last packet are ffprobe's own guess (N/A and the AAC frame size; FFmpeg's
        // own fMP4 output reads the same way), so compare those through the independent reader instead.
        func maskEnds(_ ps: [Packet]) -> [Packet] {
            var ps = ps
            ps[0].duration = 0; ps[ps.count - 1].duration = 0
            return ps
        }
        #expect(maskEnds(got.filter { $0.stream == 1 }) == maskEnds(expected(src.audio, stream: 1)))
        #expect(read.tracks[1].samples.map { Int64($0.duration) } == expected(src.audio, stream: 1).map(\.duration))
        #expect(read.tracks[0].samples.map { Int64($0.duration) } == expected(src.video, stream: 0).map(\.duration))

        // Stream parameters as ffprobe sees them from our moov.
        let streams = try Self.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries",
            "stream=codec_name,profile,width,height,sample_aspect_ratio,sample_rate,channels,time_base", "-of", "compact=p=0", all.path])
        #expect(streams.err.isEmpty, "ffprobe stderr: \(streams.err)")
        let lines = streams.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.first?.contains("codec_name=h264") == true)
        #expect(lines.first?.contains("width=160|height=90") == true)
        #expect(lines.first?.contains("sample_aspect_ratio=4:3") == true)
        #expect(lines.first?.contains("time_base=1/\(videoTimescale)") == true)
        #expect(lines.last?.contains("codec_name=aac") == true)
        #expect(lines.last?.contains("sample_rate=48000|channels=2") == true)

        // The repository's validate script agrees.
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/validate.sh")
        let validate = try Self.run("/bin/bash", [script.path, dir.path])
        #expect(validate.status == 0, "validate.sh: \(validate.err)")
        #expect(validate.out.hasPrefix("ok: \(src.video.count + src.audio.count) packets"))
    }
}
