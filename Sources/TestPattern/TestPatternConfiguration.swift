import MediaCore

/// What the built-in test pattern produces: picture size and rate, audio rate and layout, tone levels.
///
/// Values are checked by `TestPatternGenerator.init` with `precondition` (they come from validated
/// command-line flags, not from media input): sizes >= 16, a valid frame rate, sample rate >= 1000,
/// 1...8 channels, amplitudes in 0...1 with `toneAmplitude + beepAmplitude <= 1`.
public struct TestPatternConfiguration: Sendable, Hashable {
    public var width = 1280
    public var height = 720
    public var frameRate = Rational(30, 1)
    public var sampleRate = 48_000
    public var channelCount = 2
    /// Peak amplitude of the continuous 440 Hz tone, as a fraction of full scale (0.1 = -20 dBFS).
    public var toneAmplitude = 0.1
    /// Peak amplitude of the 1 kHz beep at each whole second, as a fraction of full scale (0.5 = -6 dBFS).
    public var beepAmplitude = 0.5

    public init(width: Int = 1280, height: Int = 720, frameRate: Rational = Rational(30, 1),
                sampleRate: Int = 48_000, channelCount: Int = 2,
                toneAmplitude: Double = 0.1, beepAmplitude: Double = 0.5) {
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.toneAmplitude = toneAmplitude
        self.beepAmplitude = beepAmplitude
    }

    /// Frequency of the continuous tone, Hz.
    public static let toneFrequency = 440
    /// Frequency of the beep, Hz.
    public static let beepFrequency = 1_000
    /// The beep lasts one tenth of a second (rounded down to whole samples).
    public var beepSampleCount: Int { sampleRate / 10 }
}
