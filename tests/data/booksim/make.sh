#!/bin/sh
# SPDX-License-Identifier: MIT
# Remakes points.tsv: BookSim2's figures for tests/e2e/booksim.sh (see README.md).
# Usage: sh tests/data/booksim/make.sh BOOKSIM > tests/data/booksim/points.tsv
set -eu
bs=$1
printf 'topology\tk\tn\trouting\ttraffic\tpkt\tload\tsim_type\taccepted\tlat_mean\n'
while read -r topo k n routing traffic pkt load type; do
    period=1000
    [ "$load" = 0.005 ] && period=100000 # a long sample at zero load: BookSim2 stops at one
    cfg=$(mktemp)
    cat >"$cfg" <<CFG
topology = $topo; k = $k; n = $n; routing_function = $routing; num_vcs = 2; vc_buf_size = 8;
wait_for_tail_credit = 0; vc_allocator = separable_input_first; alloc_iters = 1;
sw_allocator = separable_input_first; routing_delay = 0; vc_alloc_delay = 1; sw_alloc_delay = 1;
st_final_delay = 1; credit_delay = 2; input_speedup = 1; output_speedup = 1;
internal_speedup = 1.0; warmup_periods = 3; sample_period = $period; max_samples = 10;
latency_thres = 500.0; sim_count = 1; priority = none; packet_size = $pkt; use_noc_latency = 0;
injection_rate_uses_flits = 1; speculative = 0; traffic = $traffic; injection_rate = $load;
sim_type = $type;
CFG
    o=$("$bs" "$cfg" 2>&1 || true)
    rm -f "$cfg"
    acc=$(echo "$o" | sed -n 's/.*Accepted flit rate average *= *\([-0-9.e+]*\).*/\1/p' | tail -1)
    lat=$(echo "$o" | sed -n 's/.*Packet latency average *= *\([-0-9.e+]*\).*/\1/p' | tail -1)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$topo" "$k" "$n" "$routing" "$traffic" \
        "$pkt" "$load" "$type" "$acc" "$lat"
done <<CASES
torus 8 2 dim_order uniform 1 0.005 latency
torus 8 2 dim_order uniform 1 0.3 latency
torus 8 2 dim_order uniform 1 0.9 throughput
torus 8 2 dim_order uniform 4 0.005 latency
torus 8 2 dim_order uniform 4 0.25 latency
torus 8 2 dim_order tornado 1 0.005 latency
torus 8 2 dim_order tornado 1 0.1 latency
torus 8 2 dim_order tornado 1 0.9 throughput
torus 8 2 dim_order transpose 1 0.1 latency
torus 8 2 dim_order bitrev 1 0.08 latency
torus 8 2 dim_order shuffle 1 0.1 latency
torus 8 2 dim_order neighbor 1 0.4 latency
torus 4 3 dim_order uniform 1 0.005 latency
torus 4 3 dim_order uniform 1 0.5 latency
torus 4 3 dim_order uniform 1 0.9 throughput
fattree 4 3 nca uniform 1 0.005 latency
fattree 4 3 nca uniform 1 0.5 latency
fattree 4 3 nca uniform 1 0.9 throughput
fattree 4 3 nca tornado 1 0.3 latency
fattree 4 3 anca uniform 1 0.005 latency
fattree 4 3 anca uniform 1 0.5 latency
fattree 4 3 anca uniform 1 0.57 latency
fattree 4 3 anca uniform 1 0.9 throughput
CASES
