#include "cgif.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gif_lib.h>

static void cgif_fail(cgif_result *out, int code, const char *format, ...) {
    va_list args;
    out->code = code;
    va_start(args, format);
    vsnprintf(out->message, sizeof out->message, format, args);
    va_end(args);
}

static uint32_t cgif_le16(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8);
}

/* Skips data sub-blocks from `*pos` through the zero-length terminator. Returns 1, or fails. */
static int cgif_skip_sub_blocks(const uint8_t *data, size_t len, size_t *pos, const char *what, size_t at,
                                cgif_result *out) {
    for (;;) {
        if (*pos >= len) {
            cgif_fail(out, CGIF_BROKEN, "truncated: data ends inside the %s at offset %zu", what, at);
            return 0;
        }
        uint8_t size = data[(*pos)++];
        if (size == 0) {
            return 1;
        }
        if (size > len - *pos) {
            cgif_fail(out, CGIF_BROKEN, "truncated: sub-block of the %s at offset %zu runs past end of data", what,
                      at);
            return 0;
        }
        *pos += size;
    }
}

/* Walks the whole file. Returns 1 with out->width/height/frames, or fills `out` and returns 0. */
static int cgif_walk(const uint8_t *data, size_t len, uint32_t max_dimension, unsigned long long *pixels,
                     cgif_result *out) {
    if (len < 13) {
        cgif_fail(out, CGIF_BROKEN, "truncated: %zu bytes, no whole logical screen descriptor", len);
        return 0;
    }
    uint32_t width = cgif_le16(data + 6);
    uint32_t height = cgif_le16(data + 8);
    if (width == 0 || height == 0) {
        cgif_fail(out, CGIF_BROKEN, "logical screen of %ux%u", width, height);
        return 0;
    }
    if (width > max_dimension || height > max_dimension) {
        cgif_fail(out, CGIF_BROKEN, "image %ux%u exceeds limit %u", width, height, max_dimension);
        return 0;
    }
    size_t pos = 13;
    if (data[10] & 0x80) {
        size_t table = (size_t)3 << ((data[10] & 7) + 1);
        if (table > len - pos) {
            cgif_fail(out, CGIF_BROKEN, "truncated: global colour table runs past end of data");
            return 0;
        }
        pos += table;
    }
    uint32_t frames = 0;
    for (;;) {
        if (pos >= len) {
            cgif_fail(out, CGIF_BROKEN, "truncated: no trailer (data ends at offset %zu)", len);
            return 0;
        }
        size_t at = pos;
        uint8_t block = data[pos];
        if (block == 0x3B) {
            if (frames == 0) {
                cgif_fail(out, CGIF_BROKEN, "trailer at offset %zu before any image", at);
                return 0;
            }
            if (at + 1 != len) {
                cgif_fail(out, CGIF_BROKEN, "data after the trailer (%zu bytes from offset %zu)", len - at - 1, at + 1);
                return 0;
            }
            break;
        } else if (block == 0x21) {
            if (len - pos < 2) {
                cgif_fail(out, CGIF_BROKEN, "truncated: extension at offset %zu", at);
                return 0;
            }
            pos += 2;
            if (!cgif_skip_sub_blocks(data, len, &pos, "extension", at, out)) {
                return 0;
            }
        } else if (block == 0x2C) {
            if (len - pos < 10) {
                cgif_fail(out, CGIF_BROKEN, "truncated: image descriptor at offset %zu", at);
                return 0;
            }
            uint32_t frame_w = cgif_le16(data + pos + 5);
            uint32_t frame_h = cgif_le16(data + pos + 7);
            uint8_t flags = data[pos + 9];
            if (frame_w == 0 || frame_h == 0) {
                cgif_fail(out, CGIF_BROKEN, "frame of %ux%u at offset %zu", frame_w, frame_h, at);
                return 0;
            }
            if (frame_w > max_dimension || frame_h > max_dimension) {
                cgif_fail(out, CGIF_BROKEN, "frame %ux%u exceeds limit %u", frame_w, frame_h, max_dimension);
                return 0;
            }
            *pixels += (unsigned long long)frame_w * frame_h;
            if (++frames > CGIF_MAX_FRAMES) {
                cgif_fail(out, CGIF_BROKEN, "more than %d frames", CGIF_MAX_FRAMES);
                return 0;
            }
            pos += 10;
            if (flags & 0x80) {
                size_t table = (size_t)3 << ((flags & 7) + 1);
                if (table > len - pos) {
                    cgif_fail(out, CGIF_BROKEN, "truncated: local colour table at offset %zu runs past end of data",
                              pos);
                    return 0;
                }
                pos += table;
            }
            if (pos >= len) {
                cgif_fail(out, CGIF_BROKEN, "truncated: frame %u has no image data", frames);
                return 0;
            }
            uint8_t code_size = data[pos++];
            if (code_size < 2 || code_size > 8) {
                cgif_fail(out, CGIF_BROKEN, "frame %u has LZW code size %u, not 2 to 8", frames, code_size);
                return 0;
            }
            if (!cgif_skip_sub_blocks(data, len, &pos, "image data", at, out)) {
                return 0;
            }
        } else {
            cgif_fail(out, CGIF_BROKEN, "unknown block 0x%02x at offset %zu", block, at);
            return 0;
        }
    }
    out->width = width;
    out->height = height;
    out->frames = frames;
    return 1;
}

/* Memory giflib's read callback serves bytes from. */
typedef struct {
    const uint8_t *data;
    size_t len;
    size_t pos;
} cgif_reader;

static int cgif_read(GifFileType *gif, GifByteType *buffer, int wanted) {
    cgif_reader *reader = (cgif_reader *)gif->UserData;
    size_t n = wanted > 0 ? (size_t)wanted : 0;
    if (n > reader->len - reader->pos) {
        n = reader->len - reader->pos;
    }
    memcpy(buffer, reader->data + reader->pos, n);
    reader->pos += n;
    return (int)n;
}

static void cgif_fail_giflib(cgif_result *out, int error, uint32_t frame) {
    const char *reason = GifErrorString(error);
    if (frame > 0) {
        cgif_fail(out, CGIF_BROKEN, "frame %u does not decode: %s", frame, reason != NULL ? reason : "giflib error");
    } else {
        cgif_fail(out, CGIF_BROKEN, "giflib: %s", reason != NULL ? reason : "giflib error");
    }
}

/* Decodes every row of every frame of a walked file, one row buffer at a time. */
static void cgif_decode(const uint8_t *data, size_t len, cgif_result *out) {
    cgif_reader reader = {data, len, 0};
    int error = 0;
    GifFileType *gif = DGifOpen(&reader, cgif_read, &error);
    if (gif == NULL) {
        cgif_fail_giflib(out, error, 0);
        return;
    }
    GifPixelType *row = NULL;
    size_t row_size = 0;
    uint32_t frames = 0;
    int done = 0;
    while (!done) {
        GifRecordType type;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) {
            cgif_fail_giflib(out, gif->Error, frames + 1);
            break;
        }
        if (type == IMAGE_DESC_RECORD_TYPE) {
            if (DGifGetImageDesc(gif) == GIF_ERROR) {
                cgif_fail_giflib(out, gif->Error, frames + 1);
                break;
            }
            frames++;
            size_t width = (size_t)gif->Image.Width;
            if (width > row_size) {
                GifPixelType *grown = (GifPixelType *)realloc(row, width);
                if (grown == NULL) {
                    cgif_fail(out, CGIF_BROKEN, "out of memory (row of %zu bytes)", width);
                    break;
                }
                row = grown;
                row_size = width;
            }
            int failed = 0;
            for (int y = 0; y < gif->Image.Height; y++) {
                if (DGifGetLine(gif, row, gif->Image.Width) == GIF_ERROR) {
                    cgif_fail_giflib(out, gif->Error, frames);
                    failed = 1;
                    break;
                }
            }
            if (failed) {
                break;
            }
        } else if (type == EXTENSION_RECORD_TYPE) {
            int code = 0;
            GifByteType *extension = NULL;
            if (DGifGetExtension(gif, &code, &extension) == GIF_ERROR) {
                cgif_fail_giflib(out, gif->Error, 0);
                break;
            }
            while (extension != NULL) {
                if (DGifGetExtensionNext(gif, &extension) == GIF_ERROR) {
                    cgif_fail_giflib(out, gif->Error, 0);
                    break;
                }
            }
            if (out->code != CGIF_OK) {
                break;
            }
        } else if (type == TERMINATE_RECORD_TYPE) {
            done = 1;
        } else {
            cgif_fail(out, CGIF_BROKEN, "giflib: unexpected record");
            break;
        }
    }
    if (done && frames != out->frames) {
        cgif_fail(out, CGIF_BROKEN, "%u of %u frames decoded", frames, out->frames);
    }
    free(row);
    DGifCloseFile(gif, &error);
}

void cgif_check(const uint8_t *data, size_t len, int full_decode, uint32_t max_dimension, cgif_result *out) {
    if (out == NULL) {
        return;
    }
    memset(out, 0, sizeof *out);
    if (max_dimension == 0 || max_dimension > 65535) {
        max_dimension = 65535;
    }
    if (data == NULL || len == 0) {
        cgif_fail(out, CGIF_NOT_FORMAT, "empty body");
        return;
    }
    size_t prefix = len < 6 ? len : 6;
    if (memcmp(data, "GIF87a", prefix) != 0 && memcmp(data, "GIF89a", prefix) != 0) {
        cgif_fail(out, CGIF_NOT_FORMAT, "no GIF signature (%zu bytes)", len);
        return;
    }
    unsigned long long pixels = 0;
    if (!cgif_walk(data, len, max_dimension, &pixels, out)) {
        return;
    }
    if (full_decode && pixels > CGIF_MAX_FULL_PIXELS) {
        cgif_fail(out, CGIF_BROKEN, "%u frames of %llu pixels in all, over full mode's limit of %llu", out->frames,
                  pixels, CGIF_MAX_FULL_PIXELS);
        return;
    }
    if (full_decode) {
        cgif_decode(data, len, out);
    }
}
