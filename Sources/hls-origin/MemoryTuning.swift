#if canImport(CMalloc)
internal import CMalloc
#endif

/// glibc malloc settings for a long-running `serve` (mallopt(3)), set before the pipeline's threads allocate.
///
/// - At most two arenas: glibc gives threads that contend for the heap arenas of their own (up to 8 per core), and
///   each arena keeps what its threads freed. The origin's threads (event loops, the demuxer, the writer, the
///   encoders) hand buffers to each other, so a buffer is often freed into another thread's arena than the one it
///   came from.
/// - A fixed mmap threshold of 128 KiB (glibc's starting value) and a trim threshold to match: glibc otherwise raises
///   the threshold up to 32 MiB once a large block is freed, after which segment-sized buffers (hundreds of KiB, made
///   and freed every second) come from the heap and the heap's top stays resident after they are gone.
///
/// Measured on the 1-hour file (`serve --no-realtime`, release build, peak over 0.2-s samples of /proc, 2026-12-07):
/// 67.1 MB peak RSS (23.0 MB anonymous) with glibc's defaults, 62.5 MB (20.5 MB anonymous) with these; FFmpeg's own
/// live remux of the same file peaks at 62.4 MB (docs/benchmarks.md, memory).
enum MemoryTuning {
    static func applyForServe() {
        #if canImport(CMalloc) && os(Linux)
        _ = mallopt(cmalloc_arena_max(), 2)
        _ = mallopt(cmalloc_mmap_threshold(), 128 * 1024)
        _ = mallopt(cmalloc_trim_threshold(), 128 * 1024)
        #endif
    }
}
