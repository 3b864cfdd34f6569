#define _GNU_SOURCE
#include "ccurl_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

/* Response bodies as they arrive: in memory up to CCURL_SPOOL_THRESHOLD, then in an unnamed
 * file of the spool directory; over max_bytes, the transfer ends. */

/* Moves the body into an unnamed file of the spool directory; 0 when there is none or it cannot
 * be made (the body then stays in memory). */
static int spool(struct transfer *t) {
    const char *directory = t->pool->client->spool_directory;
    if (t->spool_fd >= 0) return 1;
    if (!directory) return 0;
    int fd = open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return 0;
    size_t written = 0;
    while (written < t->length) {
        ssize_t n = pwrite(fd, t->body + written, t->length - written, (off_t)written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            close(fd);
            return 0;
        }
        written += (size_t)n;
    }
    free(t->body);
    t->body = NULL;
    t->capacity = 0;
    t->spool_fd = fd;
    return 1;
}

/* Appends to the spooled body; 0 on a write error (the disk is full). */
static int append_spooled(struct transfer *t, const char *data, size_t length) {
    size_t written = 0;
    while (written < length) {
        ssize_t n = pwrite(t->spool_fd, data + written, length - written, (off_t)(t->length + written));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;
        written += (size_t)n;
    }
    t->length += length;
    return 1;
}

int ccurl_reserve(struct transfer *t, size_t needed, int exact) {
    if (needed <= t->capacity) return 1;
    /* A size the server announced is reserved as it is: an image is often 2 KiB, and 16 KiB a
     * body, freed on another thread, kept the allocator consolidating. */
    size_t capacity = exact ? (needed ? needed : 1) : t->capacity ? t->capacity * 2 : 16 * 1024;
    if (capacity < needed) capacity = needed;
    if (t->max_bytes > 0 && (int64_t)capacity > t->max_bytes) capacity = (size_t)t->max_bytes;
    if (capacity < needed) capacity = needed;
    uint8_t *grown = realloc(t->body, capacity);
    if (!grown) return 0;
    t->body = grown;
    t->capacity = capacity;
    return 1;
}

/* Appends body bytes; returning less than given aborts the transfer (CURLE_WRITE_ERROR). */
size_t ccurl_on_body(char *data, size_t size, size_t count, void *user) {
    struct transfer *t = user;
    size_t length = size * count;
    if (t->max_bytes > 0 && (int64_t)(t->length + length) > t->max_bytes) {
        t->too_large = 1;
        return 0;
    }
    if (t->spool_fd < 0 && t->length + length > CCURL_SPOOL_THRESHOLD) spool(t);
    if (t->spool_fd >= 0) return append_spooled(t, data, length) ? length : 0;
    if (!ccurl_reserve(t, t->length + length, 0)) return 0;
    memcpy(t->body + t->length, data, length);
    t->length += length;
    return length;
}
