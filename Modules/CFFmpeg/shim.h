#ifndef CFFMPEG_SHIM_H
#define CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/opt.h>
#include <libavutil/imgutils.h>
#include <libavutil/channel_layout.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>

/* Macros Swift cannot import, as functions returning the real values. */
static inline int cff_averror_eof(void) { return AVERROR_EOF; }
static inline int cff_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int cff_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int64_t cff_nopts_value(void) { return AV_NOPTS_VALUE; }
#endif
