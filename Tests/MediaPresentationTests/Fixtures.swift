import MediaCore
import Synchronization
@testable import MediaPresentation

enum Fixture {
    /// High profile 3.1 avcC (SPS + PPS) and AAC-LC 48 kHz stereo.
    static let avcC: [UInt8] = [1, 0x64, 0x00, 0x1F, 0xFF, 0xE1, 0x00, 0x04, 0x67, 0x64, 0x00, 0x1F,
                                0x01, 0x00, 0x02, 0x68, 0xEB]
    static let asc: [UInt8] = [0x11, 0x90]
    static let video = TrackFormat(trackID: 1, kind: .video, timescale: 90_000, codec: .h264(avcC: avcC), width: 1280, height: 720)
    static let audio = TrackFormat(trackID: 2, kind: .audio, timescale: 48_000, codec: .aac(audioSpecificConfig: asc),
                                   sampleRate: 48_000, channelCount: 2)
    static let tracks = [video, audio]
    static let initBytes: [UInt8] = Array("init".utf8)

    /// A segment's facts: `seconds` long at 90 kHz, 30 frames per second.
    static func info(_ sequence: UInt64, seconds: Int64 = 1, bytes: Int = 1000, discontinuity: Bool = false,
                     frames: Int? = nil, pdt: Int64 = 1_763_785_226_000) -> SegmentInfo {
        SegmentInfo(sequence: sequence, startTime: .seconds(Int64(sequence) * seconds, timescale: 90_000),
                    duration: .seconds(seconds, timescale: 90_000), byteCount: bytes,
                    programDateTime: WallClock(millisecondsSince1970: pdt + Int64(sequence) * 1000 * seconds),
                    discontinuity: discontinuity, videoSampleCount: frames ?? Int(seconds) * 30)
    }

    static func part(_ sequence: UInt64, _ index: Int, millis: Int64 = 334, bytes: Int = 300) -> PartInfo {
        PartInfo(segmentSequence: sequence, index: index, duration: MediaTime(value: millis, timescale: 1000),
                 byteCount: bytes, independent: index == 0)
    }
}

/// A clock the test moves by hand (monotonic milliseconds).
final class ManualClock: Sendable {
    private let now = Atomic<Int64>(0)
    func advance(millis: Int64) { now.add(millis, ordering: .relaxed) }
    var read: @Sendable () -> Int64 { { [self] in now.load(ordering: .relaxed) } }
}

/// A window of byte payloads, fed like a producer would.
final class Feed {
    let window: LiveWindow<[UInt8]>
    var next: UInt64 = 0
    init(_ window: LiveWindow<[UInt8]>) {
        self.window = window
        window.setInit(Fixture.initBytes, digest: Fixture.initBytes, tracks: Fixture.tracks)
    }
    @discardableResult
    func segment(seconds: Int64 = 1, bytes: Int = 1000, discontinuity: Bool = false) -> UInt64 {
        defer { next += 1 }
        window.publishSegment(Fixture.info(next, seconds: seconds, bytes: bytes, discontinuity: discontinuity),
                              [UInt8](repeating: UInt8(truncatingIfNeeded: next), count: bytes))
        return next
    }
}
