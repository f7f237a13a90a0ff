import Foundation
import MediaCore
import Testing
@testable import FFmpegBridge

/// Throughput checks, opt-in (`FFBRIDGE_BENCH=1`) because timings on a shared 2-core machine are noisy.
/// Measured in release on the project machine (load ~6): 720p30 raw pipe -> libx264 veryfast/zerolatency at
/// 2.6x real time; a read loop over a 10-minute 720p H.264+AAC MP4 (574 MB, 46k packets) in 0.17 s.
@Suite("Benchmarks", .enabled(if: ProcessInfo.processInfo.environment["FFBRIDGE_BENCH"] != nil), .timeLimit(.minutes(3)))
struct BenchmarkTests {
    @Test func rawPipeTo720pH264IsFasterThanRealTime() throws {
        let seconds = 10
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-hide_banner", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30",
                             "-t", "\(seconds)", "-pix_fmt", "yuv420p", "-f", "rawvideo", "pipe:1"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        try pipe.fileHandleForWriting.close()
        defer { try? pipe.fileHandleForReading.close(); process.waitUntilExit() }
        let start = ContinuousClock.now
        var frames = 0
        try withExtendedLifetime(try Demuxer(url: "pipe:\(pipe.fileHandleForReading.fileDescriptor)",
                                             options: .init(format: "rawvideo", options: [
                                                 "video_size": "1280x720", "pixel_format": "yuv420p", "framerate": "30"]))) { d in
            let decoder = try d.makeVideoDecoder(stream: 0)
            let encoder = try VideoEncoder(VideoEncoderOptions(width: 1280, height: 720, timeBase: Rational(1, 90_000),
                                                               frameRate: Rational(30, 1), gopFrames: 30))
            var packets = 0
            while let p = try d.read() {
                for var f in try decoder.decode(p) {
                    f.pts = Int64(frames) * 3000
                    packets += try encoder.encode(f, forceKeyframe: frames % 30 == 0).count
                    frames += 1
                }
            }
            packets += try encoder.flush().count
            #expect(packets == frames)
        }
        let elapsed = ContinuousClock.now - start
        #expect(frames == seconds * 30)
        #expect(elapsed < .seconds(seconds), "took \(elapsed) for \(seconds) s of video")
    }

    /// Per-frame cost of a ladder's pieces: libswscale 720p -> 480p/360p (bilinear, bicubic) and libx264
    /// veryfast/zerolatency at 720p/480p/360p (each encoder alone, automatic threads). Prints a table.
    /// Project machine, load ~11 on 2 cores: scale to 480p 0.8–1.0 ms (both filters), to 360p 0.47 ms bilinear,
    /// 0.6–0.75 ms bicubic; encode 720p 7.1 ms, 480p 3.3 ms, 360p 2.0 ms (testsrc2: easy content, 80% skip blocks).
    @Test func ladderScaleAndEncodeCostPerFrame() throws {
        FFmpegLibrary.setLogLevel(.error)
        let frames = try decodeAllVideoFrames(try LadderFixtures.get().clip720)
        #expect(frames.count == 60 && frames[0].width == 1280)
        func perFrame(_ n: Int, _ body: () throws -> Void) rethrows -> Double {
            let start = ContinuousClock.now
            try body()
            let d = (ContinuousClock.now - start).components
            return (Double(d.seconds) * 1e3 + Double(d.attoseconds) / 1e15) / Double(n)
        }
        var lines: [String] = []
        for (w, h) in [(854, 480), (640, 360)] {
            for filter in [VideoScaler.Filter.bilinear, .bicubic] {
                let scaler = VideoScaler(width: w, height: h, filter: filter)
                _ = try scaler.scale(frames[0])  // context and pool set up outside the timing
                let rounds = 5
                let ms = try perFrame(rounds * frames.count) {
                    for _ in 0..<rounds { for f in frames { _ = try scaler.scale(f) } }
                }
                lines.append("sws_scale 1280x720 -> \(w)x\(h) \(filter): " + String(format: "%.3f", ms) + " ms/frame")
            }
        }
        for (w, h, rate) in [(1280, 720, 2_800_000), (854, 480, 1_400_000), (640, 360, 800_000)] {
            let scaler = VideoScaler(width: w, height: h)
            let input = try frames.map { try scaler.scale($0) }
            var o = VideoEncoderOptions(width: w, height: h, timeBase: Rational(1, 90_000), frameRate: Rational(30, 1), gopFrames: 30)
            o.bitRate = rate
            o.maxBitRate = rate * 11 / 10
            o.bufferSize = o.maxBitRate
            let encoder = try VideoEncoder(o)
            let rounds = 3
            var packets = 0
            let ms = try perFrame(rounds * input.count) {
                for round in 0..<rounds {
                    for (i, f) in input.enumerated() {
                        let n = round * input.count + i
                        packets += try encoder.encode(f, pts: Int64(n) * 3000, forceKeyframe: n % 30 == 0).count
                    }
                }
                packets += try encoder.flush().count
            }
            #expect(packets == rounds * input.count)
            lines.append("libx264 veryfast/zerolatency \(w)x\(h) @ \(rate / 1000)k: " + String(format: "%.2f", ms) + " ms/frame")
        }
        print(lines.joined(separator: "\n"))
    }
}
