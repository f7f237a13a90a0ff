internal import CFFmpeg
import MediaCore

/// Opening an input: the byte stream (our own for files and pipes), probing, `avformat_open_input` and
/// `avformat_find_stream_info`, each failure one clear error.
extension Demuxer {
    struct Opened {
        var ctx: UnsafeMutablePointer<AVFormatContext>
        var io: InputIO?
        var seekable: Bool
    }

    /// avformat_open_input + avformat_find_stream_info, with pipe-friendly probing and clear errors.
    static func open(url: String, displayName: String, options: InputOptions, flag: InterruptFlag) throws -> Opened {
        let context = "cannot open '\(displayName)'"
        var forced: UnsafePointer<AVInputFormat>?
        if let name = options.format {
            forced = av_find_input_format(name)
            if forced == nil { throw FFmpegError.invalid(context, "unknown input format '\(name)'", call: "av_find_input_format") }
        }
        guard var ctx = avformat_alloc_context() else {
            throw FFmpegError(code: AV.enomem, call: "avformat_alloc_context", context: context)
        }
        ctx.pointee.interrupt_callback = AVIOInterruptCB(callback: demuxerInterruptCallback,
                                                         opaque: Unmanaged.passUnretained(flag).toOpaque())
        var dict: OpaquePointer?
        defer { av_dict_free(&dict) }
        for (key, value) in options.options.sorted(by: { $0.key < $1.key }) { av_dict_set(&dict, key, value, 0) }

        // Pipes and local files: open the byte stream ourselves, so we know whether it can seek
        // (probe small and fast when it cannot) and which format it is even if opening fails.
        let stream = try openByteStream(url: url, ctx: ctx, forced: &forced, options: options, dict: &dict, context: context)
        let io = stream.io, seekable = stream.seekable, detected = stream.detected
        ctx.pointee.probesize = Int64(options.probeSize ?? (seekable ? 5_000_000 : 1 << 20))
        ctx.pointee.max_analyze_duration = Int64(options.analyzeDuration ?? (seekable ? 0 : 1_000_000))

        var maybeCtx: UnsafeMutablePointer<AVFormatContext>? = ctx
        let r = avformat_open_input(&maybeCtx, url, forced, &dict)
        if r < 0 {  // avformat_open_input freed the context; the AVIO context is ours
            io?.close()
            var explanation: String?
            if r == AV.invalidData, let detected, isMOV(detected) {
                explanation = seekable
                    ? "\(FFmpegError.string(for: r)) (no usable MP4 index 'moov' found: the file is truncated or incomplete)"
                    : moovAtEndExplanation
            }
            throw FFmpegError(code: r, call: "avformat_open_input", context: context, explanation: explanation)
        }
        ctx = maybeCtx!
        var failure: FFmpegError?
        if let key = firstKey(dict) {
            failure = FFmpegError(code: AV.einval, call: "avformat_open_input", context: context,
                                  explanation: "unknown input option '\(key)'")
        } else if !seekable, isMOV(String(cString: ctx.pointee.iformat.pointee.name)), moovIsAtEnd(ctx) {
            failure = FFmpegError(code: AV.invalidData, call: "avformat_open_input", context: context,
                                  explanation: moovAtEndExplanation)
        } else {
            if readsWithoutParsers(ctx) { ctx.pointee.flags |= AVFMT_FLAG_NOPARSE | AVFMT_FLAG_DISCARD_CORRUPT }
            let s = avformat_find_stream_info(ctx, nil)
            if s < 0 {
                failure = FFmpegError(code: s, call: "avformat_find_stream_info",
                                      context: "cannot find the streams of '\(displayName)'")
            } else if ctx.pointee.nb_streams == 0 {
                failure = FFmpegError(code: AV.invalidData, call: "avformat_find_stream_info", context: context,
                                      explanation: "the input has no streams")
            }
        }
        if let failure {
            var c: UnsafeMutablePointer<AVFormatContext>? = ctx
            avformat_close_input(&c)
            io?.close()
            throw failure
        }
        return Opened(ctx: ctx, io: io, seekable: seekable)
    }

    /// A pipe's or a local file's byte stream, opened by us (`InputIO`) and probed when no format is forced, set as the
    /// context's `pb`; nothing for a URL libavformat opens itself. Frees `ctx` when it fails.
    static func openByteStream(url: String, ctx: UnsafeMutablePointer<AVFormatContext>, forced: inout UnsafePointer<AVInputFormat>?,
                               options: InputOptions, dict: inout OpaquePointer?, context: String)
        throws -> (io: InputIO?, seekable: Bool, detected: String?) {
        let usesFile = forced.map { $0.pointee.flags & AVFMT_NOFILE == 0 } ?? true
        guard usesFile && isLocalOrPipe(url) else { return (nil, !options.isLive, nil) }
        let io: InputIO
        do {
            io = try InputIO(url: url, interrupt: ctx.pointee.interrupt_callback, options: &dict, context: context)
        } catch {
            avformat_free_context(ctx)
            throw error
        }
        if forced == nil {
            var probed: UnsafePointer<AVInputFormat>?
            let p = av_probe_input_buffer2(io.pb, &probed, url, ctx, 0, 0)
            if p < 0 {
                let explanation = p == AV.eof || io.isEmpty ? "the input is empty (end of file before any data)"
                    : p == AV.invalidData ? emptyOrUnknown(p, seekable: io.isSeekable) : nil
                avformat_free_context(ctx)
                io.close()
                throw FFmpegError(code: p, call: "av_probe_input_buffer2", context: context, explanation: explanation)
            }
            forced = probed
        }
        ctx.pointee.pb = io.pb
        return (io, io.isSeekable, forced.map { String(cString: $0.pointee.name) })
    }

    /// Whether libavformat's parsers can be left out: an MP4/MOV whose sample table lists every sample of each audio
    /// and video stream (not a fragmented one: its `moov` lists none) gives each packet's size, times, duration and
    /// sync flag from that table, and the parsers of H.264, HEVC, AV1, AAC and Opus would only read each frame's
    /// headers again (the H.264 one allocates and zeroes a copy of every frame: about a sixth of a copy's demuxing).
    /// The packets are the same as with them (`DemuxerTests`, against ffprobe), but for a frame cut short by the end
    /// of a truncated file: the H.264 parser refused it as a keyframe, and without the parser libavformat drops it
    /// (`AVFMT_FLAG_DISCARD_CORRUPT`: it is flagged corrupt, a frame missing its end). Other codecs keep their parser:
    /// MP3's frames and AC-3's last duration come from it, and a fragmented file's video durations.
    static func readsWithoutParsers(_ ctx: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        guard isMOV(String(cString: ctx.pointee.iformat.pointee.name)), ctx.pointee.nb_streams > 0 else { return false }
        let fromSampleTable = [AV_CODEC_ID_H264, AV_CODEC_ID_HEVC, AV_CODEC_ID_AV1, AV_CODEC_ID_AAC, AV_CODEC_ID_OPUS]
        for i in 0..<Int(ctx.pointee.nb_streams) {
            guard let st = ctx.pointee.streams[i], let par = st.pointee.codecpar else { return false }
            let type = par.pointee.codec_type
            guard type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO else { continue }
            guard fromSampleTable.contains(par.pointee.codec_id), st.pointee.nb_frames > 0 else { return false }
            // A video track whose every sample is marked sync (an MP4 without `stss`, which says so, or a writer that
            // left it out) keeps the parser: its keyframes are then read from the frames themselves, as before.
            if type == AVMEDIA_TYPE_VIDEO && !indexEntries(st).contains(where: { $0.flags & AVINDEX_KEYFRAME == 0 }) {
                return false
            }
        }
        return true
    }

    static let moovAtEndExplanation =
        "this MP4 has its index (moov) at the end and cannot be read from a pipe; "
        + "remux it with `ffmpeg -i in.mp4 -c copy -movflags +faststart out.mp4`, pass the file path instead, "
        + "or pipe a fragmented MP4 (-movflags +frag_keyframe+empty_moov) or an MPEG-TS stream (-f mpegts)"

    static func emptyOrUnknown(_ code: Int32, seekable: Bool) -> String {
        "\(FFmpegError.string(for: code)) (not a recognised media format\(seekable ? "" : ", or the pipe was empty"))"
    }

    static func hasExactIndex(_ formatName: String) -> Bool {
        isMOV(formatName) || formatName.hasPrefix("matroska")
    }

    static func isMOV(_ formatName: String) -> Bool {
        formatName.split(separator: ",").contains { $0 == "mov" || $0 == "mp4" }
    }

    /// After the header was read from a non-seekable input: does the first sample lie behind us?
    /// (true when `moov` came after `mdat`, so the samples were already streamed past).
    static func moovIsAtEnd(_ ctx: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        guard let pb = ctx.pointee.pb else { return false }
        let position = avio_tell(pb)
        for i in 0..<Int(ctx.pointee.nb_streams) {
            guard let st = ctx.pointee.streams[i], avformat_index_get_entries_count(st) > 0,
                  let first = avformat_index_get_entry(st, 0) else { continue }
            if first.pointee.pos < position { return true }
        }
        return false
    }

    static func isLocalOrPipe(_ url: String) -> Bool {
        url.hasPrefix("pipe:") || url.hasPrefix("file:") || !url.contains(":")
    }

    static func firstKey(_ dict: OpaquePointer?) -> String? {
        guard let dict, let entry = av_dict_get(dict, "", nil, AV_DICT_IGNORE_SUFFIX) else { return nil }
        return String(cString: entry.pointee.key)
    }
}

/// The byte stream under a demuxer when we open it ourselves: `avio_open2` for files (and `file:`),
/// a poll()-based reader for pipes (`pipe:N`, `-`), so blocked reads stay interruptible.
/// A regular file given as a descriptor (`< movie.mp4`) is reopened through `/dev/fd/N`, so it can seek.
final class InputIO {
    private(set) var pb: UnsafeMutablePointer<AVIOContext>?
    private var reader: UnsafeMutablePointer<CFFPipeReader>?
    let isSeekable: Bool

    init(url: String, interrupt: AVIOInterruptCB, options: inout OpaquePointer?, context: String) throws {
        var url = url
        if url.hasPrefix("pipe:") {
            let fdText = url.dropFirst(5)
            guard let fd = Int32(fdText.isEmpty ? "0" : fdText), fd >= 0 else {
                throw FFmpegError.invalid(context, "'\(url)' is not a file descriptor", call: "avio_open2")
            }
            let kind = cff_fd_kind(fd)
            if kind < 0 { throw FFmpegError(code: kind, call: "fstat", context: context) }
            if kind == 1 {
                url = "file:/dev/fd/\(fd)"
            } else {
                // Stall timeout for pipes: FFmpeg's protocol option name, in microseconds.
                var stall: Int64 = 0
                if let entry = av_dict_get(options, "rw_timeout", nil, 0) {
                    stall = Int64(String(cString: entry.pointee.value)) ?? 0
                    av_dict_set(&options, "rw_timeout", nil, 0)
                }
                let reader = UnsafeMutablePointer<CFFPipeReader>.allocate(capacity: 1)
                reader.initialize(to: CFFPipeReader(fd: fd, interrupt: interrupt, stall_timeout_us: stall, bytes_read: 0))
                let size: Int32 = 1 << 18
                guard let buffer = av_malloc(Int(size)),
                      let pb = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), size, 0, reader,
                                                  cff_pipe_read, nil, nil) else {
                    reader.deallocate()
                    throw FFmpegError(code: AV.enomem, call: "avio_alloc_context", context: context)
                }
                self.pb = pb
                self.reader = reader
                isSeekable = false
                return
            }
        }
        var interrupt = interrupt
        var pb: UnsafeMutablePointer<AVIOContext>?
        try check(avio_open2(&pb, url, AVIO_FLAG_READ, &interrupt, &options), "avio_open2", context)
        self.pb = pb
        isSeekable = (pb!.pointee.seekable & AVIO_SEEKABLE_NORMAL) != 0
    }

    /// Nothing could be read at all (an empty file or a pipe closed before any data).
    var isEmpty: Bool {
        if let reader { return reader.pointee.bytes_read == 0 }
        guard let pb else { return false }
        return avio_size(pb) == 0
    }

    func close() {
        if let reader {
            if let pb { av_freep(&pb.pointee.buffer) }
            avio_context_free(&pb)
            reader.deallocate()
            self.reader = nil
        } else if pb != nil {
            avio_closep(&pb)
        }
    }

    deinit { close() }
}
