#!/bin/sh
# SPDX-License-Identifier: MIT
# The simulator (part of `make bench`): agreement with BookSim2's dragonfly example, then speed.
# Knobs of BookSim2's src/examples/dragonflyconfig: 2 VCs, 256-flit VC buffers, 10-flit packets,
# internal speedup 2.0, local channels 10 cycles, global 100, minimal routing, uniform traffic.
# Set BOOKSIM=/path/to/booksim (built from its repository, outside this project) to run BookSim2
# on the same points beside us (agreement rows, and its speed: at k=4 about 11 minutes a point);
# BOOKSIM_BIG=1 also times it on the paper Dragonfly (k=9) over one warm-up and one sample
# period of 300 cycles (its speed only: its figures over so short a run mean little).
# Usage: bench/bench_sim.sh NETFAB
set -eu
nf=$1
knobs="--routing dfmin --traffic uniform --vcs 2 --buf 256 --pkt 10 --lat-local 10 --lat-global 100"
field() { sed -n "s/^ *\"$1\": \([-0-9.e+a-z]*\),*$/\1/p" | head -1; }
# booksim K SPEEDUP LOAD [WARMUP_PERIODS SAMPLE_PERIOD MAX_SAMPLES]: BookSim2's dragonflynew
# with k=K (p=K, a=2K, h=K) and the knobs above (3 warm-up periods of 10,000 cycles, its default
# 10 samples at most); its output on stdout
booksim() {
    cfg=$(mktemp)
    printf 'topology = dragonflynew; k = %s; n = 1; routing_function = min; num_vcs = 2;\nvc_buf_size = 256; wait_for_tail_credit = 0; vc_allocator = separable_input_first;\nsw_allocator = separable_input_first; alloc_iters = 1; credit_delay = 2; routing_delay = 0;\nvc_alloc_delay = 1; sw_alloc_delay = 1; st_final_delay = 1; input_speedup = 1;\noutput_speedup = 1; internal_speedup = %s.0; warmup_periods = %s; sim_count = 1;\nsample_period = %s; max_samples = %s; priority = none; traffic = uniform; packet_size = 10;\ninjection_rate_uses_flits = 1; injection_rate = %s;\n' "$1" "$2" "${4:-3}" "${5:-10000}" "${6:-10}" "$3" >"$cfg"
    "$BOOKSIM" "$cfg" 2>&1 || true
    rm -f "$cfg"
}

echo "### Agreement: 72-node Dragonfly (p=2, a=4, h=2), BookSim2's example knobs"
echo
echo "| speedup | offered | netfab accepted | netfab latency | BookSim2 accepted | BookSim2 latency |"
echo "|---:|---:|---:|---:|---:|---:|"
for sp in 2 1; do
    for load in 0.3 0.5 0.7 0.8 0.9 0.95; do
        [ "$sp" = 1 ] && [ "$load" = 0.9 -o "$load" = 0.95 ] && continue
        out=$("$nf" sim --topo dragonfly:a=4,p=2,h=2 $knobs --speedup $sp --load $load \
            --warmup 3000 --cycles 10000 --json)
        acc=$(echo "$out" | field accepted); lat=$(echo "$out" | field lat_mean)
        sat=$(echo "$out" | field saturated)
        bacc=-; blat=-
        if [ -n "${BOOKSIM:-}" ]; then
            bo=$(booksim 2 "$sp" "$load")
            bacc=$(echo "$bo" | sed -n 's/.*Accepted flit rate average *= *\([0-9.]*\).*/\1/p' | tail -1)
            blat=$(echo "$bo" | sed -n 's/.*Packet latency average *= *\([0-9.]*\).*/\1/p' | tail -1)
            echo "$bo" | grep -q unstable && blat="$blat (unstable)"
        fi
        lat=$(printf '%.1f' "$lat")
        [ "$sat" = true ] && lat="$lat (saturated)"
        printf '| %s | %s | %.3f | %s | %s | %s |\n' "$sp" "$load" "$acc" "$lat" "$bacc" "$blat"
    done
done
echo
echo "### Speed: simulated cycles and flit-hops per second (uniform, dfmin, the knobs above)"
echo
echo "| fabric | endpoints | load | cycles | wall s | cycles/s | flit-hops/s | peak RSS MiB | BookSim2 cycles/s |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
run() {
    topo=$1 eps=$2 load=$3 warm=$4 win=$5 k=$6 extra=${7:-}
    /usr/bin/time -f '%M' -o /tmp/nf-bench-rss "$nf" sim --topo "$topo" $knobs --speedup 2 \
        --load "$load" --warmup "$warm" --cycles "$win" $extra --json >/tmp/nf-bench-sim.json
    c=$(field cycles </tmp/nf-bench-sim.json); w=$(field wall_s </tmp/nf-bench-sim.json)
    fh=$(field flit_hops </tmp/nf-bench-sim.json)
    bk=-
    if [ -n "${BOOKSIM:-}" ] && [ "$k" != - ]; then # its cycles over its wall time
        t0=$(date +%s.%N)
        bc=$(booksim "$k" 2 "$load" ${bsargs:-} | sed -n 's/^Time taken is \([0-9]*\) cycles.*/\1/p' | tail -1)
        t1=$(date +%s.%N)
        bk=$(awk "BEGIN{printf \"%.0f\", $bc / ($t1 - $t0)}")
    fi
    printf '| `%s` | %s | %s | %s | %.2f | %.0f | %.3g | %.0f | %s |\n' "$topo" "$eps" "$load" "$c" \
        "$w" "$(awk "BEGIN{print $c/$w}")" "$(awk "BEGIN{print $fh/$w}")" \
        "$(awk "BEGIN{print $(cat /tmp/nf-bench-rss)/1024}")" "$bk"
}
run dragonfly:a=4,p=2,h=2 72 0.3 3000 10000 2
run dragonfly:a=4,p=2,h=2 72 0.8 3000 10000 2
run dragonfly:a=8,p=4,h=4 1056 0.3 3000 10000 4
run dragonfly:a=8,p=4,h=4 1056 0.8 3000 10000 4
if [ "${SIM_BIG:-1}" = 1 ]; then # BookSim2 only with BOOKSIM_BIG=1, over a short run
    kb=-; [ "${BOOKSIM_BIG:-0}" = 1 ] && kb=9
    bsargs="1 300 1" run dragonfly:a=18,p=9,h=9 26406 0.5 0 10000 $kb "--drain 1"
fi
rm -f /tmp/nf-bench-rss /tmp/nf-bench-sim.json
