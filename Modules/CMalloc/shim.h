#ifndef CMALLOC_SHIM_H
#define CMALLOC_SHIM_H
/* glibc's mallopt(3), which Swift's Glibc module leaves out (<malloc.h>). */
#include <malloc.h>

static inline int cmalloc_arena_max(void) { return M_ARENA_MAX; }
static inline int cmalloc_mmap_threshold(void) { return M_MMAP_THRESHOLD; }
static inline int cmalloc_trim_threshold(void) { return M_TRIM_THRESHOLD; }
#endif
