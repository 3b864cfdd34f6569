#!/usr/bin/env bash
# CI's check of the package `make deb` built: unpacks it into a scratch root (no root, no apt),
# checks its control fields and files, then runs the unpacked binary: --version, the man page,
# the bash completion, and a 20-record run against the built-in image server, verified.
set -euo pipefail
deb=${1:?usage: scripts/deb-check.sh archiver_VERSION_ARCH.deb}
scratch=$(mktemp -d)
server=""
trap '[ -z "$server" ] || kill "$server" 2>/dev/null; rm -rf "$scratch"' EXIT
fail() { echo "deb-check: $*" >&2; exit 1; }

dpkg-deb -x "$deb" "$scratch/root"
depends=$(dpkg-deb -f "$deb" Depends)
for library in libpng libcurl libarchive; do
    [[ $depends == *"$library"* ]] || fail "Depends does not name $library: $depends"
done
for file in usr/bin/archiver usr/share/man/man1/archiver.1.gz usr/share/bash-completion/completions/archiver \
    usr/share/zsh/vendor-completions/_archiver usr/share/fish/vendor_completions.d/archiver.fish; do
    [ -s "$scratch/root/$file" ] || fail "the package has no $file"
done

archiver=$scratch/root/usr/bin/archiver
version=$("$archiver" --version)
[[ $version == "archiver $(dpkg-deb -f "$deb" Version) (commit "* ]] || fail "--version says '$version'"
zcat "$scratch/root/usr/share/man/man1/archiver.1.gz" | grep -q '^\\fB\\-\\-concurrency\\fR' || fail "the man page lacks run --concurrency"
reply=$(bash -c 'source "$1"; COMP_WORDS=(archiver run --conc); COMP_CWORD=2; _archiver; echo "${COMPREPLY[*]}"' _ \
    "$scratch/root/usr/share/bash-completion/completions/archiver")
[ "$reply" = --concurrency ] || fail "bash completes 'archiver run --conc' to '$reply'"

python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1]))[:20], open(sys.argv[2], "w"))' \
    samples/photos.json "$scratch/catalog.json"
"$archiver" serve --port 0 >"$scratch/serve.log" &
server=$!
for _ in $(seq 100); do grep -q '^serving' "$scratch/serve.log" && break; sleep 0.05; done
url=$(grep -o 'http://[0-9.:]*' "$scratch/serve.log" | head -n1)
[ -n "$url" ] || fail "the packaged binary's image server did not start"
"$archiver" run --catalog "$scratch/catalog.json" --out "$scratch/bundle" --quiet \
    --mirror "https://via.placeholder.com=$url" || fail "the packaged binary's run exited $?"
"$archiver" verify "$scratch/bundle" >/dev/null || fail "the packaged binary's bundle does not verify"
[ "$(ls "$scratch/bundle/images" | wc -l)" = 20 ] || fail "the run wrote $(ls "$scratch/bundle/images" | wc -l) images, not 20"
echo "deb-check: $deb ($(du -h "$deb" | cut -f1)) unpacks and runs: $version; 20 images archived and verified"
echo "deb-check: Depends: $depends"
