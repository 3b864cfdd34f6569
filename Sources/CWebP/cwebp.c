#include "cwebp.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <webp/decode.h>
#include <webp/demux.h>

/* The largest VP8X canvas side (24 bits plus one). */
#define CWEBP_CANVAS_MAX (1u << 24)

static void cwebp_fail(cwebp_result *out, int code, const char *format, ...) {
    va_list args;
    out->code = code;
    va_start(args, format);
    vsnprintf(out->message, sizeof out->message, format, args);
    va_end(args);
}

static uint32_t cwebp_le16(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8);
}

static uint32_t cwebp_le24(const uint8_t *p) {
    return cwebp_le16(p) | ((uint32_t)p[2] << 16);
}

static uint32_t cwebp_le32(const uint8_t *p) {
    return cwebp_le24(p) | ((uint32_t)p[3] << 24);
}

/* A printable copy of a chunk's FourCC. */
static void cwebp_fourcc(const uint8_t *p, char name[5]) {
    for (int i = 0; i < 4; i++) {
        name[i] = (p[i] >= 0x20 && p[i] < 0x7f) ? (char)p[i] : '?';
    }
    name[4] = '\0';
}

static const char *cwebp_status_name(VP8StatusCode status) {
    switch (status) {
    case VP8_STATUS_OK: return "ok";
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data";
    }
    return "unknown error";
}

/* What the walk learns about one image bitstream (the whole file, or one ANMF frame). */
typedef struct {
    uint32_t width, height;
    int lossless; /* VP8L */
    int alpha;    /* an ALPH chunk goes with it */
} cwebp_bitstream;

/* Parses a VP8 or VP8L chunk's header. Returns 1, or fills `out` and returns 0. */
static int cwebp_parse_bitstream(const uint8_t *type, const uint8_t *p, uint32_t n, size_t at,
                                 cwebp_bitstream *image, cwebp_result *out) {
    if (memcmp(type, "VP8 ", 4) == 0) {
        if (n < 10) {
            cwebp_fail(out, CWEBP_BROKEN, "VP8 chunk at offset %zu is %u bytes, too short for its header", at, n);
            return 0;
        }
        uint32_t bits = cwebp_le24(p);
        if ((bits & 1) != 0 || ((bits >> 1) & 7) > 3 || ((bits >> 4) & 1) == 0) {
            cwebp_fail(out, CWEBP_BROKEN, "VP8 data at offset %zu is not a shown key frame", at);
            return 0;
        }
        if ((bits >> 5) > n - 10) {
            cwebp_fail(out, CWEBP_BROKEN, "VP8 first partition at offset %zu runs past its chunk", at);
            return 0;
        }
        if (p[3] != 0x9d || p[4] != 0x01 || p[5] != 0x2a) {
            cwebp_fail(out, CWEBP_BROKEN, "bad VP8 start code at offset %zu", at);
            return 0;
        }
        image->width = cwebp_le16(p + 6) & 0x3fff;
        image->height = cwebp_le16(p + 8) & 0x3fff;
        image->lossless = 0;
        if (image->width == 0 || image->height == 0) {
            cwebp_fail(out, CWEBP_BROKEN, "VP8 data at offset %zu declares %ux%u", at, image->width, image->height);
            return 0;
        }
        return 1;
    }
    if (n < 5 || p[0] != 0x2f) {
        cwebp_fail(out, CWEBP_BROKEN, "VP8L chunk at offset %zu has no VP8L signature", at);
        return 0;
    }
    uint32_t bits = cwebp_le32(p + 1);
    if ((bits >> 29) != 0) {
        cwebp_fail(out, CWEBP_BROKEN, "VP8L data at offset %zu has unknown version %u", at, bits >> 29);
        return 0;
    }
    image->width = 1 + (bits & 0x3fff);
    image->height = 1 + ((bits >> 14) & 0x3fff);
    image->lossless = 1;
    return 1;
}

static int cwebp_is(const uint8_t *type, const char *name) {
    return memcmp(type, name, 4) == 0;
}

/* Memory full mode needs to decode one bitstream (see CWEBP_MAX_MEMORY). */
static unsigned long long cwebp_decode_cost(const cwebp_bitstream *image) {
    unsigned long long pixels = (unsigned long long)image->width * image->height;
    return image->lossless ? 4 * pixels : (image->alpha ? 5 * pixels : 0);
}

/*
 * Walks the chunks of one ANMF frame's payload (after its 16-byte header): optional ALPH (only
 * before VP8), then exactly one VP8 or VP8L chunk, unknown chunks allowed. Returns 1 or fails.
 */
static int cwebp_walk_frame(const uint8_t *data, size_t pos, size_t end, cwebp_bitstream *image,
                            cwebp_result *out) {
    int seen_image = 0;
    int alpha = 0;
    while (pos < end) {
        if (end - pos < 8) {
            cwebp_fail(out, CWEBP_BROKEN, "truncated: chunk header at offset %zu runs past its frame", pos);
            return 0;
        }
        const uint8_t *type = data + pos;
        uint32_t size = cwebp_le32(data + pos + 4);
        char name[5];
        cwebp_fourcc(type, name);
        if ((unsigned long long)size + (size & 1) > end - pos - 8) {
            cwebp_fail(out, CWEBP_BROKEN, "chunk %s at offset %zu runs past its frame", name, pos);
            return 0;
        }
        if (cwebp_is(type, "ALPH")) {
            if (seen_image || alpha) {
                cwebp_fail(out, CWEBP_BROKEN, "misplaced ALPH chunk at offset %zu", pos);
                return 0;
            }
            alpha = 1;
        } else if (cwebp_is(type, "VP8 ") || cwebp_is(type, "VP8L")) {
            if (seen_image) {
                cwebp_fail(out, CWEBP_BROKEN, "second image chunk in one frame at offset %zu", pos);
                return 0;
            }
            if (!cwebp_parse_bitstream(type, data + pos + 8, size, pos, image, out)) {
                return 0;
            }
            if (alpha && image->lossless) {
                cwebp_fail(out, CWEBP_BROKEN, "ALPH chunk before VP8L data at offset %zu", pos);
                return 0;
            }
            image->alpha = alpha;
            seen_image = 1;
        } else if (cwebp_is(type, "ANMF") || cwebp_is(type, "ANIM") || cwebp_is(type, "VP8X")) {
            cwebp_fail(out, CWEBP_BROKEN, "chunk %s at offset %zu inside a frame", name, pos);
            return 0;
        }
        pos += 8 + (size_t)size + (size & 1);
    }
    if (!seen_image) {
        cwebp_fail(out, CWEBP_BROKEN, "frame without VP8 or VP8L data (ends at offset %zu)", end);
        return 0;
    }
    return 1;
}

/*
 * Walks the RIFF container. Returns 1 with out->width/height/frames and the memory full mode
 * will need in *cost, or fills `out` and returns 0. Pure C, no allocation.
 */
static int cwebp_walk(const uint8_t *data, size_t len, uint32_t max_dimension, unsigned long long *cost,
                      cwebp_result *out) {
    uint32_t riff = cwebp_le32(data + 4);
    if ((unsigned long long)riff + 8 > len) {
        cwebp_fail(out, CWEBP_BROKEN, "truncated: RIFF size says %llu bytes, data has %zu",
                   (unsigned long long)riff + 8, len);
        return 0;
    }
    if ((unsigned long long)riff + 8 < len) {
        cwebp_fail(out, CWEBP_BROKEN, "data after the RIFF end (%llu bytes from offset %llu)",
                   (unsigned long long)(len - riff - 8), (unsigned long long)riff + 8);
        return 0;
    }
    size_t end = len;
    size_t pos = 12;
    int kind = 0;        /* 1 VP8 / VP8L, 2 VP8X still, 3 VP8X animation */
    int seen_image = 0;  /* a top-level VP8 / VP8L chunk */
    int seen_alpha = 0;
    int seen_anim = 0;
    uint32_t frames = 0;
    uint32_t canvas_w = 0, canvas_h = 0;
    unsigned long long frame_cost = 0;
    cwebp_bitstream image = {0, 0, 0, 0};
    if (pos == end) {
        cwebp_fail(out, CWEBP_BROKEN, "RIFF container holds no chunk");
        return 0;
    }
    while (pos < end) {
        if (end - pos < 8) {
            cwebp_fail(out, CWEBP_BROKEN, "truncated: chunk header at offset %zu runs past the RIFF end", pos);
            return 0;
        }
        const uint8_t *type = data + pos;
        uint32_t size = cwebp_le32(data + pos + 4);
        const uint8_t *body = data + pos + 8;
        char name[5];
        cwebp_fourcc(type, name);
        if ((unsigned long long)size + (size & 1) > end - pos - 8) {
            cwebp_fail(out, CWEBP_BROKEN, "truncated: chunk %s at offset %zu runs past the RIFF end", name, pos);
            return 0;
        }
        int is_image = cwebp_is(type, "VP8 ") || cwebp_is(type, "VP8L");
        if (kind == 0) {
            if (is_image) {
                if (!cwebp_parse_bitstream(type, body, size, pos, &image, out)) {
                    return 0;
                }
                kind = 1;
                seen_image = 1;
                canvas_w = image.width;
                canvas_h = image.height;
            } else if (cwebp_is(type, "VP8X")) {
                if (size < 10) {
                    cwebp_fail(out, CWEBP_BROKEN, "VP8X chunk is %u bytes, not 10", size);
                    return 0;
                }
                canvas_w = 1 + cwebp_le24(body + 4);
                canvas_h = 1 + cwebp_le24(body + 7);
                if (canvas_w > max_dimension || canvas_h > max_dimension) {
                    cwebp_fail(out, CWEBP_BROKEN, "image %ux%u exceeds limit %u", canvas_w, canvas_h, max_dimension);
                    return 0;
                }
                if ((unsigned long long)canvas_w * canvas_h >= (1ull << 32)) {
                    cwebp_fail(out, CWEBP_BROKEN, "canvas %ux%u has more than 2^32 - 1 pixels", canvas_w, canvas_h);
                    return 0;
                }
                kind = (body[0] & 0x02) ? 3 : 2;
            } else {
                cwebp_fail(out, CWEBP_BROKEN, "first chunk is %s, not VP8, VP8L or VP8X", name);
                return 0;
            }
            if (kind == 1 && (canvas_w > max_dimension || canvas_h > max_dimension)) {
                cwebp_fail(out, CWEBP_BROKEN, "image %ux%u exceeds limit %u", canvas_w, canvas_h, max_dimension);
                return 0;
            }
        } else if (kind == 1) {
            if (is_image || cwebp_is(type, "VP8X") || cwebp_is(type, "ALPH") || cwebp_is(type, "ANIM") ||
                cwebp_is(type, "ANMF")) {
                cwebp_fail(out, CWEBP_BROKEN, "chunk %s at offset %zu after the image of a simple WebP", name, pos);
                return 0;
            }
        } else if (kind == 2) {
            if (cwebp_is(type, "ALPH")) {
                if (seen_image || seen_alpha) {
                    cwebp_fail(out, CWEBP_BROKEN, "misplaced ALPH chunk at offset %zu", pos);
                    return 0;
                }
                seen_alpha = 1;
            } else if (is_image) {
                if (seen_image) {
                    cwebp_fail(out, CWEBP_BROKEN, "second image chunk at offset %zu", pos);
                    return 0;
                }
                if (!cwebp_parse_bitstream(type, body, size, pos, &image, out)) {
                    return 0;
                }
                if (image.width != canvas_w || image.height != canvas_h) {
                    cwebp_fail(out, CWEBP_BROKEN, "image data of %ux%u in a canvas of %ux%u", image.width,
                               image.height, canvas_w, canvas_h);
                    return 0;
                }
                image.alpha = seen_alpha && !image.lossless;
                seen_image = 1;
            } else if (cwebp_is(type, "ANIM") || cwebp_is(type, "ANMF") || cwebp_is(type, "VP8X")) {
                cwebp_fail(out, CWEBP_BROKEN, "chunk %s at offset %zu in a WebP without the animation flag", name,
                           pos);
                return 0;
            }
        } else {
            if (cwebp_is(type, "ANIM")) {
                if (seen_anim || frames > 0 || size < 6) {
                    cwebp_fail(out, CWEBP_BROKEN, "misplaced or short ANIM chunk at offset %zu", pos);
                    return 0;
                }
                seen_anim = 1;
            } else if (cwebp_is(type, "ANMF")) {
                if (!seen_anim) {
                    cwebp_fail(out, CWEBP_BROKEN, "ANMF chunk at offset %zu before the ANIM chunk", pos);
                    return 0;
                }
                if (size < 16) {
                    cwebp_fail(out, CWEBP_BROKEN, "ANMF chunk at offset %zu is %u bytes, too short", pos, size);
                    return 0;
                }
                unsigned long long x = 2ull * cwebp_le24(body), y = 2ull * cwebp_le24(body + 3);
                uint32_t fw = 1 + cwebp_le24(body + 6), fh = 1 + cwebp_le24(body + 9);
                if (fw > max_dimension || fh > max_dimension) {
                    cwebp_fail(out, CWEBP_BROKEN, "frame %ux%u exceeds limit %u", fw, fh, max_dimension);
                    return 0;
                }
                if (x + fw > canvas_w || y + fh > canvas_h) {
                    cwebp_fail(out, CWEBP_BROKEN, "frame %u (%ux%u at %llu,%llu) outside the %ux%u canvas",
                               frames + 1, fw, fh, x, y, canvas_w, canvas_h);
                    return 0;
                }
                if (++frames > CWEBP_MAX_FRAMES) {
                    cwebp_fail(out, CWEBP_BROKEN, "more than %d frames", CWEBP_MAX_FRAMES);
                    return 0;
                }
                cwebp_bitstream frame = {0, 0, 0, 0};
                if (!cwebp_walk_frame(data, pos + 8 + 16, pos + 8 + size, &frame, out)) {
                    return 0;
                }
                if (frame.width != fw || frame.height != fh) {
                    cwebp_fail(out, CWEBP_BROKEN, "frame %u holds image data of %ux%u, declares %ux%u", frames,
                               frame.width, frame.height, fw, fh);
                    return 0;
                }
                unsigned long long c = cwebp_decode_cost(&frame);
                frame_cost = c > frame_cost ? c : frame_cost;
            } else if (is_image || cwebp_is(type, "ALPH") || cwebp_is(type, "VP8X")) {
                cwebp_fail(out, CWEBP_BROKEN, "chunk %s at offset %zu outside a frame of an animation", name, pos);
                return 0;
            }
        }
        pos += 8 + (size_t)size + (size & 1);
    }
    if (kind != 3 && !seen_image) {
        cwebp_fail(out, CWEBP_BROKEN, "no VP8 or VP8L image data");
        return 0;
    }
    if (kind == 3 && frames == 0) {
        cwebp_fail(out, CWEBP_BROKEN, "animation without frames");
        return 0;
    }
    out->width = canvas_w;
    out->height = canvas_h;
    out->frames = kind == 3 ? frames : 1;
    *cost = kind == 3 ? 8ull * canvas_w * canvas_h + frame_cost : cwebp_decode_cost(&image);
    return 1;
}

/* Decodes a still image into a 1x1 scaled output: every bit of the bitstream is still decoded,
   but no buffer the size of the image is needed for lossy data. */
static void cwebp_decode_still(const uint8_t *data, size_t len, cwebp_result *out) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) {
        cwebp_fail(out, CWEBP_BROKEN, "libwebp version mismatch");
        return;
    }
    config.options.use_scaling = 1;
    config.options.scaled_width = 1;
    config.options.scaled_height = 1;
    config.output.colorspace = MODE_RGBA;
    VP8StatusCode status = WebPDecode(data, len, &config);
    WebPFreeDecBuffer(&config.output);
    if (status != VP8_STATUS_OK) {
        cwebp_fail(out, CWEBP_BROKEN, "image data does not decode (%s)", cwebp_status_name(status));
    }
}

static void cwebp_decode_animation(const uint8_t *data, size_t len, cwebp_result *out) {
    WebPAnimDecoderOptions options;
    if (!WebPAnimDecoderOptionsInit(&options)) {
        cwebp_fail(out, CWEBP_BROKEN, "libwebpdemux version mismatch");
        return;
    }
    options.color_mode = MODE_RGBA;
    options.use_threads = 0;
    WebPData webp = {data, len};
    WebPAnimDecoder *decoder = WebPAnimDecoderNew(&webp, &options);
    if (decoder == NULL) {
        cwebp_fail(out, CWEBP_BROKEN, "animation refused by WebPAnimDecoder");
        return;
    }
    uint32_t decoded = 0;
    while (WebPAnimDecoderHasMoreFrames(decoder)) {
        uint8_t *buffer = NULL;
        int timestamp = 0;
        if (!WebPAnimDecoderGetNext(decoder, &buffer, &timestamp)) {
            cwebp_fail(out, CWEBP_BROKEN, "frame %u of %u does not decode", decoded + 1, out->frames);
            WebPAnimDecoderDelete(decoder);
            return;
        }
        decoded++;
    }
    WebPAnimDecoderDelete(decoder);
    if (decoded != out->frames) {
        cwebp_fail(out, CWEBP_BROKEN, "%u of %u frames decoded", decoded, out->frames);
    }
}

void cwebp_check(const uint8_t *data, size_t len, int full_decode, uint32_t max_dimension, cwebp_result *out) {
    if (out == NULL) {
        return;
    }
    memset(out, 0, sizeof *out);
    if (max_dimension == 0 || max_dimension > CWEBP_CANVAS_MAX) {
        max_dimension = CWEBP_CANVAS_MAX;
    }
    if (data == NULL || len == 0) {
        cwebp_fail(out, CWEBP_NOT_FORMAT, "empty body");
        return;
    }
    if (memcmp(data, "RIFF", len < 4 ? len : 4) != 0 ||
        (len >= 12 && memcmp(data + 8, "WEBP", 4) != 0)) {
        cwebp_fail(out, CWEBP_NOT_FORMAT, "no WebP signature (%zu bytes)", len);
        return;
    }
    if (len < 12) {
        cwebp_fail(out, CWEBP_BROKEN, "truncated: %zu bytes, shorter than the RIFF header", len);
        return;
    }
    unsigned long long cost = 0;
    if (!cwebp_walk(data, len, max_dimension, &cost, out)) {
        return;
    }
    WebPBitstreamFeatures features;
    VP8StatusCode status = WebPGetFeatures(data, len, &features);
    if (status != VP8_STATUS_OK) {
        cwebp_fail(out, CWEBP_BROKEN, "headers refused by libwebp (%s)", cwebp_status_name(status));
        return;
    }
    if ((uint32_t)features.width != out->width || (uint32_t)features.height != out->height) {
        cwebp_fail(out, CWEBP_BROKEN, "libwebp reads %dx%d, the headers say %ux%u", features.width,
                   features.height, out->width, out->height);
        return;
    }
    if (len >= 21 && memcmp(data + 12, "VP8X", 4) == 0) {
        WebPData webp = {data, len};
        WebPDemuxer *demux = WebPDemux(&webp);
        uint32_t frames = demux != NULL ? WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT) : 0;
        WebPDemuxDelete(demux);
        if (demux == NULL || frames != out->frames) {
            cwebp_fail(out, CWEBP_BROKEN, "container refused by WebPDemux");
            return;
        }
    }
    if (!full_decode) {
        return;
    }
    if (cost > CWEBP_MAX_MEMORY) {
        cwebp_fail(out, CWEBP_BROKEN, "decoding needs about %llu MiB, over the %llu MiB limit", cost >> 20,
                   CWEBP_MAX_MEMORY >> 20);
        return;
    }
    unsigned long long composited = (unsigned long long)out->frames * out->width * out->height;
    if (features.has_animation && composited > CWEBP_MAX_FULL_PIXELS) {
        cwebp_fail(out, CWEBP_BROKEN, "%u frames of a %ux%u canvas, over full mode's limit of %llu pixels",
                   out->frames, out->width, out->height, CWEBP_MAX_FULL_PIXELS);
        return;
    }
    if (features.has_animation) {
        cwebp_decode_animation(data, len, out);
    } else {
        cwebp_decode_still(data, len, out);
    }
}
