public import MediaCore

/// What a stream carries (`AVMediaType`).
public enum StreamKind: Sendable, Hashable {
    case video, audio, subtitle, data, other
}

/// One input stream, as libavformat describes it after `avformat_find_stream_info`.
public struct StreamInfo: Sendable {
    public var index: Int
    public var kind: StreamKind
    /// `avcodec_get_name`: "h264", "aac", "hevc", "mpeg2video", "mp3", ...
    public var codecName: String
    /// The unit of every timestamp and duration of this stream's packets.
    public var timeBase: Rational
    /// Codec configuration as the container gives it (`avcC` from MP4, empty or Annex-B from MPEG-TS, ASC for AAC).
    public var extradata: [UInt8]
    public var width: Int
    public var height: Int
    /// Pixel aspect ratio; 1:1 when the container does not say.
    public var sampleAspectRatio: Rational
    /// `av_get_pix_fmt_name`, e.g. "yuv420p"; nil when unknown or not video.
    public var pixelFormat: String?
    /// `avg_frame_rate`, else `r_frame_rate`, if valid.
    public var frameRate: Rational?
    public var sampleRate: Int
    public var channelCount: Int
    /// Bits per second, 0 when unknown.
    public var bitRate: Int
    /// Codec profile (`FF_PROFILE_*`, e.g. 100 = H.264 High, 1 = AAC LC), -99 when unknown.
    public var profile: Int32
    /// Video only: the colour description the container or the bitstream's VUI gives (`color_primaries`,
    /// `color_trc`, `color_space`, `color_range`) and the stream's mastering display / content light level side
    /// data; nil when all three code points are unspecified.
    public var colour: ColourInfo?
    /// Video only: the container's Dolby Vision configuration record (`AV_PKT_DATA_DOVI_CONF`), if any.
    public var dolbyVision: DolbyVisionConfig?
    /// The stream's `language` metadata tag as the container gives it (ISO 639-2 in MP4 and Matroska: `eng`, `fre`),
    /// nil when absent.
    public var language: String?
    /// What the container says the stream is for (`AV_DISPOSITION_*`).
    public var disposition: StreamDisposition = []
    /// A subtitle stream of text (mov_text, subrip, ass, webvtt: `AV_CODEC_PROP_TEXT_SUB`), not of bitmaps.
    public var isTextSubtitle = false
    /// Ticks of `timeBase`.
    public var startTime: Int64?
    /// Ticks of `timeBase`.
    public var duration: Int64?

    public var isH264: Bool { codecName == "h264" }
    public var isAAC: Bool { codecName == "aac" }
    public var isHEVC: Bool { codecName == "hevc" }
    public var isMPEG2Video: Bool { codecName == "mpeg2video" }
    public var isAV1: Bool { codecName == "av1" }

    public init(index: Int, kind: StreamKind, codecName: String, timeBase: Rational, extradata: [UInt8] = [],
                width: Int = 0, height: Int = 0, sampleAspectRatio: Rational = Rational(1, 1), pixelFormat: String? = nil,
                frameRate: Rational? = nil, sampleRate: Int = 0, channelCount: Int = 0, bitRate: Int = 0,
                profile: Int32 = -99, colour: ColourInfo? = nil, startTime: Int64? = nil, duration: Int64? = nil) {
        self.index = index
        self.kind = kind
        self.codecName = codecName
        self.timeBase = timeBase
        self.extradata = extradata
        self.width = width
        self.height = height
        self.sampleAspectRatio = sampleAspectRatio
        self.pixelFormat = pixelFormat
        self.frameRate = frameRate
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitRate = bitRate
        self.profile = profile
        self.colour = colour
        self.startTime = startTime
        self.duration = duration
    }
}

/// A stream's disposition flags that say what it is for (libavformat's `AV_DISPOSITION_*`, from the container:
/// Matroska `FlagDefault`/`FlagCommentary`/`FlagVisualImpaired`, MP4 `tkhd` enabled and `kind` boxes).
public struct StreamDisposition: OptionSet, Sendable, Hashable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public static let `default` = StreamDisposition(rawValue: 1 << 0)
    public static let comment = StreamDisposition(rawValue: 1 << 3)
    /// `AV_DISPOSITION_FORCED`: subtitles shown whatever the viewer chose.
    public static let forced = StreamDisposition(rawValue: 1 << 6)
    public static let hearingImpaired = StreamDisposition(rawValue: 1 << 7)
    public static let visualImpaired = StreamDisposition(rawValue: 1 << 8)
}

/// One demuxed packet. Timestamps are exactly what the container gives, in ticks of the stream's `timeBase`.
public struct Packet: Sendable {
    public var streamIndex: Int
    /// The packet bytes: length-prefixed NAL units for H.264 from MP4, Annex-B for H.264 from MPEG-TS / raw,
    /// one raw AAC frame from MP4 (ADTS-stripped from MPEG-TS only if the container does so: check `codecName`/extradata).
    public var data: [UInt8]
    /// nil for `AV_NOPTS_VALUE`.
    public var pts: Int64?
    public var dts: Int64?
    /// 0 when unknown.
    public var duration: Int64
    public var isKeyframe: Bool
    public var isCorrupt: Bool
    /// `AV_PKT_DATA_NEW_EXTRADATA` side data, if any (e.g. new SPS/PPS mid-stream).
    public var newExtradata: [UInt8]?

    public init(streamIndex: Int, data: [UInt8], pts: Int64?, dts: Int64?, duration: Int64 = 0,
                isKeyframe: Bool = false, isCorrupt: Bool = false, newExtradata: [UInt8]? = nil) {
        self.streamIndex = streamIndex
        self.data = data
        self.pts = pts
        self.dts = dts
        self.duration = duration
        self.isKeyframe = isKeyframe
        self.isCorrupt = isCorrupt
        self.newExtradata = newExtradata
    }
}

/// How to open an input.
public struct InputOptions: Sendable {
    /// Force the input format, e.g. "rawvideo", "mpegts", "s16le", "h264", "mjpeg", "yuv4mpegpipe".
    public var format: String?
    /// Demuxer and protocol options, e.g. `video_size`, `pixel_format`, `framerate`, `sample_rate`, `ch_layout`,
    /// `rw_timeout`. An option nobody recognises is an error.
    public var options: [String: String]
    /// Bytes read to find the streams. Default: 1 MiB for pipes and live network inputs (fast startup), else FFmpeg's 5 MB.
    public var probeSize: Int?
    /// Microseconds of media read to find the streams. Default: 1 s for pipes and live inputs, else FFmpeg's 5 s.
    public var analyzeDuration: Int?
    /// The input arrives as it is produced (a network stream): it cannot seek, and is probed small. The caller decides
    /// (`InputKind`); a pipe's seekability is found out from the pipe itself.
    public var isLive: Bool

    public init(format: String? = nil, options: [String: String] = [:], probeSize: Int? = nil, analyzeDuration: Int? = nil,
                isLive: Bool = false) {
        self.format = format
        self.options = options
        self.probeSize = probeSize
        self.analyzeDuration = analyzeDuration
        self.isLive = isLive
    }
}

/// Decoded video is always converted to 8-bit yuv420p; nil keeps the input size (one nil keeps the aspect ratio).
public struct VideoOutputFormat: Sendable {
    public var width: Int?
    public var height: Int?
    public init(width: Int? = nil, height: Int? = nil) {
        self.width = width
        self.height = height
    }
}

/// Decoded audio is always converted to interleaved signed 16-bit at this rate and channel count.
public struct AudioOutputFormat: Sendable {
    public var sampleRate: Int
    public var channelCount: Int
    public init(sampleRate: Int = 48_000, channelCount: Int = 2) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }
}

/// One compressed packet from an encoder; timestamps in ticks of the encoder time base.
public struct EncodedPacket: Sendable {
    public var data: [UInt8]
    public var pts: Int64
    public var dts: Int64
    public var duration: Int64
    public var isKeyframe: Bool
    public init(data: [UInt8], pts: Int64, dts: Int64, duration: Int64, isKeyframe: Bool) {
        self.data = data
        self.pts = pts
        self.dts = dts
        self.duration = duration
        self.isKeyframe = isKeyframe
    }
}

/// libx264 / libx265 settings.
public struct VideoEncoderOptions: Sendable {
    /// The encoder (libx264 or libx265); the rest means the same for both.
    public var codec = VideoCodecName.h264
    public var width: Int
    public var height: Int
    /// The unit of the frames' `pts` and of the output packets' timestamps (e.g. 1/90000).
    public var timeBase: Rational
    public var frameRate: Rational
    public var preset = "veryfast"
    public var tune: String? = "zerolatency"
    /// Constant rate factor; if both `crf` and `bitRate` are nil, CRF 23.
    public var crf: Int?
    /// Average bits per second.
    public var bitRate: Int?
    /// VBV cap in bits per second.
    public var maxBitRate: Int?
    /// VBV buffer in bits (`rc_buffer_size`); nil: one second of `maxBitRate`. Used only with `maxBitRate`.
    public var bufferSize: Int?
    /// x264 keyint (and min-keyint); scene-cut detection is off, forced keyframes are IDRs. 1-`maxGOPFrames`.
    public var gopFrames: Int
    /// The encoder's own threads; 0: as many as the machine suits (x264: slices of each picture in parallel with
    /// `zerolatency`). A ladder's rungs, each encoding on a lane of its own (`RungLanes`), take 1: the rungs are the
    /// parallelism, without a wait between slices at every picture (measured: 6.1× real time and 1.69 cores against
    /// 5.5× and 1.62 for the 720/480/360 test-pattern ladder, `--no-realtime`).
    public var threads = 0
    /// Keyframes exactly where told (`forceKeyframe`), off the segment grid too: for AV1, libaom-av1 (realtime usage)
    /// instead of SVT-AV1, which keeps its fixed GOP. x264 and x265 always do.
    public var exactKeyframes = false
    /// The longest GOP an encoder is opened with (an hour at 60 fps).
    public static let maxGOPFrames = 216_000

    public init(width: Int, height: Int, timeBase: Rational, frameRate: Rational, preset: String = "veryfast",
                tune: String? = "zerolatency", crf: Int? = nil, bitRate: Int? = nil, maxBitRate: Int? = nil,
                bufferSize: Int? = nil, gopFrames: Int) {
        self.width = width
        self.height = height
        self.timeBase = timeBase
        self.frameRate = frameRate
        self.preset = preset
        self.tune = tune
        self.crf = crf
        self.bitRate = bitRate
        self.maxBitRate = maxBitRate
        self.bufferSize = bufferSize
        self.gopFrames = gopFrames
    }
}

/// Audio encoder settings: FFmpeg's AAC-LC (default), libopus or FFmpeg's AC-3.
public struct AudioEncoderOptions: Sendable {
    public var codec = AudioCodecName.aac
    public var sampleRate: Int
    public var channelCount: Int
    public var bitRate: Int = 128_000
    public init(sampleRate: Int, channelCount: Int, bitRate: Int = 128_000) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitRate = bitRate
    }
}
