#define _GNU_SOURCE
#include "ccurl_internal.h"

#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

/* Starting and ending a client: what ccurl_client_create sets up and ccurl_client_destroy frees. */

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_status = CURLE_FAILED_INIT;

static void global_init(void) {
    global_status = curl_global_init(CURL_GLOBAL_DEFAULT);
}

void ccurl_free_client(ccurl_client *c) {
    pthread_mutex_destroy(&c->lock);
    if (c->cookie_keeper) curl_easy_cleanup(c->cookie_keeper);  /* before the share it joined */
    curl_slist_free_all(c->file_cookies);
    if (c->share) curl_share_cleanup(c->share);
    pthread_mutex_destroy(&c->share_lock);
    free(c->ca_file);
    free(c->spool_directory);
    ccurl_free_common(c);
    close(c->wake_fd);
    close(c->epoll_fd);
    free(c->fd_state);
    free(c->idle);
    free(c);
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
    int common = ccurl_copy_common(c, options);
    c->share = curl_share_init();
    /* A host limit is a limit per pool: with one, each host keeps to one pool. */
    c->pool_by_host = options->max_per_host > 0;
    c->pool_count = (uint32_t)((in_flight + POOL_SIZE - 1) / POOL_SIZE);
    if (c->pool_count > MAX_POOLS) c->pool_count = MAX_POOLS;
    long connections = options->max_connections > in_flight ? options->max_connections : in_flight;
    int ready = common && c->idle && c->wake_fd >= 0 && c->epoll_fd >= 0 && c->share && (c->ca_file || !options->ca_file);
    for (uint32_t i = 0; ready && i < c->pool_count; i++) {
        ready = ccurl_make_pool(c, i, (connections + c->pool_count - 1) / c->pool_count, options->max_per_host);
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
        ccurl_free_common(c);
        free(c->idle);
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    if (!ccurl_share_setup(c) || pthread_create(&c->thread, NULL, ccurl_run_loop, c) != 0) {
        for (uint32_t i = 0; i < c->pool_count; i++) curl_multi_cleanup(c->pools[i].multi);
        ccurl_free_client(c);
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
    ccurl_wake_locked(c);
    pthread_mutex_unlock(&c->lock);
    if (self) {
        pthread_detach(c->thread);  /* the loop frees the client when it returns */
        return;
    }
    pthread_join(c->thread, NULL);
    ccurl_free_client(c);
}
