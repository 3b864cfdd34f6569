# Sourced by the acceptance scripts after scripts/lib/catalog-nginx.sh: what each of them needs
# before its checks. `acceptance_setup NAME [ARCHIVER]` installs nginx, curl, time and python3
# from Debian when missing, sets archiver, catalog, from and work (a fresh /tmp/archiver-NAME.*
# directory removed on exit, with every process in nginx_pid, serve_pid and extra_pids killed),
# starts the catalog's nginx and sets port and mirror. `check NAME STATUS DETAILS` prints a
# PASS or FAIL line and counts passes and failures; `requests` counts the lines of nginx's access
# log once every request answered so far is logged (settled_requests in catalog-nginx.sh).
# On exit, however the script ends, the last line printed is `N passed, N failed` (a script that
# stops before its end counts that as a failure) and the exit status is 1 if anything failed.

acceptance_setup() {
    local name=$1
    passed=0 failures=0
    archiver=$(realpath "${2:-.build/release/archiver}")
    catalog=$(realpath samples/photos.json)
    from=https://via.placeholder.com
    work=$(mktemp -d "/tmp/archiver-$name.XXXXXX")
    chmod 755 "$work"   # nginx's workers run as 'nobody' when we are root
    nginx_pid="" serve_pid="" extra_pids=""
    trap acceptance_cleanup EXIT
    install_missing acceptance nginx curl time python3
    port=$(free_port)
    start_catalog_nginx "$archiver" "$catalog" "$work" "$port" "$from"
    mirror="$from=http://127.0.0.1:$port"
}

acceptance_cleanup() {
    local status=$? pid
    for pid in ${nginx_pid:-} ${serve_pid:-} ${extra_pids:-}; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
    [ -n "${work:-}" ] && rm -rf "$work"
    if [ "$status" != 0 ] && [ "${failures:-0}" = 0 ]; then
        echo "FAIL  the script stopped before its last check  (exit $status)"
        failures=1
    fi
    echo "${passed:-0} passed, ${failures:-0} failed"
    [ "${failures:-0}" = 0 ] || exit 1
}

check() {  # check NAME CONDITION-EXIT-STATUS DETAILS
    if [ "$2" = 0 ]; then echo "PASS  $1  ($3)"; passed=$((passed + 1)); else echo "FAIL  $1  ($3)"; failures=$((failures + 1)); fi
}

requests() { settled_requests "$work" "$port"; }
