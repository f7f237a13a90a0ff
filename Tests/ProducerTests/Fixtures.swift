import Logging
import MediaCore
import MediaPresentation
import Producer
import Synchronization

let avcA: [UInt8] = [1, 0x64, 0, 0x1F, 0xFF, 0xE1, 0, 4, 0x67, 0x64, 0, 0x1F, 1, 0, 2, 0x68, 0xEE]
let avcB: [UInt8] = [1, 0x42, 0xC0, 0x1E, 0xFF, 0xE1, 0, 4, 0x67, 0x42, 0xC0, 0x1E, 1, 0, 2, 0x68, 0xCE]
let video = TrackFormat(trackID: 1, kind: .video, timescale: 90_000, codec: .h264(avcC: avcA), width: 1280, height: 720)
let audio = TrackFormat(trackID: 2, kind: .audio, timescale: 48_000, codec: .aac(audioSpecificConfig: [0x11, 0x90]),
                        sampleRate: 48_000, channelCount: 2)
let quiet: Logger = {
    var l = Logger(label: "producer-tests")
    l.logLevel = .critical
    return l
}()

/// Frame `i` of 30 fps video at `offset` ticks, a keyframe every `gop` frames.
func frame(_ i: Int, gop: Int = 30, offset: Int64 = 0) -> Sample {
    let t = offset + Int64(i) * 3000
    return Sample(data: [0, 0, 0, 1, 0x65, UInt8(i & 0xFF)], dts: t, pts: t, isSync: i % gop == 0, durationHint: 3000)
}

/// AAC frame `i` (1024 samples at 48 kHz) at `offset` ticks.
func aac(_ i: Int, offset: Int64 = 0) -> Sample {
    let t = offset + Int64(i) * 1024
    return Sample(data: [0x21, UInt8(i & 0xFF)], dts: t, pts: t, isSync: true, durationHint: 1024)
}

/// `seconds` of interleaved video and audio from second `from`, as source events (formats first).
func events(seconds: Int, from: Int = 0, gop: Int = 30, offset: Int64 = 0, formats: Bool = true) -> [SourceEvent] {
    var out: [SourceEvent] = formats ? [.format(track: 0, video), .format(track: 1, audio)] : []
    var a = from * 48_000 / 1024
    for i in (from * 30)..<((from + seconds) * 30) {
        out.append(.samples(track: 0, [frame(i, gop: gop, offset: offset)], wallClock: nil))
        while Int64(a) * 1024 * 90_000 < (Int64(i) + 1) * 3000 * 48_000 {
            out.append(.samples(track: 1, [aac(a, offset: offset * 48_000 / 90_000)], wallClock: nil))
            a += 1
        }
    }
    return out
}

/// A consumer that keeps every event.
final class Recorded: PresentationConsumer, Sendable {
    let events = Mutex<[PresentationEvent]>([])
    func consume(_ event: PresentationEvent) throws { events.withLock { $0.append(event) } }
    var all: [PresentationEvent] { events.withLock { $0 } }
    var segments: [SegmentInfo] { all.compactMap { if case .segment(0, let i, _) = $0 { i } else { nil } } }
    var inits: Int { all.filter { if case .initSegment(0, _, _) = $0 { true } else { false } }.count }
    var policy: TimingPolicy? { all.lazy.compactMap { if case .layout(_, let p) = $0 { p } else { nil } }.first }
    var ended: Bool { if case .end? = all.last { true } else { false } }
}
