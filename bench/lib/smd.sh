# SPDX-License-Identifier: MIT
# Shell shared by the group-manager benchmarks (bench_smd.sh, bench_smd_hostile.sh): a scratch
# folder removed at exit, and a `netfab smd` daemon started in it and stopped. Source it with
# `. "$(dirname "$0")/lib/smd.sh"` after setting netfab (the program), then call smd_init.

# smd_init NAME: makes the scratch folder $work (/tmp/netfab-NAME.XXXXXX) and sets a trap that,
# on exit or a signal, stops a daemon still running and removes the folder.
smd_init() {
    work=$(mktemp -d "/tmp/netfab-$1.XXXXXX")
    pid=
    trap smd_cleanup EXIT
    trap 'exit 130' INT TERM
}

smd_cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    rm -rf "$work"
}

# smd_start TOPO [OPTION...]: a daemon for the fabric TOPO on a free loopback port, its journal in
# $work/state (kept: remove it first for a fresh manager), its log in $work/smd.log, and the
# options given. Waits until it has written its port (at most 10 minutes: a restart replays the
# whole journal first); sets pid, port and srv (127.0.0.1:PORT). Exits the script, showing the
# log, if the daemon dies or never listens.
smd_start() {
    _topo=$1
    shift
    rm -f "$work/port"
    "$netfab" smd --topo "$_topo" --listen 127.0.0.1:0 --port-file "$work/port" \
        --state "$work/state" "$@" 2>"$work/smd.log" &
    pid=$!
    _i=0
    while [ ! -s "$work/port" ]; do
        if ! kill -0 "$pid" 2>/dev/null || [ $_i -ge 60000 ]; then
            echo "smd.sh: the daemon did not start listening:" >&2
            cat "$work/smd.log" >&2
            exit 1
        fi
        sleep 0.01
        _i=$((_i + 1))
    done
    port=$(cat "$work/port")
    srv=127.0.0.1:$port
}

# smd_stop: stops the daemon (SIGTERM) and waits for it.
smd_stop() {
    kill "$pid"
    wait "$pid" || true
    pid=
}
