import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ISOBMFF
import MediaCore
import MediaPresentation

/// One rendition's CMAF file for `package --single-file` (layout in `SingleFileIndex`).
///
/// The `sidx` must come before the segments it indexes, and its size (40 + 12 bytes per segment) is known only at
/// the end. So the init segment is written at 0, room for `reservedReferences` references is left after it, and
/// the segments follow as they come, each written once. At the end the `sidx` goes at the end of that room, right
/// before the first segment, and a `free` box fills what is left of it. Had the room been too small (an input
/// without a known duration), the file is rewritten once: init, `sidx`, then the segments moved with
/// `copy_file_range(2)` (in the kernel, no copy through user space).
final class SingleFileWriter: @unchecked Sendable {
    // @unchecked: `reserve` and `finish` run under VODWriter's lock; `write` runs on its file writer's thread, at
    // offsets `reserve` handed out (pwritev: no shared position), before `finish` (VODWriter drains the writes first).
    let path: String
    let uri: String
    let initBytes: [UInt8]
    let referenceID: UInt32
    private let reservedReferences: Int
    private var fd: Int32
    private let mediaStart: Int
    private var end: Int

    init(path: String, uri: String, initBytes: [UInt8], referenceID: UInt32, reservedReferences: Int) throws {
        self.path = path
        self.uri = uri
        self.initBytes = initBytes
        self.referenceID = referenceID
        self.reservedReferences = reservedReferences
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw MediaFileError(path: path, errno: errno) }
        mediaStart = initBytes.count + SegmentIndex.size(referenceCount: reservedReferences)
        end = mediaStart
        try MediaFiles.writeAll(fd, initBytes, at: 0, path: path)
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Where the next `count` bytes of segments go (each segment is written once, at its final offset).
    func reserve(_ count: Int) -> Int {
        defer { end += count }
        return end
    }

    /// Writes a segment's bytes where `reserve` placed them (`pwritev`: any thread, in any order).
    func write(_ bytes: MediaBytes, at offset: Int) throws {
        try MediaFiles.writeAll(fd, bytes, at: offset, path: path)
    }

    /// Writes the `sidx` for `segments` (every segment written, in order) and closes the file.
    func finish(segments: [SegmentInfo]) throws -> SingleFileIndex {
        defer { close(fd); fd = -1 }
        guard segments.reduce(0, { $0 + $1.byteCount }) == end - mediaStart else { throw SingleFileError.sizeMismatch(path) }
        let sidx = try index(segments).bytes()
        let initRange = 0..<initBytes.count
        if segments.count <= reservedReferences {
            let slack = mediaStart - initBytes.count - sidx.count  // a multiple of 12: enough for a box header
            if slack > 0 { try MediaFiles.writeAll(fd, try FreeSpaceBox.bytes(size: slack), at: initBytes.count, path: path) }
            try MediaFiles.writeAll(fd, sidx, at: mediaStart - sidx.count, path: path)
            return SingleFileIndex(fileURI: uri, initRange: initRange, indexRange: (mediaStart - sidx.count)..<mediaStart)
        }
        // Not enough room: a new file with the sidx right after the init segment, the segments moved over.
        let tmp = path + ".tmp"
        let out = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard out >= 0 else { throw MediaFileError(path: tmp, errno: errno) }
        defer { close(out) }
        try MediaFiles.writeAll(out, initBytes + sidx, at: 0, path: tmp)
        try MediaFiles.copy(from: fd, range: mediaStart..<end, to: out, at: initBytes.count + sidx.count, path: tmp)
        guard rename(tmp, path) == 0 else { throw MediaFileError(path: path, errno: errno) }
        return SingleFileIndex(fileURI: uri, initRange: initRange, indexRange: initBytes.count..<(initBytes.count + sidx.count))
    }

    /// One reference per segment. The reference stream's earliest presentation time comes from the segmenter
    /// (`dts + composition offset`); a subsegment lasts until the next one's earliest presentation time, the last
    /// one for its own duration (ISO/IEC 14496-12 §8.16.3.3). SAP type 1: a segment starts with a sync sample
    /// (IDR, or an audio frame), presented first.
    func index(_ segments: [SegmentInfo]) throws -> SegmentIndex {
        let timescale = segments.first.map { UInt32(clamping: $0.startTime.timescale) } ?? 1
        var refs: [SegmentIndex.Reference] = []
        refs.reserveCapacity(segments.count)
        for (i, s) in segments.enumerated() {
            // referenced_size is 31 bits: a segment of 2 GiB or more cannot be indexed.
            guard s.byteCount < 1 << 31 else { throw MP4Error.boxTooLarge(SegmentIndex.type) }
            let duration = i + 1 < segments.count
                ? segments[i + 1].earliestPresentationTime.value - s.earliestPresentationTime.value
                : s.duration.value
            refs.append(.init(referencedSize: UInt32(clamping: s.byteCount), subsegmentDuration: UInt32(clamping: max(0, duration)),
                              startsWithSAP: s.startsWithSyncSample))
        }
        let ept = segments.first.map { UInt64(clamping: max(0, $0.earliestPresentationTime.value)) } ?? 0
        return SegmentIndex(referenceID: referenceID, timescale: timescale, earliestPresentationTime: ept, references: refs)
    }
}

