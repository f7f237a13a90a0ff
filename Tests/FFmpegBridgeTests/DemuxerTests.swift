import Foundation
import MediaCore
import Testing
@testable import FFmpegBridge

@Suite("Shim constants")
struct ShimTests {
    @Test func macrosHaveTheirDocumentedValues() {
        #expect(ShimConstants.averrorEOF == -541_478_725)
        #expect(ShimConstants.averrorEAGAIN == -11)
        #expect(ShimConstants.averrorInvalidData == -1_094_995_529)
        #expect(ShimConstants.averrorExit == -1_414_092_869)
        #expect(ShimConstants.noPTS == Int64.min)
        #expect(ShimConstants.errorString(-2) == "No such file or directory")
        #expect(ShimConstants.errorString(-541_478_725) == "End of file")
    }

    @Test func versionsNameEveryLibrary() {
        let v = FFmpegLibrary.versions
        #expect(v.hasPrefix("libavformat 59."))
        for lib in ["libavcodec 59.", "libavutil 57.", "libswscale 6.", "libswresample 4."] { #expect(v.contains(lib)) }
    }
}

/// Reads every packet.
func readAll(_ demuxer: Demuxer) throws -> [Packet] {
    var packets: [Packet] = []
    while let p = try demuxer.read() { packets.append(p) }
    return packets
}

func probeView(_ packets: [Packet]) -> [ProbePacket] {
    packets.map { ProbePacket(stream: $0.streamIndex, pts: $0.pts, dts: $0.dts, size: $0.data.count, key: $0.isKeyframe,
                              duration: $0.duration) }
}

@Suite("Demuxer", .timeLimit(.minutes(2)))
struct DemuxerTests {
    @Test func mp4StreamInfo() throws {
        let f = try Fixtures.get()
        let d = try Demuxer(url: f.mp4)
        #expect(d.formatName.contains("mp4"))
        #expect(d.isSeekable)
        #expect(d.streams.count == 2)
        let (v, a) = (d.streams[0], d.streams[1])
        #expect(v.kind == .video && v.isH264 && v.codecName == "h264")
        #expect(v.width == 320 && v.height == 240)
        #expect(v.pixelFormat == "yuv420p")
        #expect(v.frameRate == Rational(30, 1))
        #expect(v.timeBase == Rational(1, 15360))
        #expect(v.sampleAspectRatio == Rational(1, 1))
        #expect(v.extradata.first == 1)  // avcC configurationVersion
        #expect(v.profile == 100)        // High
        #expect(a.kind == .audio && a.isAAC)
        #expect(a.sampleRate == 48_000 && a.channelCount == 2)
        #expect(a.timeBase == Rational(1, 48_000))
        #expect(Array(a.extradata.prefix(2)) == [0x11, 0x90])  // AAC-LC, 48 kHz, 2 channels (+ SBR sync extension)
        #expect(a.profile == 1)
        let duration = try #require(d.duration)
        #expect(duration > 1_900_000 && duration < 2_200_000)
    }

    @Test func mp4PacketsMatchFFprobeExactly() throws {
        let f = try Fixtures.get()
        let d = try Demuxer(url: f.mp4)
        #expect(!d.usesParsers, "a complete sample table gives every packet's facts")
        let packets = try readAll(d)
        let counts = try ffprobeCounts(f.mp4)
        #expect(counts == [60, packets.filter { $0.streamIndex == 1 }.count])
        #expect(packets.filter { $0.streamIndex == 0 }.count == counts[0])
        #expect(probeView(packets) == (try ffprobePackets(f.mp4)))
        let video = packets.filter { $0.streamIndex == 0 }
        // B-frames: the first DTS is negative (two frames of 512 ticks before 0), the first PTS is 0.
        #expect(video[0].dts == -1024)
        #expect(video[0].pts == 0)
        #expect(video.indices.filter { video[$0].isKeyframe } == [0, 15, 30, 45])
        #expect(packets.allSatisfy { !$0.isCorrupt && !$0.data.isEmpty })
        #expect(video.allSatisfy { $0.duration == 512 })
    }

    /// ffprobe runs libavformat's parsers over every input; ours are left out only where the packets stay the same.
    /// Shown failing with them left out of the fragmented file (its video durations are then unknown) and of the AC-3
    /// one (its last frame's duration). An all-intra file has no `stss`: every sample is sync, and the parser keeps
    /// reading keyframes from the frames.
    @Test func parsersStayWhereThePacketsNeedThem() throws {
        let f = try Fixtures.get()
        for (path, parses) in [(f.faststart, false), (f.fragmented, true), (f.ac3, true), (f.ts, true), (f.allIntra, true)] {
            let d = try Demuxer(url: path)
            #expect(d.usesParsers == parses, "\(path)")
            let packets = try readAll(d)
            #expect(!packets.isEmpty)
            #expect(probeView(packets) == (try ffprobePackets(path)), "\(path)")
        }
    }

    @Test func mpegTSPacketsMatchFFprobe() throws {
        let f = try Fixtures.get()
        let d = try Demuxer(url: f.ts)
        #expect(d.formatName == "mpegts")
        #expect(d.streams.map(\.codecName) == ["h264", "aac"])
        #expect(d.streams.allSatisfy { $0.timeBase == Rational(1, 90_000) })
        #expect(d.streams[0].width == 320 && d.streams[1].sampleRate == 48_000 && d.streams[1].channelCount == 2)
        let packets = try readAll(d)
        #expect(probeView(packets) == (try ffprobePackets(f.ts)))
        #expect(packets.filter { $0.streamIndex == 0 }.count == 60)
        // Annex-B in TS: the first video packet starts with a start code.
        #expect(Array(packets.first { $0.streamIndex == 0 }!.data.prefix(4)) == [0, 0, 0, 1])
    }

    @Test func seekToStartReadsTheSamePacketsAgain() throws {
        let f = try Fixtures.get()
        for path in [f.mp4, f.ts] {
            let d = try Demuxer(url: path)
            let first = try readAll(d)
            try d.seekToStart()
            let second = try readAll(d)
            #expect(probeView(second) == probeView(first), "\(path)")
        }
    }

    @Test func pipeReadsMPEGTS() throws {
        let f = try Fixtures.get()
        let feed = try PipeFeed(f.ts)
        defer { feed.finish() }
        try withExtendedLifetime(try Demuxer(url: feed.url)) { d in
            #expect(!d.isSeekable)
            #expect(d.streams.map(\.codecName) == ["h264", "aac"])
            #expect(d.streams[1].sampleRate == 48_000)
            let packets = try readAll(d)
            #expect(probeView(packets) == (try ffprobePackets(f.ts)))
            #expect(throws: FFmpegError.self) { try d.seekToStart() }
        }
    }

    @Test func pipeReadsFaststartMP4() throws {
        let f = try Fixtures.get()
        let feed = try PipeFeed(f.faststart)
        defer { feed.finish() }
        try withExtendedLifetime(try Demuxer(url: feed.url)) { d in
            #expect(!d.isSeekable)
            let packets = try readAll(d)
            #expect(probeView(packets) == (try ffprobePackets(f.faststart)))
        }
    }

    @Test func fifoPathIsAPipe() throws {
        let f = try Fixtures.get()
        let fifo = f.temp("fifo-\(UInt32.random(in: 0...UInt32.max))")
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = ["-c", "cat '\(f.ts)' > '\(fifo)'"]
        try writer.run()
        defer { writer.waitUntilExit() }
        try withExtendedLifetime(try Demuxer(url: fifo)) { d in
            #expect(!d.isSeekable)
            let count = try readAll(d).count
            #expect(count == (try ffprobePackets(f.ts)).count)
        }
    }

    /// A live encoder on a pipe: the demuxer must find both streams quickly (small probe for pipes).
    @Test func liveMPEGTSPipeStartsQuickly() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-hide_banner", "-nostdin", "-v", "error", "-re",
                             "-f", "lavfi", "-i", "testsrc=size=640x360:rate=30",
                             "-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "6",
                             "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "30",
                             "-c:a", "aac", "-f", "mpegts", "pipe:1"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        let start = ContinuousClock.now
        try process.run()
        try pipe.fileHandleForWriting.close()
        defer { try? pipe.fileHandleForReading.close(); process.terminate(); process.waitUntilExit() }
        try withExtendedLifetime(try Demuxer(url: "pipe:\(pipe.fileHandleForReading.fileDescriptor)")) { d in
            let startup = ContinuousClock.now - start
            #expect(startup < .milliseconds(2_500), "startup took \(startup)")
            #expect(d.streams.count == 2)
            #expect(d.streams[0].width == 640 && d.streams[0].height == 360)
            #expect(d.streams[1].sampleRate == 48_000 && d.streams[1].channelCount >= 1)
            var video = 0
            while video < 10, let p = try d.read() { if p.streamIndex == 0 { video += 1 } }
            #expect(video == 10)
        }
    }

    @Test func interruptAbortsABlockedPipeRead() throws {
        let f = try Fixtures.get()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: f.ts))
        let pipe = Pipe()
        let writer = pipe.fileHandleForWriting
        // Write the whole stream but keep the pipe open: the reader then blocks waiting for more.
        let written = DispatchSemaphore(value: 0)
        Thread.detachNewThread { writer.write(bytes); written.signal() }
        let flag = InterruptFlag()
        var count = 0
        var start = ContinuousClock.now
        let d = try Demuxer(url: "pipe:\(pipe.fileHandleForReading.fileDescriptor)", interruptFlag: flag)
        // Not a Task: the cooperative pool may be busy with other (blocking) tests.
        Thread.detachNewThread { Thread.sleep(forTimeInterval: 0.7); flag.interrupt() }
        start = ContinuousClock.now
        let error = #expect(throws: FFmpegError.self) {
            while try d.read() != nil { count += 1 }
        }
        #expect(error?.isInterrupted == true)
        #expect(error?.description == "cannot read '\(d.displayName)': Immediate exit requested")
        withExtendedLifetime(d) {}
        #expect(count > 100)
        #expect(ContinuousClock.now - start < .seconds(5))
        written.wait()
        try writer.close()
        try pipe.fileHandleForReading.close()
    }

    @Test func stalledPipeTimesOutWithRWTimeout() throws {
        let f = try Fixtures.get()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: f.ts))
        let pipe = Pipe()
        let writer = pipe.fileHandleForWriting
        let written = DispatchSemaphore(value: 0)
        Thread.detachNewThread { writer.write(bytes); written.signal() }
        let d = try Demuxer(url: "pipe:\(pipe.fileHandleForReading.fileDescriptor)",
                            options: .init(options: ["rw_timeout": "300000"]))
        let start = ContinuousClock.now
        let error = #expect(throws: FFmpegError.self) { while try d.read() != nil {} }
        #expect(error?.code == -110)  // ETIMEDOUT
        #expect(error?.description == "cannot read '\(d.displayName)': Connection timed out")
        #expect(ContinuousClock.now - start < .seconds(3))
        withExtendedLifetime(d) {}
        written.wait()
        try writer.close()
        try pipe.fileHandleForReading.close()
    }

    /// `hls-origin serve - < movie.mp4`: standard input is a regular file, which can seek, so even an
    /// MP4 with its index at the end works.
    @Test func fileDescriptorOfARegularFileCanSeek() throws {
        let f = try Fixtures.get()
        let handle = try #require(FileHandle(forReadingAtPath: f.mp4))
        defer { try? handle.close() }
        try withExtendedLifetime(try Demuxer(url: "pipe:\(handle.fileDescriptor)")) { d in
            #expect(d.isSeekable)
            let packets = try readAll(d)
            #expect(probeView(packets) == (try ffprobePackets(f.mp4)))
        }
    }

    // MARK: errors

    @Test func missingFile() throws {
        let f = try Fixtures.get()
        let path = f.temp("missing.mp4")
        let error = #expect(throws: FFmpegError.self) { try Demuxer(url: path) }
        #expect(error?.description == "cannot open '\(path)': No such file or directory")
        #expect(error?.code == -2)
    }

    @Test func randomBytes() throws {
        let f = try Fixtures.get()
        // Deterministic noise (an LCG): some random byte strings happen to probe as a real format
        // (h263, mp3 at a low score), so the test must not depend on the draw.
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        let garbage = Data((0..<200_000).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        })
        let path = f.temp("garbage.dat")
        try garbage.write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: FFmpegError.self) { try Demuxer(url: path) }
        #expect(error?.description.hasPrefix("cannot ") == true)
        #expect(error?.description.contains("'\(path)'") == true)
        #expect(error?.code == ShimConstants.averrorInvalidData)
        #expect(error?.description.contains("Invalid data found when processing input") == true)
        // The same through a pipe.
        let feed = try PipeFeed(path)
        defer { feed.finish() }
        let piped = #expect(throws: FFmpegError.self) { try Demuxer(url: feed.url) }
        #expect(piped?.description.hasPrefix("cannot open '\(feed.url)': Invalid data found when processing input") == true)
    }

    @Test func emptyInput() throws {
        let f = try Fixtures.get()
        let path = f.temp("empty.ts")
        try Data().write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: FFmpegError.self) { try Demuxer(url: path) }
        #expect(error?.description == "cannot open '\(path)': the input is empty (end of file before any data)")
        let handle = try #require(FileHandle(forReadingAtPath: "/dev/null"))  // `serve - < /dev/null`
        defer { try? handle.close() }
        let piped = #expect(throws: FFmpegError.self) { try Demuxer(url: "pipe:\(handle.fileDescriptor)") }
        #expect(piped?.description == "cannot open 'pipe:\(handle.fileDescriptor)': the input is empty (end of file before any data)")
    }

    @Test func truncatedMP4WithoutIndex() throws {
        let f = try Fixtures.get()
        let whole = try Data(contentsOf: URL(fileURLWithPath: f.mp4))  // moov at the end
        let path = f.temp("truncated_moov_end.mp4")
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: FFmpegError.self) { try Demuxer(url: path) }
        #expect(error?.description ==
            "cannot open '\(path)': Invalid data found when processing input (no usable MP4 index 'moov' found: the file is truncated or incomplete)")
    }

    @Test func truncatedFaststartMP4EndsEarlyWithoutCrashing() throws {
        let f = try Fixtures.get()
        let whole = try Data(contentsOf: URL(fileURLWithPath: f.faststart))
        let path = f.temp("truncated_faststart.mp4")
        try whole.prefix(whole.count * 6 / 10).write(to: URL(fileURLWithPath: path))
        let d = try Demuxer(url: path)
        var packets: [Packet] = []
        do {
            while let p = try d.read() { packets.append(p) }
        } catch let error as FFmpegError {
            #expect(error.description.hasPrefix("cannot read '\(path)': "))
        }
        let all = try ffprobePackets(f.faststart)
        #expect(packets.count > 0 && packets.count < all.count)
        // Only whole frames: the one the cut ends in (flagged corrupt, shorter than the index says) is dropped.
        #expect(packets.allSatisfy { !$0.isCorrupt })
        #expect(probeView(packets) == Array(all.prefix(packets.count)))
    }

    @Test func moovAtEndThroughAPipeIsExplained() throws {
        let f = try Fixtures.get()
        let feed = try PipeFeed(f.mp4)
        defer { feed.finish() }
        let error = #expect(throws: FFmpegError.self) { try Demuxer(url: feed.url) }
        let text = error?.description ?? ""
        #expect(text.hasPrefix("cannot open '\(feed.url)': this MP4 has its index (moov) at the end and cannot be read from a pipe"))
        #expect(text.contains("-movflags +faststart"))
        #expect(text.contains("MPEG-TS"))
        #expect(!text.contains("\n"))
    }

    @Test func unknownOptionAndFormatAreErrors() throws {
        let f = try Fixtures.get()
        let e1 = #expect(throws: FFmpegError.self) { try Demuxer(url: f.ts, options: .init(options: ["no_such_option": "1"])) }
        #expect(e1?.description == "cannot open '\(f.ts)': unknown input option 'no_such_option'")
        let e2 = #expect(throws: FFmpegError.self) { try Demuxer(url: f.ts, options: .init(format: "nosuchformat")) }
        #expect(e2?.description == "cannot open '\(f.ts)': unknown input format 'nosuchformat'")
    }

    @Test func rawVideoWithForcedFormat() throws {
        let f = try Fixtures.get()
        let path = f.temp("raw.yuv")
        try run("ffmpeg", ["-hide_banner", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=25",
                           "-frames:v", "10", "-pix_fmt", "yuv420p", "-f", "rawvideo", path])
        let d = try Demuxer(url: path, options: .init(format: "rawvideo",
                                                      options: ["video_size": "64x48", "pixel_format": "yuv420p", "framerate": "25"]))
        #expect(d.streams.count == 1)
        #expect(d.streams[0].codecName == "rawvideo" && d.streams[0].width == 64 && d.streams[0].frameRate == Rational(25, 1))
        let packets = try readAll(d)
        #expect(packets.count == 10)
        #expect(packets.allSatisfy { $0.data.count == 64 * 48 * 3 / 2 })
        #expect(packets.map(\.pts) == (0..<10).map { Int64($0) })
    }
}

/// `cat path` into a pipe whose read end the test hands to the demuxer as `pipe:N`.
/// Call `finish()` after the demuxer is gone: it closes the read end (unblocking `cat`) and reaps it.
final class PipeFeed {
    let process = Process()
    let pipe = Pipe()
    var fd: Int32 { pipe.fileHandleForReading.fileDescriptor }
    var url: String { "pipe:\(fd)" }

    init(_ path: String) throws {
        process.executableURL = URL(fileURLWithPath: "/bin/cat")
        process.arguments = [path]
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        try pipe.fileHandleForWriting.close()
    }

    func finish() {
        try? pipe.fileHandleForReading.close()
        process.waitUntilExit()
    }
}
