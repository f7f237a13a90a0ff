import MediaCore
import MediaPresentation
import Producer

/// One rendition of an adaptive-bit-rate ladder: either the input video copied as it is (`source`) or one
/// libx264 encode at `width`×`height` (square pixels, the source's display aspect ratio).
public struct LadderRung: Sendable, Equatable, CustomStringConvertible {
    /// "720p", or "source".
    public var name: String
    public var width: Int
    public var height: Int
    /// Average bits per second: the encoder's target; for `source` the input's rate when known (nil otherwise).
    public var bitRate: Int?
    /// VBV peak in bits per second (`VideoEncoderOptions.maxBitRate`): `bitRate × 1.1`; nil for `source`.
    public var maxBitRate: Int?
    /// VBV buffer in bits (`VideoEncoderOptions.bufferSize`): one segment at `maxBitRate`; nil for `source`.
    public var bufferSize: Int?
    public var isSource: Bool
    /// What an encoded rung is encoded to (a `source` rung keeps the input's codec; this is then unused).
    public var codec: VideoCodecName

    public init(name: String, width: Int, height: Int, bitRate: Int?, maxBitRate: Int?, bufferSize: Int?, isSource: Bool,
                codec: VideoCodecName = .h264) {
        self.name = name
        self.width = width
        self.height = height
        self.bitRate = bitRate
        self.maxBitRate = maxBitRate
        self.bufferSize = bufferSize
        self.isSource = isSource
        self.codec = codec
    }

    public var description: String {
        let rate = bitRate.map { " \(Ladder.formatRate($0))" } ?? ""
        let codecText = codec == .h264 ? "" : " \(codec)"
        return isSource ? "source \(width)x\(height)\(rate) (copied)" : "\(name) \(width)x\(height)\(rate)\(codecText)"
    }
}

/// Planning of a `--ladder` against the source (pure: no FFmpeg types); its parser is MediaCore's.
extension Ladder {
    /// `maxBitRate = bitRate × 11 / 10`: the peak stays within 10% of the target over a segment.
    public static let peakPercent = 110

    /// Default rates in bits per second, by height, for pictures of any aspect ratio (the values suit 16:9).
    public static let defaultBitRates: [(height: Int, bitRate: Int)] = [
        (2160, 12_000_000), (1440, 8_000_000), (1080, 5_000_000), (720, 2_800_000), (540, 2_000_000),
        (480, 1_400_000), (360, 800_000), (240, 400_000), (144, 200_000),
    ]

    /// The table's rate for a height in it; for any other height, the nearest entry's rate (the lower entry
    /// on a tie) scaled by the pixel count at the same aspect ratio, `(height / entry)²`, rounded to 1 kbit/s.
    /// E.g. 600 → 540's 2000k × (600/540)² = 2469k. (Near the midpoint between two entries this is not
    /// monotonic — 630 → 2722k, 631 → 2150k — because the table gives smaller pictures more bits per pixel.)
    public static func defaultBitRate(height: Int) -> Int {
        precondition(height > 0, "height must be positive")
        let nearest = defaultBitRates.min { a, b in
            let da = abs(a.height - height), db = abs(b.height - height)
            return da != db ? da < db : a.height < b.height
        }!
        if nearest.height == height { return nearest.bitRate }
        // rate × h² / e², rounded to whole kbit/s (Int64 is ample: 12e6 × 4320² ≈ 2.2e14).
        let scaled = Int64(nearest.bitRate) * Int64(height) * Int64(height)
        let e2 = Int64(nearest.height) * Int64(nearest.height) * 1000
        return Int((scaled + e2 / 2) / e2) * 1000
    }

    /// Parses and plans in one step.
    public static func plan(_ value: String, sourceWidth: Int, sourceHeight: Int, sourceSampleAspectRatio: Rational,
                            sourceCopyable: Bool, sourceBitRate: Int?, segmentDuration: MediaTime = .seconds(1),
                            codec: VideoCodecName = .h264)
        throws(LadderError) -> (rungs: [LadderRung], notices: [String]) {
        try plan(try parse(value), sourceWidth: sourceWidth, sourceHeight: sourceHeight,
                 sourceSampleAspectRatio: sourceSampleAspectRatio, sourceCopyable: sourceCopyable,
                 sourceBitRate: sourceBitRate, segmentDuration: segmentDuration, codec: codec)
    }

    /// The rungs to produce from this source, highest first (`source` before all), and notices for the log.
    ///
    /// - Width: `height × display aspect ratio` (`sourceWidth × SAR / sourceHeight`; SAR 1:1 when invalid),
    ///   rounded to the nearest even number. An odd height is rounded down to even (4:2:0), with a notice.
    /// - A rung taller than the source is dropped (one notice names them all); one as tall as the source is
    ///   encoded. Nothing left, a duplicate height, or `source` without H.264 input is an error.
    /// - Rate control: `maxBitRate = bitRate × 1.1`, `bufferSize = maxBitRate × segmentDuration`, so a
    ///   segment's size stays near the target while a 1-second IDR still gets its bits.
    /// - Codec: the rung's own (`1080:hevc`), else `codec` (the stream's `--video-codec`). A rung encoded to anything
    ///   but H.264 is named with it (`1080p-hevc`), so one height can be offered in two codecs.
    public static func plan(_ requests: [LadderRequest], sourceWidth: Int, sourceHeight: Int,
                            sourceSampleAspectRatio: Rational, sourceCopyable: Bool, sourceBitRate: Int?,
                            segmentDuration: MediaTime = .seconds(1), codec defaultCodec: VideoCodecName = .h264)
        throws(LadderError) -> (rungs: [LadderRung], notices: [String]) {
        guard !requests.isEmpty else { throw .empty }
        guard sourceWidth > 0, sourceHeight > 0 else { throw .invalidSource(width: sourceWidth, height: sourceHeight) }
        let sar = sourceSampleAspectRatio.isValid ? sourceSampleAspectRatio : Rational(1, 1)
        var source: LadderRung?
        var encoded: [LadderRung] = []
        var seen: Set<String> = []
        var dropped: [Int] = []
        var notices: [String] = []
        for request in requests {
            switch request {
            case .source:
                guard source == nil else { throw .duplicateSource }
                guard sourceCopyable else { throw .sourceNotCopyable }
                source = LadderRung(name: "source", width: sourceWidth, height: sourceHeight,
                                    bitRate: sourceBitRate.flatMap { $0 > 0 ? $0 : nil },
                                    maxBitRate: nil, bufferSize: nil, isSource: true)
            case .height(let requested, let requestedRate, let requestedCodec):
                let h = requested & ~1
                if h != requested { notices.append("--ladder: \(requested) rounded down to \(h)p (4:2:0 needs an even height)") }
                guard heights.contains(h) else { throw .heightOutOfRange(String(requested)) }
                let codec = requestedCodec ?? defaultCodec
                let name = codec == .h264 ? "\(h)p" : "\(h)p-\(codec.rawValue)"
                guard seen.insert(name).inserted else { throw .duplicateHeight(h) }
                if h > sourceHeight { dropped.append(h); continue }
                // round(h × W × sarN / (sarD × H) / 2) × 2, in integers.
                let num = Int64(h) * Int64(sourceWidth) * Int64(sar.numerator)
                let den = Int64(sar.denominator) * Int64(sourceHeight) * 2
                let width = max(2, Int((num + den / 2) / den) * 2)
                let rate = requestedRate ?? defaultBitRate(height: h)
                let peak = rate * peakPercent / 100
                let buffer = MediaTime.rescale(Int64(peak) * segmentDuration.value, from: segmentDuration.timescale, to: 1)
                encoded.append(LadderRung(name: name, width: width, height: h, bitRate: rate, maxBitRate: peak,
                                          bufferSize: Int(max(1, buffer)), isSource: false, codec: codec))
            }
        }
        let droppedNames = dropped.sorted(by: >).map { "\($0)p" }
        if !droppedNames.isEmpty {
            notices.append("--ladder: dropping \(droppedNames.joined(separator: ", ")) (taller than the \(sourceWidth)x\(sourceHeight) source)")
        }
        let rungs = (source.map { [$0] } ?? []) + encoded.sorted {
            $0.height != $1.height ? $0.height > $1.height : ($0.codec != .h264 && $1.codec == .h264)
        }
        guard !rungs.isEmpty else { throw .nothingLeft(dropped: droppedNames, sourceWidth: sourceWidth, sourceHeight: sourceHeight) }
        let exact = encoded.filter { !$0.codec.honoursForcedKeyframes }.map(\.name)
        if source != nil, !exact.isEmpty {
            // The encoded rungs take an IDR at each of the copied rung's keyframes; SVT-AV1 cannot, libaom-av1 can.
            notices.append("--ladder: \(exact.joined(separator: ", ")) \(exact.count == 1 ? "is" : "are") encoded with libaom-av1 "
                           + "(realtime), which puts a keyframe at each of the copied 'source' rung's; SVT-AV1, the other "
                           + "AV1 encoder, keeps a fixed GOP")
        }
        return (rungs, notices)
    }
}

extension Ladder {
    /// A ladder's renditions, planned in one place for every producer (a demuxed input, the test pattern): one video
    /// rendition per rung (the copied `source` first, as `plan` orders them), each one track, then the audio as its own
    /// rendition in group `audio` when `audioBitRate` is given (the input has audio).
    static func renditions(_ rungs: [LadderRung], frameRate: Rational?, audioBitRate: Int?) -> RenditionPlan {
        let fps = frameRate.map { Double($0.numerator) / Double($0.denominator) }
        return .ladder(rungs.map { ($0.name, $0.bitRate) }, frameRate: fps,
                       audio: audioBitRate.map { (bitRate: $0, track: rungs.count) })
    }
}

extension Ladder {
    /// A ladder's renditions with one audio rendition per planned audio track (`AudioTrackPlan`), each at
    /// `audioBitRate` until measured.
    static func renditions(_ rungs: [LadderRung], frameRate: Rational?, audio: [PlannedAudio], audioBitRate: Int)
        -> RenditionPlan {
        let fps = frameRate.map { Double($0.numerator) / Double($0.denominator) }
        return .ladder(rungs.map { ($0.name, $0.bitRate) }, frameRate: fps, audio: audio.map {
            var r = $0.rendition
            r.bitRate = audioBitRate
            return r
        })
    }
}

extension LadderRung {
    /// The encoder settings of an encoded rung: `base` (preset, tune) with the rung's rate control (no CRF).
    /// - Parameter exactKeyframes: the rung takes an IDR at each of a copied rung's keyframes (`VideoSettings`).
    func settings(_ base: VideoSettings, exactKeyframes: Bool = false) -> VideoSettings {
        var s = base
        s.exactKeyframes = exactKeyframes
        s.crf = nil
        s.bitRate = bitRate
        s.maxBitRate = maxBitRate
        s.bufferSize = bufferSize
        s.codec = codec
        return s
    }
}
