#!/usr/bin/env bash
# Archives samples/photos.json (5000 records) into ./demo-bundle, offline: the catalog's image
# host no longer exists, so the built-in server answers its paths on loopback and --mirror
# points the run at it. Run it twice to see a resume that makes no request.
set -euo pipefail
archiver=${1:-.build/release/archiver}
out=${DEMO_OUT:-demo-bundle}
log=$(mktemp)
"$archiver" serve --port 0 >"$log" &
server=$!
trap 'kill $server 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q '^serving' "$log" && break; sleep 0.05; done
url=$(grep -o 'http://[0-9.:]*' "$log" | head -n1)
[ -n "$url" ] || { echo "demo: the built-in server did not start" >&2; exit 1; }
echo "demo: built-in image server at $url standing in for https://via.placeholder.com"
echo "demo: archiver run --catalog samples/photos.json --out $out --concurrency 8 --mirror https://via.placeholder.com=$url"
status=0
"$archiver" run --catalog samples/photos.json --out "$out" --concurrency 8 \
    --mirror "https://via.placeholder.com=$url" || status=$?
echo "demo: exit status $status; the bundle:"
"$archiver" status "$out"
echo "demo: images in $out/images/, manifest in $out/manifest.json, gallery in $out/index.html (open it in a browser)"
echo "demo: the binary is $archiver; run 'make demo' again to see a resume that makes no request"
exit $status
