#define _GNU_SOURCE
#include "ccurl_internal.h"

/* The pools: one multi handle each, with its own connections and timer, and the share of TLS
 * sessions (and cookies) every easy handle of the client joins. */

static void lock_share(CURL *handle, curl_lock_data data, curl_lock_access access, void *user) {
    (void)handle; (void)data; (void)access;
    pthread_mutex_lock(&((ccurl_client *)user)->share_lock);
}

static void unlock_share(CURL *handle, curl_lock_data data, void *user) {
    (void)handle; (void)data;
    pthread_mutex_unlock(&((ccurl_client *)user)->share_lock);
}

/* Gives `c->share` its lock and what it holds: TLS sessions, and cookies when there is a cookie file. */
void ccurl_share_setup(ccurl_client *c) {
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
}

/* Makes pool `index` of `c` with its share of the connections; 0 when libcurl cannot. */
int ccurl_make_pool(ccurl_client *c, uint32_t index, long max_connections, long max_per_host) {
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
    curl_multi_setopt(pool->multi, CURLMOPT_SOCKETFUNCTION, ccurl_on_socket);
    curl_multi_setopt(pool->multi, CURLMOPT_SOCKETDATA, pool);
    curl_multi_setopt(pool->multi, CURLMOPT_TIMERFUNCTION, ccurl_on_timer);
    curl_multi_setopt(pool->multi, CURLMOPT_TIMERDATA, pool);
    curl_multi_setopt(pool->multi, CURLMOPT_PIPELINING, c->http2 ? CURLPIPE_MULTIPLEX : (long)CURLPIPE_NOTHING);
    return 1;
}
