#!/bin/sh
# SPDX-License-Identifier: MIT
# Where netfab's dfmin uniform saturation parts from BookSim2's on the 72-node Dragonfly
# (docs/results.md, after "BookSim2's router model, at BookSim2's knobs"): the latency and
# accepted load of single points of both, as internal speedup, buffers and channels change, and
# on one router. BookSim2's config is bench_booksim_model.sh's; netfab runs --router-model
# booksim with its knobs (--warmup 3000 --cycles 5000 --drain 5000).
#
# Usage: sh bench/bench_booksim_dfgap.sh NETFAB [BOOKSIM [BOOKSIM_LAT1]]
#   BOOKSIM: a booksim binary built from github.com/booksim/booksim2 (in src/, flex and bison);
#   BOOKSIM_LAT1: the same built with `#define DRAGON_LATENCY` commented out in
#   src/networks/dragonfly.cpp (1-cycle channels). Without them only netfab's column is printed.
set -eu
nf=$1 bs=${2:-} bs1=${3:-}

# nf_pt TOPO LOAD SPEEDUP OPTS...: "latency (accepted)"
nf_pt() {
    topo=$1 l=$2 sp=$3
    shift 3
    "$nf" sim --topo "$topo" --buf 256 --pkt 1 --speedup "$sp" --credit-delay 2 --lat-host 1 \
        --threads 1 --traffic bs-uniform --load "$l" --warmup 3000 --cycles 5000 --drain 5000 \
        --router-model booksim "$@" --json | python3 -c '
import json, sys
p = json.load(sys.stdin)[0]
print("%.1f (%.3f)" % (p["lat_mean"], p["accepted"]))'
}
# df LOAD SPEEDUP [CHANNELS [BUF [OPTS...]]]: CHANNELS 1 for 1-cycle channels, else BookSim's 10 and 100
df() {
    if [ "${3:-}" = 1 ]; then lat="--lat-local 1 --lat-global 1"; else lat="--lat-local 10 --lat-global 100"; fi
    l=$1 sp=$2 buf=${4:-256}
    shift $(($# < 4 ? $# : 4))
    # shellcheck disable=SC2086
    nf_pt dragonfly:a=4,p=2,h=2,arr=consecutive "$l" "$sp" --routing dfmin --vcs 3 $lat \
        --buf "$buf" "$@"
}

# bs_pt BINARY TOPOLOGY-LINES LOAD SPEEDUP VCS BUF: "latency (accepted)" or "unstable"
bs_pt() {
    [ -n "$1" ] || { echo "-"; return; }
    cfg=$(mktemp)
    cat >"$cfg" <<EOC
$2 num_vcs = $5; vc_buf_size = $6;
wait_for_tail_credit = 0; vc_allocator = separable_input_first; alloc_iters = 4;
sw_allocator = separable_input_first; routing_delay = 0; vc_alloc_delay = 1; sw_alloc_delay = 1;
st_final_delay = 1; credit_delay = 2; input_speedup = 1; output_speedup = 1;
internal_speedup = $4; warmup_periods = 3; sample_period = 1000; max_samples = 10;
latency_thres = 500.0; sim_count = 1; priority = none; traffic = uniform; packet_size = 1;
injection_rate_uses_flits = 1; injection_rate = $3; speculative = 0; use_noc_latency = 0;
EOC
    "$1" "$cfg" 2>&1 | awk '
        /unstable/ { u = 1 }
        /Packet latency average =/ { lat = $5 }
        /Accepted flit rate average =/ { acc = $6 }
        END { if (u) print "unstable"; else printf "%.1f (%.3f)\n", lat, acc }'
    rm -f "$cfg"
}
dfb() { bs_pt "${4:-$bs}" "topology = dragonflynew; k = 2; n = 1; routing_function = min;" \
    "$1" "$2" 3 "${3:-256}"; }

printf '| case | BookSim2 latency (accepted) | netfab latency (accepted) |\n|---|---:|---:|\n'
for p in "1.7 0.7" "1.7 0.75" "2.0 0.75" "2.0 0.8" "1.0 0.4" "1.0 0.42" "1.0 0.45"; do
    # shellcheck disable=SC2086
    set -- $p
    echo "| speedup $1, load $2 | $(dfb "$2" "$1") | $(df "$2" "$1") |"
done
for l in 0.65 0.68; do
    echo "| buffers of 128, speedup 1.7, load $l | $(dfb $l 1.7 128) | $(df $l 1.7 std 128) |"
done
for p in "1.7 0.05" "1.7 0.7" "1.0 0.05" "2.0 0.05"; do
    # shellcheck disable=SC2086
    set -- $p
    echo "| 1-cycle channels, speedup $1, load $2 | $([ -n "$bs1" ] && dfb "$2" "$1" 256 "$bs1" || echo -) | $(df "$2" "$1" 1) |"
done
for o in "--inject-vc rr" "--eject-vc any"; do
    # shellcheck disable=SC2086
    echo "| speedup 1.0, load 0.4, netfab with $o | - | $(df 0.4 1.0 std 256 $o) |"
done
echo "| one router of 4 ports, 2 VCs, speedup 1, load 0.6 | $(bs_pt "$bs" \
    "topology = fly; k = 4; n = 1; routing_function = dest_tag; alloc_iters = 1;" 0.6 1.0 2 256) \
| $(nf_pt torus:1,c=4 0.6 1.0 --routing minhop --vcs 2 --alloc-iters 1) |"
