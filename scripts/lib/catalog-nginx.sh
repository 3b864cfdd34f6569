# Sourced by scripts/bench.sh, scripts/bench-wan.sh, scripts/wan-server.sh and
# scripts/acceptance.sh: a loopback nginx serving a catalog's images at their placeholder paths,
# as a static server independent of the archiver.
#
#   port=$(free_port)
#   start_catalog_nginx ARCHIVER CATALOG WORK PORT FROM
#
# makes WORK/paths.txt (the distinct paths after mapping FROM to the server), WORK/root (the
# images, made once by `archiver serve`), WORK/logs/access.log (one line a request: count them),
# and starts nginx on 127.0.0.1:PORT, setting nginx_pid and serve_pid for the caller's cleanup.
#
# The pieces are usable on their own (scripts/lib/wan-nginx.sh builds the far-server set-up
# from them): make_catalog_images, nginx_http_common, run_nginx.

# install_missing WHO PACKAGE...: installs from Debian the packages that are not installed yet,
# saying so as WHO (sudo when not root); does nothing when all are there.
install_missing() {
    local who=$1 p sudo=""; shift
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    echo "$who: installing ${missing[*]}"
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# A free loopback port: bind port 0 and read back what the kernel chose (nginx binds it a moment
# later; a clash is possible but rare, and nginx then fails to start, which is checked).
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# make_catalog_images ARCHIVER CATALOG WORK FROM: WORK/paths.txt and the images under WORK/root.
make_catalog_images() {
    local archiver=$1 catalog=$2 work=$3 from=$4 serve distinct made
    mkdir -p "$work/root" "$work/logs"
    python3 - "$catalog" "$from" >"$work/paths.txt" <<'PY'
import json, sys
catalog, src = sys.argv[1:]
paths = {r["url"][len(src):].split("?")[0] for r in json.load(open(catalog)) if r["url"].startswith(src)}
print("\n".join(sorted(paths)))
PY
    # nginx serves files made once by the archiver's own placeholder server, so every tool gets the
    # same bytes from a server that is not the thing being measured.
    "$archiver" serve --port 0 >"$work/logs/serve.log" 2>&1 &
    serve_pid=$!
    for _ in $(seq 100); do grep -q '^serving' "$work/logs/serve.log" && break; sleep 0.05; done
    serve=$(grep -o 'http://[0-9.:]*' "$work/logs/serve.log" | head -n1)
    [ -n "$serve" ] || { echo "catalog-nginx: archiver serve did not start" >&2; exit 1; }
    sed "s|.*|url = \"$serve&\"\noutput = \"$work/root&\"|" "$work/paths.txt" >"$work/images.cfg"
    curl --parallel --parallel-max 8 --no-progress-meter --fail --create-dirs -K "$work/images.cfg"
    kill "$serve_pid"; serve_pid=""
    distinct=$(wc -l <"$work/paths.txt")
    made=$(find "$work/root" -type f | wc -l)
    [ "$made" = "$distinct" ] || { echo "catalog-nginx: made $made of $distinct images" >&2; exit 1; }
    chmod -R a+rX "$work/root"   # curl --create-dirs makes 0750 directories; nginx's workers are 'nobody'
}

# nginx_http_common WORK: the lines every bench nginx has in its http block (MIME type, keep-alive,
# temp paths of its own), printed for a config's here-document.
nginx_http_common() {
    local work=$1
    cat <<EOF
        # The files have no extension (/600/92c952).
        default_type image/png;
        sendfile on;
        # Let every client keep its connections for a whole run.
        keepalive_requests 100000;
        keepalive_timeout 60s;
        # Temp paths of our own, so nothing needs /var/lib/nginx.
        client_body_temp_path $work/nginx-tmp/body;
        proxy_temp_path $work/nginx-tmp/proxy;
        fastcgi_temp_path $work/nginx-tmp/fastcgi;
        uwsgi_temp_path $work/nginx-tmp/uwsgi;
        scgi_temp_path $work/nginx-tmp/scgi;
EOF
}

# run_nginx WORK PROBE-URL [CURL-OPTION...]: starts nginx with WORK/nginx.conf in the background
# (setting nginx_pid) and waits until PROBE-URL answers with an image/png.
run_nginx() {
    local work=$1 probe=$2; shift 2
    mkdir -p "$work/nginx-tmp" "$work/logs"
    touch "$work/logs/access.log"
    # Its own output to a file: a caller reading ours through a pipe (wan-server.sh, whose nginx
    # outlives it) would otherwise wait for nginx to close it.
    nginx -p "$work" -c "$work/nginx.conf" -e "$work/logs/nginx-error.log" >"$work/logs/nginx-output.log" 2>&1 &
    nginx_pid=$!
    for _ in $(seq 100); do curl -sf "$@" -o /dev/null "$probe" && break; sleep 0.05; done
    curl -sf "$@" -o /dev/null "$probe" || {
        echo "catalog-nginx: nginx did not start" >&2
        tail -n5 "$work/logs/nginx-output.log" "$work/logs/nginx-error.log" >&2
        exit 1
    }
    curl -sfI "$@" "$probe" | grep -qi '^content-type: image/png' || { echo "catalog-nginx: nginx does not say image/png" >&2; exit 1; }
}

# settled_requests WORK PORT: the lines of WORK/logs/access.log once every request answered so far
# is in it. nginx writes a request's line after sending its answer, so a client that has read the
# answer (and exited) can count the log before the line is written: the probes of run_nginx were
# once counted as the first run's requests (4997 for 4996 URLs), and a run's last request can be
# missed the same way. The one worker serves events in order and logs an answer in the same step
# as it finishes sending it, so once a request made now is answered, every earlier line is there.
settled_requests() {
    curl -s -o /dev/null "http://127.0.0.1:$2/.log-barrier"
    wc -l <"$1/logs/access.log"
}

start_catalog_nginx() {
    local archiver=$1 catalog=$2 work=$3 port=$4 from=$5
    local base=http://127.0.0.1:$port
    make_catalog_images "$archiver" "$catalog" "$work" "$from"
    cat >"$work/nginx.conf" <<EOF
    # One worker: the machine has 2 cores and the client under test needs the other.
    worker_processes 1;
    daemon off;
    pid $work/nginx.pid;
    error_log $work/logs/nginx-error.log warn;
    events { worker_connections 1024; }
    http {
        # Every request is a line here: the way to count what each run asked for. The connection
        # serial number shows how many connections a run opened, i.e. whether keep-alive held.
        log_format bench '\$connection \$connection_requests \$status "\$request" "\$http_user_agent"';
        access_log $work/logs/access.log bench;
$(nginx_http_common "$work")
        server {
            listen 127.0.0.1:$port;
            root $work/root;
            location / { try_files \$uri =404; }
            # Logs nothing: settled_requests asks it so that every earlier answer is logged.
            location = /.log-barrier { access_log off; return 204; }
        }
    }
EOF
    run_nginx "$work" "$base$(head -n1 "$work/paths.txt")"
}
