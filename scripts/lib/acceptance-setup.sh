# Sourced by the acceptance scripts after scripts/lib/catalog-nginx.sh: what each of them needs
# before its checks. `acceptance_setup NAME [ARCHIVER]` installs nginx, curl, time and python3
# from Debian when missing, sets archiver, catalog, from and work (a fresh /tmp/archiver-NAME.*
# directory removed on exit, with every process in nginx_pid, serve_pid and extra_pids killed),
# starts the catalog's nginx and sets port and mirror. `check NAME STATUS DETAILS` prints a
# PASS or FAIL line and counts failures; `requests` counts the lines of nginx's access log once
# every request answered so far is logged (settled_requests in catalog-nginx.sh).

acceptance_setup() {
    local name=$1
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
    failures=0
}

acceptance_cleanup() {
    local pid
    for pid in $nginx_pid $serve_pid $extra_pids; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
    rm -rf "$work"
}

check() {  # check NAME CONDITION-EXIT-STATUS DETAILS
    if [ "$2" = 0 ]; then echo "PASS  $1  ($3)"; else echo "FAIL  $1  ($3)"; failures=$((failures + 1)); fi
}

requests() { settled_requests "$work" "$port"; }
