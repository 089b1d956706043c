#!/bin/sh
# SPDX-License-Identifier: MIT
# BookSim2's latency-throughput curves on the 72-node Dragonfly (p=2, a=4, h=2), beside
# bench_dragonfly.sh's: its two Dragonfly routings (min, ugal) under uniform traffic and its
# Dragonfly adversary, 1-flit and 4-flit packets. Writes OUT/booksim-a4p2h2-pkt{1,4}-{uniform,
# worstcase}.csv (routing,offered,accepted,lat_mean,saturated; routings booksim-min and
# booksim-ugal) and prints a markdown table of saturation throughput (the most any point of a
# sweep accepted, flits per endpoint per cycle). BOOKSIM is a booksim binary built from its
# repository (github.com/booksim/booksim2), outside this project.
# Usage: sh bench/bench_booksim_dragonfly.sh BOOKSIM OUT
#
# Fabric: topology dragonflynew with k=2 (src/networks/dragonfly.cpp: p = k terminals and h = k
# global ports per router, a = 2k routers per group, g = a*h + 1 = 9 groups, 72 nodes, one
# global link between every two groups). Traffic: uniform (BookSim's may pick the source itself,
# 1 time in 72; ours never does) and bad_dragon, which we call worstcase: a source in group i
# (nodes 8i..8i+7) sends to a uniformly random node of group (i + 1) mod 9, as netfab's worstcase.
#
# BookSim's UGAL (ugal_dragonflynew) decides once, at the source router, and only for a packet
# bound to another group: it draws a random node of the whole network as the intermediate (when
# that node is in the source group the packet goes minimally) and compares two numbers, the used
# credits of the minimal output port and of the output port towards the intermediate. A used
# credit is a flit sent to the next router whose credit has not come back: flits on the wire,
# in the next router's input buffer over all its VCs, and credits in flight. It goes minimally
# when q_min <= 2 * q_nonmin + 30: a fixed factor of 2 stands in for the hop ratio (hop counts
# themselves do not enter) and a fixed 30 flits biases it towards minimal; netfab's UGAL-L scales
# with --bias and counts hops by --w-hop. A non-minimal packet first travels to the intermediate
# node's router (so it may take two local hops in the intermediate group, netfab only one), on
# VC 0; from there (a minimal one from the start) on VC 1 until it takes a global link, then
# VC 2. ugal therefore needs exactly 3 VCs (the code asserts num_vcs == 3); min needs 2 (VC 0
# before the global hop, VC 1 after) and leaves any others unused beyond the injection channel.
#
# Knobs (netfab: --vcs 4 --buf 32 --warmup 1000 --cycles 3000 --drain 3000, router delay 3,
# credit delay 2, 1-cycle links, speedup 1, one allocator iteration) and where BookSim differs:
# - Stock dragonflynew hard-codes 10-cycle local and 100-cycle global channels (the
#   DRAGON_LATENCY define in dragonfly.cpp); no config knob changes them. For netfab's 1-cycle
#   links build BookSim with that #define removed (docs/img/dragonfly's CSVs come from such a
#   build); the script warns on stderr when the zero-load latency betrays the stock channels.
# - num_vcs 4 for min (only VC 0 and 1 carry it between routers; netfab's dfmin spreads its two
#   classes over VCs 0-1 and 2-3), 3 for ugal (netfab's ugal-l: classes on VCs 0, 1, 2-3);
#   vc_buf_size 32; internal_speedup 1; separable_input_first VC and switch allocators,
#   alloc_iters 1; BookSim's output buffers are unbounded (netfab's 32 flits; at speedup 1 they
#   hardly fill); BookSim injects on a random VC, netfab on VC 0.
# - Timing: routing_delay 0 (lookahead routing: the route, and UGAL's choice, are made as the
#   head leaves the previous router or the NIC), vc_alloc_delay 1, sw_alloc_delay 1,
#   st_final_delay 1: with the 1-cycle channel a hop costs 4 cycles, as netfab's router delay 3
#   plus its link; credit_delay 2 plus the 1-cycle credit channel, taken here as netfab's credit
#   delay 2 plus its link (under --router-model booksim's stage timing the packet-by-packet
#   replay found BookSim2's 2 to be netfab's 3: docs/results.md, "Packet by packet"). BookSim's
#   zero-load latency still comes out about 1 cycle higher. Its
#   non-speculative pipeline lets an input VC start a new packet only after the previous tail
#   has left, then spends a VC-allocation and a switch-allocation cycle on it: a VC sends at most
#   one 1-flit packet every 2 cycles (4-flit: 4 flits in 5), where netfab's VCs send back to
#   back, so we run it with speculative = 1 (VC and switch allocation in the same cycle), which
#   is the closer model; SPECULATIVE=0 in the environment gives the other.
# - Run: warmup_periods 1 of sample_period 1000 cycles (netfab's 1000-cycle warm-up), then sample
#   periods of 1000 until three in a row change latency and throughput by under 5%: at least 3000
#   measured cycles (netfab's window), at most 9000 (max_samples 10 counts the warm-up); then it
#   drains every measured packet. A point takes about a second. BookSim calls a run unstable
#   when the mean latency passes latency_thres (500 cycles) or it does not converge; we call a
#   point saturated then, or when it accepts under 95% of the offered load (netfab's rule).
#   offered is the injection rate asked for; accepted and lat_mean (packet latency from creation,
#   source queueing included) are the last BookSim reports: its overall figures for a stable
#   run, the last sample period's for an unstable one. Each sweep climbs 0.01..0.05 by 0.01,
#   then 0.10..1.00 by 0.05, and stops at its first saturated point.
set -eu
bs=$1 out=$2
mkdir -p "$out"
loads="0.01 0.02 0.03 0.04 0.05"
loads="$loads $(awk 'BEGIN { for (l = 0.1; l < 1.0001; l += 0.05) printf "%.2f ", l }')"
# booksim ROUTING VCS TRAFFIC PKT LOAD: one BookSim run on the fabric above; its output on stdout
booksim() {
    cfg=$(mktemp)
    cat >"$cfg" <<EOF
topology = dragonflynew; k = 2; n = 1; routing_function = $1; num_vcs = $2; vc_buf_size = 32;
wait_for_tail_credit = 0; vc_allocator = separable_input_first; alloc_iters = 1;
sw_allocator = separable_input_first; routing_delay = 0; vc_alloc_delay = 1; sw_alloc_delay = 1;
st_final_delay = 1; credit_delay = 2; input_speedup = 1; output_speedup = 1;
internal_speedup = 1.0; warmup_periods = 1; sample_period = 1000; max_samples = 10;
latency_thres = 500.0; sim_count = 1; priority = none; traffic = $3; packet_size = $4;
injection_rate_uses_flits = 1; injection_rate = $5; speculative = ${SPECULATIVE:-1};
EOF
    "$bs" "$cfg" 2>&1 || true # its status: 255 for a stable run, 0 for an unstable one
    rm -f "$cfg"
}
last() { sed -n "s/.*$1 *= *\([-0-9.e+]*\).*/\1/p" | tail -1; }
warned=
echo "| packet flits | traffic | booksim-min | booksim-ugal |"
echo "|---:|---|---:|---:|"
for pkt in 1 4; do
    for traffic in uniform worstcase; do
        bt=$traffic
        [ "$traffic" = worstcase ] && bt=bad_dragon
        csv="$out/booksim-a4p2h2-pkt$pkt-$traffic.csv"
        echo "routing,offered,accepted,lat_mean,saturated" >"$csv"
        row="| $pkt | $traffic |"
        for r in min ugal; do
            vcs=4
            [ "$r" = ugal ] && vcs=3
            best=0
            for load in $loads; do
                o=$(booksim "$r" "$vcs" "$bt" "$pkt" "$load")
                acc=$(echo "$o" | last 'Accepted flit rate average')
                lat=$(echo "$o" | last 'Packet latency average')
                if [ -z "$acc" ] || [ -z "$lat" ]; then
                    echo "booksim failed ($r, $bt, $pkt-flit packets, load $load):" >&2
                    echo "$o" | tail -5 >&2
                    exit 1
                fi
                sat=false
                echo "$o" | grep -q -e unstable -e 'Too many sample periods' && sat=true
                awk "BEGIN { exit !($acc < 0.95 * $load) }" && sat=true
                if [ -z "$warned" ] && awk "BEGIN { exit !($load <= 0.01 && $lat > 60) }"; then
                    echo "warning: $lat cycles at load $load: this BookSim keeps dragonflynew's" \
                        "10/100-cycle channels (DRAGON_LATENCY)" >&2
                    warned=1
                fi
                echo "booksim-$r,$load,$acc,$lat,$sat" >>"$csv"
                best=$(awk "BEGIN { print ($acc > $best) ? $acc : $best }")
                [ "$sat" = true ] && break
            done
            row="$row $(printf '%.3f' "$best") |"
        done
        echo "$row"
    done
done
