import Foundation
import MediaCore
import Testing
@testable import FFmpegBridge

/// Inputs for the ladder tests, generated on first use (only when these tests run).
struct LadderFixtures: Sendable {
    let dir: String
    /// 2 s 1280x720@30 H.264 (testsrc2: moving detail, so rate control has work to do).
    var clip720: String { dir + "/ladder_720p.mp4" }
    /// MPEG-TS whose H.264 changes size mid-stream: 1 s at 640x360, then 1 s at 320x240.
    var sizeChange: String { dir + "/size_change.ts" }

    static let shared: Result<LadderFixtures, any Error> = Result {
        let f = LadderFixtures(dir: try Fixtures.get().dir)
        let common = ["-hide_banner", "-nostdin", "-v", "error", "-y"]
        try run("ffmpeg", common + ["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30", "-t", "2",
                                    "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-pix_fmt", "yuv420p", f.clip720])
        var joined = Data()
        for (i, size) in ["640x360", "320x240"].enumerated() {
            let part = f.dir + "/size_change_\(i).ts"
            try run("ffmpeg", common + ["-f", "lavfi", "-i", "testsrc=size=\(size):rate=30", "-t", "1",
                                        "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-pix_fmt", "yuv420p",
                                        "-f", "mpegts", part])
            joined += try Data(contentsOf: URL(fileURLWithPath: part))
        }
        try joined.write(to: URL(fileURLWithPath: f.sizeChange))
        return f
    }

    static func get() throws -> LadderFixtures { try shared.get() }
}

/// Picture size from the first SPS of Annex-B H.264 (ITU-T H.264 §7.3.2.1.1, frame cropping §7.4.2.1.1).
/// Test-only and independent of the ISOBMFF parser; enough for x264's 4:2:0 8-bit output without scaling lists.
func spsSize(annexB data: [UInt8]) throws -> (width: Int, height: Int) {
    struct Bits {
        var bytes: [UInt8], bit = 0
        mutating func u(_ n: Int) throws -> Int {
            var v = 0
            for _ in 0..<n {
                guard bit < bytes.count * 8 else { throw ToolError(description: "SPS too short") }
                v = v << 1 | Int(bytes[bit >> 3] >> (7 - UInt8(bit & 7)) & 1)
                bit += 1
            }
            return v
        }
        mutating func ue() throws -> Int {
            var zeros = 0
            while try u(1) == 0 { zeros += 1 }
            return (1 << zeros) - 1 + (try u(zeros))
        }
    }
    // Find `00 00 01 67`, take the NAL up to the next start code, drop emulation prevention bytes.
    var start: Int?
    for i in 0..<(data.count - 3) where data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1 && data[i + 3] & 0x1F == 7 {
        start = i + 4
        break
    }
    guard let start else { throw ToolError(description: "no SPS") }
    var rbsp: [UInt8] = []
    var zeros = 0
    for b in data[start...] {
        if zeros >= 2 && b == 1 { break }
        if zeros >= 2 && b == 3 { zeros = 0; continue }
        rbsp.append(b)
        zeros = b == 0 ? zeros + 1 : 0
    }
    var r = Bits(bytes: rbsp)
    let profile = try r.u(8)
    _ = try r.u(16)                                   // constraint flags, level
    _ = try r.ue()                                    // seq_parameter_set_id
    if [100, 110, 122, 244, 44, 83, 86, 118, 128].contains(profile) {
        guard try r.ue() == 1 else { throw ToolError(description: "not 4:2:0") }
        _ = try r.ue(); _ = try r.ue()                // bit depths
        _ = try r.u(1)                                // qpprime_y_zero_transform_bypass_flag
        guard try r.u(1) == 0 else { throw ToolError(description: "scaling lists not handled") }
    }
    _ = try r.ue()                                    // log2_max_frame_num_minus4
    switch try r.ue() {                               // pic_order_cnt_type
    case 0: _ = try r.ue()
    case 1: throw ToolError(description: "pic_order_cnt_type 1 not handled")
    default: break
    }
    _ = try r.ue(); _ = try r.u(1)                    // max_num_ref_frames, gaps
    let mbsWide = try r.ue() + 1, mapUnitsHigh = try r.ue() + 1
    let frameMbsOnly = try r.u(1)
    if frameMbsOnly == 0 { _ = try r.u(1) }
    _ = try r.u(1)                                    // direct_8x8_inference_flag
    var crop = [0, 0, 0, 0]
    if try r.u(1) == 1 { crop = try (0..<4).map { _ in try r.ue() } }
    let frameFactor = 2 - frameMbsOnly
    return (mbsWide * 16 - 2 * (crop[0] + crop[1]), frameFactor * mapUnitsHigh * 16 - 2 * frameFactor * (crop[2] + crop[3]))
}

func meanAbsDiff(_ a: [UInt8], _ b: [UInt8]) -> Double {
    Double(zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(max(1, min(a.count, b.count)))
}

@Suite("Scaling for a bit-rate ladder", .timeLimit(.minutes(5)))
struct VideoScalerTests {
    static let rungs = [(854, 480), (640, 360), (426, 240)]

    @Test func oneDecodeFeedsThreeScaledEncodesWithIdenticalTimestampsAndKeyframes() throws {
        let clip = try LadderFixtures.get().clip720
        let d = try Demuxer(url: clip)
        let index = try #require(d.streams.first { $0.kind == .video }?.index)
        let decoder = try d.makeVideoDecoder(stream: index)
        // Rung 0 is the source size itself: the decoded frame goes to its encoder first, then to three scalers,
        // so the 720p encoder must leave it as it was (its scaler only passes it on: checked, not encoded).
        let sizes = [(1280, 720)] + Self.rungs
        let scalers = sizes.map { VideoScaler(width: $0.0, height: $0.1) }
        let encoders = try sizes.map { size in
            var o = VideoEncoderOptions(width: size.0, height: size.1, timeBase: Rational(1, 90_000),
                                        frameRate: Rational(30, 1), gopFrames: 300)
            o.bitRate = size.1 * 3000
            o.maxBitRate = o.bitRate! * 11 / 10
            o.bufferSize = o.maxBitRate
            return try VideoEncoder(o)
        }
        var packets = [[EncodedPacket]](repeating: [], count: sizes.count)
        var smallest: [RawVideoFrame] = []
        var count = 0
        func feed(_ frames: [VideoFrame]) throws {
            for frame in frames {
                let before = (pts: frame.frame.pointee.pts, type: frame.frame.pointee.pict_type,
                              key: frame.frame.pointee.key_frame, data: frame.frame.pointee.data.0)
                let pixels = count % 20 == 0 ? frame.raw() : nil
                let pts = Int64(count) * 3000
                let key = count % 30 == 0 || count == 47
                for r in sizes.indices {
                    let scaled = try scalers[r].scale(frame)
                    #expect(scaled.pts == frame.pts)
                    #expect(scaled.width == sizes[r].0 && scaled.height == sizes[r].1)
                    if r == 0 { #expect(scaled.frame.pointee.data.0 == frame.frame.pointee.data.0) }
                    packets[r] += try encoders[r].encode(r == 0 ? frame : scaled, pts: pts, forceKeyframe: key)
                    if r == sizes.count - 1, [0, 10, 59].contains(count) { smallest.append(scaled.raw()) }
                }
                // The caller's frame is as the decoder gave it.
                #expect(frame.frame.pointee.pts == before.pts)
                #expect(frame.frame.pointee.pict_type == before.type)
                #expect(frame.frame.pointee.key_frame == before.key)
                #expect(frame.frame.pointee.data.0 == before.data)
                if let pixels { #expect(planes(frame.raw()) == planes(pixels)) }
                count += 1
            }
        }
        while let p = try d.read() {
            if p.streamIndex == index { try feed(try decoder.decodeFrames(p)) }
        }
        try feed(try decoder.flushFrames())
        for r in sizes.indices { packets[r] += try encoders[r].flush() }

        #expect(count == 60)
        #expect(scalers[0].passedThrough == 60 && scalers[0].scaled == 0)
        #expect(scalers.dropFirst().allSatisfy { $0.scaled == 60 && $0.passedThrough == 0 })
        let expectedPTS = (0..<60).map { Int64($0) * 3000 }
        for r in sizes.indices {
            #expect(packets[r].map(\.pts) == expectedPTS, "rung \(sizes[r])")
            #expect(packets[r].filter(\.isKeyframe).map(\.pts) == [0, 90_000, 141_000], "rung \(sizes[r])")  // 0, 30, 47
            let size = try spsSize(annexB: encoders[r].extradata)
            #expect(size.width == sizes[r].0 && size.height == sizes[r].1)
            // FFmpeg reads each rung back at its size, every frame.
            let path = try LadderFixtures.get().dir + "/rung_\(sizes[r].1).h264"
            try Data(encoders[r].extradata + packets[r].flatMap(\.data)).write(to: URL(fileURLWithPath: path))
            let probe = try run("ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=width,height,nb_read_frames",
                                            "-of", "csv=p=0", path])
            #expect(probe.trimmingCharacters(in: .whitespacesAndNewlines) == "\(sizes[r].0),\(sizes[r].1),60")
        }
        // The pictures are the source's, scaled: close to what the ffmpeg CLI's scaler makes of the same frames.
        let reference = try LadderFixtures.get().dir + "/ladder_240.yuv"
        try run("ffmpeg", ["-hide_banner", "-nostdin", "-v", "error", "-y", "-i", clip, "-vf", "scale=426:240",
                           "-f", "rawvideo", "-pix_fmt", "yuv420p", reference])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: reference)))
        let frameBytes = 426 * 240 * 3 / 2
        #expect(bytes.count == 60 * frameBytes)
        for (i, n) in [0, 10, 59].enumerated() where bytes.count == 60 * frameBytes && i < smallest.count {
            let ours = planes(smallest[i])
            #expect(ours.count == frameBytes)
            #expect(meanAbsDiff(ours, Array(bytes[n * frameBytes..<(n + 1) * frameBytes])) < 1.5, "frame \(n)")
        }
    }

    @Test func sameSizeYUV420PIsPassedOnWithoutACopy() throws {
        let f = try Fixtures.get()
        let frames = try decodeAllVideoFrames(f.mpeg4)
        let scaler = VideoScaler(width: 320, height: 240)
        for frame in frames {
            let out = try scaler.scale(frame)
            #expect(out.frame.pointee.data.0 == frame.frame.pointee.data.0)
            #expect(out.frame.pointee.data.1 == frame.frame.pointee.data.1)
            #expect(out.frame != frame.frame)  // a frame of its own, referring to the same buffers
            #expect(out.pts == frame.pts)
        }
        #expect(scaler.passedThrough == 60 && scaler.scaled == 0)
        // Another size is a real conversion into a buffer of the scaler's own.
        let other = VideoScaler(width: 160, height: 120)
        let small = try other.scale(frames[0])
        #expect(small.frame.pointee.data.0 != frames[0].frame.pointee.data.0)
        #expect(other.scaled == 1 && other.passedThrough == 0)
    }

    @Test func outputFramesOwnTheirPictures() throws {
        let f = try Fixtures.get()
        let frames = try decodeAllVideoFrames(f.mpeg4)
        let scaler = VideoScaler(width: 160, height: 120)
        // Hold every output (as an encoder's lookahead would): later calls must not write into earlier frames.
        var kept: [(frame: VideoFrame, pixels: [UInt8])] = []
        for frame in frames {
            let out = try scaler.scale(frame)
            kept.append((out, planes(out.raw())))
        }
        #expect(Set(kept.map { UInt(bitPattern: $0.frame.frame.pointee.data.0) }).count == 60)
        #expect(kept.allSatisfy { planes($0.frame.raw()) == $0.pixels })
        #expect(Set(kept.map(\.pixels)).count > 50)  // the pattern moves: not all the same picture
        // Matches the decoder's own scaling path closely (it uses bilinear).
        let viaDecoder = try decodeAllVideo(f.mpeg4, output: .init(width: 160, height: 120))
        #expect(meanAbsDiff(kept[30].pixels, planes(viaDecoder[30])) < 3)
        // Released frames give their buffers back to the pool, and new frames are still right.
        kept.removeAll()
        let again = try scaler.scale(frames[5])
        #expect(meanAbsDiff(planes(again.raw()), planes(viaDecoder[5])) < 3)
    }

    @Test func inputSizeChangeMidStreamKeepsTheOutputSize() throws {
        let path = try LadderFixtures.get().sizeChange
        let frames = try decodeAllVideoFrames(path)
        let inputSizes = frames.map { "\($0.width)x\($0.height)" }
        #expect(Set(inputSizes) == ["640x360", "320x240"], "the decoder follows the new SPS")
        #expect(frames.count >= 58)
        let large = inputSizes.filter { $0 == "640x360" }.count

        let toSmall = VideoScaler(width: 320, height: 240)
        let toRung = VideoScaler(width: 426, height: 240)
        let encoder = try VideoEncoder(VideoEncoderOptions(width: 426, height: 240, timeBase: Rational(1, 90_000),
                                                           frameRate: Rational(30, 1), gopFrames: 30))
        var packets = 0
        for (i, frame) in frames.enumerated() {
            let a = try toSmall.scale(frame), b = try toRung.scale(frame)
            #expect(a.width == 320 && a.height == 240 && b.width == 426 && b.height == 240)
            packets += try encoder.encode(b, pts: Int64(i) * 3000, forceKeyframe: i % 30 == 0).count
        }
        packets += try encoder.flush().count
        #expect(packets == frames.count)
        #expect(toSmall.scaled == large && toSmall.passedThrough == frames.count - large)
        #expect(toRung.scaled == frames.count)
        // The last (320x240) frame, scaled back up, still shows the 320x240 picture (not a stale 640x360 one).
        let last = try #require(frames.last)
        let up = try VideoScaler(width: 640, height: 360).scale(last)
        let down = try VideoScaler(width: 320, height: 240).scale(up)
        #expect(meanAbsDiff(planes(down.raw()), planes(last.raw())) < 4)
    }
}
