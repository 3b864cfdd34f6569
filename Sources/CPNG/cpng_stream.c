#include "cpng.h"
#include "cpng_internal.h"

#include <png.h>
#include <zlib.h>

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the chunk walk stands between pieces. */
enum { CPNG_AT_SIGNATURE, CPNG_AT_HEADER, CPNG_AT_DATA, CPNG_AT_CRC, CPNG_AT_END };

struct cpng_stream {
    cpng_result result;     /* code != CPNG_OK once failed */
    int full_decode;
    uint32_t max_dimension;
    uint64_t total;         /* bytes fed */
    uint8_t head[64];       /* the first bytes, to say what a non-PNG is */
    size_t head_len;
    int state;
    uint8_t header[8];      /* the chunk header being read */
    size_t header_len;
    uint64_t chunk_start;   /* offset of the current chunk */
    uint64_t data_left;     /* data bytes of the current chunk not yet fed */
    uint32_t crc;
    uint8_t stored[4];
    size_t stored_len;
    uint8_t ihdr[8];        /* IHDR's width and height */
    int chunks, seen_idat, idat_ended;
    uint64_t end;           /* offset just after IEND */
    png_structp png;        /* libpng's progressive reader, until it is done */
    png_infop info;
    int info_done, png_done;
};

static void cpng_stream_info(png_structp png, png_infop info) {
    cpng_stream *stream = (cpng_stream *)png_get_progressive_ptr(png);
    stream->result.width = png_get_image_width(png, info);
    stream->result.height = png_get_image_height(png, info);
    stream->result.bit_depth = png_get_bit_depth(png, info);
    stream->result.color_type = png_get_color_type(png, info);
    stream->info_done = 1;
    if (stream->full_decode) {
        png_set_interlace_handling(png);
        png_read_update_info(png, info);
    } else {
        /* Structural mode reads what png_read_info reads, no more. */
        png_process_data_pause(png, 0);
    }
}

static void cpng_stream_end(png_structp png, png_infop info) {
    (void)info;
    ((cpng_stream *)png_get_progressive_ptr(png))->png_done = 1;
}

/* libpng's progressive reader only warns where the whole-body reader fails ("Too much data in
 * IDAT chunks" where png_read_end says "Too much image data", and truncated compressed data):
 * those warnings fail the stream too, so verify and pack agree with run --validate full. */
static void cpng_stream_warning_fn(png_structp png, png_const_charp message) {
    cpng_result *result = (cpng_result *)png_get_error_ptr(png);
    if (result->code == CPNG_OK && strstr(message, "IDAT") != NULL) {
        cpng_fail(result, CPNG_BROKEN, "IDAT: %s", message);
    }
}

cpng_stream *cpng_stream_new(int full_decode, uint32_t max_dimension) {
    cpng_stream *stream = (cpng_stream *)calloc(1, sizeof *stream);
    if (stream == NULL) {
        return NULL;
    }
    stream->full_decode = full_decode;
    stream->max_dimension = (max_dimension == 0 || max_dimension > CPNG_PNG_MAX) ? CPNG_PNG_MAX : max_dimension;
    stream->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &stream->result, cpng_error_fn, cpng_stream_warning_fn);
    stream->info = stream->png != NULL ? png_create_info_struct(stream->png) : NULL;
    if (stream->info == NULL) {
        png_destroy_read_struct(&stream->png, NULL, NULL);
        free(stream);
        return NULL;
    }
    png_set_benign_errors(stream->png, 0);
    png_set_user_limits(stream->png, stream->max_dimension, stream->max_dimension);
    png_set_chunk_malloc_max(stream->png, CPNG_CHUNK_MALLOC_MAX);
    png_set_chunk_cache_max(stream->png, CPNG_CHUNK_CACHE_MAX);
    cpng_skip_kept_chunks(stream->png);
    png_set_crc_action(stream->png, PNG_CRC_ERROR_QUIT, PNG_CRC_ERROR_QUIT);
    png_set_progressive_read_fn(stream->png, stream, cpng_stream_info, NULL, cpng_stream_end);
    return stream;
}

/* A complete chunk header: the checks cpng_walk_chunks makes on it. */
static int cpng_stream_header(cpng_stream *s) {
    uint32_t length = cpng_be32(s->header);
    const uint8_t *type = s->header + 4;
    char name[5];
    cpng_chunk_name(type, name);
    unsigned long long at = (unsigned long long)s->chunk_start;
    if (!cpng_is_letter(type[0]) || !cpng_is_letter(type[1]) || !cpng_is_letter(type[2]) || !cpng_is_letter(type[3])) {
        cpng_fail(&s->result, CPNG_BROKEN, "invalid chunk type at offset %llu", at);
        return 0;
    }
    if (length > CPNG_PNG_MAX) {
        cpng_fail(&s->result, CPNG_BROKEN, "chunk %s at offset %llu has invalid length %u", name, at, length);
        return 0;
    }
    int is_idat = memcmp(type, "IDAT", 4) == 0;
    if (length > CPNG_CHUNK_MALLOC_MAX && !is_idat) {
        cpng_fail(&s->result, CPNG_BROKEN, "chunk %s at offset %llu is %u bytes, over the %u-byte limit", name, at, length,
                  CPNG_CHUNK_MALLOC_MAX);
        return 0;
    }
    if ((s->chunks == 0) != (memcmp(type, "IHDR", 4) == 0)) {
        cpng_fail(&s->result, CPNG_BROKEN, "%s chunk at offset %llu where IHDR must be first and only", name, at);
        return 0;
    }
    if (is_idat) {
        if (s->idat_ended) {
            cpng_fail(&s->result, CPNG_BROKEN, "IDAT chunks not consecutive (offset %llu)", at);
            return 0;
        }
        s->seen_idat = 1;
    } else if (s->seen_idat) {
        s->idat_ended = 1;
    }
    if (memcmp(type, "IEND", 4) == 0) {
        if (!s->seen_idat) {
            cpng_fail(&s->result, CPNG_BROKEN, "no IDAT chunk before IEND");
            return 0;
        }
        if (length != 0) {
            cpng_fail(&s->result, CPNG_BROKEN, "IEND chunk has length %u, not 0", length);
            return 0;
        }
    }
    s->chunks++;
    s->data_left = length;
    s->crc = (uint32_t)crc32(0L, type, 4);
    return 1;
}

/* Walks `len` more bytes of the chunk structure; 0 once it has failed. */
static int cpng_stream_walk(cpng_stream *s, const uint8_t *data, size_t len) {
    size_t i = 0;
    while (i < len) {
        switch (s->state) {
        case CPNG_AT_SIGNATURE:
            if (data[i] != cpng_signature[s->total + i]) {
                s->result.code = CPNG_NOT_PNG; /* described at the end, from `head` */
                return 0;
            }
            i++;
            if (s->total + i == 8) {
                s->state = CPNG_AT_HEADER;
                s->chunk_start = 8;
            }
            break;
        case CPNG_AT_HEADER:
            s->header[s->header_len++] = data[i++];
            if (s->header_len == 8) {
                s->header_len = 0;
                if (!cpng_stream_header(s)) {
                    return 0;
                }
                s->state = s->data_left > 0 ? CPNG_AT_DATA : CPNG_AT_CRC;
            }
            break;
        case CPNG_AT_DATA: {
            size_t n = len - i;
            if ((uint64_t)n > s->data_left) {
                n = (size_t)s->data_left;
            }
            if (s->chunks == 1) {
                /* IHDR: refuse oversized images from width and height alone, as cpng_check does. */
                uint64_t done = cpng_be32(s->header) - s->data_left;
                for (size_t k = 0; k < n && done + k < 8; k++) {
                    s->ihdr[done + k] = data[i + k];
                }
                if (done < 8 && done + n >= 8) {
                    uint32_t width = cpng_be32(s->ihdr), height = cpng_be32(s->ihdr + 4);
                    if (width > s->max_dimension || height > s->max_dimension) {
                        cpng_fail(&s->result, CPNG_BROKEN, "image %ux%u exceeds limit %u", width, height, s->max_dimension);
                        return 0;
                    }
                }
            }
            s->crc = (uint32_t)crc32(s->crc, data + i, (uInt)n);
            s->data_left -= n;
            i += n;
            if (s->data_left == 0) {
                s->state = CPNG_AT_CRC;
            }
            break;
        }
        case CPNG_AT_CRC:
            s->stored[s->stored_len++] = data[i++];
            if (s->stored_len == 4) {
                s->stored_len = 0;
                char name[5];
                cpng_chunk_name(s->header + 4, name);
                if (cpng_be32(s->stored) != s->crc) {
                    cpng_fail(&s->result, CPNG_BROKEN, "CRC mismatch in %s chunk at offset %llu", name,
                              (unsigned long long)s->chunk_start);
                    return 0;
                }
                s->chunk_start += 12 + (uint64_t)cpng_be32(s->header);
                if (memcmp(s->header + 4, "IEND", 4) == 0) {
                    s->state = CPNG_AT_END;
                    s->end = s->chunk_start;
                } else {
                    s->state = CPNG_AT_HEADER;
                }
            }
            break;
        default:
            /* Data after IEND: counted, and reported by cpng_stream_finish. */
            return 1;
        }
    }
    return 1;
}

/* Hands libpng bytes the walk has accepted; owns the setjmp. */
static void cpng_stream_png(cpng_stream *s, const uint8_t *data, size_t len) {
    if (s->png == NULL || s->png_done || (s->info_done && !s->full_decode)) {
        return;
    }
    if (setjmp(png_jmpbuf(s->png)) != 0) {
        s->result.code = CPNG_BROKEN;
        if (s->result.message[0] == '\0') {
            snprintf(s->result.message, sizeof s->result.message, "libpng error");
        }
        return;
    }
    png_process_data(s->png, s->info, (png_bytep)data, len);
}

int cpng_stream_feed(cpng_stream *s, const uint8_t *data, size_t len) {
    if (s == NULL || s->result.code != CPNG_OK || len == 0) {
        return s == NULL || s->result.code != CPNG_OK;
    }
    if (s->head_len < sizeof s->head) {
        size_t n = len < sizeof s->head - s->head_len ? len : sizeof s->head - s->head_len;
        memcpy(s->head + s->head_len, data, n);
        s->head_len += n;
    }
    int walked = cpng_stream_walk(s, data, len);
    s->total += len;
    if (!walked) {
        return s->result.code == CPNG_BROKEN;
    }
    cpng_stream_png(s, data, len);
    return s->result.code != CPNG_OK;
}

void cpng_stream_finish(cpng_stream *s, cpng_result *out) {
    memset(out, 0, sizeof *out);
    if (s == NULL) {
        cpng_fail(out, CPNG_BROKEN, "out of memory (PNG stream)");
        return;
    }
    size_t total = (size_t)s->total;
    if (s->result.code == CPNG_NOT_PNG || (s->state == CPNG_AT_SIGNATURE && s->result.code == CPNG_OK && s->total == 0)) {
        cpng_describe_not_png(s->head, s->head_len, total, &s->result);
    } else if (s->result.code == CPNG_OK) {
        char name[5];
        cpng_chunk_name(s->header + 4, name);
        unsigned long long at = (unsigned long long)s->chunk_start;
        if (s->state == CPNG_AT_SIGNATURE) {
            cpng_fail(&s->result, CPNG_BROKEN, "truncated: %zu bytes, shorter than the PNG signature", total);
        } else if (s->state == CPNG_AT_HEADER && s->header_len == 0) {
            cpng_fail(&s->result, CPNG_BROKEN, "truncated: no IEND chunk (data ends at offset %zu)", total);
        } else if (s->state == CPNG_AT_HEADER) {
            cpng_fail(&s->result, CPNG_BROKEN, "truncated: chunk header at offset %llu runs past end of data", at);
        } else if (s->state != CPNG_AT_END) {
            cpng_fail(&s->result, CPNG_BROKEN, "truncated: chunk %s at offset %llu runs past end of data", name, at);
        } else if (s->total != s->end) {
            cpng_fail(&s->result, CPNG_BROKEN, "data after IEND (%llu bytes from offset %llu)",
                      (unsigned long long)(s->total - s->end), (unsigned long long)s->end);
        } else if (!s->info_done || (s->full_decode && !s->png_done)) {
            cpng_fail(&s->result, CPNG_BROKEN, "libpng did not finish reading the image");
        }
    }
    *out = s->result;
    png_destroy_read_struct(&s->png, &s->info, NULL);
    free(s);
}
