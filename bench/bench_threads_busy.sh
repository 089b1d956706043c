#!/bin/sh
# SPDX-License-Identifier: MIT
# Threads on a shared machine: netfab sim on the 1,056-node Dragonfly (dragonfly:a=8,p=4,h=4,
# dfmin, uniform 0.5, 3,500 cycles) with --threads 1, --threads 2 and the default, on the quiet
# machine and beside one CPU-bound process (a shell loop), the best of three runs each, wall
# seconds; then the ratio to --threads 1. The aim: beside the busy process, --threads 2 and the
# default no more than 10% slower than --threads 1; quiet, faster. Then the same for netfab topo
# (all-pairs distances) and netfab mcast (FULB-MC trees of grid3d:64x64x64) on the 16,640-
# endpoint Dragonfly (dragonfly:a=32,p=16,h=16), whose OpenMP loops share work dynamically, and
# netfab sweep (10 cells of the 72-node Dragonfly, a cell per thread).
# Usage: sh bench/bench_threads_busy.sh NETFAB [JOB:MACHINE ...]
set -eu
nf=$1
job=sim
# $1 is the thread option, empty for the default: split on purpose
# shellcheck disable=SC2086
run() {
    best=
    for _ in 1 2 3; do
        t0=$(date +%s.%N)
        case $job in
        sim)
            "$nf" sim --topo dragonfly:a=8,p=4,h=4 --routing dfmin --traffic uniform --load 0.5 \
                --warmup 500 --cycles 3000 --drain 0 $1 --json >/dev/null
            ;;
        topo) "$nf" topo --topo dragonfly:a=32,p=16,h=16 $1 >/dev/null ;;
        mcast) "$nf" mcast --topo dragonfly:a=32,p=16,h=16 --groups grid3d:64x64x64 --engine fulb \
            $1 >/dev/null ;;
        sweep) "$nf" sweep --topo dragonfly:a=4,p=2,h=2 --routing dfmin,ugal-l --traffic uniform \
            --loads 0.1:0.9:0.2 --no-times $1 >/dev/null ;;
        esac
        t=$(awk "BEGIN { print $(date +%s.%N) - $t0 }")
        best=$(awk "BEGIN { b = \"$best\"; print (b == \"\" || $t < b + 0) ? $t : b }")
    done
    echo "$best"
}
echo "| command | machine | --threads 1 s | --threads 2 s (ratio) | default s (ratio) |"
echo "|---|---|---:|---:|---:|"
shift
[ $# -gt 0 ] || set -- sim:quiet sim:busy topo:quiet topo:busy mcast:quiet mcast:busy sweep:quiet \
    sweep:busy
for jm in "$@"; do
    job=${jm%%:*} m=${jm#*:}
    pid=
    if [ $m = busy ]; then
        sh -c 'while :; do :; done' &
        pid=$!
    fi
    a=$(run "--threads 1") b=$(run "--threads 2") c=$(run "")
    [ -n "$pid" ] && kill "$pid"
    printf '| %s | %s | %.2f | %.2f (%.2fx) | %.2f (%.2fx) |\n' "$job" "$m" "$a" "$b" \
        "$(awk "BEGIN { print $b / $a }")" "$c" "$(awk "BEGIN { print $c / $a }")"
done
