#ifndef CWEBP_H
#define CWEBP_H

/*
 * A small shim over libwebp and libwebpdemux: the RIFF walk in C before libwebp sees a byte,
 * then libwebp's own header parse and, in full mode, its decoders. libwebp does not longjmp; the
 * shim is here so that the walk and the memory estimate run before any decode allocation.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result codes of cwebp_check. */
enum {
    CWEBP_OK = 0,
    CWEBP_NOT_FORMAT = 1,
    CWEBP_BROKEN = 2
};

/* Most frames (ANMF chunks) an animation may have. */
#define CWEBP_MAX_FRAMES 10000
/* Most canvas pixels full mode composites over all frames of an animation (WebPAnimDecoder
   rewrites the whole canvas for every frame): frames x canvas at most 2^30. */
#define CWEBP_MAX_FULL_PIXELS (1ull << 30)
/* Most memory full mode lets libwebp's decoders need, estimated from the headers before any
   decode: 4 bytes a pixel for lossless data (VP8L keeps the whole image), about 5 for lossy
   data with an alpha plane, nothing size-dependent for lossy data without one (decoded into a
   1x1 scaled output), and two RGBA canvases for an animation (WebPAnimDecoder). */
#define CWEBP_MAX_MEMORY (64ull * 1024ull * 1024ull)

/* The outcome of checking one WebP body. */
typedef struct {
    int code;               /* CWEBP_OK, CWEBP_NOT_FORMAT or CWEBP_BROKEN */
    uint32_t width, height; /* the canvas (VP8X) or the bitstream's size, when read */
    uint32_t frames;        /* ANMF chunks of an animation; 1 for a still image */
    char message[200];      /* NUL-terminated; empty when code is CWEBP_OK */
} cwebp_result;

/*
 * Checks that data[0..<len] is one whole, well-formed WebP.
 *
 * Structure mode (full_decode == 0): the RIFF size equals the data's length (no more, no less);
 * every chunk, padded to an even size, lies within it; the first chunk is VP8, VP8L or VP8X;
 * VP8 and VP8L headers are parsed (key frame, start code, signature, version); a VP8X canvas and
 * every ANMF frame within max_dimension (0 means 16777216), frames within the canvas, at most
 * CWEBP_MAX_FRAMES, ANIM before them; then WebPGetFeatures, and WebPDemux for VP8X files.
 * Full mode (full_decode != 0): also WebPDecode for a still image, WebPAnimDecoder for every
 * frame of an animation, within CWEBP_MAX_MEMORY and CWEBP_MAX_FULL_PIXELS. Never crashes on
 * arbitrary input.
 */
void cwebp_check(const uint8_t *data, size_t len, int full_decode, uint32_t max_dimension,
                 cwebp_result *out);

#ifdef __cplusplus
}
#endif

#endif
