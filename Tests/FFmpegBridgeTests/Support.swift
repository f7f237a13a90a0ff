import Foundation
import Testing

/// Runs a command line tool (ffmpeg/ffprobe) and returns its standard output; throws with stderr on failure.
@discardableResult
func run(_ tool: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/" + tool)
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Read both pipes before waiting, so a chatty tool cannot block on a full pipe.
    let stderrBox = DataBox()
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        stderrBox.data = err.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw ToolError(description: "\(tool) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): "
                        + String(decoding: stderrBox.data, as: UTF8.self))
    }
    return String(decoding: stdoutData, as: UTF8.self)
}

/// Written by one thread, read after `DispatchGroup.wait()` (which orders the accesses).
final class DataBox: @unchecked Sendable { var data = Data() }

struct ToolError: Error, CustomStringConvertible { let description: String }

/// One packet as ffprobe reports it.
struct ProbePacket: Equatable, CustomStringConvertible {
    var stream: Int
    var pts: Int64?
    var dts: Int64?
    var size: Int
    var key: Bool
    /// 0 when unknown (ffprobe's "N/A").
    var duration: Int64
    var description: String {
        "s\(stream) pts=\(pts.map(String.init) ?? "-") dts=\(dts.map(String.init) ?? "-") size=\(size) d=\(duration)\(key ? " K" : "")"
    }
}

func ffprobePackets(_ path: String) throws -> [ProbePacket] {
    let text = try run("ffprobe", ["-v", "error", "-show_entries", "packet=stream_index,pts,dts,size,flags,duration",
                                   "-of", "compact=p=0:nk=0", path])
    return text.split(separator: "\n").map { line in
        var fields: [Substring: Substring] = [:]
        for part in line.split(separator: "|") {
            let kv = part.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { fields[kv[0]] = kv[1] }
        }
        return ProbePacket(stream: Int(fields["stream_index"] ?? "") ?? -1,
                           pts: (fields["pts"]).flatMap { Int64($0) },
                           dts: (fields["dts"]).flatMap { Int64($0) },
                           size: Int(fields["size"] ?? "") ?? -1,
                           key: fields["flags"]?.hasPrefix("K") ?? false,
                           duration: (fields["duration"]).flatMap { Int64($0) } ?? 0)
    }
}

/// `ffprobe -count_packets`: packets per stream.
func ffprobeCounts(_ path: String) throws -> [Int] {
    try run("ffprobe", ["-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path])
        .split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
}

/// Media files generated once per test run with the ffmpeg CLI.
struct Fixtures: Sendable {
    let dir: String
    /// 2 s 320x240@30 H.264 (B-frames, GOP 15) + AAC 48 kHz stereo; moov at the end (ffmpeg's default).
    var mp4: String { dir + "/h264_aac.mp4" }
    /// The same, faststart.
    var faststart: String { dir + "/h264_aac_faststart.mp4" }
    /// The same streams in MPEG-TS.
    var ts: String { dir + "/h264_aac.ts" }
    /// The same streams as a fragmented MP4 (a `moov` that lists no sample, a `moof` per keyframe).
    var fragmented: String { dir + "/h264_aac_fragmented.mp4" }
    /// The same video with AC-3 audio, in MP4.
    var ac3: String { dir + "/h264_ac3.mp4" }
    /// 1 s of all-intra H.264 (every frame an IDR): an MP4 without `stss`.
    var allIntra: String { dir + "/h264_all_intra.mp4" }
    /// 2 s 320x240@30 MPEG-4 part 2 (no audio).
    var mpeg4: String { dir + "/mpeg4.avi" }

    static let shared: Result<Fixtures, any Error> = Result {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ffbridge-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let f = Fixtures(dir: dir)
        let common = ["-hide_banner", "-nostdin", "-v", "error", "-y"]
        try run("ffmpeg", common + ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=30",
                                    "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                                    "-t", "2", "-c:v", "libx264", "-bf", "2", "-g", "15", "-pix_fmt", "yuv420p",
                                    "-c:a", "aac", "-ac", "2", f.mp4])
        try run("ffmpeg", common + ["-i", f.mp4, "-c", "copy", "-movflags", "+faststart", f.faststart])
        try run("ffmpeg", common + ["-i", f.mp4, "-c", "copy", "-f", "mpegts", f.ts])
        try run("ffmpeg", common + ["-i", f.mp4, "-c", "copy", "-movflags", "+frag_keyframe+empty_moov", f.fragmented])
        try run("ffmpeg", common + ["-i", f.mp4, "-c:v", "copy", "-c:a", "ac3", f.ac3])
        try run("ffmpeg", common + ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-t", "1",
                                    "-c:v", "libx264", "-g", "1", "-pix_fmt", "yuv420p", f.allIntra])
        try run("ffmpeg", common + ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-t", "2",
                                    "-c:v", "mpeg4", "-q:v", "3", f.mpeg4])
        return f
    }

    static func get() throws -> Fixtures { try shared.get() }

    func temp(_ name: String) -> String { dir + "/" + name }
}
