#define _GNU_SOURCE
#include "ccurl_internal.h"

#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* Setting up a request: the options every easy handle of a client carries (protocols, TLS,
 * credentials, cookies, proxy, headers), the address check, and ccurl_submit's own options. */

/* Frees what ccurl_copy_common copied; after every easy handle is gone (they point at it). */
void ccurl_free_common(ccurl_client *c) {
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
int ccurl_copy_common(ccurl_client *c, const ccurl_options *o) {
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
    /* The engine on; the file is in the shared jar already (ccurl_share_setup). */
    if (c->cookie_file && curl_easy_setopt(e, CURLOPT_COOKIEFILE, "") != CURLE_OK) return 0;
    if (c->proxy && curl_easy_setopt(e, CURLOPT_PROXY, c->proxy) != CURLE_OK) return 0;
    if (c->noproxy && curl_easy_setopt(e, CURLOPT_NOPROXY, c->noproxy) != CURLE_OK) return 0;
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->headers);
    return 1;
}

int ccurl_address_is_forbidden(const struct sockaddr *address) {
    if (!address) return 0;
    if (address->sa_family == AF_INET) {
        uint32_t ip = ntohl(((const struct sockaddr_in *)address)->sin_addr.s_addr);
        /* 169.254.0.0/16, and Alibaba Cloud's metadata service, outside it. */
        return (ip >> 16) == 0xA9FE || ip == 0x646464C8;
    }
    if (address->sa_family == AF_INET6) {
        const uint8_t *ip = ((const struct sockaddr_in6 *)address)->sin6_addr.s6_addr;
        if (ip[0] == 0xFE && (ip[1] & 0xC0) == 0x80) return 1;  /* fe80::/10 */
        /* fd00:ec2::254, EC2's metadata service over IPv6. */
        static const uint8_t ec2[16] = { 0xFD, 0, 0x0E, 0xC2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54 };
        if (memcmp(ip, ec2, sizeof ec2) == 0) return 1;
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
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, ccurl_on_body);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, ccurl_on_header);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    return e;
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
    ccurl_wake_locked(c);
    pthread_mutex_unlock(&c->lock);
    return id;
}
