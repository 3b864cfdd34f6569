#!/usr/bin/env bash
# Renders DIR/index.html in headless Chromium and saves a screenshot to OUT.png, then checks
# that the page's DOM holds one <img> per done item in DIR/manifest.json.
# Installs Debian's chromium if it is missing. Not part of 'make test'.
# usage: scripts/gallery-screenshot.sh DIR OUT.png [WIDTHxHEIGHT]
set -euo pipefail
dir=${1:?usage: scripts/gallery-screenshot.sh DIR OUT.png [WIDTHxHEIGHT]}
out=${2:?usage: scripts/gallery-screenshot.sh DIR OUT.png [WIDTHxHEIGHT]}
size=${3:-1200x2000}
page=$(cd "$dir" && pwd)/index.html
[ -f "$page" ] || { echo "gallery-screenshot: no $page (written by 'archiver run')" >&2; exit 2; }
if ! command -v chromium >/dev/null; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars)
chromium "${flags[@]}" --window-size="${size/x/,}" --screenshot="$out" "file://$page" 2>/dev/null
[ -s "$out" ] || { echo "gallery-screenshot: chromium wrote no screenshot" >&2; exit 1; }
images=$(chromium "${flags[@]}" --dump-dom "file://$page" 2>/dev/null | grep -o '<img ' | wc -l)
done_items=$(grep -cE '"status" *: *"done"' "$dir/manifest.json" || true)
echo "gallery-screenshot: $out; the rendered page holds $images <img> for $done_items done items"
[ "$images" = "$done_items" ]
