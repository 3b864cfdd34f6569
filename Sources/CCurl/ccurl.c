#define _GNU_SOURCE
#include "ccurl.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* One request from submission to completion. */
struct transfer {
    uint64_t id;
    CURL *easy;
    void *context;
    uint8_t *body;
    size_t length, capacity;
    /* The body's unnamed file once it outgrew CCURL_SPOOL_THRESHOLD (`body` is then NULL and
     * `length` counts the file's bytes); -1 before. */
    int spool_fd;
    int64_t max_bytes;
    long status;
    int64_t content_length;
    int has_retry_after;
    char retry_after[128];
    int has_etag, has_last_modified;
    char etag[CCURL_VALIDATOR_MAX + 1];
    char last_modified[CCURL_VALIDATOR_MAX + 1];
    struct curl_slist *headers;  /* this request's conditional headers; freed with it */
    int too_large;
    /* Between a status line and the blank line ending its headers. */
    int in_headers;
    /* A connection was refused because of its address (ccurl_address_is_forbidden). */
    int forbidden;
    char error[CURL_ERROR_SIZE];
    struct pool *pool;
    /* The scheme, host and port of the request's URL, hashed (origin_hash). */
    uint64_t origin;
    struct transfer *prev, *next;
};

/* One multi handle of a client: its own connection pool and timer. libcurl walks a host's
 * connections to find an idle one for every request, so with 1024 held open by a far server
 * each request cost a walk past a thousand busy ones; several pools of at most 128 requests
 * each keep the walks short. Loop thread only, but for its creation. */
struct pool {
    struct ccurl_client *client;
    CURLM *multi;
    uint32_t index;
    /* Transfers submitted to it and not finished; read and written atomically. */
    uint32_t in_flight;
    /* When libcurl wants curl_multi_socket_action(CURL_SOCKET_TIMEOUT), in CLOCK_MONOTONIC
     * milliseconds; -1 for no timer. */
    int64_t timer_deadline;
};

/* Requests in flight per pool, at most. */
enum { POOL_SIZE = 128, MAX_POOLS = 16 };

struct ccurl_client {
    struct pool pools[MAX_POOLS];
    uint32_t pool_count;
    /* Whether a host keeps to one pool (when hosts are capped); else the least busy pool. */
    int pool_by_host;
    /* TLS sessions shared by every easy handle, so a new connection to a host resumes the
     * session of an earlier one instead of a full handshake. Sessions are used on the loop
     * thread only, but handles join and leave the share from submitting threads too, so it
     * is locked (a recursive mutex: libcurl may nest its share locks). */
    CURLSH *share;
    pthread_mutex_t share_lock;
    char *ca_file;
    char *spool_directory;
    int http2;
    /* What every request carries (ccurl_options): set on each easy handle once, in new_easy. */
    char *user_agent, *netrc_file, *cookie_file, *proxy, *noproxy;
    int netrc;
    struct curl_slist *headers;  /* built once per client; handles point at it until freed */
    pthread_t thread;
    ccurl_completion completion;

    /* Guarded by lock: what other threads hand to the loop. */
    pthread_mutex_t lock;
    uint64_t next_id;
    struct transfer *queued_head, *queued_tail;
    uint64_t *cancels;
    size_t cancel_count, cancel_capacity;
    int stopping, detached;
    /* The loop is in (or about to enter) epoll_wait and nobody has woken it yet: only
     * then does new work need a write to wake_fd. */
    int sleeping;
    /* Easy handles of finished transfers, kept for the next submissions: a reused handle
     * keeps its buffers and options, so a request costs a few setopts, not an init. */
    CURL **idle;
    size_t idle_count;
    size_t idle_capacity;

    /* Owned by the loop thread: transfers added to the multi handle. */
    struct transfer *active;
    /* An eventfd that wakes the loop from epoll_wait (cheaper than curl_multi_wakeup's
     * socket pair). */
    int wake_fd;
    /* libcurl's sockets, as its socket callback asks, and the wake fd: the loop waits on this
     * and tells libcurl which sockets are ready (curl_multi_socket_action). curl_multi_poll
     * polls every connection on every wake-up, which at 1024 connections kept open by far
     * servers cost a third of the run's CPU. An event's data is the pool's index (high 32
     * bits) and the socket. Loop thread only, but for its creation. */
    int epoll_fd;
    /* Per descriptor (indexed by fd, grown as needed): whether the epoll set holds it, and
     * whether it is waited on (FD_ACTIVE) or parked with no events (FD_PARKED). A connection
     * libcurl keeps between requests is parked rather than removed, so the next request on
     * it costs one epoll_ctl instead of three (remove, a failed modify, add). Loop thread only. */
    uint8_t *fd_state;
    size_t fd_state_length;
};

enum { FD_NONE = 0, FD_PARKED = 1, FD_ACTIVE = 2 };

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_status = CURLE_FAILED_INIT;

static void global_init(void) {
    global_status = curl_global_init(CURL_GLOBAL_DEFAULT);
}

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

static int reserve(struct transfer *t, size_t needed) {
    if (needed <= t->capacity) return 1;
    size_t capacity = t->capacity ? t->capacity * 2 : 16 * 1024;
    if (capacity < needed) capacity = needed;
    if (t->max_bytes > 0 && (int64_t)capacity > t->max_bytes) capacity = (size_t)t->max_bytes;
    if (capacity < needed) capacity = needed;
    uint8_t *grown = realloc(t->body, capacity);
    if (!grown) return 0;
    t->body = grown;
    t->capacity = capacity;
    return 1;
}

/* Whether a validator can go into a header line as it is: 1 to CCURL_VALIDATOR_MAX bytes,
 * no control character. */
static int sendable_validator(const char *value, size_t length) {
    if (length == 0 || length > CCURL_VALIDATOR_MAX) return 0;
    for (size_t i = 0; i < length; i++) {
        unsigned char byte = (unsigned char)value[i];
        if ((byte < 0x20 && byte != '\t') || byte == 0x7F) return 0;
    }
    return 1;
}

/* Copies a response's ETag or Last-Modified into `out` (CCURL_VALIDATOR_MAX + 1 bytes); returns
 * whether it was kept. A value that could not be sent back as it is is dropped, not cut. */
static int copy_validator(char *out, const char *value, size_t length) {
    if (!sendable_validator(value, length)) return 0;
    memcpy(out, value, length);
    out[length] = 0;
    return 1;
}

/* Every response (redirects too) starts with its status line: forget the previous one. */
static size_t on_header(char *line, size_t size, size_t count, void *user) {
    struct transfer *t = user;
    size_t length = size * count, value_length;
    const char *value;
    if (length >= 5 && memcmp(line, "HTTP/", 5) == 0) {
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
                    reserve(t, (size_t)parsed);
                }
            }
        }
    } else if ((value = header_value(line, length, "retry-after", &value_length))) {
        if (value_length >= sizeof t->retry_after) value_length = sizeof t->retry_after - 1;
        memcpy(t->retry_after, value, value_length);
        t->retry_after[value_length] = 0;
        t->has_retry_after = 1;
    } else if ((value = header_value(line, length, "etag", &value_length))) {
        t->has_etag = copy_validator(t->etag, value, value_length);
    } else if ((value = header_value(line, length, "last-modified", &value_length))) {
        t->has_last_modified = copy_validator(t->last_modified, value, value_length);
    }
    return length;
}

/* Appends body bytes; returning less than given aborts the transfer (CURLE_WRITE_ERROR). */
static size_t on_body(char *data, size_t size, size_t count, void *user) {
    struct transfer *t = user;
    size_t length = size * count;
    if (t->max_bytes > 0 && (int64_t)(t->length + length) > t->max_bytes) {
        t->too_large = 1;
        return 0;
    }
    if (t->spool_fd < 0 && t->length + length > CCURL_SPOOL_THRESHOLD) spool(t);
    if (t->spool_fd >= 0) return append_spooled(t, data, length) ? length : 0;
    if (!reserve(t, t->length + length)) return 0;
    memcpy(t->body + t->length, data, length);
    t->length += length;
    return length;
}

static int classify(const struct transfer *t, CURLcode code, int cancelled) {
    if (cancelled) return CCURL_CANCELLED;
    if (code == CURLE_OK) return CCURL_OK;
    if (t->too_large || code == CURLE_FILESIZE_EXCEEDED) return CCURL_TOO_LARGE;
    switch (code) {
    case CURLE_OPERATION_TIMEDOUT: return CCURL_TIMEOUT;
    case CURLE_TOO_MANY_REDIRECTS: return CCURL_TOO_MANY_REDIRECTS;
    case CURLE_PARTIAL_FILE: return CCURL_PARTIAL;
    case CURLE_RECV_ERROR: return CCURL_RECEIVE_ERROR;
    case CURLE_COULDNT_RESOLVE_HOST:
        return CCURL_UNREACHABLE;
    case CURLE_COULDNT_CONNECT:
        return t->forbidden ? CCURL_FORBIDDEN_ADDRESS : CCURL_UNREACHABLE;
    /* The first URL is http(s) (the caller checks), so this is a redirect elsewhere, refused by
     * CURLOPT_REDIR_PROTOCOLS_STR. */
    case CURLE_UNSUPPORTED_PROTOCOL: return CCURL_REDIRECT_REFUSED;
    /* libcurl 7.88 reports a header line over CURL_MAX_HTTP_HEADER as running out of memory. */
    case CURLE_OUT_OF_MEMORY:
        return t->in_headers || t->status == 0 ? CCURL_HEADER_TOO_LARGE : CCURL_OTHER;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
        return CCURL_TLS;
    default: return CCURL_OTHER;
    }
}

static void free_transfer(struct transfer *t) {
    if (t->easy) curl_easy_cleanup(t->easy);
    curl_slist_free_all(t->headers);  /* after the handle: it points at the list until then */
    free(t->body);
    if (t->spool_fd >= 0) close(t->spool_fd);
    free(t);
}

/* Keeps a finished transfer's easy handle for reuse, or cleans it up when enough are kept. */
static void recycle(ccurl_client *c, struct transfer *t) {
    if (t->easy) {
        pthread_mutex_lock(&c->lock);
        if (!c->stopping && c->idle_count < c->idle_capacity) {
            /* `t` is freed below: no pointer into it may outlive it on an idle handle. */
            curl_easy_setopt(t->easy, CURLOPT_ERRORBUFFER, NULL);
            curl_easy_setopt(t->easy, CURLOPT_WRITEDATA, NULL);
            curl_easy_setopt(t->easy, CURLOPT_HEADERDATA, NULL);
            curl_easy_setopt(t->easy, CURLOPT_PRIVATE, NULL);
            curl_easy_setopt(t->easy, CURLOPT_OPENSOCKETDATA, NULL);
            curl_easy_setopt(t->easy, CURLOPT_HTTPHEADER, NULL);
            c->idle[c->idle_count++] = t->easy;
            t->easy = NULL;
        }
        pthread_mutex_unlock(&c->lock);
    }
    free_transfer(t);
}

/* Wakes the loop if it sleeps; called with the lock held. */
static void wake_locked(ccurl_client *c) {
    if (!c->sleeping) return;
    c->sleeping = 0;
    uint64_t one = 1;
    ssize_t ignored = write(c->wake_fd, &one, sizeof one);
    (void)ignored;
}

/* Takes `t` off the multi handle, reports it, frees it. Loop thread only. */
static void finish(ccurl_client *c, struct transfer *t, CURLcode code, int cancelled) {
    curl_multi_remove_handle(t->pool->multi, t->easy);
    __atomic_sub_fetch(&t->pool->in_flight, 1, __ATOMIC_RELAXED);
    if (t->prev) t->prev->next = t->next; else c->active = t->next;
    if (t->next) t->next->prev = t->prev;

    ccurl_result result;
    memset(&result, 0, sizeof result);
    result.outcome = classify(t, code, cancelled);
    result.curl_code = (int)code;
    result.status = t->status;
    if (result.status == 0) curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &result.status);
    result.body = t->body;
    result.body_length = t->length;
    result.body_fd = t->spool_fd;
    result.content_length = t->content_length;
    result.retry_after = t->has_retry_after ? t->retry_after : NULL;
    result.etag = t->has_etag ? t->etag : NULL;
    result.last_modified = t->has_last_modified ? t->last_modified : NULL;
    char *effective = NULL;
    curl_easy_getinfo(t->easy, CURLINFO_EFFECTIVE_URL, &effective);
    result.effective_url = effective;
    curl_easy_getinfo(t->easy, CURLINFO_REDIRECT_COUNT, &result.redirects);
    result.error = t->error[0] ? t->error : (code != CURLE_OK ? curl_easy_strerror(code) : "");
    if (cancelled) result.error = "cancelled";

    t->body = NULL;  /* now the completion's, as the spool file is */
    t->spool_fd = -1;
    c->completion(t->context, &result);
    recycle(c, t);
}

static void lock_share(CURL *handle, curl_lock_data data, curl_lock_access access, void *user) {
    (void)handle; (void)data; (void)access;
    pthread_mutex_lock(&((ccurl_client *)user)->share_lock);
}

static void unlock_share(CURL *handle, curl_lock_data data, void *user) {
    (void)handle; (void)data;
    pthread_mutex_unlock(&((ccurl_client *)user)->share_lock);
}

/* Frees what copy_common copied; after every easy handle is gone (they point at it). */
static void free_common(ccurl_client *c) {
    free(c->user_agent);
    free(c->netrc_file);
    free(c->cookie_file);
    free(c->proxy);
    free(c->noproxy);
    curl_slist_free_all(c->headers);
}

/* Copies an optional string; 0 only when out of memory. */
static int copy_optional(char **out, const char *value) {
    *out = value ? strdup(value) : NULL;
    return !value || *out;
}

/* Keeps what every request of the client carries; 0 when out of memory. */
static int copy_common(ccurl_client *c, const ccurl_options *o) {
    c->netrc = o->netrc;
    if (!copy_optional(&c->user_agent, o->user_agent) || !copy_optional(&c->netrc_file, o->netrc_file)
        || !copy_optional(&c->cookie_file, o->cookie_file) || !copy_optional(&c->proxy, o->proxy)
        || !copy_optional(&c->noproxy, o->noproxy)) return 0;
    for (size_t i = 0; i < o->header_count; i++) {
        struct curl_slist *grown = curl_slist_append(c->headers, o->headers[i]);
        if (!grown) return 0;
        c->headers = grown;
    }
    return 1;
}

/* Sets what every request carries on a new easy handle. CURLOPT_UNRESTRICTED_AUTH is never
 * set: credentials, and custom Authorization and Cookie headers, stay with the first host. */
static int set_common(ccurl_client *c, CURL *e) {
    if (c->user_agent) curl_easy_setopt(e, CURLOPT_USERAGENT, c->user_agent);
    if (c->netrc) {
        curl_easy_setopt(e, CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL);
        if (c->netrc_file && curl_easy_setopt(e, CURLOPT_NETRC_FILE, c->netrc_file) != CURLE_OK) return 0;
    }
    if (c->cookie_file && curl_easy_setopt(e, CURLOPT_COOKIEFILE, c->cookie_file) != CURLE_OK) return 0;
    if (c->proxy && curl_easy_setopt(e, CURLOPT_PROXY, c->proxy) != CURLE_OK) return 0;
    if (c->noproxy && curl_easy_setopt(e, CURLOPT_NOPROXY, c->noproxy) != CURLE_OK) return 0;
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->headers);
    return 1;
}

static void free_client(ccurl_client *c) {
    pthread_mutex_destroy(&c->lock);
    if (c->share) curl_share_cleanup(c->share);
    pthread_mutex_destroy(&c->share_lock);
    free(c->ca_file);
    free(c->spool_directory);
    free_common(c);
    close(c->wake_fd);
    close(c->epoll_fd);
    free(c->fd_state);
    free(c->idle);
    free(c);
}

static int64_t now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* The state slot of descriptor `fd`, growing the table to hold it; NULL when out of memory. */
static uint8_t *fd_slot(ccurl_client *c, int fd) {
    if (fd < 0) return NULL;
    if ((size_t)fd >= c->fd_state_length) {
        size_t length = c->fd_state_length ? c->fd_state_length : 64;
        while (length <= (size_t)fd) length *= 2;
        uint8_t *grown = realloc(c->fd_state, length);
        if (!grown) return NULL;
        memset(grown + c->fd_state_length, FD_NONE, length - c->fd_state_length);
        c->fd_state = grown;
        c->fd_state_length = length;
    }
    return &c->fd_state[fd];
}

/* libcurl's CURLMOPT_SOCKETFUNCTION: keeps the epoll set in step with what it waits for. A
 * socket libcurl stops waiting on is parked (no events); the kernel drops a closed one from
 * the set by itself, so a state that says "held" may be stale, and a failed modify then adds. */
static int on_socket(CURL *easy, curl_socket_t fd, int what, void *user, void *socket_data) {
    (void)easy; (void)socket_data;
    struct pool *pool = user;
    ccurl_client *c = pool->client;
    uint8_t *slot = fd_slot(c, fd);
    struct epoll_event event = { .events = 0, .data.u64 = ((uint64_t)pool->index << 32) | (uint32_t)fd };
    if (what == CURL_POLL_REMOVE) {
        if (slot && *slot != FD_NONE && epoll_ctl(c->epoll_fd, EPOLL_CTL_MOD, fd, &event) == 0) {
            *slot = FD_PARKED;
        } else {
            epoll_ctl(c->epoll_fd, EPOLL_CTL_DEL, fd, NULL);  /* may be closed already: nothing to do */
            if (slot) *slot = FD_NONE;
        }
        return 0;
    }
    if (what & CURL_POLL_IN) event.events |= EPOLLIN;
    if (what & CURL_POLL_OUT) event.events |= EPOLLOUT;
    int held = slot && *slot != FD_NONE;
    if ((held && epoll_ctl(c->epoll_fd, EPOLL_CTL_MOD, fd, &event) == 0)
        || epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, fd, &event) == 0
        || epoll_ctl(c->epoll_fd, EPOLL_CTL_MOD, fd, &event) == 0) {
        if (slot) *slot = FD_ACTIVE;
    }
    return 0;
}

/* libcurl's CURLMOPT_TIMERFUNCTION: when to call it back for time-outs and new transfers. */
static int on_timer(CURLM *multi, long timeout_ms, void *user) {
    (void)multi;
    struct pool *pool = user;
    pool->timer_deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    return 0;
}

/* Ends, as `code` with `error`, every transfer of `pool` to `origin` that has no answer yet.
 *
 * With HTTP/2 (CURLOPT_PIPEWAIT) a transfer to a host whose first connection is still being
 * made waits in libcurl's pending queue for it. libcurl 7.88 wakes one pending transfer per
 * transfer that ends, and a woken one that finds another connection under way goes to the back
 * of the queue: when every handshake fails (an untrusted certificate) and new requests keep
 * starting connections, some transfers kept losing their place until --timeout ended them as
 * timeouts (31 of 2000 at 64 in flight). They were waiting for a connection that failed in a
 * way every connection to the host fails, so they end with its error instead. */
static void fail_waiting(ccurl_client *c, struct pool *pool, uint64_t origin, CURLcode code, const char *error) {
    struct transfer *t = c->active;
    while (t) {
        struct transfer *next = t->next;
        if (t->pool == pool && t->origin == origin && t->status == 0) {
            snprintf(t->error, sizeof t->error, "%s", error);
            finish(c, t, code, 0);
        }
        t = next;
    }
}

/* Hands every finished transfer to `finish`. */
static void collect(ccurl_client *c, struct pool *pool) {
    CURLMsg *message;
    int left;
    while ((message = curl_multi_info_read(pool->multi, &left))) {
        if (message->msg != CURLMSG_DONE) continue;
        CURL *easy = message->easy_handle;
        CURLcode code = message->data.result;
        struct transfer *t = NULL;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&t);
        if (!t) continue;
        int outcome = classify(t, code, 0);
        int shared = c->http2 && t->status == 0 && (outcome == CCURL_TLS || outcome == CCURL_UNREACHABLE);
        char error[CURL_ERROR_SIZE];
        snprintf(error, sizeof error, "%s", t->error[0] ? t->error : curl_easy_strerror(code));
        uint64_t origin = t->origin;
        finish(c, t, code, 0);
        if (shared) fail_waiting(c, pool, origin, code, error);
    }
}

static void *run_loop(void *argument) {
    ccurl_client *c = argument;
    struct epoll_event events[256];
    for (;;) {
        pthread_mutex_lock(&c->lock);
        struct transfer *incoming = c->queued_head;
        c->queued_head = c->queued_tail = NULL;
        uint64_t *cancels = c->cancels;
        size_t cancel_count = c->cancel_count;
        c->cancels = NULL;
        c->cancel_count = c->cancel_capacity = 0;
        int stopping = c->stopping;
        pthread_mutex_unlock(&c->lock);

        while (incoming) {
            struct transfer *t = incoming;
            incoming = t->next;
            t->prev = NULL;
            t->next = c->active;
            if (c->active) c->active->prev = t;
            c->active = t;
            if (curl_multi_add_handle(t->pool->multi, t->easy) != CURLM_OK) {
                finish(c, t, CURLE_FAILED_INIT, 0);
            }
        }
        for (size_t i = 0; i < cancel_count; i++) {
            for (struct transfer *t = c->active; t; t = t->next) {
                if (t->id == cancels[i]) {
                    finish(c, t, CURLE_OK, 1);
                    break;
                }
            }
        }
        free(cancels);
        if (stopping) break;

        /* Wait only if nothing arrived meanwhile; submitters see `sleeping` and wake us. */
        int running = 0;
        int64_t wait_ms = 1000, now = now_ms();
        for (uint32_t i = 0; i < c->pool_count; i++) {
            int64_t deadline = c->pools[i].timer_deadline;
            if (deadline >= 0 && deadline - now < wait_ms) wait_ms = deadline - now < 0 ? 0 : deadline - now;
        }
        pthread_mutex_lock(&c->lock);
        int idle = !c->queued_head && !c->cancel_count && !c->stopping;
        c->sleeping = idle && wait_ms > 0;
        pthread_mutex_unlock(&c->lock);
        int ready = epoll_wait(c->epoll_fd, events, (int)(sizeof events / sizeof events[0]), idle ? (int)wait_ms : 0);
        if (idle && wait_ms > 0) {
            pthread_mutex_lock(&c->lock);
            c->sleeping = 0;
            pthread_mutex_unlock(&c->lock);
        }
        for (int i = 0; i < ready; i++) {
            if (events[i].data.u64 == UINT64_MAX) {
                uint64_t count;
                ssize_t ignored = read(c->wake_fd, &count, sizeof count);
                (void)ignored;
                continue;
            }
            uint32_t index = (uint32_t)(events[i].data.u64 >> 32);
            int fd = (int)(uint32_t)events[i].data.u64;
            /* A parked socket still reports errors and hang-ups (level-triggered: every wait):
             * no transfer uses it, so it leaves the set; libcurl finds it dead if it tries it. */
            if ((size_t)fd < c->fd_state_length && c->fd_state[fd] == FD_PARKED) {
                epoll_ctl(c->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
                c->fd_state[fd] = FD_NONE;
                continue;
            }
            int flags = 0;
            if (events[i].events & EPOLLIN) flags |= CURL_CSELECT_IN;
            if (events[i].events & EPOLLOUT) flags |= CURL_CSELECT_OUT;
            if (events[i].events & (EPOLLERR | EPOLLHUP)) flags |= CURL_CSELECT_ERR;
            if (index < c->pool_count) curl_multi_socket_action(c->pools[index].multi, fd, flags, &running);
        }
        now = now_ms();
        for (uint32_t i = 0; i < c->pool_count; i++) {
            struct pool *pool = &c->pools[i];
            if (pool->timer_deadline >= 0 && now >= pool->timer_deadline) {
                pool->timer_deadline = -1;
                curl_multi_socket_action(pool->multi, CURL_SOCKET_TIMEOUT, 0, &running);
            }
            collect(c, pool);
        }
    }

    while (c->active) finish(c, c->active, CURLE_OK, 1);
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->idle_count; i++) curl_easy_cleanup(c->idle[i]);
    c->idle_count = 0;
    pthread_mutex_unlock(&c->lock);
    for (uint32_t i = 0; i < c->pool_count; i++) curl_multi_cleanup(c->pools[i].multi);
    pthread_mutex_lock(&c->lock);
    int detached = c->detached;
    pthread_mutex_unlock(&c->lock);
    if (detached) free_client(c);
    return NULL;
}

/* Makes pool `index` of `c` with its share of the connections; 0 when libcurl cannot. */
static int make_pool(ccurl_client *c, uint32_t index, long max_connections, long max_per_host) {
    struct pool *pool = &c->pools[index];
    pool->client = c;
    pool->index = index;
    pool->timer_deadline = -1;
    pool->multi = curl_multi_init();
    if (!pool->multi) return 0;
    /* No total cap on connections: the caller bounds transfers in flight, and a total cap is
     * what made libcurl close an idle connection to one host to open one to another, so a
     * catalog alternating hosts reconnected (TLS handshake included) for nearly every image. */
    if (max_per_host > 0) curl_multi_setopt(pool->multi, CURLMOPT_MAX_HOST_CONNECTIONS, max_per_host);
    curl_multi_setopt(pool->multi, CURLMOPT_MAXCONNECTS, max_connections);
    curl_multi_setopt(pool->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(pool->multi, CURLMOPT_SOCKETDATA, pool);
    curl_multi_setopt(pool->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(pool->multi, CURLMOPT_TIMERDATA, pool);
    curl_multi_setopt(pool->multi, CURLMOPT_PIPELINING, c->http2 ? CURLPIPE_MULTIPLEX : (long)CURLPIPE_NOTHING);
    return 1;
}

ccurl_client *ccurl_client_create(const ccurl_options *options, ccurl_completion completion) {
    pthread_once(&global_once, global_init);
    if (global_status != CURLE_OK || !completion || !options) return NULL;
    ccurl_client *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->completion = completion;
    c->next_id = 1;
    c->http2 = options->http2;
    long in_flight = options->max_in_flight < 1 ? 1 : options->max_in_flight;
    c->idle_capacity = (size_t)in_flight * 2;
    c->idle = calloc(c->idle_capacity, sizeof *c->idle);
    c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    c->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event wake = { .events = EPOLLIN, .data.u64 = UINT64_MAX };
    if (c->wake_fd >= 0 && c->epoll_fd >= 0) epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, c->wake_fd, &wake);
    c->ca_file = options->ca_file ? strdup(options->ca_file) : NULL;
    c->spool_directory = options->spool_directory ? strdup(options->spool_directory) : NULL;
    int common = copy_common(c, options);
    c->share = curl_share_init();
    /* A host limit is a limit per pool: with one, each host keeps to one pool. */
    c->pool_by_host = options->max_per_host > 0;
    c->pool_count = (uint32_t)((in_flight + POOL_SIZE - 1) / POOL_SIZE);
    if (c->pool_count > MAX_POOLS) c->pool_count = MAX_POOLS;
    long connections = options->max_connections > in_flight ? options->max_connections : in_flight;
    int ready = common && c->idle && c->wake_fd >= 0 && c->epoll_fd >= 0 && c->share && (c->ca_file || !options->ca_file);
    for (uint32_t i = 0; ready && i < c->pool_count; i++) {
        ready = make_pool(c, i, (connections + c->pool_count - 1) / c->pool_count, options->max_per_host);
    }
    if (!ready) {
        for (uint32_t i = 0; i < c->pool_count; i++) {
            if (c->pools[i].multi) curl_multi_cleanup(c->pools[i].multi);
        }
        if (c->wake_fd >= 0) close(c->wake_fd);
        if (c->epoll_fd >= 0) close(c->epoll_fd);
        if (c->share) curl_share_cleanup(c->share);
        free(c->ca_file);
        free(c->spool_directory);
        free_common(c);
        free(c->idle);
        free(c);
        return NULL;
    }
    pthread_mutexattr_t recursive;
    pthread_mutexattr_init(&recursive);
    pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&c->share_lock, &recursive);
    pthread_mutexattr_destroy(&recursive);
    curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, lock_share);
    curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, unlock_share);
    curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    /* One cookie jar for every handle, as curl's one: a cookie a server sets on one connection
     * goes with the next request whatever handle it gets. */
    if (c->cookie_file) curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE);
    pthread_mutex_init(&c->lock, NULL);
    if (pthread_create(&c->thread, NULL, run_loop, c) != 0) {
        for (uint32_t i = 0; i < c->pool_count; i++) curl_multi_cleanup(c->pools[i].multi);
        free_client(c);
        return NULL;
    }
    pthread_setname_np(c->thread, "ccurl");  /* for profilers and top -H */
    return c;
}

void ccurl_client_destroy(ccurl_client *c) {
    if (!c) return;
    int self = pthread_equal(pthread_self(), c->thread);
    pthread_mutex_lock(&c->lock);
    c->stopping = 1;
    c->detached = self;
    wake_locked(c);
    pthread_mutex_unlock(&c->lock);
    if (self) {
        pthread_detach(c->thread);  /* the loop frees the client when it returns */
        return;
    }
    pthread_join(c->thread, NULL);
    free_client(c);
}

/* The scheme, host and port of `url`, lowercased and hashed with FNV-1a. */
static uint64_t origin_hash(const char *url) {
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    uint64_t hash = 1469598103934665603ULL;
    for (const char *q = url; *q && (q < p || (*q != '/' && *q != '?' && *q != '#')); q++) {
        hash = (hash ^ (uint8_t)(*q >= 'A' && *q <= 'Z' ? *q | 0x20 : *q)) * 1099511628211ULL;
    }
    return hash;
}

/* The pool a request goes to: the one with the fewest transfers (so each keeps about as many
 * connections as its share of the requests in flight), or its host's when hosts are capped. */
static uint32_t pool_for(ccurl_client *c, uint64_t origin) {
    if (c->pool_count == 1) return 0;
    if (!c->pool_by_host) {
        uint32_t best = 0, fewest = UINT32_MAX;
        for (uint32_t i = 0; i < c->pool_count; i++) {
            uint32_t busy = __atomic_load_n(&c->pools[i].in_flight, __ATOMIC_RELAXED);
            if (busy < fewest) { best = i; fewest = busy; }
        }
        return best;
    }
    return (uint32_t)(origin % c->pool_count);
}

int ccurl_address_is_forbidden(const struct sockaddr *address) {
    if (!address) return 0;
    if (address->sa_family == AF_INET) {
        uint32_t ip = ntohl(((const struct sockaddr_in *)address)->sin_addr.s_addr);
        return (ip >> 16) == 0xA9FE;  /* 169.254.0.0/16 */
    }
    if (address->sa_family == AF_INET6) {
        const uint8_t *ip = ((const struct sockaddr_in6 *)address)->sin6_addr.s6_addr;
        if (ip[0] == 0xFE && (ip[1] & 0xC0) == 0x80) return 1;  /* fe80::/10 */
        static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF };
        return memcmp(ip, mapped, sizeof mapped) == 0 && ip[12] == 169 && ip[13] == 254;
    }
    return 0;
}

/* libcurl's CURLOPT_OPENSOCKETFUNCTION: every connection's socket, refused (with a note on the
 * transfer, which then fails as CCURL_FORBIDDEN_ADDRESS) for a forbidden address. */
static curl_socket_t on_open_socket(void *user, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)purpose;
    if (ccurl_address_is_forbidden(&address->addr)) {
        struct transfer *t = user;
        if (t) t->forbidden = 1;
        return CURL_SOCKET_BAD;
    }
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

/* A new easy handle with the options every request of `c` shares. */
static CURL *new_easy(ccurl_client *c) {
    CURL *e = curl_easy_init();
    if (!e) return NULL;
    int ok = curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK
        && curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") == CURLE_OK;
    if (!ok) {
        curl_easy_cleanup(e);
        return NULL;
    }
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, c->http2 ? (long)CURL_HTTP_VERSION_2TLS : (long)CURL_HTTP_VERSION_1_1);
    /* Wait for a connection that can multiplex rather than open another one beside it. */
    if (c->http2) curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(e, CURLOPT_SHARE, c->share);
    if (c->ca_file && curl_easy_setopt(e, CURLOPT_CAINFO, c->ca_file) != CURLE_OK) {
        curl_easy_cleanup(e);
        return NULL;
    }
    if (!set_common(c, e)) {
        curl_easy_cleanup(e);
        return NULL;
    }
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    return e;
}

/* Appends "Name: value" to `list` when `value` is given and sendable; 0 only when out of memory. */
static int add_condition(struct curl_slist **list, const char *prefix, const char *value) {
    if (!value || !sendable_validator(value, strlen(value))) return 1;
    size_t prefix_length = strlen(prefix), value_length = strlen(value);
    char line[sizeof "If-Modified-Since: " + CCURL_VALIDATOR_MAX];
    if (prefix_length + value_length >= sizeof line) return 1;
    memcpy(line, prefix, prefix_length);
    memcpy(line + prefix_length, value, value_length + 1);
    struct curl_slist *grown = curl_slist_append(*list, line);
    if (!grown) return 0;
    *list = grown;
    return 1;
}

uint64_t ccurl_submit(ccurl_client *c, const ccurl_request *request, void *context) {
    struct transfer *t = calloc(1, sizeof *t);
    if (!t) return 0;
    t->spool_fd = -1;
    pthread_mutex_lock(&c->lock);
    if (c->idle_count > 0) t->easy = c->idle[--c->idle_count];
    pthread_mutex_unlock(&c->lock);
    if (!t->easy) t->easy = new_easy(c);
    if (!t->easy) {
        free(t);
        return 0;
    }
    t->context = context;
    t->origin = origin_hash(request->url);
    t->pool = &c->pools[pool_for(c, t->origin)];
    t->max_bytes = request->max_bytes;
    t->content_length = -1;
    CURL *e = t->easy;
    /* Every per-request option is set each time, so nothing carries over from a reused handle. */
    if (curl_easy_setopt(e, CURLOPT_URL, request->url) != CURLE_OK) {
        free_transfer(t);
        return 0;
    }
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, request->max_redirects);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, request->timeout_ms > 0 ? request->timeout_ms : 0L);
    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)(request->max_bytes > 0 ? request->max_bytes : 0));
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
    curl_easy_setopt(e, CURLOPT_PRIVATE, (void *)t);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, (void *)t);
    if (!add_condition(&t->headers, "If-None-Match: ", request->if_none_match)
        || !add_condition(&t->headers, "If-Modified-Since: ", request->if_modified_since)) {
        free_transfer(t);
        return 0;
    }
    /* A conditional request sends the client's headers and its own in one list of its own; any
     * other points at the client's list, built once. Set every time: a reused handle must not
     * send an earlier request's conditions. */
    if (t->headers) {
        for (struct curl_slist *h = c->headers; h; h = h->next) {
            struct curl_slist *grown = curl_slist_append(t->headers, h->data);
            if (!grown) {
                free_transfer(t);
                return 0;
            }
            t->headers = grown;
        }
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers ? t->headers : c->headers);

    pthread_mutex_lock(&c->lock);
    if (c->stopping) {
        pthread_mutex_unlock(&c->lock);
        free_transfer(t);
        return 0;
    }
    uint64_t id = t->id = c->next_id++;
    __atomic_add_fetch(&t->pool->in_flight, 1, __ATOMIC_RELAXED);
    if (c->queued_tail) c->queued_tail->next = t; else c->queued_head = t;
    c->queued_tail = t;
    wake_locked(c);
    pthread_mutex_unlock(&c->lock);
    return id;
}

void ccurl_cancel(ccurl_client *c, uint64_t id) {
    pthread_mutex_lock(&c->lock);
    if (!c->stopping) {
        if (c->cancel_count == c->cancel_capacity) {
            size_t capacity = c->cancel_capacity ? c->cancel_capacity * 2 : 16;
            uint64_t *grown = realloc(c->cancels, capacity * sizeof *grown);
            if (!grown) {
                pthread_mutex_unlock(&c->lock);
                return;
            }
            c->cancels = grown;
            c->cancel_capacity = capacity;
        }
        c->cancels[c->cancel_count++] = id;
        wake_locked(c);
    }
    pthread_mutex_unlock(&c->lock);
}
