import Foundation
import MediaCore
import Testing
@testable import FFmpegBridge

/// Decodes every frame of the first video stream, keeping the frames in FFmpeg memory.
func decodeAllVideoFrames(_ path: String, output: VideoOutputFormat = .init()) throws -> [VideoFrame] {
    let d = try Demuxer(url: path)
    let index = try #require(d.streams.first { $0.kind == .video }?.index)
    let decoder = try d.makeVideoDecoder(stream: index, output: output)
    var frames: [VideoFrame] = []
    while let p = try d.read() {
        if p.streamIndex == index { frames += try decoder.decodeFrames(p) }
    }
    frames += try decoder.flushFrames()
    return frames
}

@Suite("Frames kept in FFmpeg memory", .timeLimit(.minutes(3)))
struct VideoFrameTests {
    @Test func keptFramesMatchCopiedFrames() throws {
        let f = try Fixtures.get()
        // All frames are held at once: each must own its picture (the decoder's buffers are reused).
        let kept = try decodeAllVideoFrames(f.mpeg4)
        let copied = try decodeAllVideo(f.mpeg4)
        #expect(kept.count == 60)
        #expect(kept.map(\.pts) == (0..<60).map { Int64($0) })
        #expect(kept.allSatisfy { $0.width == 320 && $0.height == 240 })
        #expect(kept.map { planes($0.raw()) } == copied.map(planes))
        // No conversion when the decoder already gives yuv420p at the output size: the picture is the decoder's own.
        #expect(kept.allSatisfy { $0.frame.pointee.buf.0 != nil && $0.frame.pointee.format == 0 /* AV_PIX_FMT_YUV420P */ })
    }

    @Test func keptFramesAreScaledWhenAsked() throws {
        let f = try Fixtures.get()
        let kept = try decodeAllVideoFrames(f.mpeg4, output: .init(width: 160, height: 120))
        let copied = try decodeAllVideo(f.mpeg4, output: .init(width: 160, height: 120))
        #expect(kept.count == 60)
        #expect(kept.allSatisfy { $0.width == 160 && $0.height == 120 })
        #expect(kept.map { planes($0.raw()) } == copied.map(planes))
    }

    @Test func bFrameInputKeepsPresentationOrder() throws {
        let f = try Fixtures.get()
        let kept = try decodeAllVideoFrames(f.mp4)
        #expect(kept.map(\.pts) == (0..<60).map { Int64($0) * 512 })
    }

    @Test func keptFramesEncodeWithExactPTSAndForcedIDRs() throws {
        let f = try Fixtures.get()
        let frames = try decodeAllVideoFrames(f.mpeg4)
        var o = VideoEncoderOptions(width: 320, height: 240, timeBase: Rational(1, 90_000), frameRate: Rational(30, 1),
                                    gopFrames: 300)
        o.crf = 28
        let encoder = try VideoEncoder(o)
        var packets: [EncodedPacket] = []
        for (i, frame) in frames.enumerated() {
            packets += try encoder.encode(frame, pts: Int64(i) * 3000, forceKeyframe: i % 30 == 0 || i == 47)
        }
        packets += try encoder.flush()
        #expect(packets.count == 60)
        #expect(packets.filter(\.isKeyframe).map(\.pts) == [0, 90_000, 141_000])  // frames 0, 30, 47
        #expect(packets.map(\.pts) == (0..<60).map { Int64($0) * 3000 })  // zerolatency: no reordering
        #expect(packets.allSatisfy { $0.duration == 3000 && $0.pts == $0.dts })
        // An independent decoder agrees, and the pictures are the input's (not blank, not another frame).
        let path = f.temp("kept-forced.h264")
        try Data(encoder.extradata + packets.flatMap(\.data)).write(to: URL(fileURLWithPath: path))
        let text = try run("ffprobe", ["-v", "error", "-show_entries", "frame=key_frame", "-of", "csv=p=0", path])
        let rows = text.split(separator: "\n")
        #expect(rows.count == 60)
        #expect(rows.indices.filter { rows[$0].hasPrefix("1") } == [0, 30, 47])
        let decoded = try decodeAllVideo(path)
        let source = try decodeAllVideo(f.mpeg4)
        #expect(decoded.count == 60)
        func meanAbsDiff(_ a: [UInt8], _ b: [UInt8]) -> Double {
            Double(zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(a.count)
        }
        if decoded.count == 60 {
            #expect(meanAbsDiff(decoded[45].y, source[45].y) < 4)
            #expect(meanAbsDiff(decoded[45].y, source[15].y) > meanAbsDiff(decoded[45].y, source[45].y))
        }
    }

    @Test func encodingLeavesTheCallersFrameAsItWas() throws {
        let f = try Fixtures.get()
        let frames = try decodeAllVideoFrames(f.mp4)  // H.264: the decoder sets picture types I/P/B
        func make() throws -> VideoEncoder {
            try VideoEncoder(VideoEncoderOptions(width: 320, height: 240, timeBase: Rational(1, 90_000),
                                                 frameRate: Rational(30, 1), gopFrames: 300))
        }
        let a = try make(), b = try make()
        var packets: ([EncodedPacket], [EncodedPacket]) = ([], [])
        for (i, frame) in frames.enumerated() {
            let f = frame.frame.pointee
            let pixels = i % 15 == 0 ? planes(frame.raw()) : nil
            // The same frame to two encoders with different timestamps and keyframes.
            packets.0 += try a.encode(frame, pts: Int64(i) * 3000, forceKeyframe: i % 30 == 0)
            packets.1 += try b.encode(frame, pts: 1_000_000 + Int64(i) * 3000, forceKeyframe: i % 20 == 0)
            let g = frame.frame.pointee
            #expect(g.pts == f.pts && g.pict_type == f.pict_type && g.key_frame == f.key_frame)
            #expect(g.sample_aspect_ratio.num == f.sample_aspect_ratio.num && g.data.0 == f.data.0 && g.buf.0 == f.buf.0)
            if let pixels { #expect(planes(frame.raw()) == pixels) }
        }
        packets.0 += try a.flush()
        packets.1 += try b.flush()
        #expect(packets.0.filter(\.isKeyframe).map(\.pts) == [0, 90_000])
        #expect(packets.1.filter(\.isKeyframe).map(\.pts) == [1_000_000, 1_060_000, 1_120_000])
        #expect(packets.1.map(\.pts) == (0..<60).map { 1_000_000 + Int64($0) * 3000 })
    }

    @Test func vbvBufferDefaultsToOneSecondOfThePeakRate() throws {
        func vbv(_ bufferSize: Int?) throws -> (maxRate: Int, bufferSize: Int) {
            try VideoEncoder(VideoEncoderOptions(width: 320, height: 240, timeBase: Rational(1, 90_000), frameRate: Rational(30, 1),
                                                 bitRate: 800_000, maxBitRate: 880_000, bufferSize: bufferSize, gopFrames: 30)).vbv
        }
        #expect(try vbv(nil) == (880_000, 880_000))
        #expect(try vbv(1_760_000) == (880_000, 1_760_000))
    }

    @Test func encoderRejectsKeptFrameOfWrongSize() throws {
        let f = try Fixtures.get()
        let frames = try decodeAllVideoFrames(f.mpeg4, output: .init(width: 160, height: 120))
        let encoder = try VideoEncoder(VideoEncoderOptions(width: 320, height: 240, timeBase: Rational(1, 90_000),
                                                           frameRate: Rational(30, 1), gopFrames: 30))
        let first = try #require(frames.first)
        #expect(throws: FFmpegError.self) { try encoder.encode(first, pts: 0) }
    }
}
