#!/bin/sh
# SPDX-License-Identifier: MIT
# The group manager under load (part of `make bench`): every rank of a 24,000-rank 3D grid job
# (grid3d:40x30x20, 3 groups per rank: 2,600 groups, 72,000 joins) on the 30x20x20 torus joins at
# once through `netfab smd-load`, against a fresh `netfab smd` with a journal: the new protocol,
# the new protocol with 1% of the requests lost, and the old way (--recompute-each-join); each
# group's wait from its first join as its rank 0 sees it (polling MCGStateRecord every 10 ms)
# and as the server does (until its last join is answered).
# Prints a Markdown table, then the time a daemon takes to start again from the first run's
# journal. Usage: bench/bench_smd.sh NETFAB [TOPO GROUPS]
set -eu
netfab=$1
topo=${2:-torus:30x20x20,c=2}
groups=${3:-grid3d:40x30x20}
# shellcheck source=bench/lib/smd.sh
. "$(dirname "$0")/lib/smd.sh"
smd_init bench-smd

# field NAME: a number from smd-load's JSON on stdin
field() { sed -n "s/^ *\"$1\": \([-0-9.e+]*\),*$/\1/p"; }

echo "| manager | request loss | joins/s | all Ready s | mean wait s (rank 0's poll) | server's mean wait s | unusable % | retransmissions |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for run in "new 0" "new 0.01" "recompute 0" "recompute 0.01"; do
    set -- $run
    mode=$1 loss=$2
    rm -rf "$work/state"
    extra=
    [ "$mode" = recompute ] && extra=--recompute-each-join
    smd_start "$topo" $extra
    "$netfab" smd-load --server "127.0.0.1:$port" --topo "$topo" --groups "$groups" \
        --loss "$loss" --deadline 900 --json >"$work/out.json"
    smd_stop
    if [ "$run" = "new 0" ]; then # a restart from this journal: every group Ready again
        t0=$(date +%s.%N)
        smd_start "$topo"
        t1=$(date +%s.%N)
        restart="$(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s ($(sed -n 's/.*(\([0-9]*\) records replayed.*/\1/p' "$work/smd.log") records replayed)"
        smd_stop
    fi
    j=$(field joins_per_s <"$work/out.json")
    r=$(field all_ready_s <"$work/out.json")
    w=$(field wait_mean_s <"$work/out.json")
    sw=$(field server_wait_mean_s <"$work/out.json")
    u=$(field unusable_fraction <"$work/out.json")
    t=$(field retransmits <"$work/out.json")
    name="new protocol"
    [ "$mode" = recompute ] && name="--recompute-each-join"
    printf '| %s | %s%% | %.0f | %.2f | %.2f | %.2f | %.1f | %s |\n' "$name" \
        "$(awk "BEGIN{print $loss*100}")" "$j" "$r" "$w" "$sw" "$(awk "BEGIN{print $u*100}")" "$t"
done
echo
echo "Restart from the journal of the first run (all its groups Ready), until listening: $restart"

