# Sourced by scripts/bench.sh and scripts/acceptance.sh: a loopback nginx serving a catalog's
# images at their placeholder paths, as a static server independent of the archiver.
#
#   port=$(free_port)
#   start_catalog_nginx ARCHIVER CATALOG WORK PORT FROM
#
# makes WORK/paths.txt (the distinct paths after mapping FROM to the server), WORK/root (the
# images, made once by `archiver serve`), WORK/logs/access.log (one line a request: count them),
# and starts nginx on 127.0.0.1:PORT, setting nginx_pid and serve_pid for the caller's cleanup.

# A free loopback port: bind port 0 and read back what the kernel chose (nginx binds it a moment
# later; a clash is possible but rare, and nginx then fails to start, which is checked).
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_catalog_nginx() {
    local archiver=$1 catalog=$2 work=$3 port=$4 from=$5
    local base=http://127.0.0.1:$port
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
        server {
            listen 127.0.0.1:$port;
            root $work/root;
            location / { try_files \$uri =404; }
        }
    }
EOF
    mkdir -p "$work/nginx-tmp"
    touch "$work/logs/access.log"
    nginx -p "$work" -c "$work/nginx.conf" -e "$work/logs/nginx-error.log" &
    nginx_pid=$!
    first=$(head -n1 "$work/paths.txt")
    for _ in $(seq 100); do curl -sf -o /dev/null "$base$first" && break; sleep 0.05; done
    curl -sf -o /dev/null "$base$first" || { echo "catalog-nginx: nginx did not start" >&2; tail -n5 "$work/logs/nginx-error.log" >&2; exit 1; }
    curl -sfI "$base$first" | grep -qi '^content-type: image/png' || { echo "catalog-nginx: nginx does not say image/png" >&2; exit 1; }
}
