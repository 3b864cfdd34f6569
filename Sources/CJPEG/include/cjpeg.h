#ifndef CJPEG_H
#define CJPEG_H

/*
 * A small shim over libjpeg-turbo that Swift can call safely.
 *
 * libjpeg reports fatal errors through error_exit, which must longjmp (or the process exits),
 * and a longjmp must never cross Swift frames: every libjpeg call lives in one function here
 * that owns its setjmp and returns plain values.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result codes of cjpeg_check. */
enum {
    CJPEG_OK = 0,
    CJPEG_NOT_FORMAT = 1,
    CJPEG_BROKEN = 2
};

/* Most scans (SOS markers) a file may have: a progressive JPEG from cjpeg or jpegtran has about
   10, mozjpeg about 20; every scan costs a pass over the whole coefficient buffer, so thousands
   of tiny scans are libjpeg-turbo's known CPU bomb. */
#define CJPEG_MAX_SCANS 100
/* libjpeg's cinfo->mem->max_memory_to_use in full mode: bounds the coefficient buffer of a
   progressive or multi-scan image (a baseline image needs one row of blocks). */
#define CJPEG_MAX_MEMORY (64L * 1024L * 1024L)

/* The outcome of checking one JPEG body. */
typedef struct {
    int code;               /* CJPEG_OK, CJPEG_NOT_FORMAT or CJPEG_BROKEN */
    uint32_t width, height; /* from the frame header, when it was read */
    uint32_t frames;        /* 1 for a good JPEG */
    char message[200];      /* NUL-terminated; empty when code is CJPEG_OK */
} cjpeg_result;

/*
 * Checks that data[0..<len] is one whole, well-formed JPEG.
 *
 * Structure mode (full_decode == 0): walks every marker and segment length from SOI to EOI
 * before libjpeg sees a byte (one frame header, at least one scan and at most CJPEG_MAX_SCANS,
 * entropy-coded data skipped through 0xFF00 stuffing and RSTn, EOI last); width or height over
 * max_dimension (0 means 65500) fails from the frame header. After EOI only 0x00/0xFF padding
 * or further whole JPEG streams (the appended images of MPF and gain maps), each walked alike,
 * may follow. Then jpeg_read_header on the first stream; any libjpeg warning fails.
 * Full mode (full_decode != 0): also decodes every scanline of the first stream, in at most
 * CJPEG_MAX_MEMORY, failing on the first corrupt-data warning.
 * Never crashes on arbitrary input; data may be NULL when len is 0.
 */
void cjpeg_check(const uint8_t *data, size_t len, int full_decode, uint32_t max_dimension,
                 cjpeg_result *out);

#ifdef __cplusplus
}
#endif

#endif
