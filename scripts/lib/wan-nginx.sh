# Sourced after scripts/lib/catalog-nginx.sh by scripts/bench-wan.sh and scripts/wan-server.sh:
# the catalog's images served as from far servers. nginx answers every request 50 ms late
# (echo_sleep from Debian's libnginx-mod-http-echo; tc netem is not available on these machines),
# on 8 loopback addresses 127.0.0.1 ... 127.0.0.8 as 8 hosts, over HTTPS with a test CA made for
# the run, and over plain HTTP.
#
#   make_catalog_images ARCHIVER CATALOG WORK FROM     (from catalog-nginx.sh: WORK/root)
#   make_test_ca WORK/tls                              (ca.pem, server.pem, server.key)
#   start_wan_nginx WORK [DELAY]                       (DELAY in seconds, default 0.05)
#
# start_wan_nginx picks five ports and writes them to WORK/ports.env, sets nginx_pid:
#   wan_tls    HTTPS, delayed, on 127.0.0.1 ... 127.0.0.8 (HTTP/1.1 only)
#   wan_http   plain HTTP, delayed, on the same 8 addresses
#   wan_fast   plain HTTP, no delay, on the same 8 addresses (the "without the delay" runs)
#   wan_h2     HTTPS with HTTP/2 offered through ALPN, no delay
#   wan_h2d    HTTPS with HTTP/2 offered through ALPN, delayed. platform.md says the echo module
#              breaks HTTP/2 streams; with curl 7.88.1 (5000 requests, 32 and 256 streams on one
#              connection) it did not, but the bench does not rely on it.
# Every request is a line of WORK/logs/access.log:
#   connection-serial requests-on-it server-addr:port msec request-time status "request"
# (one worker, so connection serials are unique: distinct serials per address = connections
# per host; the first request's start and the last's end bound each connection's active life).

wan_hosts=8
echo_module=/usr/lib/nginx/modules/ngx_http_echo_module.so

# make_test_ca DIR: a CA made for this run (DIR/ca.pem) and a server certificate it signed
# for IP:127.0.0.1 ... IP:127.0.0.8 (DIR/server.pem, DIR/server.key). P-256 keys: handshakes
# cost little CPU on the 2 cores the client under test shares with nginx.
make_test_ca() {
    local dir=$1 sans k
    mkdir -p "$dir"
    sans=$(for k in $(seq "$wan_hosts"); do printf 'IP:127.0.0.%s,' "$k"; done)
    sans=${sans%,}
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7 \
        -subj "/CN=archiver bench test CA $(date +%s)" -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -subj "/CN=127.0.0.1" -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
    printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n' \
        "$sans" >"$dir/server.ext"
    openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
        -days 7 -extfile "$dir/server.ext" -out "$dir/server.pem" 2>/dev/null
    openssl verify -CAfile "$dir/ca.pem" "$dir/server.pem" >/dev/null \
        || { echo "wan-nginx: the test certificate does not verify" >&2; exit 1; }
    chmod -R a+rX "$dir"
}

# listen_lines PORT [FLAGS]: one listen line per host address.
listen_lines() {
    local k
    for k in $(seq "$wan_hosts"); do printf '            listen 127.0.0.%s:%s%s;\n' "$k" "$1" "${2:+ $2}"; done
}

start_wan_nginx() {
    local work=$1 delay=${2:-0.05}
    [ -r "$echo_module" ] || { echo "wan-nginx: no $echo_module (apt-get install libnginx-mod-http-echo)" >&2; exit 1; }
    wan_tls=$(free_port) wan_http=$(free_port) wan_fast=$(free_port) wan_h2=$(free_port) wan_h2d=$(free_port)
    printf 'wan_tls=%s\nwan_http=%s\nwan_fast=%s\nwan_h2=%s\nwan_h2d=%s\nwan_delay=%s\n' \
        "$wan_tls" "$wan_http" "$wan_fast" "$wan_h2" "$wan_h2d" "$delay" >"$work/ports.env"
    # The delayed location: echo_sleep holds the request without a thread or a timer per
    # connection beyond nginx's own, then echo_exec hands it to the static file handler, which
    # still sends Content-Length, ETag and Last-Modified (and 304 to conditional requests).
    local delayed="location / { echo_sleep $delay; echo_exec @file; }
            location @file { root $work/root; try_files \$uri =404; }"
    local direct="location / { root $work/root; try_files \$uri =404; }"
    local tls="ssl_certificate $work/tls/server.pem;
            ssl_certificate_key $work/tls/server.key;"
    cat >"$work/nginx.conf" <<EOF
    load_module $echo_module;
    # One worker: the machine has 2 cores and the client under test needs the other. A
    # 1024-in-flight client needs as many connections, and each is a descriptor.
    worker_processes 1;
    worker_rlimit_nofile 16384;
    daemon off;
    pid $work/nginx.pid;
    error_log $work/logs/nginx-error.log warn;
    events { worker_connections 8192; }
    http {
        log_format wan '\$connection \$connection_requests \$server_addr:\$server_port \$msec \$request_time \$status "\$request"';
        access_log $work/logs/access.log wan;
$(nginx_http_common "$work")
        # Like a real server: a client that reconnects may resume its TLS session.
        ssl_session_cache shared:wan:10m;
        server {
$(listen_lines "$wan_tls" ssl)
            $tls
            $delayed
        }
        server {
$(listen_lines "$wan_http")
            $delayed
        }
        server {
$(listen_lines "$wan_fast")
            $direct
        }
        server {
$(listen_lines "$wan_h2" "ssl http2")
            $tls
            $direct
        }
        server {
$(listen_lines "$wan_h2d" "ssl http2")
            $tls
            $delayed
        }
    }
EOF
    run_nginx "$work" "https://127.0.0.8:$wan_tls$(head -n1 "$work/paths.txt")" --cacert "$work/tls/ca.pem"
}

# make_wan_catalogs CATALOG WORK FROM [BIG]: WORK/catalog-8hosts.json, the catalog with record i
# (in catalog order, from 0) at https://img<(i mod 8) + 1>.example<path>, the 8 hosts that
# wan_mirrors maps to 127.0.0.1 ... 127.0.0.8; and unless BIG is 0, WORK/catalog-100k.json,
# 100,000 records from the catalog's 5000 with ?n=<id> making every URL distinct (nginx ignores
# the query), as the LAN bench's scaling case does.
make_wan_catalogs() {
    local catalog=$1 work=$2 from=$3 big=${4:-1}
    python3 - "$catalog" "$work" "$from" "$big" "$wan_hosts" <<'PY'
import json, sys
catalog, work, src, big, hosts = sys.argv[1:]
records = json.load(open(catalog))
json.dump([dict(r, url=f"https://img{i % int(hosts) + 1}.example{r['url'][len(src):]}") for i, r in enumerate(records)],
          open(f"{work}/catalog-8hosts.json", "w"))
if big != "0":
    json.dump([dict(records[i % len(records)], id=i + 1, url=records[i % len(records)]["url"] + f"?n={i + 1}")
               for i in range(100_000)], open(f"{work}/catalog-100k.json", "w"))
PY
}

# wan_mirrors SCHEME PORT: the --mirror flags that send https://img<k>.example to 127.0.0.<k>.
wan_mirrors() {
    local k
    for k in $(seq "$wan_hosts"); do printf -- '--mirror https://img%s.example=%s://127.0.0.%s:%s ' "$k" "$1" "$k" "$2"; done
}
