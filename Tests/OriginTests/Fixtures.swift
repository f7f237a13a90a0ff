import HLS
import Hummingbird
import Logging
import MediaCore
import MediaPresentation
@testable import Origin

/// Hand-built fMP4 pieces for origin tests.
enum Fixture {
    /// A real-looking avcC: version 1, High profile (0x64), compat 0, level 3.1 (0x1f), 4-byte lengths, SPS + PPS.
    static let avcC: [UInt8] = [1, 0x64, 0x00, 0x1F, 0xFF, 0xE1, 0x00, 0x04, 0x67, 0x64, 0x00, 0x1F,
                                0x01, 0x00, 0x02, 0x68, 0xEB]
    /// AAC-LC 48 kHz stereo AudioSpecificConfig.
    static let asc: [UInt8] = [0x11, 0x90]

    static let tracks = [
        TrackFormat(trackID: 1, kind: .video, timescale: 90_000, codec: .h264(avcC: avcC), width: 1280, height: 720),
        TrackFormat(trackID: 2, kind: .audio, timescale: 48_000, codec: .aac(audioSpecificConfig: asc),
                    sampleRate: 48_000, channelCount: 2),
    ]

    static let initBytes: [UInt8] = box("ftyp", Array("iso6".utf8) + [0, 0, 0, 0]) + box("moov", [])

    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        be32(UInt32(8 + body.count)) + Array(type.utf8) + body
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    /// styp + moof (traf per track: tfhd + trun with `sample_count`) + mdat of `payload` bytes.
    static func segment(videoSamples: UInt32, audioSamples: UInt32 = 47, payload: Int = 1000, fill: UInt8 = 0xAB) -> [UInt8] {
        func traf(_ track: UInt32, _ count: UInt32) -> [UInt8] {
            box("traf", box("tfhd", [0, 2, 0, 0] + be32(track)) + box("tfdt", [0, 0, 0, 0] + be32(0))
                + box("trun", [0, 0, 0, 1] + be32(count) + be32(0)))
        }
        let moof = box("moof", box("mfhd", [0, 0, 0, 0] + be32(1)) + traf(1, videoSamples) + traf(2, audioSamples))
        return box("styp", Array("msdh".utf8) + [0, 0, 0, 0]) + moof + box("mdat", [UInt8](repeating: fill, count: payload))
    }

    static func liveSegment(seconds: Int64 = 1, fps: UInt32 = 30, payload: Int = 1000, discontinuity: Bool = false,
                            at ms: Int64 = 1_763_785_226_000) -> LiveSegment {
        LiveSegment(bytes: segment(videoSamples: UInt32(seconds) * fps, payload: payload),
                    duration: .seconds(seconds, timescale: 90_000),
                    programDateTime: WallClock(millisecondsSince1970: ms), discontinuity: discontinuity,
                    videoFrames: Int(UInt32(seconds) * fps))
    }
}

/// A finished segment as a test hands it to `TestStream`.
struct LiveSegment {
    var bytes: [UInt8]
    var duration: MediaTime
    var programDateTime: WallClock
    var discontinuity = false
    var videoFrames: Int?
    /// Where its parts lie in `bytes` (`SegmentInfo.partRanges`): a segment made of its parts, as the segmenter's.
    var partRanges: [Range<Int>] = []
}

/// A part as a test hands it to `TestStream`.
struct LivePart {
    var bytes: [UInt8]
    var duration: MediaTime
    var independent: Bool
}

/// One muxed rendition at the root of a live presentation, fed the way the pipeline feeds it (events), with
/// the few looks into its window that the HTTP tests compare responses with.
final class TestStream: Sendable {
    let presentation: LivePresentation
    let scheme = URIScheme.root("stream")

    init(windowSize: Int = 6, targetDuration: Int = 1, partTarget: MediaTime? = nil,
         clock: @escaping @Sendable () -> Int64 = LiveWindowClock.monotonicMilliseconds) {
        presentation = .live(windowSize: windowSize, clock: clock)
        try! presentation.consume(.layout([.muxed()], TimingPolicy(targetDuration: targetDuration, partTarget: partTarget)))
    }

    var window: LiveWindow<ServedObject> { presentation.layout!.windows[0] }
    var partTarget: MediaTime? { window.policy.partTarget }

    func setInitSegment(_ bytes: [UInt8], tracks: [TrackFormat]) {
        try! presentation.consume(.initSegment(rendition: 0, bytes: bytes, tracks: tracks))
    }

    func publishPart(_ part: LivePart) {
        let s = window.snapshot()
        try! presentation.consume(.part(rendition: 0, PartInfo(segmentSequence: s.nextSequence, index: s.partial.count,
                                                               duration: part.duration, byteCount: part.bytes.count,
                                                               independent: part.independent), bytes: part.bytes))
    }

    func publish(_ segment: LiveSegment) {
        let n = window.snapshot().nextSequence
        try! presentation.consume(.segment(rendition: 0, SegmentInfo(
            sequence: n, startTime: MediaTime(value: Int64(n) * segment.duration.value, timescale: segment.duration.timescale),
            duration: segment.duration, byteCount: segment.bytes.count, programDateTime: segment.programDateTime,
            discontinuity: segment.discontinuity, videoSampleCount: segment.videoFrames, partRanges: segment.partRanges),
            bytes: segment.bytes))
    }

    func finish() { presentation.finish() }

    func snapshot() -> WindowSnapshot<ServedObject> { window.snapshot() }

    /// The media playlist as the origin renders it (no other renditions: no reports).
    var mediaPlaylistText: String? {
        PlaylistBuilder.mediaPlaylist(snapshot(), scheme: scheme, playlistType: nil)?.render()
    }

    var multivariantText: String? {
        PlaylistBuilder.multivariant([.muxed()], [snapshot()])?.render()
    }

    func segmentBytes(_ n: UInt64) -> ByteBuffer? { snapshot().segment(n)?.payload.body.joined }
    func partBytes(_ n: UInt64, _ i: Int) -> ByteBuffer? { snapshot().part(n, i)?.payload.body.joined }
    var pendingWaiterCount: Int { window.pendingWaiterCount }

    func server(configuration: OriginConfiguration, logger: Logger) -> OriginServer {
        var c = configuration
        c.lowLatencyPage = partTarget != nil
        return OriginServer(registry: PresentationRegistry(root: presentation), configuration: c, logger: logger)
    }
}
