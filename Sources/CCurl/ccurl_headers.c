#define _GNU_SOURCE
#include "ccurl_internal.h"

#include <string.h>
#include <strings.h>

/* Response headers as they arrive: the status line, Content-Length (and room for the body),
 * Retry-After, ETag and Last-Modified. */

/* Matches a header line "Name: value\r\n" and returns the trimmed value, or NULL. */
static const char *header_value(const char *line, size_t length, const char *name, size_t *value_length) {
    size_t name_length = strlen(name);
    if (length <= name_length || line[name_length] != ':' || strncasecmp(line, name, name_length) != 0) {
        return NULL;
    }
    const char *start = line + name_length + 1, *end = line + length;
    while (start < end && (*start == ' ' || *start == '\t')) start++;
    while (end > start && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t')) end--;
    *value_length = (size_t)(end - start);
    return start;
}

/* Copies a response's ETag or Last-Modified into `out` (CCURL_VALIDATOR_MAX + 1 bytes); returns
 * whether it was kept. A value that could not be sent back as it is is dropped, not cut. */
static int copy_validator(char *out, const char *value, size_t length) {
    if (!sendable_validator(value, length)) return 0;
    memcpy(out, value, length);
    out[length] = 0;
    return 1;
}

/* Whether `line` is a status line, "HTTP/1.1 200 ..." or "HTTP/2 200": the version's digits and
 * dots, a space, three digits. A header line that merely starts with "HTTP/" ("HTTP/: 304", which
 * libcurl passes on because it has a colon) is not one. */
static int is_status_line(const char *line, size_t length) {
    if (length < 10 || memcmp(line, "HTTP/", 5) != 0) return 0;
    size_t i = 5;
    while (i < length && ((line[i] >= '0' && line[i] <= '9') || line[i] == '.')) i++;
    if (i == 5 || i + 4 > length || line[i] != ' ') return 0;
    for (size_t k = i + 1; k < i + 4; k++) {
        if (line[k] < '0' || line[k] > '9') return 0;
    }
    return 1;
}

/* Every response (redirects too) starts with its status line: forget the previous one. Only
 * between responses: a line inside a response's headers, or a trailer after the body of the
 * answer (not a redirect's), never resets its status, length, validators or spool. */
size_t ccurl_on_header(char *line, size_t size, size_t count, void *user) {
    struct transfer *t = user;
    size_t length = size * count, value_length;
    const char *value;
    int answering = t->length > 0 && t->status >= 200 && (t->status < 300 || t->status >= 400);
    if (!t->in_headers && !answering && is_status_line(line, length)) {
        const char *space = memchr(line, ' ', length);
        t->status = space ? strtol(space + 1, NULL, 10) : 0;
        t->content_length = -1;
        t->has_retry_after = 0;
        t->has_etag = 0;
        t->has_last_modified = 0;
        t->length = 0;
        if (t->spool_fd >= 0 && ftruncate(t->spool_fd, 0) != 0) return 0;
        t->in_headers = 1;
    } else if (length <= 2 && (line[0] == '\r' || line[0] == '\n')) {
        t->in_headers = 0;
    } else if ((value = header_value(line, length, "content-length", &value_length))) {
        char digits[32];
        if (value_length > 0 && value_length < sizeof digits) {
            memcpy(digits, value, value_length);
            digits[value_length] = 0;
            char *end;
            long long parsed = strtoll(digits, &end, 10);
            if (*end == 0 && parsed >= 0) {
                t->content_length = parsed;
                /* Room for the whole body at once, unless it is going to the spool. */
                if (t->status >= 200 && t->status < 300 && (t->max_bytes <= 0 || parsed <= t->max_bytes)
                    && t->spool_fd < 0 && (parsed <= CCURL_SPOOL_THRESHOLD || !t->pool->client->spool_directory)) {
                    ccurl_reserve(t, (size_t)parsed, 1);
                }
            }
        }
    } else if ((value = header_value(line, length, "retry-after", &value_length))) {
        if (value_length >= sizeof t->retry_after) value_length = sizeof t->retry_after - 1;
        memcpy(t->retry_after, value, value_length);
        t->retry_after[value_length] = 0;
        t->has_retry_after = 1;
    } else if (t->pool->client->cookie_keeper && header_value(line, length, "set-cookie", &value_length)) {
        t->pool->client->cookies_set++;  /* the jar is counted now and then (ccurl_bound_cookies) */
    } else if ((value = header_value(line, length, "etag", &value_length))) {
        t->has_etag = copy_validator(t->etag, value, value_length);
    } else if ((value = header_value(line, length, "last-modified", &value_length))) {
        t->has_last_modified = copy_validator(t->last_modified, value, value_length);
    }
    return length;
}
