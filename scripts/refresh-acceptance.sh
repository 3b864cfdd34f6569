#!/usr/bin/env bash
# The acceptance checks of issue 14 (nightly refresh: adopt a restored bundle, revalidate with
# conditional requests) against the real 5000-record catalog served by a loopback nginx, which
# gives ETag and Last-Modified and answers conditional requests with 304. Every request is
# counted, with its status, in nginx's access log. Prints one PASS/FAIL line per check and the
# figures; exits 1 if any check failed.
#
#   scripts/refresh-acceptance.sh [path/to/archiver]     (make acceptance passes the release binary)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/catalog-nginx.sh

. scripts/lib/acceptance-setup.sh
acceptance_setup refresh "${1:-}"
# The requests logged since line FROM, by status: "4996 requests (200: 50, 304: 4946)".
statuses_since() {
    tail -n +"$(($1 + 1))" "$work/logs/access.log" | awk '{ n++; s[$3]++ } END {
        line = ""; for (k in s) line = line (line == "" ? "" : ", ") k ": " s[k]; printf "%d requests (%s)\n", n, line }'
}
count_since() {  # count_since FROM STATUS
    tail -n +"$(($1 + 1))" "$work/logs/access.log" | awk -v want="$2" '$3 == want { n++ } END { print n + 0 }'
}
# The paths answered 200 since line FROM, sorted.
paths_200_since() {
    tail -n +"$(($1 + 1))" "$work/logs/access.log" | awk '$3 == 200 { print $5 }' | sort
}
# stamps DIR: "inode mtime name" of every image, sorted by name.
stamps() { find "$1/images" -type f -printf '%i %T@ %f\n' | sort -k3; }
# timed NAME COMMAND...: runs it under /usr/bin/time, sets seconds and rss_mib.
timed() {
    local name=$1; shift
    /usr/bin/time -f '%e %M' -o "$work/time-$name" "$@"
    local status=$?
    read -r seconds kib <"$work/time-$name"
    rss_mib=$((kib / 1024))
    return $status
}
# matches_server DIR: every done item's file and manifest sha256 are the bytes nginx serves now.
matches_server() {
    python3 - "$1" "$work/root" "$from" <<'PY'
import hashlib, json, os, sys
bundle, root, src = sys.argv[1:]
manifest = json.load(open(os.path.join(bundle, "manifest.json")))
bad = 0
for item in manifest["items"]:
    served = hashlib.sha256(open(root + item["url"][len(src):], "rb").read()).hexdigest()
    held = hashlib.sha256(open(os.path.join(bundle, item["path"]), "rb").read()).hexdigest()
    if item["status"] != "done" or not (served == held == item["sha256"]):
        bad += 1
print(f"{len(manifest['items']) - bad} of {len(manifest['items'])} items match the server")
sys.exit(1 if bad else 0)
PY
}
run=("$archiver" run --catalog "$catalog" --concurrency 8 --mirror "$mirror" --quiet)

# median FILE...: the median of the first numbers in the files.
median() { for f in "$@"; do cut -d' ' -f1 "$f"; done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "== the first run (and 2 more into scratch directories, for its median time), then pack, unpack, run over it"
before=$(requests)
timed first "${run[@]}" --out "$work/a"; status=$?
check "first run exits 0" "$status" "$(statuses_since "$before"), $seconds s, $rss_mib MiB peak"
for i in 2 3; do timed "first$i" "${run[@]}" --out "$work/scratch$i"; rm -rf "$work/scratch$i"; done
first_seconds=$(median "$work/time-first" "$work/time-first2" "$work/time-first3")
grep -q '"etag": ' "$work/a/manifest.json" && grep -q '"lastModified": ' "$work/a/manifest.json"
check "... the manifest holds nginx's ETag and Last-Modified" $? "$(grep -c '"etag": ' "$work/a/manifest.json") items with an etag"
cp "$work/a/manifest.json" "$work/manifest-before.json"
"$archiver" pack "$work/a" --output "$work/a.tar.gz" >/dev/null
mkdir "$work/r" "$work/r2"
tar -xzf "$work/a.tar.gz" -C "$work/r"
tar -xzf "$work/a.tar.gz" -C "$work/r2"
[ ! -e "$work/r/.archiver" ]; check "the tarball holds no .archiver/" $? "$(tar -tzf "$work/a.tar.gz" | wc -l) entries"
before=$(requests)
timed adopt "${run[@]}" --out "$work/r"; status=$?
n=$(($(requests) - before))
[ "$status" = 0 ] && [ "$n" = 0 ]; check "run over the unpacked bundle: 0 downloads" $? "exit $status, $n requests, $seconds s, $rss_mib MiB peak"
cmp -s "$work/a/manifest.json" "$work/r/manifest.json" && cmp -s "$work/a/index.html" "$work/r/index.html"
check "... manifest.json and index.html identical to the original" $? "manifest $(sha256sum <"$work/r/manifest.json" | cut -c1-16)"

echo "== run --refresh over the unchanged bundle"
stamps "$work/a" >"$work/stamps-before"
manifest_inode=$(stat -c %i "$work/a/manifest.json")
before=$(requests)
timed refresh0 "${run[@]}" --out "$work/a" --refresh; status=$?
line=$(statuses_since "$before")
[ "$status" = 0 ] && [ "$(count_since "$before" 304)" = 4996 ] && [ "$(($(requests) - before))" = 4996 ]
check "4996 conditional requests, all answered 304" $? "$line"
cmp -s "$work/stamps-before" <(stamps "$work/a")
check "... no image written: every inode and mtime as before" $? "$(wc -l <"$work/stamps-before") files compared"
cmp -s "$work/manifest-before.json" "$work/a/manifest.json" && [ "$(stat -c %i "$work/a/manifest.json")" = "$manifest_inode" ]
check "... manifest identical and not even rewritten" $? "inode $manifest_inode"
for i in 2 3; do timed "refresh0$i" "${run[@]}" --out "$work/a" --refresh; done
refresh0_seconds=$(median "$work/time-refresh0" "$work/time-refresh02" "$work/time-refresh03")
# Speed is a figure here, not a check (make bench measures it): on a shared machine a timing
# comparison fails for reasons that are not the archiver's.
echo "      medians of 3: refresh $refresh0_seconds s against $first_seconds s for the first run, $rss_mib MiB peak"

echo "== 50 images change on the server"
"$archiver" serve --port 0 >"$work/logs/serve2.log" 2>&1 &
serve_pid=$!
for _ in $(seq 100); do grep -qs '^serving' "$work/logs/serve2.log" && break; sleep 0.05; done
serve=$(grep -o 'http://[0-9.:]*' "$work/logs/serve2.log" | head -n1)
[ -n "$serve" ] || { echo "archiver serve did not start" >&2; exit 1; }
# 50 paths that one record each has (so 50 records change), spread over the catalog.
python3 - "$catalog" "$from" >"$work/changed.txt" <<'PY'
import collections, json, sys
catalog, src = sys.argv[1:]
paths = collections.Counter(r["url"][len(src):] for r in json.load(open(catalog)))
single = sorted(p for p, n in paths.items() if n == 1)
print("\n".join(single[i * len(single) // 50] for i in range(50)))
PY
i=0
while read -r path; do
    i=$((i + 1))
    size=${path#/}; size=${size%%/*}
    # Another valid PNG of the same size: a colour no catalog image has.
    curl -sf "$serve/$size/$(printf 'ab%04x' "$i")" -o "$work/new.png" || { echo "could not make a new image" >&2; exit 1; }
    cmp -s "$work/new.png" "$work/root$path" && { echo "new image equals the old one: $path" >&2; exit 1; }
    mv "$work/new.png" "$work/root$path"
    chmod a+r "$work/root$path"
    touch -d "@$(($(date +%s) + 100))" "$work/root$path"   # a new mtime for certain: new ETag and Last-Modified
done <"$work/changed.txt"
kill "$serve_pid"; wait "$serve_pid" 2>/dev/null; serve_pid=""
sort "$work/changed.txt" >"$work/changed-sorted.txt"
echo "      rewrote $(wc -l <"$work/changed.txt") files in nginx's root, e.g. $(head -n1 "$work/changed.txt")"

refresh_changed() {  # refresh_changed NAME DIR
    local name=$1 dir=$2
    stamps "$dir" >"$work/stamps-$name"
    local before
    before=$(requests)
    timed "$name" "${run[@]}" --out "$dir" --refresh --json >"$work/report-$name.json"; local status=$?
    local line
    line=$(statuses_since "$before")
    [ "$status" = 0 ] && [ "$(count_since "$before" 200)" = 50 ] && [ "$(count_since "$before" 304)" = 4946 ] \
        && [ "$(($(requests) - before))" = 4996 ]
    check "$name: 4996 requests, 50 downloads (200) and 4946 304s" $? "$line, $seconds s, $rss_mib MiB peak"
    paths_200_since "$before" | cmp -s - "$work/changed-sorted.txt"
    check "... the 50 downloads are exactly the 50 changed images" $? "$(paths_200_since "$before" | wc -l) paths answered 200"
    local result
    result=$(matches_server "$dir"); check "... every file and manifest sha256 match the server" $? "$result"
    local kept
    kept=$(python3 - "$work/stamps-$name" <(stamps "$dir") "$catalog" "$from" "$work/changed.txt" <<'PY'
import json, sys
before, after, catalog, src, changed = sys.argv[1:]
changed = {l.strip() for l in open(changed) if l.strip()}
ids = {f'{r["id"]}.png' for r in json.load(open(catalog)) if r["url"][len(src):] in changed}
old = {l.split()[2]: l.split()[:2] for l in open(before)}
new = {l.split()[2]: l.split()[:2] for l in open(after)}
same = sum(1 for name in old if name not in ids and old[name] == new.get(name))
replaced = sum(1 for name in ids if old.get(name) != new.get(name))
print(f"{same} untouched files kept inode and mtime, {replaced} of {len(ids)} replaced")
sys.exit(0 if same == len(old) - len(ids) and replaced == len(ids) else 1)
PY
)
    check "... the untouched files keep their inode and mtime" $? "$kept"
    # Items, not requests: 4 URLs of the catalog are shared by 2 records each.
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["refresh"]; print(r); sys.exit(0 if r == {"changed": 50, "failed": 0, "unchanged": 4950} else 1)' \
        "$work/report-$name.json" >"$work/refresh-$name.txt"
    check "... --json counts the items: 4950 unchanged, 50 changed, 0 failed" $? "$(cat "$work/refresh-$name.txt")"
}

echo "== run --refresh over the original bundle"
refresh_changed refresh50 "$work/a"
echo "== run --refresh over the bundle restored (and adopted) before the change"
refresh_changed refresh50-restored "$work/r"
echo "== run --refresh straight over a fresh unpack of the tarball (adopted and refreshed in one run)"
refresh_changed refresh50-unpacked "$work/r2"
cmp -s "$work/a/manifest.json" "$work/r/manifest.json" && cmp -s "$work/a/manifest.json" "$work/r2/manifest.json"
check "the three refreshed manifests are identical" $? "$(sha256sum <"$work/a/manifest.json" | cut -c1-16)"
"$archiver" verify "$work/r2" >/dev/null; check "verify passes on the refreshed restored bundle" $? "verify"

echo "== SIGKILL in the middle of a refresh, then the same command again"
# Swap bytes between the changed images (still valid PNGs, other bytes for each).
python3 - "$work/root" "$work/changed.txt" <<'PY'
import os, sys, time
root, listing = sys.argv[1:]
paths = [l.strip() for l in open(listing) if l.strip()]
data = [open(root + p, "rb").read() for p in paths]
later = time.time() + 200
for i, p in enumerate(paths):
    with open(root + p + ".tmp", "wb") as f:
        f.write(data[(i + 1) % len(data)])
    os.replace(root + p + ".tmp", root + p)
    os.utime(root + p, (later, later))
PY
before=$(requests)
"${run[@]}" --out "$work/a" --refresh &
pid=$!
while [ "$(($(requests) - before))" -lt 2500 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.01; done
kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; killed=$?
killed_after=$(($(requests) - before))
# 137 is 128 + SIGKILL: the kill hit a running refresh (0 would mean it had already finished).
[ "$killed" = 137 ]; check "the refresh died of the SIGKILL" $? "wait status $killed after $killed_after requests"
"${run[@]}" --out "$work/a" --refresh; status=$?
result=$(matches_server "$work/a"); matched=$?
[ "$status" = 0 ] && [ "$matched" = 0 ]
check "killed after $killed_after requests, the rerun finishes the refresh: every file matches the server" $? "exit $status, $result"
before=$(requests)
"${run[@]}" --out "$work/a" --refresh
[ "$(count_since "$before" 304)" = 4996 ]; check "... and a refresh after it finds everything current" $? "$(statuses_since "$before")"

echo
echo "figures: first run $first_seconds s; refresh of the unchanged bundle $refresh0_seconds s (medians of 3);" \
    "refresh after 50 changes $(cut -d' ' -f1 "$work/time-refresh50") s (restored: $(cut -d' ' -f1 "$work/time-refresh50-restored") s," \
    "unpacked: $(cut -d' ' -f1 "$work/time-refresh50-unpacked") s); peak RSS first $(($(cut -d' ' -f2 "$work/time-first") / 1024)) MiB," \
    "refresh $(($(cut -d' ' -f2 "$work/time-refresh50") / 1024)) MiB"
# acceptance_cleanup prints the "N passed, N failed" line and sets the exit status.
