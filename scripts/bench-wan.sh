#!/usr/bin/env bash
# Benchmark, far-server cases (issue #13): the archiver against curl (and wget2, aria2c where
# they can) on the same URLs, in turns, from a loopback nginx that answers every request 50 ms
# late, over HTTPS with a test CA made for the run, on 8 loopback addresses as 8 hosts.
#
#   one host, 5000 records:      --concurrency 256                vs curl --parallel-max 256
#   8 HTTPS hosts, 5000 records:  --concurrency 32                 vs curl --parallel-max 32,
#                                                                     wget2 --max-threads 32, aria2c -j 32
#   8 HTTPS hosts, 5000 records:  --concurrency 64 --per-host 4    (the archiver alone)
#   one host, 100,000 records:    --concurrency 1024, 50 ms late and not delayed,
#                                 vs curl --parallel-max 1024 (which curl caps at 300) and
#                                 4 curl processes at --parallel-max 256 (1024 in all)
#
# Prints Markdown tables (wall, CPU, peak RSS, requests, connections, connections per host,
# peak concurrent connections per host, each case's latency floor) and the figures the issue's
# acceptance lines ask for. Exits non-zero if any run failed to produce its files.
#
#   scripts/bench-wan.sh [path/to/archiver]   (scripts/bench.sh runs it after the LAN cases)
#   BENCH_WAN_ROUNDS=3      rounds of every case (medians, and medians of per-round ratios)
#   BENCH_WAN_CASES="one eight perhost big"   which cases (default all four)
#   BENCH_WAN_DELAY=0.05    the server's delay per response, seconds
#   BENCH_WAN_TIMEOUT=120   seconds one run may take before it is interrupted (and FAILED)
#   BENCH_WAN_OUT=DIR       where the tools write (default /dev/shm: these cases measure the
#                           network side; each run's files are deleted after they are counted)
#   BENCH_WAN_RESULTS=F     write the tables to F too (default bench/results-wan.md);
#   BENCH_WAN_APPEND=1      append to F instead of replacing it (scripts/bench.sh does)
#   BENCH_KEEP=1            keep the work directory (logs, nginx access log) for a look
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/catalog-nginx.sh
. scripts/lib/wan-nginx.sh

archiver=$(realpath "${1:-.build/release/archiver}")
rounds=${BENCH_WAN_ROUNDS:-3}
cases=" ${BENCH_WAN_CASES:-one eight perhost big} "
delay=${BENCH_WAN_DELAY:-0.05}
run_timeout=${BENCH_WAN_TIMEOUT:-120}
results=${BENCH_WAN_RESULTS:-bench/results-wan.md}
catalog=samples/photos.json
from=https://via.placeholder.com

[ -x "$archiver" ] || { echo "bench-wan: no archiver binary at $archiver" >&2; exit 2; }

install_missing bench-wan nginx libnginx-mod-http-echo curl wget2 aria2 openssl time python3

# 1024 in flight is 1024 descriptors for the client (plus its files); many machines' soft limit
# is 1024. nginx raises its own (worker_rlimit_nofile).
hard=$(ulimit -Hn)
if [ "$hard" = unlimited ] || [ "$hard" -ge 20000 ]; then ulimit -n 20000; else ulimit -n "$hard"; fi
[ "$(ulimit -n)" -ge 4096 ] || echo "bench-wan: ulimit -n is $(ulimit -n); the 1024 case may fail" >&2

work=$(mktemp -d /tmp/archiver-bench-wan.XXXXXX)
chmod 755 "$work"
out_base=${BENCH_WAN_OUT:-/dev/shm}
[ -d "$out_base" ] && [ -w "$out_base" ] || out_base=$work
outs=$(mktemp -d "$out_base/archiver-bench-wan-out.XXXXXX")
nginx_pid="" serve_pid=""
cleanup() {
    [ -z "$nginx_pid" ] || { kill "$nginx_pid" 2>/dev/null; wait "$nginx_pid" 2>/dev/null; }
    [ -z "$serve_pid" ] || kill "$serve_pid" 2>/dev/null
    rm -rf "$outs"
    if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "bench-wan: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

make_catalog_images "$archiver" "$catalog" "$work" "$from"
make_test_ca "$work/tls"
start_wan_nginx "$work" "$delay"
ca=$work/tls/ca.pem
log=$work/logs/access.log
requests() { wc -l <"$log"; }

# The server as the tables assume it: the delay applies (one request takes it, an undelayed one
# does not), keep-alive holds through echo_exec, and the 8 addresses answer over HTTPS.
first=$(head -n1 "$work/paths.txt") second=$(sed -n 2p "$work/paths.txt")
before=$(requests)
took=$(curl -sf --cacert "$ca" -o /dev/null -o /dev/null -w '%{time_total} ' \
    "https://127.0.0.1:$wan_tls$first" "https://127.0.0.1:$wan_tls$second")
fast=$(curl -sf -o /dev/null -w '%{time_total}' "http://127.0.0.1:$wan_fast$first")
for k in $(seq "$wan_hosts"); do curl -sf --cacert "$ca" -o /dev/null "https://127.0.0.$k:$wan_tls$first"; done
sleep 0.2
python3 - "$log" "$before" "$delay" "$took" "$fast" <<'PY' || exit 1
import sys
log, before, delay, took, fast = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4].split(), float(sys.argv[5])
lines = [l.split() for l in open(log).readlines()[before:]]
pair = lines[:2]
problems = []
# Upper bound with room for a TLS handshake on a busy machine.
if any(float(t) < delay * 0.9 or float(t) > delay + 0.25 for t in took):
    problems.append(f"delayed requests took {took} s, not about {delay} s")
if delay and fast > delay / 2:
    problems.append(f"an undelayed request took {fast} s")
if len(pair) < 2 or pair[0][0] != pair[1][0]:
    problems.append("two requests in one curl call used two connections: keep-alive does not hold")
hosts = {l[2].rsplit(":", 1)[0] for l in lines[3:]}
if len(hosts) != 8:
    problems.append(f"only {len(hosts)} of the 8 addresses answered")
for p in problems:
    print("bench-wan: server check:", p, file=sys.stderr)
print(f"bench-wan: server: delayed requests took {' and '.join(f'{float(t) * 1000:.0f}' for t in took)} ms on one "
      f"connection, undelayed {fast * 1000:.1f} ms, 8 HTTPS hosts answer")
sys.exit(1 if problems else 0)
PY

# The inputs. The archiver reads a catalog and --mirror flags; the peers get lists of the
# same final URLs, made by applying the same mirror rewrite to the same catalogs:
#   one:   the sample catalog on one host, plain HTTP, delayed
#   eight: catalog-8hosts.json (record i on https://img<(i mod 8) + 1>.example), HTTPS, delayed
#   big:   catalog-100k.json on one host, plain HTTP, delayed; fast: the same, not delayed
big=0; [[ $cases != *" big "* ]] || big=1
make_wan_catalogs "$catalog" "$work" "$from" "$big"
one_mirror=(--mirror "$from=http://127.0.0.1:$wan_http")
read -r -a eight_mirrors <<<"$(wan_mirrors https "$wan_tls")"
big_mirror=("${one_mirror[@]}")
fast_mirror=(--mirror "$from=http://127.0.0.1:$wan_fast")
python3 - "$work" "$big" "$catalog" "${one_mirror[1]}" "${fast_mirror[1]}" "${eight_mirrors[@]}" <<'PY'
import json, sys
work, big, catalog, one, fast, *eight = sys.argv[1:]
eight = eight[1::2]   # the values of the --mirror flags
def rewrite(url, mirrors):
    for m in mirrors:
        src, dst = m.split("=", 1)
        if url.startswith(src):
            return dst + url[len(src):]
    raise SystemExit(f"bench-wan: no mirror for {url}")
def inputs(name, catalog, mirrors, splits=0):
    """curl -K config (url/output pairs), aria2c -i list (a URL, then its out=), wget2 -i list:
    wget2 names files after the URL's last segment and fetches a repeated URL once, so
    ?id=<id> (&id=<id> after ?n=) makes each distinct and names the file after its record."""
    pairs = [(r["id"], rewrite(r["url"], mirrors)) for r in json.load(open(catalog))]
    with open(f"{work}/{name}.curl", "w") as f:
        f.writelines(f'url = "{u}"\noutput = "{i}.png"\n' for i, u in pairs)
    for s in range(splits):   # interleaved shares for several curl processes
        with open(f"{work}/{name}.curl{s}", "w") as f:
            f.writelines(f'url = "{u}"\noutput = "{i}.png"\n' for i, u in pairs[s::splits])
    with open(f"{work}/{name}.aria2", "w") as f:
        f.writelines(f"{u}\n  out={i}.png\n" for i, u in pairs)
    with open(f"{work}/{name}.wget2", "w") as f:
        f.writelines(f"{u}{'&' if '?' in u else '?'}id={i}\n" for i, u in pairs)
inputs("one", catalog, [one])
inputs("eight", f"{work}/catalog-8hosts.json", eight)
if big == "1":
    inputs("big", f"{work}/catalog-100k.json", [one], splits=4)
    inputs("fast", f"{work}/catalog-100k.json", [fast], splits=4)
PY

# measure CASE TOOL ROUND INFLIGHT RECORDS OUT CMD...: runs CMD under /usr/bin/time, keeps the
# run's lines of the access log as logs/CASE.TOOL.ROUND.access and appends to runs.tsv: case,
# tool, round, in flight, records, wall s, user s, sys s, max RSS KiB, exit status, files, ok.
# OUT is the directory whose non-empty files are counted (RECORDS of them, or FAILED); it is
# deleted afterwards.
measure() {
    local case=$1 tool=$2 round=$3 inflight=$4 want=$5 out=$6; shift 6
    local before after files status=0 ok=yes wall user sys rss start end slice
    slice=$work/logs/$case.$tool.$round.access
    before=$(requests)
    # With sample_port set, the server's open connections per host are sampled during the run.
    [ -z "${sample_port:-}" ] || { python3 scripts/lib/wan-sockets.py "$sample_port" "$work/logs/$case.$tool.$round.sockets" & sampler=$!; }
    start=$(date +%s%N)
    # A run that hangs or crawls (an HTTPS client without the CA may retry every record) ends
    # as the archiver ends on ^C, after BENCH_WAN_TIMEOUT seconds, and its row says FAILED.
    /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" timeout -s INT -k 10 "$run_timeout" "$@" \
        >"$work/logs/$case.$tool.$round.log" 2>&1 || status=$?
    end=$(date +%s%N)
    [ -z "${sample_port:-}" ] || { kill -TERM "$sampler"; wait "$sampler" || true; }
    sleep 0.2   # nginx logs a request just after sending it: let the last lines land
    after=$(requests)
    tail -n +"$((before + 1))" "$log" | head -n "$((after - before))" >"$slice"
    read -r wall user sys rss < <(tail -n1 "$work/time.txt")
    wall=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.4f", ns / 1e9 }')
    files=$( (find "$out" -type f -size +0 2>/dev/null || true) | wc -l)
    [ "$status" = 0 ] && [ "$files" = "$want" ] || ok=no
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$case" "$tool" "$round" "$inflight" "$want" \
        "$wall" "$user" "$sys" "$rss" "$status" "$files" "$ok" >>"$work/runs.tsv"
    printf 'bench-wan: round %s %-8s %-9s %7.3f s  %6d requests on %4d connections  %6d files  exit %s  %s\n' \
        "$round" "$case" "$tool" "$wall" "$((after - before))" "$(cut -d' ' -f1 "$slice" | sort -u | wc -l)" \
        "$files" "$status" "$([ $ok = yes ] && echo ok || { echo FAILED; tail -n2 "$work/logs/$case.$tool.$round.log" | sed 's/^/    /'; })"
    rm -rf "$out"
}
fresh() { mktemp -d "$outs/$1.XXXXXX"; }

n=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$catalog")
: >"$work/runs.tsv"

# run_archiver CASE INFLIGHT RECORDS ARGS...: one archiver run into a fresh bundle.
run_archiver() {
    local case=$1 inflight=$2 want=$3 out; shift 3
    out=$(fresh "$case-archiver")
    measure "$case" archiver "$round" "$inflight" "$want" "$out/images" "$archiver" run --quiet --out "$out" "$@"
}
# run_curl CASE TOOL INFLIGHT RECORDS CONFIG MAX: one curl process.
run_curl() {
    local case=$1 tool=$2 inflight=$3 want=$4 cfg=$5 max=$6 out
    out=$(fresh "$case-$tool")
    measure "$case" "$tool" "$round" "$inflight" "$want" "$out" \
        curl --parallel --parallel-max "$max" --no-progress-meter --fail --cacert "$ca" --output-dir "$out" -K "$cfg"
}
# run_curl4 CASE RECORDS INPUT: 4 curl processes at --parallel-max 256 on interleaved quarters
# (curl caps --parallel-max at 300). time(1) sums their CPU; peak RSS is the largest one's.
run_curl4() {
    local case=$1 want=$2 input=$3 out
    out=$(fresh "$case-curl4")
    measure "$case" curlx4 "$round" 1024 "$want" "$out" sh -c '
        pids=""
        for s in 0 1 2 3; do
            curl --parallel --parallel-max 256 --no-progress-meter --fail --output-dir "$1" -K "$2$s" &
            pids="$pids $!"
        done
        status=0; for p in $pids; do wait "$p" || status=1; done; exit $status' sh "$out" "$input.curl"
}
# pair FIRST SECOND: the archiver and curl swap places every round, like the LAN bench.
pair() { if ((round % 2)); then "$1"; "$2"; else "$2"; "$1"; fi; }

one_archiver() { run_archiver one 256 "$n" --catalog "$catalog" --concurrency 256 "${one_mirror[@]}"; }
one_curl() { run_curl one curl 256 "$n" "$work/one.curl" 256; }
eight_archiver() { run_archiver eight 32 "$n" --catalog "$work/catalog-8hosts.json" --concurrency 32 "${eight_mirrors[@]}" --cacert "$ca"; }
eight_curl() { run_curl eight curl 32 "$n" "$work/eight.curl" 32; }
big_archiver() { run_archiver big 1024 100000 --catalog "$work/catalog-100k.json" --concurrency 1024 "${big_mirror[@]}"; }
big_curl() { run_curl big curl 300 100000 "$work/big.curl" 1024; }
fast_archiver() { run_archiver fast 1024 100000 --catalog "$work/catalog-100k.json" --concurrency 1024 "${fast_mirror[@]}"; }
fast_curl() { run_curl fast curl 300 100000 "$work/fast.curl" 1024; }

for round in $(seq "$rounds"); do
    if [[ $cases == *" one "* ]]; then pair one_archiver one_curl; fi
    if [[ $cases == *" eight "* ]]; then
        pair eight_archiver eight_curl
        out=$(fresh eight-wget2)
        measure eight wget2 "$round" 32 "$n" "$out" \
            wget2 --max-threads 32 -q -nd -P "$out" --ca-certificate="$ca" -i "$work/eight.wget2"
        out=$(fresh eight-aria2c)
        measure eight aria2c "$round" 32 "$n" "$out" \
            aria2c -j 32 -x 1 -q -d "$out" --ca-certificate="$ca" -i "$work/eight.aria2"
    fi
    if [[ $cases == *" perhost "* ]]; then
        sample_port=$wan_tls
        run_archiver perhost 32 "$n" --catalog "$work/catalog-8hosts.json" --concurrency 64 --per-host 4 "${eight_mirrors[@]}" --cacert "$ca"
        sample_port=""
    fi
    if [[ $cases == *" big "* ]]; then
        pair big_archiver big_curl
        run_curl4 big 100000 "$work/big"
        pair fast_archiver fast_curl
        run_curl4 fast 100000 "$work/fast"
    fi
done

mkdir -p "$(dirname "$results")"
{
    printf '%s · nproc %s · Linux %s · %s · %s · %s · %s · archiver %s\n\n' \
        "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(nproc)" "$(uname -r)" \
        "$(curl --version | head -n1 | cut -d' ' -f1-2)" \
        "$(wget2 --version | head -n1 | awk '{print "wget2", $3}')" \
        "$(aria2c --version | head -n1 | sed 's/ version / /')" \
        "$(nginx -v 2>&1 | sed 's|.*nginx/|nginx |')" \
        "$(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    python3 scripts/lib/wan-report.py "$work/runs.tsv" "$work/logs" "$delay" "$(df --output=fstype "$outs" | tail -n1)"
} >"$work/report.md"
if [ "${BENCH_WAN_APPEND:-0}" = 1 ]; then
    { echo; cat "$work/report.md"; } | tee -a "$results"
else
    tee "$results" <"$work/report.md"
fi

if awk -F'\t' '$12 != "yes" { bad = 1 } END { exit !bad }' "$work/runs.tsv"; then
    echo "bench-wan: some runs FAILED (see above)" >&2
    exit 1
fi
