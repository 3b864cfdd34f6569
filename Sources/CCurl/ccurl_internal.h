#ifndef CCURL_INTERNAL_H
#define CCURL_INTERNAL_H

/*
 * What the files of the shim share; not part of the module's interface.
 *   ccurl_client.c   ccurl_client_create and _destroy: the client's parts, its thread
 *   ccurl_loop.c     the thread: queue of submissions and cancellations, epoll, completions
 *   ccurl_pool.c     the multi handles (pools) and the share of TLS sessions and cookies
 *   ccurl_request.c  ccurl_submit: easy handles, per-client and per-request options
 *   ccurl_headers.c  response headers: status, Content-Length, Retry-After, validators
 *   ccurl_body.c     response bodies: in memory up to a cap, then in an O_TMPFILE
 * Each file defines _GNU_SOURCE before its first include, so glibc's headers give O_TMPFILE,
 * SOCK_CLOEXEC and pthread_setname_np.
 */

#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before the first include"
#endif

#include "ccurl.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define CCURL_HIDDEN __attribute__((visibility("hidden")))

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
    /* With a cookie file (ccurl_pool.c): a handle that never sends, through which the jar is
     * loaded and kept bounded; the file's cookies as libcurl read them, to go back to; and the
     * Set-Cookie lines seen since the jar was last counted. Loop thread only, but for creation. */
    CURL *cookie_keeper;
    struct curl_slist *file_cookies;
    size_t file_cookie_count;
    uint32_t cookies_set;
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

/* Used by two files each, once per request or header line: inline, as they were in one file. */

/* Whether a validator can go into a header line as it is: 1 to CCURL_VALIDATOR_MAX bytes,
 * no control character. */
static inline int sendable_validator(const char *value, size_t length) {
    if (length == 0 || length > CCURL_VALIDATOR_MAX) return 0;
    for (size_t i = 0; i < length; i++) {
        unsigned char byte = (unsigned char)value[i];
        if ((byte < 0x20 && byte != '\t') || byte == 0x7F) return 0;
    }
    return 1;
}

/* Frees `t` with its easy handle, headers, body and spool file. */
static inline void free_transfer(struct transfer *t) {
    if (t->easy) curl_easy_cleanup(t->easy);
    curl_slist_free_all(t->headers);  /* after the handle: it points at the list until then */
    free(t->body);
    if (t->spool_fd >= 0) close(t->spool_fd);
    free(t);
}

/* ccurl_client.c */
CCURL_HIDDEN void ccurl_free_client(ccurl_client *c);

/* ccurl_loop.c */
CCURL_HIDDEN void *ccurl_run_loop(void *argument);
CCURL_HIDDEN void ccurl_wake_locked(ccurl_client *c);
CCURL_HIDDEN int ccurl_on_socket(CURL *easy, curl_socket_t fd, int what, void *user, void *socket_data);
CCURL_HIDDEN int ccurl_on_timer(CURLM *multi, long timeout_ms, void *user);

/* ccurl_pool.c */
CCURL_HIDDEN int ccurl_make_pool(ccurl_client *c, uint32_t index, long max_connections, long max_per_host);
CCURL_HIDDEN int ccurl_share_setup(ccurl_client *c);
CCURL_HIDDEN void ccurl_bound_cookies(ccurl_client *c);

/* ccurl_request.c */
CCURL_HIDDEN int ccurl_copy_common(ccurl_client *c, const ccurl_options *o);
CCURL_HIDDEN void ccurl_free_common(ccurl_client *c);

/* ccurl_headers.c: libcurl's CURLOPT_HEADERFUNCTION. */
CCURL_HIDDEN size_t ccurl_on_header(char *line, size_t size, size_t count, void *user);

/* ccurl_body.c: libcurl's CURLOPT_WRITEFUNCTION, and room for `needed` bytes of body (`exact`: a size the
 * server announced, reserved as it is; otherwise the room grows by doubling). */
CCURL_HIDDEN size_t ccurl_on_body(char *data, size_t size, size_t count, void *user);
CCURL_HIDDEN int ccurl_reserve(struct transfer *t, size_t needed, int exact);

#endif
