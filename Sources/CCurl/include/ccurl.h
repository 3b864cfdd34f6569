#ifndef CCURL_H
#define CCURL_H

/*
 * A small shim over libcurl's multi interface that Swift can call.
 *
 * curl_easy_setopt is variadic, so Swift cannot call it: every option is set here. One
 * ccurl_client owns one thread and a multi handle per 128 transfers in flight (16 at most),
 * which the thread drives (epoll_wait on the sockets libcurl asks for,
 * curl_multi_socket_action, curl_multi_info_read). Requests and cancellations may come from any
 * thread; they are queued under a lock, and the thread is woken through an eventfd only when
 * it is waiting in epoll_wait (a busy loop picks new work up before it sleeps). Easy
 * handles of finished transfers are kept and reused by later requests.
 * Every submitted request ends in exactly one call of the client's completion function,
 * on the client's thread.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a transfer ended, as the shim classifies it. */
enum {
    CCURL_OK = 0,                /* the last response arrived whole (any status) */
    CCURL_CANCELLED = 1,         /* ccurl_cancel or ccurl_client_destroy ended it */
    CCURL_TIMEOUT = 2,           /* CURLE_OPERATION_TIMEDOUT */
    CCURL_TOO_LARGE = 3,         /* body over max_bytes: by Content-Length or while streaming */
    CCURL_TOO_MANY_REDIRECTS = 4,/* CURLE_TOO_MANY_REDIRECTS */
    CCURL_PARTIAL = 5,           /* CURLE_PARTIAL_FILE: connection closed before Content-Length */
    CCURL_RECEIVE_ERROR = 6,     /* CURLE_RECV_ERROR: e.g. reset by the peer */
    CCURL_TLS = 7,               /* the server's certificate could not be verified, or no CA file */
    CCURL_OTHER = 8,             /* anything else; see curl_code and error */
    CCURL_UNREACHABLE = 9,       /* the host's name did not resolve, or no connection could be made */
    CCURL_REDIRECT_REFUSED = 10, /* a redirect to a scheme other than http or https (file://, ftp://...) */
    CCURL_HEADER_TOO_LARGE = 11, /* a response header over libcurl's CURL_MAX_HTTP_HEADER (100 KiB) */
    CCURL_FORBIDDEN_ADDRESS = 12 /* the host is at a link-local address (ccurl_address_is_forbidden) */
};

/* libcurl's limit on one response header line (CURL_MAX_HTTP_HEADER), for messages. */
#define CCURL_MAX_HEADER 102400

/* The end of one transfer, valid only during the completion call, except `body`. */
typedef struct {
    int outcome;              /* CCURL_* above */
    int curl_code;            /* the CURLcode, 0 when none */
    long status;              /* HTTP status of the last response seen, 0 when none */
    uint8_t *body;            /* the last response's body; owned by the callee (free it); may be NULL */
    size_t body_length;       /* of `body`, or of the file `body_fd` when that is not -1 */
    int body_fd;              /* a body over CCURL_SPOOL_THRESHOLD, in an unnamed file (O_TMPFILE) of
                                 the client's spool directory, `body` then NULL; owned by the callee
                                 (close it); -1 when the body is in memory */
    int64_t content_length;   /* the last response's Content-Length, -1 when absent */
    const char *retry_after;  /* the last response's Retry-After value, NULL when absent */
    const char *etag;         /* the last response's ETag, NULL when absent or over CCURL_VALIDATOR_MAX bytes */
    const char *last_modified;/* the last response's Last-Modified, NULL when absent or too long */
    const char *effective_url;/* the URL of the last request, NULL when unknown */
    long redirects;           /* redirects followed */
    const char *error;        /* curl's message, "" when none */
} ccurl_result;

/* Called once per request with the context given to ccurl_submit. */
typedef void (*ccurl_completion)(void *context, const ccurl_result *result);

typedef struct ccurl_client ccurl_client;

/* Options of one request. */
typedef struct {
    const char *url;
    long timeout_ms;          /* whole attempt, from submission; 0 means none */
    int64_t max_bytes;        /* body cap; 0 means none */
    long max_redirects;       /* redirects to follow; 0 follows none */
    const char *if_none_match;    /* sent as If-None-Match when not NULL (an earlier ETag) */
    const char *if_modified_since;/* sent as If-Modified-Since when not NULL (an earlier Last-Modified) */
} ccurl_request;

/* Longest ETag or Last-Modified value kept or sent; a longer one counts as absent. A value
 * with a control character (CR, LF, NUL...) is never sent: it could end the header. */
#define CCURL_VALIDATOR_MAX 255

/* How a client connects; fixed for its lifetime. */
typedef struct {
    long max_in_flight;       /* most transfers at once (the caller bounds them) */
    long max_connections;     /* connections kept, idle ones included, over all hosts */
    long max_per_host;        /* most connections to one host; 0 means no limit of its own */
    const char *ca_file;      /* a PEM CA bundle to verify servers with, as curl's --cacert; NULL for the system's */
    int http2;                /* offer HTTP/2 through TLS ALPN and multiplex on it */
    const char *spool_directory; /* where bodies over CCURL_SPOOL_THRESHOLD go (O_TMPFILE), so they
                                    are not held in memory; NULL, or a directory that cannot hold
                                    one, keeps every body in memory */
    /* What every request carries, set once per easy handle (copied: the caller's strings may go). */
    const char *user_agent;   /* CURLOPT_USERAGENT; NULL sends none */
    const char *const *headers;/* "Name: value" lines sent with every request (CURLOPT_HTTPHEADER), already checked */
    size_t header_count;
    int netrc;                /* read credentials from a netrc file (CURL_NETRC_OPTIONAL) */
    const char *netrc_file;   /* CURLOPT_NETRC_FILE; NULL for ~/.netrc (used only with netrc) */
    const char *cookie_file;  /* CURLOPT_COOKIEFILE, a Netscape cookies.txt; NULL for none */
    const char *proxy;        /* CURLOPT_PROXY; NULL lets libcurl read http_proxy, https_proxy, ALL_PROXY */
    const char *noproxy;      /* CURLOPT_NOPROXY; NULL lets libcurl read NO_PROXY */
} ccurl_options;

/* Bodies up to this many bytes are kept in memory; a longer one goes to the spool directory. */
#define CCURL_SPOOL_THRESHOLD (1024 * 1024)

/*
 * Starts a client: a multi handle and its thread. Connections are kept per host and reused;
 * the pool keeps idle connections to every host a run talks to (max_connections in all), so
 * requests that alternate hosts do not close each other's connections. Returns NULL when
 * libcurl or the thread cannot be set up.
 */
ccurl_client *ccurl_client_create(const ccurl_options *options, ccurl_completion completion);

/*
 * Ends every transfer still queued or running (each completes as CCURL_CANCELLED), stops
 * the thread and frees the client. May be called from the completion function itself.
 */
void ccurl_client_destroy(ccurl_client *client);

/*
 * Queues a request; returns its id (never 0), or 0 when it could not be set up, in which
 * case the completion is never called for it.
 */
uint64_t ccurl_submit(ccurl_client *client, const ccurl_request *request, void *context);

struct sockaddr;

/*
 * Whether the archiver refuses to connect to `address`: link-local, IPv4 169.254.0.0/16 (where
 * clouds serve instance metadata and credentials) and IPv6 fe80::/10, IPv4-mapped ones too.
 * Checked for every connection libcurl opens, the first request's and every redirect's, after
 * the name is resolved, so neither a redirect nor a name pointing there gets through.
 */
int ccurl_address_is_forbidden(const struct sockaddr *address);

/* Ends request `id` as CCURL_CANCELLED if it has not completed yet; otherwise does nothing. */
void ccurl_cancel(ccurl_client *client, uint64_t id);

#ifdef __cplusplus
}
#endif

#endif
