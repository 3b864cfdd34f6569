#ifndef CGIF_H
#define CGIF_H

/*
 * A small shim over giflib: the block walk in C before giflib sees a byte, then, in full mode,
 * giflib's streaming decoder over every frame. giflib reports errors as codes (no longjmp); the
 * shim is here so the walk and the limits run before giflib allocates.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result codes of cgif_check. */
enum {
    CGIF_OK = 0,
    CGIF_NOT_FORMAT = 1,
    CGIF_BROKEN = 2
};

/* Most frames (image descriptors) a GIF may have. */
#define CGIF_MAX_FRAMES 10000
/* Most pixels full mode decodes over all frames (4 x 16384 x 16384; giflib decodes about 30 ns a
   pixel here, so some 30 s): a long animation of large frames is a CPU bomb of few bytes. */
#define CGIF_MAX_FULL_PIXELS (1ull << 30)

/* The outcome of checking one GIF body. */
typedef struct {
    int code;               /* CGIF_OK, CGIF_NOT_FORMAT or CGIF_BROKEN */
    uint32_t width, height; /* the logical screen, when read */
    uint32_t frames;        /* image descriptors */
    char message[200];      /* NUL-terminated; empty when code is CGIF_OK */
} cgif_result;

/*
 * Checks that data[0..<len] is one whole, well-formed GIF.
 *
 * Structure mode (full_decode == 0): signature GIF87a or GIF89a; logical screen (not empty, within
 * max_dimension; 0 means 65535) and its global colour table; then every block: extensions and
 * their sub-blocks, image descriptors (each frame within max_dimension, at most
 * CGIF_MAX_FRAMES), local colour tables, an LZW minimum code size of 2 to 8 and the data
 * sub-blocks; at least one frame; the trailer 0x3B last, with nothing after it. A frame need not
 * lie inside the logical screen (browsers draw what fits), but each is within max_dimension.
 * Full mode (full_decode != 0): also decodes every row of every frame through giflib's streaming
 * API (DGifGetLine into one row buffer: memory does not grow with the frame count or size), when
 * the frames hold at most CGIF_MAX_FULL_PIXELS in all.
 * Never crashes on arbitrary input; data may be NULL when len is 0.
 */
void cgif_check(const uint8_t *data, size_t len, int full_decode, uint32_t max_dimension, cgif_result *out);

#ifdef __cplusplus
}
#endif

#endif
