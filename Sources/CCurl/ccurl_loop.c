#define _GNU_SOURCE
#include "ccurl_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

/* The client's thread: it takes submissions and cancellations from the queue, waits on
 * libcurl's sockets (epoll) and timers, and hands every finished transfer to the completion. */

/* Wakes the loop if it sleeps; called with the lock held. */
void ccurl_wake_locked(ccurl_client *c) {
    if (!c->sleeping) return;
    c->sleeping = 0;
    uint64_t one = 1;
    ssize_t ignored = write(c->wake_fd, &one, sizeof one);
    (void)ignored;
}

static int classify(const struct transfer *t, CURLcode code, int cancelled) {
    if (cancelled) return CCURL_CANCELLED;
    if (code == CURLE_OK) return CCURL_OK;
    if (t->too_large || code == CURLE_FILESIZE_EXCEEDED) return CCURL_TOO_LARGE;
    switch (code) {
    case CURLE_OPERATION_TIMEDOUT: return CCURL_TIMEOUT;
    case CURLE_TOO_MANY_REDIRECTS: return CCURL_TOO_MANY_REDIRECTS;
    case CURLE_PARTIAL_FILE: return CCURL_PARTIAL;
    /* Debian's libcurl 7.88 ends a response whose header lines pass 300 KiB in all (the fix for
     * CVE-2023-38039) as a receive error: that is the server's doing, not the network's, and
     * trying again gets the same. */
    case CURLE_RECV_ERROR:
        return strstr(t->error, "Too large response headers") ? CCURL_HEADER_TOO_LARGE : CCURL_RECEIVE_ERROR;
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
int ccurl_on_socket(CURL *easy, curl_socket_t fd, int what, void *user, void *socket_data) {
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
int ccurl_on_timer(CURLM *multi, long timeout_ms, void *user) {
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

void *ccurl_run_loop(void *argument) {
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
        ccurl_bound_cookies(c);
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
    if (detached) ccurl_free_client(c);
    return NULL;
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
        ccurl_wake_locked(c);
    }
    pthread_mutex_unlock(&c->lock);
}
