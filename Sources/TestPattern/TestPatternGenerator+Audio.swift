import MediaCore

/// The test pattern's sound: a tone with a beep at the start of each second, cut from one precomputed second.
extension TestPatternGenerator {
    /// `count` sample frames starting at absolute sample index `start` (`pts = start`, in `sampleRate` ticks).
    public func audioFrame(start: Int64, count: Int) -> RawAudioFrame {
        precondition(count >= 0, "audio frame sample count must not be negative")
        let channels = configuration.channelCount
        let rate = Int64(configuration.sampleRate)
        let samples = [Int16](unsafeUninitializedCapacity: count * channels) { buffer, written in
            secondOfAudio.withUnsafeBufferPointer { second in
                var position = Int(((start % rate) + rate) % rate)
                var out = 0
                for _ in 0..<count {
                    let v = second[position]
                    for c in 0..<channels { buffer[out + c] = v }
                    out += channels
                    position += 1
                    if position == second.count { position = 0 }
                }
            }
            written = count * channels
        }
        return RawAudioFrame(sampleRate: configuration.sampleRate, channelCount: channels, samples: samples, pts: start)
    }

    /// One second of the mono signal: the tone (periodic within a second, since its frequency is a whole
    /// number of Hz) plus the beep over the first `beepSampleCount` samples. The beep is sampled at the
    /// sample midpoints, `sin(2π f (n + ½) / rate)`, so its first sample (the onset) is already non-zero.
    static func makeSecondOfAudio(_ c: TestPatternConfiguration) -> [Int16] {
        let rate = c.sampleRate
        let tone = TestPatternConfiguration.toneFrequency, beep = TestPatternConfiguration.beepFrequency
        let beepCount = c.beepSampleCount
        return (0..<rate).map { n in
            var v = c.toneAmplitude * sinOfTurns(tone * n % rate, rate)
            if n < beepCount {
                v += c.beepAmplitude * sinOfTurns(beep * (2 * n + 1) % (2 * rate), 2 * rate)
            }
            return Int16(clamping: Int((v * 32767).rounded()))
        }
    }
}
