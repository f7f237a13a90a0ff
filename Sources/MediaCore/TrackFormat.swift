/// What one output track carries, enough to write its sample entry and its `CODECS` string.
public struct TrackFormat: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case video
        case audio
    }

    public enum Codec: Sendable, Hashable {
        /// H.264: `avcC` is the AVCDecoderConfigurationRecord (ISO/IEC 14496-15 §5.3.3.1), not Annex-B.
        case h264(avcC: [UInt8])
        /// AAC: the AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1).
        case aac(audioSpecificConfig: [UInt8])
        /// H.265: `hvcC` is the HEVCDecoderConfigurationRecord (ISO/IEC 14496-15 §8.3.3.1), carrying every
        /// parameter set (`hvc1`: none in the samples).
        case hevc(hvcC: [UInt8])
        /// AV1: `av1C` is the AV1CodecConfigurationRecord (AV1-ISOBMFF §2.3.3) with its sequence header OBU.
        case av1(av1C: [UInt8])
        /// Opus: the OpusHead fields of its `dOps` ("Encapsulation of Opus in ISO Base Media File Format" §4.3.2).
        case opus(OpusConfig)
        /// AC-3: the `dac3` fields (ETSI TS 102 366 Annex F.4).
        case ac3(AC3Config)
        /// E-AC-3: the `dec3` fields (ETSI TS 102 366 Annex F.6).
        case eac3(EAC3Config)
        /// FLAC: the metadata blocks of its `dfLa` ("Encapsulation of FLAC in ISO Base Media File Format" §3.3.2).
        case flac(FLACConfig)
    }

    /// `track_ID` in `tkhd`/`tfhd`/`trex`: 1-based.
    public var trackID: UInt32
    public var kind: Kind
    /// Ticks per second of every timestamp and duration of this track (the stream time base).
    public var timescale: Int32
    public var codec: Codec
    /// Video only: coded picture size in pixels (display size when `sampleAspectRatio` is square).
    public var width: Int
    public var height: Int
    /// Video only: pixel aspect ratio (1:1 when unknown).
    public var sampleAspectRatio: Rational
    /// Audio only.
    public var sampleRate: Int
    public var channelCount: Int
    /// ISO-639-2/T language code for `mdhd`.
    public var language: String
    /// Video only: the colour description (`colr`, `mdcv`, `clli`; HLS `VIDEO-RANGE`), when the input gives one.
    public var colour: ColourInfo?
    /// H.265 only: the input's Dolby Vision configuration (a `dvvC` box; HLS `SUPPLEMENTAL-CODECS`).
    public var dolbyVision: DolbyVisionConfig?
    /// Video only: the closed-caption services its pictures carry (A/53 `cc_data` in the SEI), as the output signals
    /// them (HLS `CLOSED-CAPTIONS`, DASH `Accessibility`); empty: none. Not part of the sample entry.
    public var captions: [CaptionService] = []

    public init(trackID: UInt32, kind: Kind, timescale: Int32, codec: Codec,
                width: Int = 0, height: Int = 0, sampleAspectRatio: Rational = Rational(1, 1),
                sampleRate: Int = 0, channelCount: Int = 0, language: String = "und", colour: ColourInfo? = nil) {
        self.trackID = trackID
        self.kind = kind
        self.timescale = timescale
        self.codec = codec
        self.width = width
        self.height = height
        self.sampleAspectRatio = sampleAspectRatio
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.language = language
        self.colour = colour
    }

    /// RFC 6381 codec string for the HLS `CODECS` attribute, derived from the configuration bytes:
    /// `avc1.PPCCLL` from the `avcC` profile/compatibility/level bytes, `mp4a.40.N` from the AAC object type,
    /// `hvc1.…` and `av01.…` from their records (`VideoCodecStrings`);
    /// `opus` (lower case, what MSE and hls.js match), `ac-3`, `ec-3` (the sample entries' four-character codes,
    /// ETSI TS 102 366 Annex F, as Apple's HLS authoring specification lists them), `fLaC` (the FLAC sample entry's
    /// code, RFC 6381 §3.3 for a sample entry without a codec-specific string; hls.js maps any case of it to what the
    /// browser's MSE takes). DASH says `flac`: `dashCodecString`.
    public var codecString: String {
        switch codec {
        case .h264(let avcC):
            guard avcC.count >= 4 else { return "avc1" }
            return "avc1." + avcC[1...3].map { hex2($0) }.joined()
        case .aac(let asc):
            guard let first = asc.first else { return "mp4a.40.2" }
            var objectType = Int(first >> 3)
            if objectType == 31, asc.count >= 2 {  // escape: 6 more bits
                objectType = 32 + Int((first & 0x07) << 3 | asc[1] >> 5)
            }
            return "mp4a.40.\(objectType)"
        case .hevc(let hvcC):
            return VideoCodecStrings.hevc(hvcC: hvcC)
        case .av1(let av1C):
            return VideoCodecStrings.av1(av1C: av1C, colour: colour)
        case .opus: return "opus"
        case .ac3: return "ac-3"
        case .eac3: return "ec-3"
        case .flac: return "fLaC"
        }
    }

    /// The DASH `@codecs` string (ISO/IEC 23009-1 §5.3.7.2, the MSE type a DASH player asks the browser about):
    /// `codecString`, but `flac` for FLAC, the string Chromium's and Firefox's MSE and shaka-packager's manifests use
    /// (HLS keeps the sample entry's `fLaC`, which hls.js rewrites itself).
    public var dashCodecString: String {
        if case .flac = codec { return "flac" }
        return codecString
    }

    /// Audio: the longest frame the codec makes, in track ticks (the sample rate): 1024 for AAC, 1536 for AC-3 and
    /// E-AC-3 (six blocks of 256), 2880 for Opus (a 60 ms frame at 48 kHz; packets vary, RFC 6716 §2.1.4), STREAMINFO's
    /// maximum block size for FLAC (4096 or 4608 from common encoders, at most 65535). Nil for video.
    public var longestAudioFrame: Int64? {
        switch codec {
        case .aac: 1024
        case .ac3, .eac3: 1536
        case .opus: 2880
        case .flac(let c): Int64(max(c.maximumBlockSize, 16))
        default: nil
        }
    }

    /// The HLS `CHANNELS` attribute (RFC 8216bis §4.4.6.1): the channel count, or `16/JOC` for E-AC-3 with Joint
    /// Object Coding (Dolby Atmos), as Apple's HLS authoring specification writes it.
    public var hlsChannels: String {
        if case .eac3(let c) = codec, c.jocComplexityIndex != nil { return "16/JOC" }
        return String(channelCount)
    }
}

@inline(__always) func hex2(_ b: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(b >> 4)], digits[Int(b & 0xF)]])
}
