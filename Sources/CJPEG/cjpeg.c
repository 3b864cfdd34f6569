#include "cjpeg.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

/* The JPEG format's (and libjpeg's JPEG_MAX_DIMENSION) limit on widths and heights. */
#define CJPEG_JPEG_MAX 65500u

static void cjpeg_fail(cjpeg_result *out, int code, const char *format, ...) {
    va_list args;
    out->code = code;
    va_start(args, format);
    vsnprintf(out->message, sizeof out->message, format, args);
    va_end(args);
}

static uint32_t cjpeg_be16(const uint8_t *p) {
    return ((uint32_t)p[0] << 8) | (uint32_t)p[1];
}

static int cjpeg_is_sof(uint8_t marker) {
    return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

/*
 * Walks one JPEG stream from its SOI at data[start] to its EOI: every segment within the data,
 * one frame header (SOFn) within max_dimension, 1 to CJPEG_MAX_SCANS scans whose entropy-coded
 * data is skipped through 0xFF00 stuffing and RSTn markers. Returns 1 and sets *end (the offset
 * after EOI) when whole; otherwise fills `out` and returns 0. Pure C, no allocation.
 */
static int cjpeg_walk(const uint8_t *data, size_t len, size_t start, uint32_t max_dimension, size_t *end,
                      cjpeg_result *out, int first) {
    size_t pos = start + 2;
    int seen_sof = 0;
    unsigned scans = 0;
    for (;;) {
        if (pos >= len) {
            cjpeg_fail(out, CJPEG_BROKEN, "truncated: no EOI marker (data ends at offset %zu)", len);
            return 0;
        }
        if (data[pos] != 0xFF) {
            cjpeg_fail(out, CJPEG_BROKEN, "expected a marker at offset %zu, found byte 0x%02x", pos, data[pos]);
            return 0;
        }
        size_t at = pos;
        while (pos < len && data[pos] == 0xFF) {
            pos++; /* fill bytes before a marker */
        }
        if (pos >= len) {
            cjpeg_fail(out, CJPEG_BROKEN, "truncated: no EOI marker (data ends at offset %zu)", len);
            return 0;
        }
        uint8_t marker = data[pos++];
        if (marker == 0xD9) {
            if (!seen_sof) {
                cjpeg_fail(out, CJPEG_BROKEN, "EOI at offset %zu before any frame header", at);
                return 0;
            }
            if (scans == 0) {
                cjpeg_fail(out, CJPEG_BROKEN, "EOI at offset %zu before any scan", at);
                return 0;
            }
            *end = pos;
            return 1;
        }
        if (marker == 0x00 || marker == 0x01 || marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7)) {
            cjpeg_fail(out, CJPEG_BROKEN, "unexpected marker 0xFF%02X at offset %zu", marker, at);
            return 0;
        }
        if (len - pos < 2) {
            cjpeg_fail(out, CJPEG_BROKEN, "truncated: segment 0xFF%02X at offset %zu runs past end of data", marker,
                       at);
            return 0;
        }
        uint32_t length = cjpeg_be16(data + pos);
        if (length < 2) {
            cjpeg_fail(out, CJPEG_BROKEN, "segment 0xFF%02X at offset %zu has invalid length %u", marker, at, length);
            return 0;
        }
        if (length > len - pos) {
            cjpeg_fail(out, CJPEG_BROKEN, "truncated: segment 0xFF%02X at offset %zu runs past end of data", marker,
                       at);
            return 0;
        }
        const uint8_t *body = data + pos + 2;
        uint32_t size = length - 2;
        pos += length;
        if (cjpeg_is_sof(marker)) {
            if (seen_sof) {
                cjpeg_fail(out, CJPEG_BROKEN, "second frame header at offset %zu", at);
                return 0;
            }
            if (size < 6 || body[5] == 0 || size != 6 + 3u * body[5]) {
                cjpeg_fail(out, CJPEG_BROKEN, "malformed frame header at offset %zu", at);
                return 0;
            }
            uint32_t height = cjpeg_be16(body + 1);
            uint32_t width = cjpeg_be16(body + 3);
            if (width == 0 || height == 0) {
                cjpeg_fail(out, CJPEG_BROKEN, "frame header at offset %zu declares %ux%u", at, width, height);
                return 0;
            }
            if (width > max_dimension || height > max_dimension) {
                cjpeg_fail(out, CJPEG_BROKEN, "image %ux%u exceeds limit %u", width, height, max_dimension);
                return 0;
            }
            if (first) {
                out->width = width;
                out->height = height;
            }
            seen_sof = 1;
        } else if (marker == 0xDA) {
            if (!seen_sof) {
                cjpeg_fail(out, CJPEG_BROKEN, "scan at offset %zu before the frame header", at);
                return 0;
            }
            if (size < 1 || body[0] == 0 || body[0] > 4 || size != 4 + 2u * body[0]) {
                cjpeg_fail(out, CJPEG_BROKEN, "malformed scan header at offset %zu", at);
                return 0;
            }
            if (++scans > CJPEG_MAX_SCANS) {
                cjpeg_fail(out, CJPEG_BROKEN, "more than %d scans (offset %zu)", CJPEG_MAX_SCANS, at);
                return 0;
            }
            /* Entropy-coded data: runs to the first 0xFF that is not stuffing (0xFF00), a restart
               marker (RSTn) or fill (0xFFFF...). */
            for (;;) {
                const uint8_t *ff = pos < len ? memchr(data + pos, 0xFF, len - pos) : NULL;
                if (ff == NULL || (size_t)(ff - data) + 1 >= len) {
                    cjpeg_fail(out, CJPEG_BROKEN, "truncated: data ends inside scan %u (from offset %zu)", scans, at);
                    return 0;
                }
                pos = (size_t)(ff - data);
                uint8_t next = data[pos + 1];
                if (next == 0x00 || (next >= 0xD0 && next <= 0xD7)) {
                    pos += 2;
                } else if (next == 0xFF) {
                    pos += 1;
                } else {
                    break;
                }
            }
        }
    }
}

/* libjpeg's error manager, with the jump target and the result its message goes to. */
typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    cjpeg_result *out;
} cjpeg_error;

static void cjpeg_keep_message(j_common_ptr cinfo) {
    cjpeg_error *error = (cjpeg_error *)cinfo->err;
    if (error->pub.msg_code == JERR_NO_BACKING_STORE || error->pub.msg_code == JERR_OUT_OF_MEMORY) {
        snprintf(error->out->message, sizeof error->out->message,
                 "decoding needs more than the %ld MiB memory limit", CJPEG_MAX_MEMORY >> 20);
        return;
    }
    char buffer[JMSG_LENGTH_MAX];
    (*error->pub.format_message)(cinfo, buffer);
    snprintf(error->out->message, sizeof error->out->message, "%s", buffer);
}

static void cjpeg_error_exit(j_common_ptr cinfo) {
    cjpeg_keep_message(cinfo);
    longjmp(((cjpeg_error *)cinfo->err)->jump, 1);
}

/* A corrupt-data warning (level -1) fails the image: stop at the first rather than decode the
   rest of a damaged file. Trace messages (level >= 0) are ignored. */
static void cjpeg_emit_message(j_common_ptr cinfo, int msg_level) {
    if (msg_level >= 0) {
        return;
    }
    cinfo->err->num_warnings++;
    cjpeg_keep_message(cinfo);
    longjmp(((cjpeg_error *)cinfo->err)->jump, 1);
}

static void cjpeg_output_message(j_common_ptr cinfo) {
    (void)cinfo;
}

/* Everything that calls libjpeg; owns the setjmp. data[0..<len] is one walked stream. */
static void cjpeg_decode(const uint8_t *data, size_t len, int full_decode, cjpeg_result *out) {
    struct jpeg_decompress_struct cinfo;
    cjpeg_error error;
    memset(&cinfo, 0, sizeof cinfo);
    cinfo.err = jpeg_std_error(&error.pub);
    error.pub.error_exit = cjpeg_error_exit;
    error.pub.emit_message = cjpeg_emit_message;
    error.pub.output_message = cjpeg_output_message;
    error.out = out;

    if (setjmp(error.jump) != 0) {
        out->code = CJPEG_BROKEN;
        if (out->message[0] == '\0') {
            snprintf(out->message, sizeof out->message, "libjpeg error");
        }
        jpeg_destroy_decompress(&cinfo);
        return;
    }

    jpeg_create_decompress(&cinfo);
    cinfo.mem->max_memory_to_use = CJPEG_MAX_MEMORY;
    jpeg_mem_src(&cinfo, data, (unsigned long)len);
    (void)jpeg_read_header(&cinfo, TRUE);
    out->width = cinfo.image_width;
    out->height = cinfo.image_height;
    if (full_decode) {
        /* The cheapest DCT and upsampling: every entropy-coded bit is still decoded. */
        cinfo.dct_method = JDCT_IFAST;
        cinfo.do_fancy_upsampling = FALSE;
        jpeg_start_decompress(&cinfo);
        JDIMENSION stride = cinfo.output_width * (JDIMENSION)cinfo.output_components;
        JSAMPARRAY row = (*cinfo.mem->alloc_sarray)((j_common_ptr)&cinfo, JPOOL_IMAGE, stride, 1);
        while (cinfo.output_scanline < cinfo.output_height) {
            jpeg_read_scanlines(&cinfo, row, 1);
        }
        jpeg_finish_decompress(&cinfo);
    }
    jpeg_destroy_decompress(&cinfo);
}

void cjpeg_check(const uint8_t *data, size_t len, int full_decode, uint32_t max_dimension, cjpeg_result *out) {
    if (out == NULL) {
        return;
    }
    memset(out, 0, sizeof *out);
    if (max_dimension == 0 || max_dimension > CJPEG_JPEG_MAX) {
        max_dimension = CJPEG_JPEG_MAX;
    }
    if (data == NULL || len == 0) {
        cjpeg_fail(out, CJPEG_NOT_FORMAT, "empty body");
        return;
    }
    if (data[0] != 0xFF || (len >= 2 && data[1] != 0xD8)) {
        cjpeg_fail(out, CJPEG_NOT_FORMAT, "no JPEG signature (%zu bytes)", len);
        return;
    }
    if (len < 4) {
        cjpeg_fail(out, CJPEG_BROKEN, "truncated: %zu bytes", len);
        return;
    }
    size_t first_end = 0;
    if (!cjpeg_walk(data, len, 0, max_dimension, &first_end, out, 1)) {
        return;
    }
    /* After EOI: padding, or whole appended JPEG streams (MPF images, gain maps, thumbnails). */
    size_t pos = first_end;
    while (pos < len) {
        if (len - pos >= 3 && data[pos] == 0xFF && data[pos + 1] == 0xD8 && data[pos + 2] == 0xFF) {
            size_t end = 0;
            if (!cjpeg_walk(data, len, pos, max_dimension, &end, out, 0)) {
                char inner[sizeof out->message];
                snprintf(inner, sizeof inner, "%s", out->message);
                cjpeg_fail(out, CJPEG_BROKEN, "image appended at offset %zu: %s", pos, inner);
                return;
            }
            pos = end;
        } else if (data[pos] == 0x00 || data[pos] == 0xFF) {
            pos++;
        } else {
            cjpeg_fail(out, CJPEG_BROKEN, "data after EOI (%zu bytes from offset %zu)", len - pos, pos);
            return;
        }
    }
    cjpeg_decode(data, first_end, full_decode, out);
    if (out->code == CJPEG_OK) {
        out->frames = 1;
    }
}
