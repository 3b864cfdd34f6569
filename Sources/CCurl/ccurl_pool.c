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

/* The cookies in the shared jar, as Netscape lines (the caller frees them), and how many. */
static struct curl_slist *jar_lines(ccurl_client *c, size_t *count) {
    struct curl_slist *lines = NULL;
    curl_easy_getinfo(c->cookie_keeper, CURLINFO_COOKIELIST, &lines);
    *count = 0;
    for (struct curl_slist *line = lines; line; line = line->next) (*count)++;
    return lines;
}

/* Gives `c->share` its lock and what it holds: TLS sessions, and cookies when there is a cookie
 * file; 0 when the cookie keeper cannot be made. */
int ccurl_share_setup(ccurl_client *c) {
    pthread_mutexattr_t recursive;
    pthread_mutexattr_init(&recursive);
    pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&c->share_lock, &recursive);
    pthread_mutexattr_destroy(&recursive);
    curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, lock_share);
    curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, unlock_share);
    curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    if (!c->cookie_file) return 1;
    /* One cookie jar for every handle, as curl's one: a cookie a server sets on one connection
     * goes with the next request whatever handle it gets. The file is read into it once, here;
     * request handles only turn the engine on (an empty CURLOPT_COOKIEFILE). */
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE);
    c->cookie_keeper = curl_easy_init();
    if (!c->cookie_keeper || curl_easy_setopt(c->cookie_keeper, CURLOPT_SHARE, c->share) != CURLE_OK
        || curl_easy_setopt(c->cookie_keeper, CURLOPT_COOKIEFILE, c->cookie_file) != CURLE_OK) return 0;
    curl_easy_setopt(c->cookie_keeper, CURLOPT_COOKIELIST, "RELOAD");
    c->file_cookies = jar_lines(c, &c->file_cookie_count);
    return 1;
}

/* Set-Cookie lines between counts of the jar, and the cookies servers may add to the file's
 * before the jar goes back to the file's alone. */
enum { COOKIE_COUNT_EVERY = 25, SERVER_COOKIES_MAX = 75 };

/* libcurl keeps every cookie a server sets, with no bound, and sends at most 150 with a
 * request: a server setting new ones with each response grows memory without end and crowds
 * the file's cookies out. So once SERVER_COOKIES_MAX more than the file's are in the jar, it is
 * emptied and the file's put back (the servers' then start again, as in a new curl -b run).
 * Through the keeper, which never sends: libcurl refuses new cookies on a handle whose last
 * response set 50, its cap per response, until that handle's next request. */
void ccurl_bound_cookies(ccurl_client *c) {
    if (!c->cookie_keeper || c->cookies_set < COOKIE_COUNT_EVERY) return;
    c->cookies_set = 0;
    size_t count;
    curl_slist_free_all(jar_lines(c, &count));
    if (count <= c->file_cookie_count + SERVER_COOKIES_MAX) return;
    curl_easy_setopt(c->cookie_keeper, CURLOPT_COOKIELIST, "ALL");
    for (struct curl_slist *line = c->file_cookies; line; line = line->next) {
        curl_easy_setopt(c->cookie_keeper, CURLOPT_COOKIELIST, line->data);
    }
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
