import FFmpegBridge
import MediaCore
import Segmenter
import Testing
import TestSupport
@testable import Pipeline

/// Issue 26: an ordinary 30 fps H.264 stream in FFmpeg's time base 1/1200000 (average rate 1000000/33333) trapped in
/// the encoder's GOP arithmetic, `rescale(duration × fps.num, from: timescale, to: fps.den)`: 33.3 billion frames,
/// which no `Int32` holds. Every time base and frame rate libavformat can report now goes through the encode path
/// (libx264 for real), the copy path and the segmenter without a trap, and the cuts land where the rules say.
@Suite(.serialized) struct PipelineTimeBaseTests {
    /// The time bases and rates, paired as inputs come (a muxer's tick, the stream's rate), plus VFR.
    static let cases: [(timeBase: Rational, frameRate: Rational, vfr: Bool)] = [
        (Rational(1, 1_200_000), Rational(1_000_000, 33333), false),
        (Rational(1001, 30000), Rational(30000, 1001), false),
        (Rational(1, 90000), Rational(30000, 1001), false),
        (Rational(1, 1000), Rational(30, 1), false),
        (Rational(1, 25), Rational(25, 1), false),
        (Rational(1, 44100), Rational(2997, 100), false),
        (Rational(1, 48000), Rational(1_000_000, 33333), false),
        (Rational(1, 90000), Rational(60000, 1001), false),
        (Rational(1, 1000), Rational(1_000_000, 33333), true),
        (Rational(1, 15360), Rational(24000, 1001), true),
        (Rational(1, 1_200_000), Rational(2997, 100), true),
    ]

    /// Frame `k`'s timestamp in the time base: k / fps, rounded to a tick, with up to ±30% of a frame of jitter (VFR).
    static func timestamps(_ c: (timeBase: Rational, frameRate: Rational, vfr: Bool), seconds: Int64,
                           rng: inout SplitMix64) -> [Int64] {
        let frames = c.frameRate.frames(in: .seconds(seconds), rounding: .down)
        let den = Int64(c.frameRate.numerator) * Int64(c.timeBase.numerator)
        let frameTicks = MediaTime.scale(Int64(c.frameRate.denominator), by: Int64(c.timeBase.denominator), over: den)
        var out: [Int64] = []
        for k in 0..<frames {
            var t = MediaTime.scale(k * Int64(c.frameRate.denominator), by: Int64(c.timeBase.denominator), over: den)
            if c.vfr && k > 0 { t += Int64(rng.next() % UInt64(max(1, frameTicks * 6 / 10))) - frameTicks * 3 / 10 }
            if let last = out.last, t <= last { t = last + 1 }
            out.append(t)
        }
        return out
    }

    static func settings() -> VideoSettings {
        var s = VideoSettings()
        s.preset = "ultrafast"
        return s
    }

    @Test(arguments: cases.indices)
    func encodePathAndSegmenter(_ i: Int) throws {
        let c = Self.cases[i]
        var rng = SplitMix64(seed: UInt64(i) + 26)
        let timescale = outputTimescale(for: c.timeBase, minimum: 10_000, fallback: 90_000)
        let stage = try VideoEncodeStage(width: 64, height: 48, frameRate: c.frameRate, settings: Self.settings(),
                                         segmentDuration: .seconds(1), trackID: 1, timescale: timescale,
                                         startupKeyframe: MediaTime(value: 333, timescale: 1000))
        let input = Self.timestamps(c, seconds: 4, rng: &rng)
        var samples: [Sample] = []
        let plane = [UInt8](repeating: 128, count: 64 * 48)
        let chroma = [UInt8](repeating: 128, count: 32 * 24)
        for (k, t) in input.enumerated() {
            var y = plane
            y[k % y.count] = 255
            let frame = RawVideoFrame(width: 64, height: 48, y: y, cb: chroma, cr: chroma,
                                      pts: MediaTime.rescale(t, timeBase: c.timeBase, to: timescale))
            samples += try stage.encode(frame)
        }
        samples += try stage.flush()
        #expect(samples.count == input.count, "\(c): every frame comes out once")
        #expect(zip(samples, samples.dropFirst()).allSatisfy { $0.dts < $1.dts }, "\(c): decode times increase")
        #expect(samples.first?.isSync == true)
        // Keyframes: the first frame, the startup one a part in, then the frame nearest each second.
        let half = c.frameRate.frameDuration(timescale: timescale) / 2
        let first = samples[0].pts
        let keys = samples.filter(\.isSync).map(\.pts)
        for (n, key) in keys.enumerated() where n >= 2 {
            let grid = first + Int64(n - 1) * Int64(timescale)
            #expect(key + half >= grid && key - grid < 3 * half + 2 * (c.vfr ? half : 0) + 1, "\(c): keyframe \(key) for grid \(grid)")
        }
        #expect(keys.count >= 4, "\(c): keyframes \(keys)")

        var seg = try Segmenter(tracks: [try #require(stage.format)], segmentDuration: .seconds(1),
                                fragmentDuration: MediaTime(value: 333, timescale: 1000))
        var segments: [Segment] = []
        for s in samples { segments += try seg.append(s, track: 0) }
        segments += try seg.finish()
        try Self.checkTimeline(segments, "\(c)")
        // Segments after the short first one last a second (within a frame or two of jitter), never two.
        for s in segments.dropFirst().dropLast() {
            #expect(s.duration < MediaTime.seconds(1, timescale: timescale) + MediaTime(value: 4 * half + 1, timescale: timescale), "\(c): \(s.duration)")
        }
    }

    /// The copy path: samples in the input's time base become the output timescale's ticks, and the segmenter cuts them.
    @Test(arguments: cases.indices)
    func copyPathAndSegmenter(_ i: Int) throws {
        let c = Self.cases[i]
        var rng = SplitMix64(seed: UInt64(i) + 1200)
        let source = try VideoEncodeStage(width: 64, height: 48, frameRate: c.frameRate, settings: Self.settings(),
                                          segmentDuration: .seconds(1), trackID: 1)
        let input = Self.timestamps(c, seconds: 3, rng: &rng)
        let chroma = [UInt8](repeating: 100, count: 32 * 24)
        var packets: [Packet] = []
        for (k, t) in input.enumerated() {
            let frame = RawVideoFrame(width: 64, height: 48, y: [UInt8](repeating: UInt8(k & 0xFF), count: 64 * 48),
                                      cb: chroma, cr: chroma, pts: MediaTime.rescale(t, timeBase: c.timeBase, to: source.timescale))
            for s in try source.encode(frame) {
                packets.append(Packet(streamIndex: 0, data: s.data, pts: t, dts: t, duration: 0, isKeyframe: s.isSync))
            }
        }
        let stream = StreamInfo(index: 0, kind: .video, codecName: "h264", timeBase: c.timeBase,
                                extradata: source.encoder.extradata, width: 64, height: 48, frameRate: c.frameRate)
        let copy = try VideoCopyProcessor<H264Copy>(stream: stream, trackID: 1)
        let samples = try packets.flatMap { try copy.samples(for: $0) }
        let format = try #require(copy.format)
        var seg = try Segmenter(tracks: [format], segmentDuration: .seconds(1))
        var segments: [Segment] = []
        for s in samples { segments += try seg.append(s, track: 0) }
        segments += try seg.finish()
        try Self.checkTimeline(segments, "\(c)")
        #expect(segments.reduce(0) { $0 + $1.trackSampleCounts[0] } == samples.count)
    }

    /// Audio in odd time bases (a Matroska 1/1000, a TS 1/90000, a WAV 1/44100): AAC frames keep exact 1024-sample
    /// steps where the input's stamps agree within half a frame.
    @Test func aacCopyInOddTimeBases() throws {
        for tb in [Rational(1, 1000), Rational(1, 90000), Rational(1, 44100), Rational(1, 1_200_000), Rational(1001, 30000)] {
            let stream = StreamInfo(index: 1, kind: .audio, codecName: "aac", timeBase: tb, extradata: [0x12, 0x10],
                                    sampleRate: 44100, channelCount: 2)
            let copy = try AACCopyProcessor(stream: stream, trackID: 2)
            var samples: [Sample] = []
            for k in 0..<200 {
                let t = MediaTime.scale(Int64(k) * 1024, by: Int64(tb.denominator), over: 44100 * Int64(tb.numerator))
                samples += try copy.samples(for: Packet(streamIndex: 1, data: [0x21, 0x10, 0x05], pts: t, dts: t))
            }
            #expect(samples.map(\.dts) == (0..<200).map { Int64($0) * 1024 }, "\(tb)")
        }
    }

    /// tfdt[n+1] == tfdt[n] + Σ duration[n], every segment starts with a sync sample, no duration is zero.
    static func checkTimeline(_ segments: [Segment], _ label: String) throws {
        #expect(segments.count >= 2, "\(label): \(segments.count) segments")
        for (a, b) in zip(segments, segments.dropFirst()) {
            #expect(a.startTime + a.duration == b.startTime, "\(label): segment \(b.sequence) starts at \(b.startTime), expected \(a.startTime + a.duration)")
        }
        for s in segments {
            #expect(s.startsWithSyncSample && s.duration.value > 0, "\(label): segment \(s.sequence)")
        }
    }
}
