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
#include <libavutil/time.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>
#include <fcntl.h>
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

/* swr_convert into one interleaved output buffer; `in` NULL drains the resampler. */
static inline int cff_swr_convert_to_packed(struct SwrContext *s, uint8_t *out, int out_count, const AVFrame *in) {
    uint8_t *outs[1] = { out };
    if (in == NULL) return swr_convert(s, outs, out_count, NULL, 0);
    return swr_convert(s, outs, out_count, (const uint8_t **)in->extended_data, in->nb_samples);
}

/* For `pipe:N` inputs: if fd N is a pipe or socket, make it non-blocking so FFmpeg's I/O loop polls it
 * (sleeping 1 ms on EAGAIN) and checks the interrupt callback and rw_timeout between tries.
 * Returns the previous file status flags to restore later, or -1 if nothing was changed. */
static inline int cff_make_pipe_nonblocking(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) return -1;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || (flags & O_NONBLOCK)) return -1;
    if (fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return -1;
    return flags;
}
static inline void cff_restore_fd_flags(int fd, int flags) { if (flags >= 0) fcntl(fd, F_SETFL, flags); }
#endif
