#!/bin/sh
# SPDX-License-Identifier: MIT
# Threads on a shared machine: netfab sim on the 1,056-node Dragonfly (dragonfly:a=8,p=4,h=4,
# dfmin, uniform 0.5, 3,500 cycles) with --threads 1, --threads 2 and the default, on the quiet
# machine and beside one CPU-bound process (a shell loop), the best of three runs each, wall
# seconds; then the ratio to --threads 1. The aim: beside the busy process, --threads 2 and the
# default no more than 10% slower than --threads 1; quiet, faster.
# Usage: sh bench/bench_threads_busy.sh NETFAB
set -eu
nf=$1
run() {
    best=
    for _ in 1 2 3; do
        t0=$(date +%s.%N)
        # shellcheck disable=SC2086
        "$nf" sim --topo dragonfly:a=8,p=4,h=4 --routing dfmin --traffic uniform --load 0.5 \
            --warmup 500 --cycles 3000 --drain 0 $1 --json >/dev/null
        t=$(awk "BEGIN { print $(date +%s.%N) - $t0 }")
        best=$(awk "BEGIN { b = \"$best\"; print (b == \"\" || $t < b + 0) ? $t : b }")
    done
    echo "$best"
}
echo "| machine | --threads 1 s | --threads 2 s (ratio) | default s (ratio) |"
echo "|---|---:|---:|---:|"
for m in quiet busy; do
    pid=
    if [ $m = busy ]; then
        sh -c 'while :; do :; done' &
        pid=$!
    fi
    a=$(run "--threads 1") b=$(run "--threads 2") c=$(run "")
    [ -n "$pid" ] && kill "$pid"
    printf '| %s | %.2f | %.2f (%.2fx) | %.2f (%.2fx) |\n' "$m" "$a" "$b" \
        "$(awk "BEGIN { print $b / $a }")" "$c" "$(awk "BEGIN { print $c / $a }")"
done
