#!/usr/bin/env bash
# The far-server set-up of scripts/bench-wan.sh, left running for measuring by hand: nginx
# answering 50 ms late on 127.0.0.1 ... 127.0.0.8 over HTTPS (a test CA made for it) and plain
# HTTP, plus an undelayed plain-HTTP server and HTTPS ones offering HTTP/2 (delayed and not).
#
#   scripts/wan-server.sh start DIR [ARCHIVER] [DELAY]   make DIR, start nginx, print the flags
#   scripts/wan-server.sh flags DIR                      print the flags again
#   scripts/wan-server.sh stats DIR                      requests and connections (per host, peak
#                                                        at once) since the last stats or start
#   scripts/wan-server.sh stop DIR                       stop nginx (DIR stays)
#
# DIR holds tls/ca.pem, catalog-8hosts.json, catalog-100k.json, flags-* files (the --mirror and
# --cacert options for one set-up each, for $(cat DIR/flags-eight)) and logs/access.log.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/lib/catalog-nginx.sh"
. "$here/scripts/lib/wan-nginx.sh"

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd=$1 dir=$2
from=https://via.placeholder.com

show_flags() {
    . "$dir/ports.env"
    cat <<EOF
wan-server: nginx (pid $(cat "$dir/nginx.pid" 2>/dev/null || echo '?')) serving $dir/root, ${wan_delay}s late; CA $dir/tls/ca.pem

8 HTTPS hosts, delayed (record i on host (i mod 8) + 1):
  archiver run --catalog $dir/catalog-8hosts.json $(cat "$dir/flags-eight")
8 plain-HTTP hosts, delayed:
  archiver run --catalog $dir/catalog-8hosts.json $(cat "$dir/flags-eight-http")
1 host, plain HTTP, delayed (any catalog of $from, e.g. samples/photos.json or $dir/catalog-100k.json):
  archiver run --catalog samples/photos.json $(cat "$dir/flags-one")
1 host, plain HTTP, not delayed:
  archiver run --catalog $dir/catalog-100k.json $(cat "$dir/flags-fast")
8 HTTPS hosts, HTTP/2 offered through ALPN, not delayed / delayed:
  archiver run --catalog $dir/catalog-8hosts.json $(cat "$dir/flags-h2")
  archiver run --catalog $dir/catalog-8hosts.json $(cat "$dir/flags-h2d")
Flags alone: \$(cat $dir/flags-eight) and flags-eight-http, flags-one, flags-fast, flags-h2, flags-h2d
curl: curl --cacert $dir/tls/ca.pem https://127.0.0.3:$wan_tls/600/92c952
Connections since the last look: $0 stats $dir
EOF
}

case $cmd in
start)
    archiver=$(realpath "${3:-$here/.build/release/archiver}")
    delay=${4:-0.05}
    [ -x "$archiver" ] || { echo "wan-server: no archiver binary at $archiver (it makes the images)" >&2; exit 2; }
    if [ -f "$dir/nginx.pid" ] && kill -0 "$(cat "$dir/nginx.pid")" 2>/dev/null; then
        echo "wan-server: already running" >&2; show_flags; exit 0
    fi
    for p in nginx libnginx-mod-http-echo curl openssl python3; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || {
            echo "wan-server: missing Debian package $p (apt-get install -y nginx libnginx-mod-http-echo curl openssl python3)" >&2
            exit 1
        }
    done
    mkdir -p "$dir"
    dir=$(realpath "$dir")
    chmod 755 "$dir"   # nginx's workers run as 'nobody' when we are root
    serve_pid="" nginx_pid=""
    [ -d "$dir/root" ] || make_catalog_images "$archiver" "$here/samples/photos.json" "$dir" "$from"
    [ -f "$dir/tls/ca.pem" ] || make_test_ca "$dir/tls"
    [ -f "$dir/catalog-100k.json" ] || make_wan_catalogs "$here/samples/photos.json" "$dir" "$from"
    # A client at 1024 in flight from this shell needs the descriptors too: raise yours with
    # ulimit -n 20000 (nginx raises its own).
    start_wan_nginx "$dir" "$delay"
    . "$dir/ports.env"
    printf '%s--cacert %s\n' "$(wan_mirrors https "$wan_tls")" "$dir/tls/ca.pem" >"$dir/flags-eight"
    printf '%s\n' "$(wan_mirrors http "$wan_http")" >"$dir/flags-eight-http"
    printf -- '--mirror %s=http://127.0.0.1:%s\n' "$from" "$wan_http" >"$dir/flags-one"
    printf -- '--mirror %s=http://127.0.0.1:%s\n' "$from" "$wan_fast" >"$dir/flags-fast"
    printf '%s--cacert %s\n' "$(wan_mirrors https "$wan_h2")" "$dir/tls/ca.pem" >"$dir/flags-h2"
    printf '%s--cacert %s\n' "$(wan_mirrors https "$wan_h2d")" "$dir/tls/ca.pem" >"$dir/flags-h2d"
    wc -l <"$dir/logs/access.log" >"$dir/stats.mark"
    show_flags
    ;;
flags) show_flags ;;
stats)
    mark=$(cat "$dir/stats.mark" 2>/dev/null || echo 0)
    now=$(wc -l <"$dir/logs/access.log")
    tail -n +"$((mark + 1))" "$dir/logs/access.log" | head -n "$((now - mark))" >"$dir/logs/stats.slice"
    python3 "$here/scripts/lib/wan-report.py" --log "$dir/logs/stats.slice"
    echo "$now" >"$dir/stats.mark"
    ;;
stop)
    pid=$(cat "$dir/nginx.pid" 2>/dev/null || true)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && echo "wan-server: stopped nginx $pid" || echo "wan-server: not running" >&2
    ;;
*) usage ;;
esac
