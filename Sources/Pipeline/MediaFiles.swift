import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Plain POSIX writes shared by the VOD writer and the recorder: no temporary file, rename or `fsync` per segment
/// (FileManager's atomic write costs more than the whole segmenter on a 10-minute file). `replace` (temporary
/// file + rename) is for the few files that are rewritten while readers may look at them.
enum MediaFiles {
    /// Creates or truncates `path` and writes `bytes`.
    static func write(_ bytes: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw MediaFileError(path: path, errno: errno) }
        defer { close(fd) }
        try writeAll(fd, bytes, path: path)
    }

    /// Writes `bytes` at the file's position (the end, for `O_APPEND`), retrying short writes and `EINTR`.
    /// A few hundred bytes to a regular file go in one `write(2)`.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw MediaFileError(path: path, errno: errno)
                }
                offset += n
            }
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
