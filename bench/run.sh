#!/bin/sh
# SPDX-License-Identifier: MIT
# `make bench`: the README's benchmark tables. Usage: bench/run.sh BUILD_DIR
set -eu
build=${1:-build}
echo "## Build + all-pairs switch distances (bench_topo)"
"$build/bench_topo" 5
echo
if command -v hyperfine >/dev/null 2>&1; then
    echo "## Whole command, netfab topo --stats, dragonfly a=18 p=9 h=9 (hyperfine)"
    hyperfine -N --warmup 1 --runs 10 --export-markdown /dev/stdout --style none \
        "$build/netfab topo --topo dragonfly:a=18,p=9,h=9" 2>/dev/null | grep '^|'
fi
echo
echo "## Multicast routing: the multicast paper's grid (bench_mcast): max / mean EFI over inter-switch links, routing ms"
"$build/bench_mcast"
echo
echo "## The multicast paper's Dragonfly figure under each open reading (mcast_df_causes.sh): max EFI, switch / host links"
sh "$(dirname "$0")/mcast_df_causes.sh" "$build/netfab"
echo
echo "## Fabrics of 160,000 switches (bench_scale.sh): one thread, time and peak RSS"
sh "$(dirname "$0")/bench_scale.sh" "$build/netfab"
echo
echo "## Reading a subnet manager's forwarding tables (bench_tables.sh)"
sh "$(dirname "$0")/bench_tables.sh" "$build/netfab" "$build/bench_uft"
echo
echo "## Installed multicast tables analysed (bench_mft.sh): 1,000 groups of 8 on fattree:k=16"
sh "$(dirname "$0")/bench_mft.sh" "$build/netfab"
echo
echo "## Multicast group manager under load (bench_smd.sh): 72,000 joins on the 30x20x20 torus"
sh "$(dirname "$0")/bench_smd.sh" "$build/netfab"
echo
echo "## Packet-level simulator (bench_sim.sh)"
sh "$(dirname "$0")/bench_sim.sh" "$build/netfab"
echo
echo "## Dragonfly adaptive routing (bench_dragonfly.sh): saturation throughput / latency at half of it; curves in docs/img/dragonfly"
sh "$(dirname "$0")/bench_dragonfly.sh" "$build/netfab" "$(dirname "$0")/../docs/img/dragonfly"
echo
echo "## Q-adaptive: its knobs, its learning curve, the paper-scale point (bench_qadapt.sh)"
sh "$(dirname "$0")/bench_qadapt.sh" "$build/netfab" "$(dirname "$0")/../docs/img/dragonfly" full
echo
echo "## UGAL's bias and w_hop (bench_ugal.sh)"
for pkt in 1 4; do
    for r in ugal-l ugal-g; do
        sh "$(dirname "$0")/bench_ugal.sh" "$build/netfab" "$r" dragonfly:a=4,p=2,h=2 "$pkt"
    done
done
if [ -n "${BOOKSIM:-}" ]; then
    echo
    echo "## BookSim2 on the 72-node Dragonfly (bench_booksim_dragonfly.sh)"
    sh "$(dirname "$0")/bench_booksim_dragonfly.sh" "$BOOKSIM" "$(dirname "$0")/../docs/img/dragonfly"
fi
echo
echo "## The router model against BookSim2's at its Dragonfly knobs (bench_booksim_model.sh; BookSim2's columns with BOOKSIM set)"
sh "$(dirname "$0")/bench_booksim_model.sh" "$build/netfab" "${BOOKSIM:-}"
if [ -n "${BOOKSIM:-}" ]; then
    echo
    echo "## BookSim2's packets through netfab, packet by packet (bench_booksim_replay.sh)"
    sh "$(dirname "$0")/bench_booksim_replay.sh" "$build/netfab" "$(dirname "$(dirname "$BOOKSIM")")"
fi
echo
echo "## netfab against BookSim2 on tori (bench_booksim_torus.sh; BookSim2's columns with BOOKSIM set)"
sh "$(dirname "$0")/bench_booksim_torus.sh" "$build/netfab" "${BOOKSIM:-}"
echo
echo "## Threads beside a busy process (bench_threads_busy.sh)"
sh "$(dirname "$0")/bench_threads_busy.sh" "$build/netfab"
echo
echo "## Multicast group manager under hostile load (bench_smd_hostile.sh)"
sh "$(dirname "$0")/bench_smd_hostile.sh" "$build/netfab" "$build/nf_smdprobe"
echo
echo "## netfab sweep: 1 process against 2 MPI ranks and 2 threads (bench_sweep.sh)"
sh "$(dirname "$0")/bench_sweep.sh" "$build/netfab"
echo
echo "## Experiments (netfab exp, full; plots in docs/img/exp)"
for e in dual-rail mcast-height mcast-efi mcast-workload collectives tables faults; do
    echo "### $e"
    "$build/netfab" exp "$e" --plot "$(dirname "$0")/../docs/img/exp/$e.png"
done
