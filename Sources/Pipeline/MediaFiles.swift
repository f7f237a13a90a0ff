import Foundation
import MediaCore
#if canImport(Glibc)
import Glibc
#endif

/// Plain POSIX writes shared by the VOD writer and the recorder: no temporary file, rename or `fsync` per segment
/// (FileManager's atomic write costs more than the whole segmenter on a 10-minute file). `replace` (temporary
/// file + rename) is for the few files that are rewritten while readers may look at them.
enum MediaFiles {
    /// Creates or truncates `path` and writes `bytes`.
    static func write(_ bytes: [UInt8], to path: String) throws {
        try write(MediaBytes(bytes), to: path)
    }

    /// Creates or truncates `path` and writes `bytes`, its chunks gathered by `writev(2)` (no copy in user space).
    static func write(_ bytes: MediaBytes, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw MediaFileError(path: path, errno: errno) }
        defer { close(fd) }
        try writeAll(fd, bytes, path: path)
    }

    /// Writes every chunk of `bytes` at `offset` (`pwritev`), or at the file's position when `offset` is `nil`
    /// (`MediaBytes.write(to:at:)`: one gathering system call for a segment's header and samples).
    static func writeAll(_ fd: Int32, _ bytes: MediaBytes, at offset: Int? = nil, path: String) throws {
        if let failure = bytes.write(to: fd, at: offset) { throw MediaFileError(path: path, errno: failure) }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int? = nil, path: String) throws {
        try writeAll(fd, MediaBytes(bytes), at: offset, path: path)
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
                    throw MediaFileError(path: path, errno: errno)
                }
                if n == 0 { throw MediaFileError(path: path, errno: EIO) }
                left -= n
            }
        }
        var buffer = [UInt8](repeating: 0, count: min(left, 1 << 20))
        while left > 0 {
            let n = buffer.withUnsafeMutableBytes { pread(input, $0.baseAddress!, min(left, $0.count), off_t(inOff)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw MediaFileError(path: path, errno: errno)
            }
            if n == 0 { throw MediaFileError(path: path, errno: EIO) }
            try writeAll(output, Array(buffer[0..<n]), at: Int(outOff), path: path)
            inOff += Int64(n); outOff += Int64(n); left -= n
        }
    }


    /// Replaces `path` atomically: readers see the old file or the new one, never a mix.
    static func replace(_ bytes: [UInt8], at path: String) throws {
        let temporary = path + ".tmp"
        do {
            try write(bytes, to: temporary)
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let e = errno
            unlink(temporary)
            throw MediaFileError(path: path, errno: e)
        }
    }

    /// Opens `path` for appending (it must exist).
    static func openForAppending(_ path: String) throws -> Int32 {
        let fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { throw MediaFileError(path: path, errno: errno) }
        return fd
    }
}

public struct MediaFileError: Error, CustomStringConvertible {
    public let path: String
    public let errno: Int32
    public var description: String { "cannot write '\(path)': \(String(cString: strerror(errno)))" }
}
