#ifndef CPNG_H
#define CPNG_H

/*
 * A small shim over libpng that Swift can call safely.
 *
 * libpng reports errors with longjmp, which must never cross Swift frames, so every
 * libpng call lives in a function here that owns its setjmp and returns plain values.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result codes of cpng_check. */
enum {
    CPNG_OK = 0,
    CPNG_NOT_PNG = 1,
    CPNG_BROKEN = 2
};

/* The outcome of checking one PNG body. */
typedef struct {
    int code;               /* CPNG_OK, CPNG_NOT_PNG or CPNG_BROKEN */
    uint32_t width, height; /* from IHDR, when it was read */
    int bit_depth, color_type;
    char message[200];      /* NUL-terminated; empty when code is CPNG_OK */
} cpng_result;

/*
 * Checks that data[0..<len] is one whole, well-formed PNG.
 *
 * Structural mode (full_decode == 0): signature, every chunk's length (within the data;
 * no chunk but IDAT over 8 MiB), type and CRC, IEND last and nothing after it, all before
 * libpng sees a byte; then IHDR through png_read_info (with max_dimension as the width and
 * height limit; 0 means the PNG maximum), libpng's benign errors counting as errors.
 * Full mode (full_decode != 0): additionally inflates and unfilters every row and reads
 * to png_read_end. Never crashes on arbitrary input; data may be NULL when len is 0.
 */
void cpng_check(const uint8_t *data, size_t len, int full_decode, uint32_t max_dimension,
                cpng_result *out);

/*
 * The same check over a body handed over a piece at a time, in memory that does not grow with
 * the body (at most one ancillary chunk, 8 MiB, is held, by libpng): for files too large to
 * hold. The chunk walk runs on each piece before libpng sees it, so libpng only meets chunk
 * headers the walk has accepted. Structural mode stops libpng at the first IDAT, as
 * png_read_info does; full mode inflates and unfilters every row through libpng's progressive
 * reader. Feed pieces with cpng_stream_feed (it returns nonzero once the body has failed and
 * more bytes cannot help), then cpng_stream_finish fills the result and frees the stream.
 */
typedef struct cpng_stream cpng_stream;
cpng_stream *cpng_stream_new(int full_decode, uint32_t max_dimension);
int cpng_stream_feed(cpng_stream *stream, const uint8_t *data, size_t len);
void cpng_stream_finish(cpng_stream *stream, cpng_result *out);

/*
 * Encodes a width x height RGB 8-bit PNG of one colour into a malloc'd buffer.
 *
 * Returns 0 and sets *out_data / *out_len on success (free with cpng_free); returns
 * nonzero and leaves them NULL / 0 on failure. Output is deterministic (no tIME chunk).
 */
int cpng_encode_solid(uint32_t width, uint32_t height, uint8_t r, uint8_t g, uint8_t b,
                      uint8_t **out_data, size_t *out_len);

/* Frees a buffer returned by this library. */
void cpng_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
