#include "cpng.h"
#include "cpng_internal.h"

#include <png.h>
#include <zlib.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const uint8_t cpng_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

/* Memory the read callback serves bytes from. */
typedef struct {
    const uint8_t *data;
    size_t len;
    size_t pos;
} cpng_reader;

/* A growing malloc'd buffer the write callback appends to. */
typedef struct {
    uint8_t *data;
    size_t len;
    size_t cap;
} cpng_buffer;

void cpng_skip_kept_chunks(png_structp png) {
    static const png_byte chunks[] = "tEXt\0zTXt\0iTXt\0iCCP\0sPLT\0";
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, chunks, 5);
}

void cpng_fail(cpng_result *out, int code, const char *format, ...) {
    va_list args;
    out->code = code;
    va_start(args, format);
    vsnprintf(out->message, sizeof out->message, format, args);
    va_end(args);
}

uint32_t cpng_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

int cpng_is_letter(uint8_t c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* Copies a chunk type into a printable, NUL-terminated name. */
void cpng_chunk_name(const uint8_t *type, char name[5]) {
    for (int i = 0; i < 4; i++) {
        name[i] = cpng_is_letter(type[i]) ? (char)type[i] : '?';
    }
    name[4] = '\0';
}

/* libpng error callback: keeps the message (when there is a result to keep it in) and jumps. */
void cpng_error_fn(png_structp png, png_const_charp message) {
    cpng_result *out = (cpng_result *)png_get_error_ptr(png);
    if (out != NULL) {
        snprintf(out->message, sizeof out->message, "%s", message != NULL ? message : "libpng error");
    }
    png_longjmp(png, 1);
}

/* libpng warning callback: warnings (odd but usable ancillary data) are not failures. */
void cpng_warning_fn(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

static void cpng_read_fn(png_structp png, png_bytep dst, size_t n) {
    cpng_reader *reader = (cpng_reader *)png_get_io_ptr(png);
    if (n > reader->len - reader->pos) {
        png_error(png, "truncated: data ends inside a chunk");
    }
    memcpy(dst, reader->data + reader->pos, n);
    reader->pos += n;
}

static void cpng_write_fn(png_structp png, png_bytep src, size_t n) {
    cpng_buffer *buffer = (cpng_buffer *)png_get_io_ptr(png);
    if (n > buffer->cap - buffer->len) {
        size_t cap = buffer->cap != 0 ? buffer->cap : 4096;
        while (n > cap - buffer->len) {
            if (cap > SIZE_MAX / 2) {
                png_error(png, "encoded image too large");
            }
            cap *= 2;
        }
        uint8_t *grown = (uint8_t *)realloc(buffer->data, cap);
        if (grown == NULL) {
            png_error(png, "out of memory");
        }
        buffer->data = grown;
        buffer->cap = cap;
    }
    memcpy(buffer->data + buffer->len, src, n);
    buffer->len += n;
}

static void cpng_flush_fn(png_structp png) {
    (void)png;
}

void cpng_describe_not_png(const uint8_t *data, size_t avail, size_t len, cpng_result *out) {
    if (len == 0) {
        cpng_fail(out, CPNG_NOT_PNG, "empty body");
        return;
    }
    size_t skip = 0;
    while (skip < avail && skip < 64 && (data[skip] == ' ' || data[skip] == '\t' || data[skip] == '\r' ||
                                       data[skip] == '\n' || data[skip] == 0xef || data[skip] == 0xbb ||
                                       data[skip] == 0xbf)) {
        skip++;
    }
    if (skip < avail && data[skip] == '<') {
        cpng_fail(out, CPNG_NOT_PNG, "body looks like HTML or XML (%zu bytes)", len);
    } else if (avail >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff) {
        cpng_fail(out, CPNG_NOT_PNG, "body is a JPEG (%zu bytes)", len);
    } else if (avail >= 4 && memcmp(data, "GIF8", 4) == 0) {
        cpng_fail(out, CPNG_NOT_PNG, "body is a GIF (%zu bytes)", len);
    } else if (avail >= 12 && memcmp(data, "RIFF", 4) == 0 && memcmp(data + 8, "WEBP", 4) == 0) {
        cpng_fail(out, CPNG_NOT_PNG, "body is a WebP (%zu bytes)", len);
    } else if (skip < avail && (data[skip] == '{' || data[skip] == '[')) {
        cpng_fail(out, CPNG_NOT_PNG, "body looks like JSON (%zu bytes)", len);
    } else {
        cpng_fail(out, CPNG_NOT_PNG, "no PNG signature (%zu bytes)", len);
    }
}

/*
 * Walks every chunk after the signature: length, type, CRC over type + data, IHDR first,
 * IDAT present and consecutive, IEND last with nothing after it. Returns 1 when whole;
 * otherwise fills `out` and returns 0. Pure C, no libpng, no allocation.
 */
static int cpng_walk_chunks(const uint8_t *data, size_t len, cpng_result *out) {
    size_t pos = 8;
    int seen_idat = 0;
    int idat_ended = 0;
    for (;;) {
        if (pos == len) {
            cpng_fail(out, CPNG_BROKEN, "truncated: no IEND chunk (data ends at offset %zu)", pos);
            return 0;
        }
        if (len - pos < 8) {
            cpng_fail(out, CPNG_BROKEN, "truncated: chunk header at offset %zu runs past end of data", pos);
            return 0;
        }
        uint32_t length = cpng_be32(data + pos);
        const uint8_t *type = data + pos + 4;
        char name[5];
        cpng_chunk_name(type, name);
        if (!cpng_is_letter(type[0]) || !cpng_is_letter(type[1]) || !cpng_is_letter(type[2]) ||
            !cpng_is_letter(type[3])) {
            cpng_fail(out, CPNG_BROKEN, "invalid chunk type at offset %zu", pos);
            return 0;
        }
        if (length > CPNG_PNG_MAX) {
            cpng_fail(out, CPNG_BROKEN, "chunk %s at offset %zu has invalid length %u", name, pos, length);
            return 0;
        }
        if ((size_t)length + 4 > len - pos - 8) {
            cpng_fail(out, CPNG_BROKEN, "truncated: chunk %s at offset %zu runs past end of data", name, pos);
            return 0;
        }
        /* libpng reads any other chunk whole into memory: refuse what its limit would. */
        if (length > CPNG_CHUNK_MALLOC_MAX && memcmp(type, "IDAT", 4) != 0) {
            cpng_fail(out, CPNG_BROKEN, "chunk %s at offset %zu is %u bytes, over the %u-byte limit", name, pos,
                      length, CPNG_CHUNK_MALLOC_MAX);
            return 0;
        }
        uint32_t stored = cpng_be32(data + pos + 8 + length);
        uint32_t computed = (uint32_t)crc32(0L, type, (uInt)length + 4);
        if (stored != computed) {
            cpng_fail(out, CPNG_BROKEN, "CRC mismatch in %s chunk at offset %zu", name, pos);
            return 0;
        }
        int is_ihdr = memcmp(type, "IHDR", 4) == 0;
        if ((pos == 8) != is_ihdr) {
            cpng_fail(out, CPNG_BROKEN, "%s chunk at offset %zu where IHDR must be first and only", name, pos);
            return 0;
        }
        if (memcmp(type, "IDAT", 4) == 0) {
            if (idat_ended) {
                cpng_fail(out, CPNG_BROKEN, "IDAT chunks not consecutive (offset %zu)", pos);
                return 0;
            }
            seen_idat = 1;
        } else if (seen_idat) {
            idat_ended = 1;
        }
        if (memcmp(type, "IEND", 4) == 0) {
            if (!seen_idat) {
                cpng_fail(out, CPNG_BROKEN, "no IDAT chunk before IEND");
                return 0;
            }
            if (length != 0) {
                cpng_fail(out, CPNG_BROKEN, "IEND chunk has length %u, not 0", length);
                return 0;
            }
            size_t end = pos + 12;
            if (end != len) {
                cpng_fail(out, CPNG_BROKEN, "data after IEND (%zu bytes from offset %zu)", len - end, end);
                return 0;
            }
            return 1;
        }
        pos += 12 + (size_t)length;
    }
}

/*
 * Everything that calls libpng on the read side; owns the setjmp. `data` has the PNG
 * signature and at least 8 bytes.
 *
 * The chunk walk comes first: libpng is handed only a file whose every chunk fits in it, so a
 * chunk that claims 2 GiB never makes libpng allocate (and zero) 2 GiB. Its limits are errors
 * too (benign errors off), not warnings it reads past.
 */
static void cpng_check_png(const uint8_t *data, size_t len, int full_decode, uint32_t max_dimension,
                           cpng_result *out) {
    if (!cpng_walk_chunks(data, len, out)) {
        return;
    }
    cpng_reader reader = {data, len, 0};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, out, cpng_error_fn, cpng_warning_fn);
    if (png == NULL) {
        cpng_fail(out, CPNG_BROKEN, "out of memory (libpng read struct)");
        return;
    }
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_read_struct(&png, NULL, NULL);
        cpng_fail(out, CPNG_BROKEN, "out of memory (libpng info struct)");
        return;
    }
    /* Changed after setjmp and read after longjmp, so it must be volatile. */
    png_bytep volatile row = NULL;

    if (setjmp(png_jmpbuf(png)) != 0) {
        /* cpng_error_fn has written the message into out->message. */
        out->code = CPNG_BROKEN;
        if (out->message[0] == '\0') {
            snprintf(out->message, sizeof out->message, "libpng error");
        }
        free(row);
        png_destroy_read_struct(&png, &info, NULL);
        return;
    }

    png_set_benign_errors(png, 0);
    png_set_user_limits(png, max_dimension, max_dimension);
    png_set_chunk_malloc_max(png, CPNG_CHUNK_MALLOC_MAX);
    png_set_chunk_cache_max(png, CPNG_CHUNK_CACHE_MAX);
    cpng_skip_kept_chunks(png);
    png_set_crc_action(png, PNG_CRC_ERROR_QUIT, PNG_CRC_ERROR_QUIT);
    png_set_read_fn(png, &reader, cpng_read_fn);

    png_read_info(png, info);
    out->width = png_get_image_width(png, info);
    out->height = png_get_image_height(png, info);
    out->bit_depth = png_get_bit_depth(png, info);
    out->color_type = png_get_color_type(png, info);

    if (full_decode) {
        /* No pixel transforms: inflating and unfiltering every row is what proves the data. */
        int passes = png_set_interlace_handling(png);
        png_read_update_info(png, info);
        size_t rowbytes = png_get_rowbytes(png, info);
        row = (png_bytep)malloc(rowbytes != 0 ? rowbytes : 1);
        if (row == NULL) {
            cpng_fail(out, CPNG_BROKEN, "out of memory (row of %zu bytes)", rowbytes);
        } else {
            for (int pass = 0; pass < passes; pass++) {
                for (uint32_t y = 0; y < out->height; y++) {
                    png_read_row(png, row, NULL);
                }
            }
            png_read_end(png, NULL);
        }
    }

    free(row);
    png_destroy_read_struct(&png, &info, NULL);
}

void cpng_check(const uint8_t *data, size_t len, int full_decode, uint32_t max_dimension, cpng_result *out) {
    if (out == NULL) {
        return;
    }
    memset(out, 0, sizeof *out);
    if (max_dimension == 0 || max_dimension > CPNG_PNG_MAX) {
        max_dimension = CPNG_PNG_MAX;
    }
    if (data == NULL || len == 0) {
        cpng_describe_not_png(data, 0, 0, out);
        return;
    }
    size_t prefix = len < 8 ? len : 8;
    if (memcmp(data, cpng_signature, prefix) != 0) {
        cpng_describe_not_png(data, len, len, out);
        return;
    }
    if (len < 8) {
        cpng_fail(out, CPNG_BROKEN, "truncated: %zu bytes, shorter than the PNG signature", len);
        return;
    }
    /* Refuse oversized images from the header alone, with a clearer message than libpng's. */
    if (len >= 24 && memcmp(data + 12, "IHDR", 4) == 0) {
        uint32_t width = cpng_be32(data + 16);
        uint32_t height = cpng_be32(data + 20);
        if (width > max_dimension || height > max_dimension) {
            cpng_fail(out, CPNG_BROKEN, "image %ux%u exceeds limit %u", width, height, max_dimension);
            return;
        }
    }
    cpng_check_png(data, len, full_decode, max_dimension, out);
}

int cpng_encode_solid(uint32_t width, uint32_t height, uint8_t r, uint8_t g, uint8_t b, uint8_t **out_data,
                      size_t *out_len) {
    if (out_data == NULL || out_len == NULL) {
        return 1;
    }
    *out_data = NULL;
    *out_len = 0;
    if (width == 0 || height == 0 || width > CPNG_PNG_MAX || height > CPNG_PNG_MAX ||
        (size_t)width > SIZE_MAX / 8) {
        return 1;
    }
    /* One colour needs a one-entry palette at 1 bit per pixel: every row is zeros, 24x less
       to compress than RGB, so the built-in server encodes a 600x600 image in well under 1 ms.
       Heap, not stack: both are read after a longjmp. */
    cpng_buffer *buffer = (cpng_buffer *)calloc(1, sizeof *buffer);
    png_bytep row = (png_bytep)calloc(((size_t)width + 7) / 8, 1);
    if (buffer == NULL || row == NULL) {
        free(buffer);
        free(row);
        return 2;
    }
    png_color palette[1] = {{r, g, b}};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, cpng_error_fn, cpng_warning_fn);
    png_infop info = png != NULL ? png_create_info_struct(png) : NULL;
    if (png == NULL || info == NULL) {
        png_destroy_write_struct(&png, NULL);
        free(buffer);
        free(row);
        return 2;
    }
    if (setjmp(png_jmpbuf(png)) != 0) {
        png_destroy_write_struct(&png, &info);
        free(buffer->data);
        free(buffer);
        free(row);
        return 2;
    }

    png_set_write_fn(png, buffer, cpng_write_fn, cpng_flush_fn);
    png_set_IHDR(png, info, width, height, 1, PNG_COLOR_TYPE_PALETTE, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_PLTE(png, info, palette, 1);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    png_write_info(png, info);
    for (uint32_t y = 0; y < height; y++) {
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);

    *out_data = buffer->data;
    *out_len = buffer->len;
    free(buffer);
    return 0;
}

void cpng_free(void *p) {
    free(p);
}
