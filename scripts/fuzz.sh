#!/bin/sh
# Runs each libFuzzer target of Fuzz/ for SECONDS: usage: scripts/fuzz.sh BIN_DIR SECONDS TARGET...
# The seed corpus Fuzz/corpus/<target> is read, never written; what the fuzzer learns goes to
# .build/fuzz-corpus/<target>, and a crash, leak or over-limit input to Fuzz/crashes/<target>/
# (commit it: the corpus replay test of `make test` runs every file there). Prints one line per
# target from libFuzzer's last status line; exits non-zero if any target found something.
set -u
bin=$1 seconds=$2
shift 2
logs=.build/fuzz-logs
mkdir -p "$logs"
status=0
summary=""
for target in "$@"; do
    case $target in
        png | jpeg | webp | gif) max_len=4096 ;;
        catalog) max_len=16384 ;;
        csv | manifest) max_len=4096 ;;
        *) max_len=1024 ;;
    esac
    mkdir -p ".build/fuzz-corpus/$target" "Fuzz/crashes/$target"
    echo "fuzz-$target: $seconds s (log: $logs/$target.log)"
    # Leaks are checked (ASan's LeakSanitizer, libFuzzer's -detect_leaks); no single allocation
    # may exceed 64 MiB; RSS is capped well above what a parser needs.
    ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64} "$bin/fuzz-$target" \
        ".build/fuzz-corpus/$target" "Fuzz/corpus/$target" \
        -max_total_time="$seconds" -malloc_limit_mb=64 -rss_limit_mb=2048 -max_len="$max_len" \
        -dict="Fuzz/dict/$target.dict" -artifact_prefix="Fuzz/crashes/$target/" -print_final_stats=1 \
        >"$logs/$target.log" 2>&1
    code=$?
    last=$(grep -E '^#[0-9]+' "$logs/$target.log" | tail -1)
    if [ $code -ne 0 ]; then
        status=1
        line="fuzz-$target: FOUND SOMETHING (exit $code; see $logs/$target.log and Fuzz/crashes/$target/)"
    else
        line="fuzz-$target: no crash, leak or over-limit allocation in $seconds s: $last"
    fi
    echo "$line"
    summary="$summary$line
"
done
printf '\n%s' "$summary"
exit $status
