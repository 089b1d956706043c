#!/bin/sh
# SPDX-License-Identifier: MIT
# netfab sweep's speed-up: one grid (5 Dragonfly routings x 2 traffics x 10 loads = 100 cells on
# the 72-node Dragonfly, the simulator's default window) run by 1 process on 1 thread, by 2 MPI
# ranks of 1 thread each, and by 1 process on 2 OpenMP threads; the three outputs must be the
# same bytes (--no-times). Wall seconds, best of RUNS (default 3).
# Usage: bench/bench_sweep.sh NETFAB [RUNS]
set -eu
nf=$1
runs=${2:-3}
grid="--topo dragonfly:a=4,p=2,h=2 --routing dfmin,val,ugal-l,ugal-g,par --traffic uniform,worstcase --loads 0.05:0.95:0.1 --no-times"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
best() { # best wall seconds of $runs runs of "$@", output kept in $tmp/out
    b=""
    i=0
    while [ $i -lt "$runs" ]; do
        t0=$(date +%s.%N)
        "$@" >"$tmp/out"
        t=$(echo "$(date +%s.%N) - $t0" | bc -l)
        if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
        i=$((i + 1))
    done
    printf '%.2f' "$b"
}
# shellcheck disable=SC2086
t1=$(best "$nf" sweep $grid --threads 1); cp "$tmp/out" "$tmp/one"
printf '| way | wall s | speed-up | same bytes |\n|---|---:|---:|---|\n'
printf '| 1 process, 1 thread | %s | 1.00 | - |\n' "$t1"
if "$nf" sweep --help | grep -q "with Open MPI" && command -v mpirun >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    t2=$(best mpirun -np 2 --bind-to core "$nf" sweep $grid --threads 1)
    same=$(cmp -s "$tmp/one" "$tmp/out" && echo yes || echo NO)
    printf '| mpirun -np 2, 1 thread each | %s | %.2f | %s |\n' "$t2" "$(echo "$t1 / $t2" | bc -l)" "$same"
fi
# shellcheck disable=SC2086
t3=$(best "$nf" sweep $grid --threads 2)
same=$(cmp -s "$tmp/one" "$tmp/out" && echo yes || echo NO)
printf '| 1 process, 2 OpenMP threads | %s | %.2f | %s |\n' "$t3" "$(echo "$t1 / $t3" | bc -l)" "$same"
