#!/usr/bin/env bash
# Renders one page of DIR's gallery in headless Chromium, saves a screenshot to OUT.png and
# prints how long Chromium took (browser start included); then checks that the rendered page
# holds one <img> per done item on it, and that the gallery's item pages together hold one
# <img> per done item in DIR/manifest.json (the front page's are album covers).
# PAGE: index.html (the front page, the default), an item page's number (3 for pages/0003.html),
# or a path inside DIR (pages/failures-0001.html).
# Installs Debian's chromium if it is missing. Not part of 'make test'.
# usage: scripts/gallery-screenshot.sh DIR OUT.png [PAGE] [WIDTHxHEIGHT]
set -euo pipefail
usage="usage: scripts/gallery-screenshot.sh DIR OUT.png [PAGE] [WIDTHxHEIGHT]"
dir=$(cd "${1:?$usage}" && pwd)
out=${2:?$usage}
which=${3:-index.html}
size=${4:-1200x2000}
if [[ $which =~ ^[0-9]+$ ]]; then
    # Item pages are named with at least 4 digits (more past 9999 pages).
    which=pages/$(cd "$dir/pages" 2>/dev/null && ls | grep -E "^0*$((10#$which))\.html$" | head -n1 || true)
fi
page=$dir/$which
[ -f "$page" ] || { echo "gallery-screenshot: no $page (written by 'archiver run')" >&2; exit 2; }
if ! command -v chromium >/dev/null; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars)
start=$(date +%s%N)
chromium "${flags[@]}" --window-size="${size/x/,}" --screenshot="$out" "file://$page" 2>/dev/null
seconds=$(( ($(date +%s%N) - start) / 1000000 ))
[ -s "$out" ] || { echo "gallery-screenshot: chromium wrote no screenshot" >&2; exit 1; }
count() { { grep -o "$1" || true; } | wc -l; }  # 0 is an answer, not a failure
images=$(chromium "${flags[@]}" --dump-dom "file://$page" 2>/dev/null | count '<img ')
on_page=$(count '<li class="done"' <"$page")
[ "$which" = index.html ] && on_page=$(count '<li><a href=' <"$page")  # the covers
all_images=$(cat "$dir"/pages/[0-9]*.html 2>/dev/null | count '<img ')
done_items=$(grep -cE '"status" *: *"done"' "$dir/manifest.json" || true)
printf 'gallery-screenshot: %s of %s in %d.%03d s (%s bytes of HTML); it holds %s <img> for %s done items;\n' \
    "$out" "$which" $((seconds / 1000)) $((seconds % 1000)) "$(stat -c %s "$page")" "$images" "$on_page"
echo "gallery-screenshot: the gallery's item pages hold $all_images <img> for $done_items done items in the manifest"
[ "$images" = "$on_page" ] && [ "$all_images" = "$done_items" ]
