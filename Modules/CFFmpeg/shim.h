#ifndef CFFMPEG_SHIM_H
#define CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/opt.h>
#include <libavutil/imgutils.h>
#include <libavutil/channel_layout.h>
#include <libavutil/pixdesc.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/dovi_meta.h>
#include <libavutil/time.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>
#include <errno.h>
#include <poll.h>
#include <unistd.h>
#include <sys/stat.h>

/* Macros Swift cannot import, as functions returning the real values.
 * Tests/FFmpegBridgeTests checks each against its documented constant. */
static inline int cff_averror_eof(void) { return AVERROR_EOF; }
static inline int cff_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int cff_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int cff_averror_exit(void) { return AVERROR_EXIT; }
static inline int cff_averror_einval(void) { return AVERROR(EINVAL); }
static inline int cff_averror_enomem(void) { return AVERROR(ENOMEM); }
static inline int cff_averror_protocol_not_found(void) { return AVERROR_PROTOCOL_NOT_FOUND; }
static inline int cff_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
static inline int cff_averror_encoder_not_found(void) { return AVERROR_ENCODER_NOT_FOUND; }
static inline int64_t cff_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int cff_time_base(void) { return AV_TIME_BASE; }
static inline int cff_averror_etimedout(void) { return AVERROR(ETIMEDOUT); }

/* av_err2str is a macro over a compound literal: write into the caller's buffer instead.
 * Always NUL-terminates; returns av_strerror's result (< 0 if the code is unknown, with a generic text). */
static inline int cff_strerror(int errnum, char *buf, size_t size) {
    if (size == 0) return -1;
    int r = av_strerror(errnum, buf, size);
    buf[size - 1] = 0;
    return r;
}

/* sws_scale over whole frames (avoids casting the data/linesize tuples in Swift). */
static inline int cff_sws_scale_frame(struct SwsContext *c, AVFrame *dst, const AVFrame *src) {
    return sws_scale(c, (const uint8_t *const *)src->data, src->linesize, 0, src->height,
                     dst->data, dst->linesize);
}

/* Bytes of one picture laid out by av_image_fill_arrays with 64-byte aligned lines (and plane starts). */
static inline int cff_image_buffer_size(int format, int width, int height) {
    return av_image_get_buffer_size((enum AVPixelFormat)format, width, height, 64);
}

/* Gives `f` (format, width and height set, no buffers yet) its picture in one buffer from `pool`, whose
 * buffers hold cff_image_buffer_size bytes. The buffer goes back to the pool when its last reference goes. */
static inline int cff_frame_get_pool_buffer(AVFrame *f, AVBufferPool *pool) {
    AVBufferRef *buf = av_buffer_pool_get(pool);
    if (!buf) return AVERROR(ENOMEM);
    int r = av_image_fill_arrays(f->data, f->linesize, buf->data, (enum AVPixelFormat)f->format,
                                 f->width, f->height, 64);
    if (r < 0) { av_buffer_unref(&buf); return r; }
    f->buf[0] = buf;
    f->extended_data = f->data;
    return 0;
}

/* swr_convert into one interleaved output buffer; `in` NULL drains the resampler. */
static inline int cff_swr_convert_to_packed(struct SwrContext *s, uint8_t *out, int out_count, const AVFrame *in) {
    uint8_t *outs[1] = { out };
    if (in == NULL) return swr_convert(s, outs, out_count, NULL, 0);
    return swr_convert(s, outs, out_count, (const uint8_t **)in->extended_data, in->nb_samples);
}

/* Reading a pipe (`-` / `pipe:N`) through our own AVIO read callback: poll() with a short timeout, so a
 * blocked read still notices the interrupt callback (and an optional stall timeout) without putting the
 * descriptor in non-blocking mode (FFmpeg's retry loop then sleeps 1 ms per empty read, which costs
 * throughput on raw video pipes). The descriptor is not closed here: it belongs to the process. */
typedef struct CFFPipeReader {
    int fd;
    AVIOInterruptCB interrupt;
    int64_t stall_timeout_us;   /* 0 = wait forever */
    int64_t bytes_read;         /* total so far */
} CFFPipeReader;

static inline int cff_pipe_read(void *opaque, uint8_t *buf, int size) {
    CFFPipeReader *r = (CFFPipeReader *)opaque;
    int64_t waiting_since = av_gettime_relative();
    for (;;) {
        if (r->interrupt.callback && r->interrupt.callback(r->interrupt.opaque)) return AVERROR_EXIT;
        struct pollfd p = { .fd = r->fd, .events = POLLIN, .revents = 0 };
        int n = poll(&p, 1, 50);
        if (n < 0) {
            if (errno == EINTR) continue;
            return AVERROR(errno);
        }
        if (n == 0) {
            if (r->stall_timeout_us > 0 && av_gettime_relative() - waiting_since > r->stall_timeout_us)
                return AVERROR(ETIMEDOUT);
            continue;
        }
        ssize_t got = read(r->fd, buf, (size_t)size);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return AVERROR(errno);
        }
        if (got == 0) return AVERROR_EOF;
        r->bytes_read += got;
        return (int)got;
    }
}

/* What kind of descriptor `fd` is: 1 regular file, 2 pipe/socket/terminal/other stream, -errno if invalid. */
static inline int cff_fd_kind(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -errno;
    return S_ISREG(st.st_mode) ? 1 : 2;
}
#endif
