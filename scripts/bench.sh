#!/usr/bin/env bash
# Benchmark: archiver against curl, wget2 and aria2c, each fetching the 5000-record sample
# catalog into keyed files from a local nginx, 8 requests in flight (BENCH_CONCURRENCY). Prints a Markdown table
# and writes it to bench/results.md; then runs scripts/bench-wan.sh (far servers: 50 ms late,
# HTTPS, 8 hosts, up to 1024 in flight), whose tables follow. Exits non-zero if any run failed
# to produce its files.
#
#   scripts/bench.sh [path/to/archiver]      (make bench builds and passes the release binary)
#   BENCH_ROUNDS=3    rounds of every 5000-record case (the table shows medians)
#   BENCH_CONCURRENCY=8  requests in flight for every tool (--concurrency, --parallel-max,
#                     --max-threads, -j)
#   BENCH_SCALE=1     0 skips the 100,000-record archiver run
#   BENCH_JPEG=1      0 skips the JPEG case (the same URLs serving JPEGs: archiver, curl, and
#                     the archiver with --validate full; installs imagemagick to make them)
#   BENCH_KEEP=1      keep the work directory (logs, nginx access log, outputs) for a look
#   BENCH_RESULTS=F   where the table goes (default bench/results.md)
#   BENCH_WAN=1       0 skips the far-server cases (scripts/bench-wan.sh, which has its own
#                     knobs: BENCH_WAN_ROUNDS=3, BENCH_WAN_CASES, BENCH_WAN_OUT)
#   BENCH_OUT=DIR     where the tools write their files (default: a fresh ext4 file system on a
#                     loop device when run as root, else the work directory; /dev/shm takes the
#                     file system's own costs out of the comparison)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/catalog-nginx.sh

archiver=$(realpath "${1:-.build/release/archiver}")
rounds=${BENCH_ROUNDS:-3}
scale=${BENCH_SCALE:-1}
catalog=samples/photos.json
results=${BENCH_RESULTS:-bench/results.md}
concurrency=${BENCH_CONCURRENCY:-8}
from=https://via.placeholder.com   # the catalog's image host, answered by nginx via --mirror

[ -x "$archiver" ] || { echo "bench: no archiver binary at $archiver" >&2; exit 2; }

# Debian packages, installed only when one is missing, the way the Makefile's deps target does.
install_missing bench nginx curl wget2 aria2 time python3

# Everything lives in one temp dir. nginx's workers run as 'nobody' when we are root, so the
# tree they serve must be world-readable (mktemp -d makes it 0700).
work=$(mktemp -d /tmp/archiver-bench.XXXXXX)
chmod 755 "$work"
mkdir -p "$work/root" "$work/logs"
# The tools' files go to a file system made for this run when we can: ext4 creates files
# several times more slowly for minutes after many were deleted (a bench's own clean-up
# deletes some 200,000), so on a shared file system each run's figures depend on the last.
# A sparse 8 GiB image, loop-mounted, with inodes for every file the rounds write.
fresh_fs=""
if [ -z "${BENCH_OUT:-}" ] && [ "$(id -u)" = 0 ] && command -v mkfs.ext4 >/dev/null; then
    mkdir -p "$work/fs"
    if truncate -s 8G "$work/fs.img" && mkfs.ext4 -q -F -N 1200000 "$work/fs.img" 2>/dev/null \
        && mount -o loop "$work/fs.img" "$work/fs" 2>/dev/null; then
        fresh_fs="$work/fs"
        chmod 755 "$fresh_fs"
    else
        rm -f "$work/fs.img"
    fi
fi
outs=$(mktemp -d "${BENCH_OUT:-${fresh_fs:-$work}}/archiver-bench-out.XXXXXX")
nginx_pid="" serve_pid=""
cleanup() {
    [ -z "$nginx_pid" ] || { kill "$nginx_pid" 2>/dev/null; wait "$nginx_pid" 2>/dev/null; }
    [ -z "$serve_pid" ] || kill "$serve_pid" 2>/dev/null
    if [ "${BENCH_KEEP:-0}" = 1 ]; then
        echo "bench: kept $work $outs" >&2
    else
        # Unmounting drops the run's files without deleting them one by one.
        if [ -n "$fresh_fs" ]; then umount "$fresh_fs" && rm -f "$work/fs.img"; else rm -rf "$outs"; fi
        rm -rf "$work"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$(free_port)
base=http://127.0.0.1:$port

# The URL list, built once from the catalog after the mirror rewrite, in each peer's own input
# format, plus the 100,000-record catalog for the scaling case.
python3 - "$catalog" "$work" "$from" "$base" "$scale" <<'PY'
import json, sys
catalog, work, src, dst, scale = sys.argv[1:]
records = json.load(open(catalog))
def mirrored(url):
    return dst + url[len(src):] if url.startswith(src) else url
with open(f"{work}/curl.cfg", "w") as f:            # curl -K: url/output pairs
    for r in records:
        f.write(f'url = "{mirrored(r["url"])}"\noutput = "{r["id"]}.png"\n')
with open(f"{work}/aria2.txt", "w") as f:           # aria2c -i: a URL line, then its options
    for r in records:
        f.write(f'{mirrored(r["url"])}\n  out={r["id"]}.png\n')
# wget2 cannot name one output per URL from a list: it names files after the URL's last path
# segment and fetches a repeated URL once, so the 4 repeated colours would leave 4996 files.
# Appending ?id=<id> (nginx ignores query strings) makes every URL distinct and every file
# name carry its record id: 92c952?id=1.
with open(f"{work}/wget2.txt", "w") as f:
    f.writelines(f'{mirrored(r["url"])}?id={r["id"]}\n' for r in records)
if scale != "0":
    # 100,000 records from the real 5000, each with its own URL (?n=<id>, ignored by nginx).
    big = [dict(records[i % len(records)], id=i + 1,
                url=records[i % len(records)]["url"] + f"?n={i + 1}") for i in range(100_000)]
    json.dump(big, open(f"{work}/catalog-100k.json", "w"))
PY

start_catalog_nginx "$archiver" "$catalog" "$work" "$port" "$from"

requests() { settled_requests "$work" "$port"; }

# measure CASE ROUND OUT WANT CMD...: runs CMD under /usr/bin/time and appends a line to runs.tsv:
# case, round, wall s, user s, sys s, max RSS KiB, nginx requests, connections, output files,
# exit status, ok. OUT is the directory whose non-empty files are counted; WANT is how many.
measure() {
    local case=$1 round=$2 out=$3 want=$4; shift 4
    local before after reqs conns files status=0 ok=yes wall user sys rss start end
    before=$(requests)
    # Wall time from the clock around the run, in nanoseconds: time(1)'s %e has 10 ms steps,
    # 3% of a 0.35 s run, too coarse for a ratio near 1.
    start=$(date +%s%N)
    /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" "$@" >"$work/logs/$case.$round.log" 2>&1 || status=$?
    end=$(date +%s%N)
    sleep 0.2   # nginx logs a request just after sending it: let the last lines land
    after=$(requests)
    reqs=$((after - before))
    conns=$(tail -n +"$((before + 1))" "$work/logs/access.log" | cut -d' ' -f1 | sort -u | wc -l)
    # time(1) puts "Command exited with non-zero status N" above its line when the command fails.
    read -r wall user sys rss < <(tail -n1 "$work/time.txt")
    wall=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.4f", ns / 1e9 }')
    files=$(find "$out" -type f -size +0 | wc -l)
    [ "$status" = 0 ] && [ "$files" = "$want" ] || ok=no
    # A rerun over a complete bundle must not touch the network.
    if [ "$case" = archiver-rerun ] && [ "$reqs" != 0 ]; then ok=no; fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$case" "$round" "$wall" "$user" "$sys" \
        "$rss" "$reqs" "$conns" "$files" "$status" "$ok" >>"$work/runs.tsv"
    printf 'bench: round %s %-16s %6.3f s  %6d requests on %4d connections  %6d files  exit %s  %s\n' \
        "$round" "$case" "$wall" "$reqs" "$conns" "$files" "$status" \
        "$([ $ok = yes ] && echo ok || echo FAILED)"
}

# fresh NAME: a new, empty output directory for one run. Nothing is deleted until the bench
# ends: ext4 then skips inodes freed in the last 30 s when it allocates new ones, so deleting
# 5000 files before a run makes that run's file creation several times slower, and which tool
# pays depends on the order. Every run writes into a never-used directory instead.
fresh() { local dir; dir=$(mktemp -d "$outs/$1.XXXXXX"); sync; echo "$dir"; }

archive=("$archiver" run --catalog "$catalog" --concurrency "$concurrency" --mirror "$from=$base" --quiet)
n=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$catalog")
: >"$work/runs.tsv"

run_archiver() {
    local out; out=$(fresh archiver)
    complete=$out
    measure archiver "$round" "$out/images" "$n" "${archive[@]}" --out "$out"
}
run_curl() {
    local out; out=$(fresh curl)
    measure curl "$round" "$out" "$n" \
        curl --parallel --parallel-max "$concurrency" --no-progress-meter --fail --output-dir "$out" -K "$work/curl.cfg"
}

for round in $(seq "$rounds"); do
    # In turns, so background noise on this shared machine spreads over all the tools. The pair
    # the target compares, the archiver and curl, swap places every round: whichever goes first
    # meets what the previous round left (ext4 creates files more slowly for a while after many
    # were deleted, and the previous bench's clean-up deleted many).
    if ((round % 2)); then run_archiver; run_curl; else run_curl; run_archiver; fi
    out=$(fresh wget2)
    measure wget2 "$round" "$out" "$n" \
        wget2 --max-threads "$concurrency" -q -nd -P "$out" -i "$work/wget2.txt"
    out=$(fresh aria2c)
    measure aria2c "$round" "$out" "$n" \
        aria2c -j "$concurrency" -x 1 -q -d "$out" -i "$work/aria2.txt"
    out=$(fresh archiver-full)
    measure archiver-full "$round" "$out/images" "$n" "${archive[@]}" --out "$out" --validate full
    out=$(fresh archiver-durable)
    measure archiver-durable "$round" "$out/images" "$n" "${archive[@]}" --out "$out" --durable
    # Over the complete bundle of this round's first run: everything is there already.
    measure archiver-rerun "$round" "$complete/images" "$n" "${archive[@]}" --out "$complete"
done

if [ "$scale" != 0 ]; then
    # Three runs, each into a new directory: one 100,000-record run varies by a second or more
    # with what the file system is doing, which moved the scaling ratio from 17x to 26x.
    archive[3]=$work/catalog-100k.json   # --catalog's value
    for big in 1 2 3; do
        out=$(fresh scale)
        measure archiver-100k "$big" "$out/images" 100000 "${archive[@]}" --out "$out"
        [ -n "$fresh_fs" ] || rm -rf "$out"   # a fresh file system goes whole at the end
    done
fi

if [ "${BENCH_JPEG:-1}" != 0 ]; then
    # The same URLs answering with JPEGs (quality 90, baseline, made once by ImageMagick from
    # the PNGs in place), so the archiver's JPEG path meets curl on the same bytes.
    install_missing bench imagemagick
    archive[3]=$catalog   # the scaling case pointed --catalog at the 100,000-record one
    find "$work/root" -type f -print0 | xargs -0 -n 500 mogrify -format jpg -quality 90
    find "$work/root" -type f -name '*.jpg' -exec sh -c 'for f; do mv "$f" "${f%.jpg}"; done' sh {} +
    head -c 3 "$work/root$(head -n1 "$work/paths.txt")" | od -An -tx1 | grep -q 'ff d8 ff' \
        || { echo "bench: the JPEGs were not made" >&2; exit 1; }
    for round in $(seq "$rounds"); do
        run_archiver_jpeg() { local out; out=$(fresh archiver-jpeg); measure archiver-jpeg "$round" "$out/images" "$n" "${archive[@]}" --out "$out"; }
        run_curl_jpeg() {
            local out; out=$(fresh curl-jpeg)
            measure curl-jpeg "$round" "$out" "$n" \
                curl --parallel --parallel-max "$concurrency" --no-progress-meter --fail --output-dir "$out" -K "$work/curl.cfg"
        }
        if ((round % 2)); then run_archiver_jpeg; run_curl_jpeg; else run_curl_jpeg; run_archiver_jpeg; fi
        out=$(fresh archiver-jpeg-full)
        measure archiver-jpeg-full "$round" "$out/images" "$n" "${archive[@]}" --out "$out" --validate full
    done
fi

# The report: a header line saying where the numbers come from, the table, the scaling ratios.
mkdir -p bench
{
    printf '%s · nproc %s · %s · Linux %s · %s · %s · %s · %s · archiver %s\n\n' \
        "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(nproc)" \
        "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)" "$(uname -r)" \
        "$(curl --version | head -n1 | cut -d' ' -f1-2)" \
        "$(wget2 --version | head -n1 | awk '{print "wget2", $3}')" \
        "$(aria2c --version | head -n1 | sed 's/ version / /')" \
        "$(nginx -v 2>&1 | sed 's|.*nginx/|nginx |')" \
        "$(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    where=$(df --output=fstype "$outs" | tail -n1)
    [ -z "$fresh_fs" ] || where="$where (a fresh file system on a loop device)"
    python3 - "$work/runs.tsv" "$n" "$where" "$concurrency" <<'PY'
import statistics, sys
from collections import defaultdict
path, n, fstype, concurrency = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
runs = defaultdict(dict)   # case -> round -> fields
for line in open(path):
    case, rnd, wall, user, sys_, rss, reqs, conns, files, status, ok = line.rstrip("\n").split("\t")
    runs[case][rnd] = dict(wall=float(wall), cpu=float(user) + float(sys_), rss=int(rss) / 1024,
                           reqs=int(reqs), conns=int(conns), ok=ok == "yes")
med = lambda case, key: statistics.median(r[key] for r in runs[case].values())
print(f"{n} records, {len(runs['archiver'])} rounds (medians), {concurrency} in flight, nginx on loopback, files written to {fstype}\n")
print("| case | runs ok | wall s | CPU s | peak RSS MiB | images/s | requests | connections | wall / archiver |")
print("|---|---|---|---|---|---|---|---|---|")
for case, by_round in runs.items():
    count = 100_000 if case == "archiver-100k" else n
    base = runs["archiver-jpeg" if "jpeg" in case else "archiver"]
    ratios = [r["wall"] / base[k]["wall"] for k, r in by_round.items() if k in base and case != "archiver-100k"]
    ratio = f"{statistics.median(ratios):.2f}" if ratios else "–"
    oks = sum(r["ok"] for r in by_round.values())
    print(f"| {case} | {oks}/{len(by_round)} | {med(case, 'wall'):.3f} | {med(case, 'cpu'):.2f} | "
          f"{med(case, 'rss'):.1f} | {count / max(med(case, 'wall'), 0.01):.0f} | "
          f"{med(case, 'reqs'):.0f} | {med(case, 'conns'):.0f} | {ratio} |")
print("\nimages/s for archiver-rerun is records checked per second (it fetches nothing). The -jpeg cases fetch the "
      "same URLs serving JPEGs; their ratio is to archiver-jpeg.")
if "archiver-100k" in runs:
    walls = sorted(f"{r['wall']:.2f}" for r in runs["archiver-100k"].values())
    print(f"Scaling: 100,000 records (20x) took {med('archiver-100k', 'wall') / med('archiver', 'wall'):.1f}x the "
          f"wall time of the 5000 run and {med('archiver-100k', 'rss') / med('archiver', 'rss'):.2f}x its peak RSS "
          f"(medians; the 100,000-record runs took {', '.join(walls)} s).")
PY
} | tee "$results"

# Non-zero if any run did not produce all its files (or exited non-zero, or a rerun fetched).
status=0
if awk -F'\t' '$11 != "yes" { bad = 1 } END { exit !bad }' "$work/runs.tsv"; then
    echo "bench: some runs FAILED (see above)" >&2
    status=1
fi

# The far-server cases (50 ms late, HTTPS, 8 hosts): their tables go after this one.
if [ "${BENCH_WAN:-1}" != 0 ]; then
    BENCH_WAN_RESULTS=$results BENCH_WAN_APPEND=1 scripts/bench-wan.sh "$archiver" || status=1
fi
exit $status
