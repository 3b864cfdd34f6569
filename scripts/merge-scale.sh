#!/usr/bin/env bash
# Merge at scale (issue 29): N records archived as S shards, half of them handed over as `pack`
# tarballs, merged; merge's wall time, CPU (user + sys) and peak RSS measured against `pack` of
# the merged bundle, in turns; the merged bundle checked against one run of the whole catalog
# (manifest.json byte for byte, and the pack tarballs, which hold the manifest, index.html,
# pages/ and every image) and verified. Prints every run and one PASS/FAIL line per check;
# exits 1 if any failed.
#
#   scripts/merge-scale.sh [path/to/archiver]     (a release binary: .build/release/archiver)
#   MERGE_RECORDS=200000   records in the catalog (photos.json repeated, each with its own id and URL)
#   MERGE_SHARDS=4         shards; the first half are packed and merged as tarballs
#   MERGE_ROUNDS=3         merge / pack pairs, in turns (medians printed); 1 keeps tmpfs to about
#                          8 KiB a record
#   MERGE_SINGLE=1         0 skips the single run (and so the identity checks)
#   MERGE_MAX_RSS=131072   KiB merge must peak under
#   MERGE_DIR=DIR          where the bundles go (default /dev/shm when it has room, else /tmp);
#                          everything made is removed on exit, unless
#   MERGE_KEEP=1           keeps it (the shards, merged/, the runs) for a look or a profile
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/catalog-nginx.sh

archiver=$(realpath "${1:-.build/release/archiver}")
[ -x "$archiver" ] || { echo "merge-scale: no archiver binary at $archiver" >&2; exit 2; }
records=${MERGE_RECORDS:-200000}
shards=${MERGE_SHARDS:-4}
rounds=${MERGE_ROUNDS:-3}
single=${MERGE_SINGLE:-1}
max_rss=${MERGE_MAX_RSS:-131072}
from=https://via.placeholder.com
install_missing merge-scale nginx curl time python3

# About 5 KiB of tmpfs a record and copy of its image (a 4 KiB page, the inode, its manifest
# item): at most half the shards as directories, the merged bundle and a later round's merge,
# besides the tarballs; the single run is removed once packed, before the shards are made.
dir=${MERGE_DIR:-}
if [ -z "$dir" ]; then
    dir=/tmp
    room=$(df -k --output=avail /dev/shm 2>/dev/null | tail -n1)
    [ -n "$room" ] && [ "$room" -gt $((records * 16)) ] && dir=/dev/shm
fi
work=$(mktemp -d "$dir/archiver-merge-scale.XXXXXX")
chmod 755 "$work"   # nginx's workers run as 'nobody' when we are root
nginx_pid="" serve_pid=""
passed=0 failures=0
cleanup() {
    local status=$?
    [ -z "$nginx_pid" ] || { kill "$nginx_pid" 2>/dev/null; wait "$nginx_pid" 2>/dev/null; }
    [ -z "$serve_pid" ] || kill "$serve_pid" 2>/dev/null
    if [ "${MERGE_KEEP:-0}" = 1 ]; then echo "merge-scale: kept $work" >&2; else rm -rf "$work"; fi
    [ "$status" = 0 ] || [ "$failures" != 0 ] || { echo "FAIL  the script stopped before its last check  (exit $status)"; failures=1; }
    echo "$passed passed, $failures failed"
    [ "$failures" = 0 ] || exit 1
}
trap cleanup EXIT
trap 'exit 130' INT TERM
check() {  # check NAME STATUS DETAILS
    if [ "$2" = 0 ]; then echo "PASS  $1  ($3)"; passed=$((passed + 1)); else echo "FAIL  $1  ($3)"; failures=$((failures + 1)); fi
}

# timed NAME CMD...: runs CMD under /usr/bin/time; prints and appends to runs.tsv its wall time
# (from the clock, in ns), user and sys seconds and peak RSS (KiB); sets `status` and `rss`.
timed() {
    local name=$1 start end wall user sys; shift
    start=$(date +%s%N)
    /usr/bin/time -f '%U %S %M' -o "$work/time.txt" "$@" >"$work/logs/$name.log" 2>&1; status=$?
    end=$(date +%s%N)
    read -r user sys rss < <(tail -n1 "$work/time.txt")
    wall=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.3f", ns / 1e9 }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$wall" "$user" "$sys" "$rss" "$status" >>"$work/runs.tsv"
    printf '      %-16s %8.3f s wall  %7.2f s CPU (%s user, %s sys)  %4d MiB peak  exit %s\n' \
        "$name" "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" "$user" "$sys" $((rss / 1024)) "$status"
}

echo "== $records records as $shards shards ($((shards / 2)) packed), in $work; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "   archiver $("$archiver" --version 2>/dev/null | head -n1)"
mkdir -p "$work/logs"
port=$(free_port)
start_catalog_nginx "$archiver" samples/photos.json "$work" "$port" "$from"
mirror="$from=http://127.0.0.1:$port"
# The catalog as bench.sh makes its 100,000 records: the sample's records over and over, each
# with its own id and its own URL (?n=<id>, which nginx ignores).
python3 - samples/photos.json "$records" >"$work/catalog.json" <<'PY'
import json, sys
sample, count = json.load(open(sys.argv[1])), int(sys.argv[2])
json.dump([dict(sample[i % len(sample)], id=i + 1, url=sample[i % len(sample)]["url"] + f"?n={i + 1}")
           for i in range(count)], sys.stdout)
PY
run=("$archiver" run --catalog "$work/catalog.json" --concurrency 8 --mirror "$mirror" --quiet)

if [ "$single" = 1 ]; then
    echo "== one run of the whole catalog, the reference (its pack kept, the bundle removed)"
    timed single "${run[@]}" --out "$work/single"
    check "single run exits 0" "$status" "exit $status"
    timed pack-single "$archiver" pack "$work/single" --output "$work/single.tar.gz"
    cp "$work/single/manifest.json" "$work/single.manifest.json"
    rm -rf "$work/single"
fi

echo "== $shards shards, one after another; shards 1 to $((shards / 2)) packed, their directories removed"
for i in $(seq "$shards"); do
    timed "shard-$i" "${run[@]}" --out "$work/s$i" --shard "$i/$shards"
    [ "$status" = 0 ] || check "shard $i/$shards exits 0" "$status" "exit $status"
done
inputs=()
for i in $(seq "$shards"); do
    if [ "$i" -le $((shards / 2)) ]; then
        timed "pack-shard-$i" "$archiver" pack "$work/s$i" --output "$work/s$i.tar.gz"
        rm -rf "$work/s$i"
        inputs+=("$work/s$i.tar.gz")
    else
        inputs+=("$work/s$i")
    fi
done

echo "== merge, then pack of the merged bundle, $rounds rounds in turns (fresh outputs; round 1's merge is the one checked)"
peak=0
for round in $(seq "$rounds"); do
    out=$work/merge-$round
    [ "$round" = 1 ] && out=$work/merged
    timed "merge-$round" "$archiver" merge --quiet --out "$out" "${inputs[@]}"
    [ "$status" = 0 ] || check "merge round $round exits 0" "$status" "exit $status"
    [ "$rss" -gt "$peak" ] && peak=$rss
    timed "pack-$round" "$archiver" pack "$work/merged" --output "$work/pack-$round.tar.gz"
    if [ "$round" = 1 ]; then
        mv "$work/pack-1.tar.gz" "$work/merged.tar.gz"
    else
        cmp -s "$work/merged/manifest.json" "$out/manifest.json" || check "merge round $round gives the same manifest" 1 "differs"
        rm -rf "$work/pack-$round.tar.gz" "$out"
    fi
done
python3 - "$work/runs.tsv" <<'PY'
import statistics, sys
runs = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
def median(prefix, column):
    return statistics.median(float(r[column]) for r in runs if r[0].startswith(prefix + "-") and r[0][len(prefix) + 1:].isdigit())
cpu = lambda prefix: statistics.median(float(r[2]) + float(r[3]) for r in runs if r[0].startswith(prefix + "-") and r[0][len(prefix) + 1:].isdigit())
m, p = median("merge", 1), median("pack", 1)
print(f"      medians: merge {m:.3f} s wall, {cpu('merge'):.2f} s CPU, {median('merge', 4) / 1024:.0f} MiB; "
      f"pack {p:.3f} s wall, {cpu('pack'):.2f} s CPU, {median('pack', 4) / 1024:.0f} MiB; merge / pack {m / p:.2f} wall, {cpu('merge') / cpu('pack'):.2f} CPU")
PY

echo "== the merged bundle"
[ "$peak" -lt "$max_rss" ]; check "merge peaks under $((max_rss / 1024)) MiB in every round" $? "at most $((peak / 1024)) MiB"
images=$(find "$work/merged/images" -type f | wc -l)
# One item a line in the manifest, keys sorted (the sample's titles are Latin words).
done_items=$(grep -c '"status": "done"' "$work/merged/manifest.json")
[ "$images" = "$done_items" ] && [ "$images" -gt 0 ]; check "the merged bundle holds an image for every done item" $? "$images images, $done_items done of $records"
timed verify "$archiver" verify "$work/merged"
check "verify passes on the merged bundle" "$status" "exit $status"
if [ "$single" = 1 ]; then
    echo "== identity with the single run"
    cmp -s "$work/single.manifest.json" "$work/merged/manifest.json"
    check "manifest.json byte-identical to the single run's" $? "$(sha256sum <"$work/merged/manifest.json" | cut -c1-16)"
    cmp -s "$work/single.tar.gz" "$work/merged.tar.gz"
    check "pack tarball (manifest, index.html, pages, images) byte-identical to the single run's" $? "$(sha256sum <"$work/merged.tar.gz" | cut -c1-16)"
fi
echo "   every run: $work/runs.tsv (name, wall s, user s, sys s, peak RSS KiB, exit), printed above"
