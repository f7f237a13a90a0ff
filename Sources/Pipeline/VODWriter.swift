import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HLS
import MediaCore
import Segmenter
import Synchronization

/// Writes a VOD presentation to a directory: `init.mp4`, `seg<N>.m4s`, `stream.m3u8` (media playlist with
/// `EXT-X-PLAYLIST-TYPE:VOD` and `EXT-X-ENDLIST`) and `index.m3u8` (multivariant playlist).
public final class VODWriter: Sendable {
    public let directory: URL
    private struct State {
        var tracks: [TrackFormat] = []
        var segments: [(uri: String, duration: MediaTime, bytes: Int)] = []
        var videoFrames = 0
    }
    private let state = Mutex(State())

    public init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    public var output: PipelineOutput {
        PipelineOutput(
            start: { [self] initSegment, tracks, _ in
                try write(initSegment, to: "init.mp4")
                state.withLock { $0.tracks = tracks }
            },
            segment: { [self] segment in
                let name = "seg\(segment.sequence).m4s"
                try write(segment.bytes, to: name)
                state.withLock {
                    $0.segments.append((name, segment.duration, segment.bytes.count))
                    if let v = $0.tracks.firstIndex(where: { $0.kind == .video }) {
                        $0.videoFrames += segment.trackSampleCounts[v]
                    }
                }
            })
    }

    /// Writes the playlists once every segment is on disk. Returns the number of segments.
    @discardableResult
    public func finish() throws -> Int {
        let s = state.withLock { $0 }
        guard !s.segments.isEmpty else { return 0 }
        let playlist = MediaPlaylist(
            targetDuration: MediaPlaylist.targetDuration(for: s.segments.map(\.duration)),
            mediaSequence: 0, discontinuitySequence: 0, mapURI: "init.mp4", playlistType: .vod,
            segments: s.segments.enumerated().map { n, seg in
                PlaylistSegment(sequence: UInt64(n), uri: seg.uri, duration: seg.duration, programDateTime: nil,
                                discontinuity: false, mapURI: nil)
            },
            endList: true)
        try write(Array(playlist.render().utf8), to: "stream.m3u8")
        let variant = VariantSummary(tracks: s.tracks, segments: s.segments.map { ($0.bytes, $0.duration) },
                                     videoFrames: s.videoFrames)
        let multivariant = MultivariantPlaylist(variants: [variant.variant(uri: "stream.m3u8")])
        try write(Array(multivariant.render().utf8), to: "index.m3u8")
        return s.segments.count
    }

    /// Plain `open`/`write`: no temporary file, rename or `fsync` per segment (FileManager's atomic write
    /// costs more than the whole segmenter on a 10-minute file).
    private func write(_ bytes: [UInt8], to name: String) throws {
        let path = directory.appendingPathComponent(name).path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw VODWriterError(path: path, errno: errno) }
        defer { close(fd) }
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw VODWriterError(path: path, errno: errno)
                }
                offset += n
            }
        }
    }
}

public struct VODWriterError: Error, CustomStringConvertible {
    public let path: String
    public let errno: Int32
    public var description: String { "cannot write '\(path)': \(String(cString: strerror(errno)))" }
}

/// The `EXT-X-STREAM-INF` attributes of one rendition, measured from its segments.
public struct VariantSummary: Sendable {
    public var tracks: [TrackFormat]
    public var segments: [(bytes: Int, duration: MediaTime)]
    public var videoFrames: Int

    public init(tracks: [TrackFormat], segments: [(bytes: Int, duration: MediaTime)], videoFrames: Int) {
        self.tracks = tracks
        self.segments = segments
        self.videoFrames = videoFrames
    }

    public func variant(uri: String) -> VariantStream {
        func bps(_ bytes: Int, _ d: MediaTime) -> Int {
            d.value > 0 ? Int((Int128(bytes) * 8 * Int128(d.timescale) + Int128(d.value) - 1) / Int128(d.value)) : 0
        }
        let peak = segments.map { bps($0.bytes, $0.duration) }.max() ?? 0
        let totalBytes = segments.reduce(0) { $0 + $1.bytes }
        let totalDuration = segments.reduce(MediaTime.zero(segments.first?.duration.timescale ?? 1000)) { $0 + $1.duration }
        let video = tracks.first { $0.kind == .video }
        let fps = video != nil && totalDuration.value > 0 ? Double(videoFrames) / totalDuration.seconds : nil
        return VariantStream(bandwidth: max(peak, 1), averageBandwidth: max(bps(totalBytes, totalDuration), 1),
                             codecs: tracks.map(\.codecString).joined(separator: ","),
                             resolution: video.map { .init(width: $0.width, height: $0.height) }, frameRate: fps, uri: uri)
    }
}
