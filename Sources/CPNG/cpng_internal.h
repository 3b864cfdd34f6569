#ifndef CPNG_INTERNAL_H
#define CPNG_INTERNAL_H

/* What cpng.c and cpng_stream.c share; not part of the module's interface. */

#include "cpng.h"

#include <png.h>

/* Largest single chunk libpng may allocate for (iCCP, zTXt, unknown chunks...). */
#define CPNG_CHUNK_MALLOC_MAX (8u * 1024u * 1024u)
/* Most ancillary chunks (tEXt, sPLT, unknown) libpng keeps before giving up. */
#define CPNG_CHUNK_CACHE_MAX 128u
/* The PNG specification's limit on widths, heights and chunk lengths. */
#define CPNG_PNG_MAX 0x7fffffffu

#define CPNG_HIDDEN __attribute__((visibility("hidden")))

CPNG_HIDDEN extern const uint8_t cpng_signature[8];
/* Has libpng skip (CRC-checked, never stored or inflated) the ancillary chunks it would otherwise
 * keep whole: text (tEXt, zTXt, iTXt), ICC profiles (iCCP) and suggested palettes (sPLT). None
 * bears on whether the image is sound, and each may be 8 MiB inflated from a few KiB, up to 128
 * of them: a 1 MB PNG of zTXt chunks held 1 GiB through the check. */
CPNG_HIDDEN void cpng_skip_kept_chunks(png_structp png);
CPNG_HIDDEN void cpng_fail(cpng_result *out, int code, const char *format, ...);
CPNG_HIDDEN uint32_t cpng_be32(const uint8_t *p);
CPNG_HIDDEN int cpng_is_letter(uint8_t c);
/* Copies a chunk type into a printable, NUL-terminated name. */
CPNG_HIDDEN void cpng_chunk_name(const uint8_t *type, char name[5]);
/* libpng's error callback (keeps the message in the cpng_result error pointer, then jumps). */
CPNG_HIDDEN void cpng_error_fn(png_structp png, png_const_charp message);
CPNG_HIDDEN void cpng_warning_fn(png_structp png, png_const_charp message);
/* Explains why a body without the PNG signature is not a PNG, from its first `avail` bytes and
   its length. */
CPNG_HIDDEN void cpng_describe_not_png(const uint8_t *data, size_t avail, size_t len, cpng_result *out);

#endif
