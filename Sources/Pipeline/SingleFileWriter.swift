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
    // @unchecked: used under VODWriter's lock only.
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
        guard fd >= 0 else { throw VODWriterError(path: path, errno: errno) }
        mediaStart = initBytes.count + SegmentIndex.size(referenceCount: reservedReferences)
        end = mediaStart
        try PositionedFile.writeAll(fd, initBytes, at: 0, path: path)
    }

    deinit { if fd >= 0 { close(fd) } }

    func append(_ bytes: [UInt8]) throws {
        try PositionedFile.writeAll(fd, bytes, at: end, path: path)
        end += bytes.count
    }

    /// Writes the `sidx` for `segments` (every segment written, in order) and closes the file.
    func finish(segments: [SegmentInfo]) throws -> SingleFileIndex {
        defer { close(fd); fd = -1 }
        guard segments.reduce(0, { $0 + $1.byteCount }) == end - mediaStart else { throw SingleFileError.sizeMismatch(path) }
        let sidx = try index(segments).bytes()
        let initRange = 0..<initBytes.count
        if segments.count <= reservedReferences {
            let slack = mediaStart - initBytes.count - sidx.count  // a multiple of 12: enough for a box header
            if slack > 0 { try PositionedFile.writeAll(fd, try FreeSpaceBox.bytes(size: slack), at: initBytes.count, path: path) }
            try PositionedFile.writeAll(fd, sidx, at: mediaStart - sidx.count, path: path)
            return SingleFileIndex(fileURI: uri, initRange: initRange, indexRange: (mediaStart - sidx.count)..<mediaStart)
        }
        // Not enough room: a new file with the sidx right after the init segment, the segments moved over.
        let tmp = path + ".tmp"
        let out = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard out >= 0 else { throw VODWriterError(path: tmp, errno: errno) }
        defer { close(out) }
        try PositionedFile.writeAll(out, initBytes + sidx, at: 0, path: tmp)
        try PositionedFile.copy(from: fd, range: mediaStart..<end, to: out, at: initBytes.count + sidx.count, path: tmp)
        guard rename(tmp, path) == 0 else { throw VODWriterError(path: path, errno: errno) }
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

/// `pwrite`/`write` and `copy_file_range` loops that finish the job (short writes, `EINTR`).
enum PositionedFile {
    /// `offset == nil`: at the file position (`write`).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int?, path: String) throws {
        try bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = offset.map { pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t($0 + done)) }
                    ?? Glibc.write(fd, buffer.baseAddress! + done, buffer.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw VODWriterError(path: path, errno: errno)
                }
                done += n
            }
        }
    }

    /// `copy_file_range(2)`: glibc declares it only under `_GNU_SOURCE`, which Swift's Glibc module does not set,
    /// so it is looked up by name; without it, a `pread`/`pwrite` loop does the same through user space.
    private typealias CopyFileRange = @convention(c) (Int32, UnsafeMutablePointer<Int64>?, Int32,
                                                      UnsafeMutablePointer<Int64>?, Int, UInt32) -> Int
    private static let copyFileRange: CopyFileRange? =
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "copy_file_range").map { unsafeBitCast($0, to: CopyFileRange.self) }

    static func copy(from input: Int32, range: Range<Int>, to output: Int32, at offset: Int, path: String) throws {
        var inOff = Int64(range.lowerBound), outOff = Int64(offset)
        var left = range.count
        if let copyFileRange {
            while left > 0 {
                let n = copyFileRange(input, &inOff, output, &outOff, left, 0)
                if n < 0 {
                    if errno == EINTR { continue }
                    if errno == ENOSYS || errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP { break }
                    throw VODWriterError(path: path, errno: errno)
                }
                if n == 0 { throw VODWriterError(path: path, errno: EIO) }
                left -= n
            }
        }
        var buffer = [UInt8](repeating: 0, count: min(left, 1 << 20))
        while left > 0 {
            let n = buffer.withUnsafeMutableBytes { pread(input, $0.baseAddress!, min(left, $0.count), off_t(inOff)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw VODWriterError(path: path, errno: errno)
            }
            if n == 0 { throw VODWriterError(path: path, errno: EIO) }
            try writeAll(output, Array(buffer[0..<n]), at: Int(outOff), path: path)
            inOff += Int64(n); outOff += Int64(n); left -= n
        }
    }
}
