import Foundation
import MediaCore
import Testing
@testable import TestPattern

@Suite struct TestPatternTests {
    static let clock = WallClock(millisecondsSince1970: 1_000_000_000_000)  // 2001-09-09 01:46:40.000 UTC

    // MARK: Picture

    @Test(arguments: [(1280, 720), (640, 360), (333, 201), (1920, 1080), (16, 16), (17, 23)])
    func planeSizes(size: (Int, Int)) {
        let (w, h) = size
        let gen = TestPatternGenerator(TestPatternConfiguration(width: w, height: h))
        let frame = gen.videoFrame(index: 7, wallClock: Self.clock)
        #expect(frame.width == w && frame.height == h)
        #expect(frame.y.count == w * h)
        #expect(frame.cb.count == ((w + 1) / 2) * ((h + 1) / 2))
        #expect(frame.cr.count == frame.cb.count)
        #expect(frame.pts == 7)
        // Every luma sample is in the limited (studio) range.
        #expect(frame.y.allSatisfy { (16...235).contains($0) })
        #expect(frame.cb.allSatisfy { (16...240).contains($0) } && frame.cr.allSatisfy { (16...240).contains($0) })
    }

    @Test func timeBaseAndPTS() {
        let gen30 = TestPatternGenerator(TestPatternConfiguration())
        #expect(gen30.videoTimeBase == Rational(1, 30))
        #expect(gen30.frameDuration == 1)
        #expect(gen30.videoFrame(index: 1234, wallClock: Self.clock).pts == 1234)
        let ntsc = TestPatternGenerator(TestPatternConfiguration(frameRate: Rational(30000, 1001)))
        #expect(ntsc.videoTimeBase == Rational(1, 30000))
        #expect(ntsc.frameDuration == 1001)
        #expect(ntsc.videoFrame(index: 3, wallClock: Self.clock).pts == 3003)
        let reduced = TestPatternGenerator(TestPatternConfiguration(frameRate: Rational(50, 2)))
        #expect(reduced.videoTimeBase == Rational(1, 25) && reduced.frameDuration == 1)
    }

    @Test func consecutiveFramesDifferInTheMovingBars() {
        let gen = TestPatternGenerator(TestPatternConfiguration())
        let w = 1280, bars = gen.layout.barsBottom
        func row(_ f: RawVideoFrame, _ y: Int) -> ArraySlice<UInt8> { f.y[(y * w)..<((y + 1) * w)] }
        var previous = gen.videoFrame(index: 0, wallClock: Self.clock)
        for i in 1...12 {
            let frame = gen.videoFrame(index: Int64(i), wallClock: Self.clock)
            for y in [0, bars / 2, bars - 1, gen.layout.panelTop - 1] {
                let changed = zip(row(previous, y), row(frame, y)).filter { $0 != $1 }.count
                // 7 bar edges per row move by 4 px: at least 7 * 4 changed pixels.
                #expect(changed >= 7 * 4, "frame \(i), row \(y): only \(changed) pixels changed")
            }
            #expect(row(frame, bars - 1) == row(frame, 0), "bar rows are identical")
            #expect(previous.cb[0..<(w / 2)] != frame.cb[0..<(w / 2)])
            previous = frame
        }
    }

    @Test func frameCounterRegionChanges() {
        let gen = TestPatternGenerator(TestPatternConfiguration())
        let f1 = gen.videoFrame(index: 1, wallClock: Self.clock)
        let f2 = gen.videoFrame(index: 2, wallClock: Self.clock)
        let box = gen.layout.frameCounter
        let r1 = region(f1, box), r2 = region(f2, box)
        let differing = zip(r1, r2).filter { $0 != $1 }.count
        #expect(differing > 100, "counter region should change between frames 1 and 2, \(differing) px did")
        // Text is really drawn there: white pixels on the dark panel.
        #expect(r1.filter { $0 == 235 }.count > 1000)
        // The digits "1" and "2" differ only in the last glyph cell: the "frame 00000" part is identical.
        let scale = gen.layout.frameCounter.height / 7
        let prefix = PixelRect(x: box.x, y: box.y, width: 11 * 6 * scale, height: box.height)
        #expect(region(f1, prefix) == region(f2, prefix))
    }

    @Test func clockTextFollowsWallClock() {
        func text(_ ms: Int64) -> (String, String) {
            let (d, t) = TestPatternGenerator.clockTexts(WallClock(millisecondsSince1970: ms))
            return (String(decoding: d, as: UTF8.self), String(decoding: t, as: UTF8.self))
        }
        #expect(text(0) == ("1970-01-01", "00:00:00.000 UTC"))
        #expect(text(-1) == ("1969-12-31", "23:59:59.999 UTC"))
        #expect(text(1_000_000_000_000) == ("2001-09-09", "01:46:40.000 UTC"))
        #expect(text(1_709_210_096_789) == ("2024-02-29", "12:34:56.789 UTC"))
        #expect(String(decoding: TestPatternGenerator.counterText(1234), as: UTF8.self) == "frame 001234")
        #expect(String(decoding: TestPatternGenerator.counterText(12_345_678), as: UTF8.self) == "frame 12345678")

        let gen = TestPatternGenerator(TestPatternConfiguration())
        let a = gen.videoFrame(index: 5, wallClock: WallClock(millisecondsSince1970: 1_000_000_000_000))
        let b = gen.videoFrame(index: 5, wallClock: WallClock(millisecondsSince1970: 1_000_000_000_001))
        #expect(region(a, gen.layout.clock) != region(b, gen.layout.clock))
        #expect(region(a, gen.layout.frameCounter) == region(b, gen.layout.frameCounter))
    }

    /// Independent of the generator's arithmetic: frame i spans [i·d/n, (i+1)·d/n) s, the beep of second s
    /// spans [s, s + 1/10) s; they overlap iff i·d/n < s + 1/10 and (i+1)·d/n > s.
    static func expectedFlash(_ i: Int64, num: Int64, den: Int64) -> Bool {
        (0...((i + 1) * den / num + 1)).contains { s in 10 * i * den < (10 * s + 1) * num && (i + 1) * den > s * num }
    }

    @Test(arguments: [(30, 1), (30000, 1001), (25, 1), (60, 1), (24000, 1001)])
    func flashBoxIsWhiteExactlyDuringTheBeep(rate: (Int32, Int32)) {
        let gen = TestPatternGenerator(TestPatternConfiguration(width: 640, height: 360,
                                                                frameRate: Rational(rate.0, rate.1)))
        var flashes = [Int64]()
        for i in Int64(0)..<Int64(200) {
            let frame = gen.videoFrame(index: i, wallClock: Self.clock)
            let box = region(frame, gen.layout.flashBox)
            let expected = Self.expectedFlash(i, num: Int64(rate.0), den: Int64(rate.1))
            #expect(gen.isFlashing(frameIndex: i) == expected, "frame \(i)")
            if expected {
                #expect(box.allSatisfy { $0 == 235 }, "frame \(i) should be white")
                flashes.append(i)
            } else {
                #expect(box.allSatisfy { $0 == 16 }, "frame \(i) should be black")
            }
        }
        if rate == (30, 1) {
            #expect(flashes == [0, 1, 2, 30, 31, 32, 60, 61, 62, 90, 91, 92, 120, 121, 122, 150, 151, 152, 180, 181, 182])
        }
        if rate == (30000, 1001) {
            // Frame 29 spans [0.9676, 1.0010) s: it overlaps the start of the second beep.
            #expect(flashes.prefix(7) == [0, 1, 2, 29, 30, 31, 32])
        }
    }

    @Test func syncCellMovesOncePerFrame() {
        let gen = TestPatternGenerator(TestPatternConfiguration())
        #expect((0..<30).map { gen.syncCell(frameIndex: Int64($0)) } == Array(0..<30))
        #expect(gen.syncCell(frameIndex: 30) == 0 && gen.syncCell(frameIndex: 61) == 1)
        let lit = TestPatternGenerator.cellRect(4, in: gen.layout)
        let frame4 = gen.videoFrame(index: 4, wallClock: Self.clock)
        let frame5 = gen.videoFrame(index: 5, wallClock: Self.clock)
        #expect(region(frame4, lit).allSatisfy { $0 == 235 })
        #expect(region(frame5, lit).allSatisfy { $0 != 235 })
    }

    @Test func deterministic() {
        let config = TestPatternConfiguration(width: 640, height: 360)
        let a = TestPatternGenerator(config), b = TestPatternGenerator(config)
        for i: Int64 in [0, 1, 29, 30, 999, 123_456] {
            let fa = a.videoFrame(index: i, wallClock: Self.clock), fb = b.videoFrame(index: i, wallClock: Self.clock)
            #expect(fa.y == fb.y && fa.cb == fb.cb && fa.cr == fb.cr && fa.pts == fb.pts)
            // Also the same generator asked twice.
            #expect(a.videoFrame(index: i, wallClock: Self.clock).y == fa.y)
        }
        for start: Int64 in [0, 47_000, 480_000_123] {
            #expect(a.audioFrame(start: start, count: 1024).samples == b.audioFrame(start: start, count: 1024).samples)
        }
    }

    // MARK: Audio

    @Test func audioShapeAndContinuity() {
        let gen = TestPatternGenerator(TestPatternConfiguration(channelCount: 2))
        let whole = gen.audioFrame(start: 40_000, count: 10_000)
        #expect(whole.pts == 40_000 && whole.sampleRate == 48_000 && whole.channelCount == 2)
        #expect(whole.frameCount == 10_000)
        // Chunked requests (AAC-sized 1024 frames) join seamlessly, across the second boundary too.
        var joined = [Int16]()
        var start: Int64 = 40_000
        while start < 50_000 {
            let n = Int(min(1024, 50_000 - start))
            joined += gen.audioFrame(start: start, count: n).samples
            start += Int64(n)
        }
        #expect(joined == whole.samples)
        // All channels carry the same signal.
        for i in stride(from: 0, to: whole.samples.count, by: 2) where whole.samples[i] != whole.samples[i + 1] {
            Issue.record("channels differ at frame \(i / 2)")
            break
        }
        let mono = TestPatternGenerator(TestPatternConfiguration(channelCount: 1)).audioFrame(start: 40_000, count: 10_000)
        #expect(mono.samples == stride(from: 0, to: whole.samples.count, by: 2).map { whole.samples[$0] })
        #expect(gen.audioFrame(start: 5, count: 0).samples.isEmpty)
    }

    @Test func beepIsMuchLouderThanTheToneBeforeIt() {
        let gen = TestPatternGenerator(TestPatternConfiguration())
        let rate = 48_000, window = rate / 10
        for second in 1...5 {
            let boundary = Int64(second * rate)
            let before = rms(gen.audioFrame(start: boundary - Int64(window), count: window))
            let after = rms(gen.audioFrame(start: boundary, count: window))
            let later = rms(gen.audioFrame(start: boundary + Int64(window), count: window))
            // Tone 0.1 FS peak -> RMS ~2317; beep 0.5 FS on top -> RMS ~11800.
            #expect(before > 2000 && before < 2600, "tone RMS \(before)")
            #expect(after > 4 * before, "second \(second): beep RMS \(after) vs tone \(before)")
            #expect(abs(later - before) < 50, "the beep is over after 100 ms")
        }
    }

    @Test func beepStartsExactlyAtEachWholeSecond() {
        for rate in [48_000, 44_100] {
            let full = TestPatternGenerator(TestPatternConfiguration(sampleRate: rate, channelCount: 1))
            let toneOnly = TestPatternGenerator(TestPatternConfiguration(sampleRate: rate, channelCount: 1,
                                                                         beepAmplitude: 0))
            let beepOnly = TestPatternGenerator(TestPatternConfiguration(sampleRate: rate, channelCount: 1,
                                                                         toneAmplitude: 0))
            let span = 3 * rate + 100
            let a = full.audioFrame(start: 0, count: span).samples
            let t = toneOnly.audioFrame(start: 0, count: span).samples
            let beep = zip(a, t).map { Int($0) - Int($1) }
            let beepSamples = beepOnly.audioFrame(start: 0, count: span).samples
            // The beep is present exactly on [s·rate, s·rate + rate/10) for each second s, with or without the
            // tone: first and last non-zero sample of each second (a sine can be exactly 0 inside the beep).
            for (name, signal) in [("beep - tone", beep), ("beep alone", beepSamples.map(Int.init))] {
                for s in 0...3 {
                    let window = max(0, s * rate - rate / 2)..<min(span, s * rate + rate / 2)
                    let on = window.filter { signal[$0] != 0 }
                    #expect(on.first == s * rate, "\(name), rate \(rate), second \(s): onset \(on.first ?? -1)")
                    if s < 3 {
                        #expect(on.last == s * rate + rate / 10 - 1,
                                "\(name), rate \(rate), second \(s): last beep sample \(on.last ?? -1)")
                    }
                }
            }
            for s in 1...3 {
                #expect(beepSamples[s * rate - 1] == 0 && abs(Int(beepSamples[s * rate])) > 500,
                        "onset of second \(s) at rate \(rate)")
            }
        }
    }

    // MARK: Speed

    @Test func rendersFastEnoughForLive() {
        let gen = TestPatternGenerator(TestPatternConfiguration())
        _ = gen.videoFrame(index: 0, wallClock: Self.clock)
        let frames = 90
        let clock = ContinuousClock()
        var checksum = 0
        let elapsed = clock.measure {
            for i in 1...frames {
                let f = gen.videoFrame(index: Int64(i), wallClock: WallClock(millisecondsSince1970: Int64(i) * 33))
                checksum &+= Int(f.y[i * 1000]) &+ Int(f.cb[i])
            }
        }
        let audioElapsed = clock.measure {
            for i in 0..<47 { checksum &+= Int(gen.audioFrame(start: Int64(i) * 1024, count: 1024).samples[7]) }
        }
        let perFrame = elapsed / frames
        let ms = Double(perFrame.components.attoseconds) / 1e15 + Double(perFrame.components.seconds) * 1000
        print("TestPattern: 1280x720 frame in \(String(format: "%.3f", ms)) ms (\(frames) frames, "
              + "checksum \(checksum)); 1 s of audio in \(audioElapsed)")
        #if DEBUG
        // Debug builds still have to keep up with 30 fps, with headroom for a loaded machine.
        #expect(ms < 20, "debug frame takes \(ms) ms")
        #else
        #expect(ms < 3, "release frame takes \(ms) ms")
        #endif
    }

    /// Set TESTPATTERN_DUMP=/some/dir to write raw yuv420p frames for a visual check
    /// (`ffmpeg -f rawvideo -pix_fmt yuv420p -s 1280x720 -i frame-0031.yuv frame.png`).
    @Test func dumpFramesWhenAsked() throws {
        guard let dir = ProcessInfo.processInfo.environment["TESTPATTERN_DUMP"] else { return }
        let gen = TestPatternGenerator(TestPatternConfiguration())
        for i: Int64 in [0, 31, 1234] {
            let f = gen.videoFrame(index: i, wallClock: WallClock(millisecondsSince1970: 1_763_785_226_000 + i * 33))
            let url = URL(fileURLWithPath: dir).appendingPathComponent(String(format: "frame-%04d.yuv", i))
            try Data(f.y + f.cb + f.cr).write(to: url)
        }
    }
}

private func region(_ frame: RawVideoFrame, _ r: PixelRect) -> [UInt8] {
    var out = [UInt8]()
    for y in r.y..<r.maxY { out += frame.y[(y * frame.width + r.x)..<(y * frame.width + r.maxX)] }
    return out
}

private func rms(_ frame: RawAudioFrame) -> Double {
    let sum = frame.samples.reduce(0.0) { $0 + Double($1) * Double($1) }
    return (sum / Double(max(frame.samples.count, 1))).squareRoot()
}
