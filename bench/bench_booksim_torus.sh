#!/bin/sh
# SPDX-License-Identifier: MIT
# netfab against BookSim2 on tori, at BookSim2's knobs: k-ary n-cubes with one endpoint per
# router (BookSim2 torus, dim_order routing: netfab's dor-bs), 2 VCs of 8 flits, separable
# input-first allocators with one pass, routing_delay 0 with vc_alloc_delay, sw_alloc_delay and
# st_final_delay 1, credit delay 2, every channel 1 cycle (BookSim2's use_noc_latency = 0: its
# default gives a torus's channels 2 cycles, see docs/results.md), internal speedup 1.
# netfab runs with --router-model booksim, so --traffic X is BookSim2's pattern (bs-X). Then
# the k-ary n-tree: BookSim2's fattree (k=4, n=3: 64 nodes) with its nca and anca routings
# against netfab's xgft:h=3,m=4.4.4,w=1.4.4 with nca-bs and anca-bs, the same knobs.
#
# Per case, for each simulator (and netfab's own router model, --router-model netfab, on the
# same patterns: zero-load latency and saturation): the zero-load latency (load 0.005, long), the saturation
# throughput (the most any point accepted while climbing a 0.05 grid, then 0.01 steps from the
# last good point, stopping at the first saturated one: BookSim2 unstable, netfab's saturated
# flag, mean latency over 3x zero-load, or accepted under 95% of offered), mean latency at
# 30%, 60% and 90% of BookSim2's saturation load, and the load accepted at offered 0.9 (BookSim2's
# sim_type throughput; netfab's accepted).
#
# Usage: sh bench/bench_booksim_torus.sh NETFAB [BOOKSIM]   (CASES="topo,traffic,pkt ..." to
# choose: topo 8x8 or 4x4x4 and the like for a torus, nca:4.3 or anca:4.3 for the tree)
set -eu
nf=$1 bs=${2:-}
cases=${CASES:-"8x8,uniform,1 8x8,uniform,4 8x8,tornado,1 8x8,neighbor,1 8x8,transpose,1
8x8,bitcomp,1 8x8,bitrev,1 8x8,shuffle,1 8x8,randperm,1 4x4x4,uniform,1 4x4x4,tornado,1
nca:4.3,uniform,1 anca:4.3,uniform,1 nca:4.3,uniform,4 nca:4.3,bitrev,1"}

# topo_of TOPO: netfab's --topo and --routing, then BookSim2's topology, k, n and routing
topo_of() {
    case $1 in
    *:*)
        r=${1%%:*} k=${1#*:}
        n=${k#*.} k=${k%%.*}
        m=$k w=1 i=1
        while [ $i -lt "$n" ]; do m="$m.$k" w="$w.$k" i=$((i + 1)); done
        echo "xgft:h=$n,m=$m,w=$w $r-bs fattree $k $n $r"
        ;;
    *) echo "torus:$1,c=1 dor-bs torus ${1%%x*} $(echo "$1" | tr x '\n' | wc -l) dim_order" ;;
    esac
}

# nf_point DIMS TRAFFIC PKT LOAD [CYCLES]: "accepted lat_mean saturated(0/1)" (MODEL: the
# router model, booksim unless set; with netfab, BookSim2's pattern is named bs-TRAFFIC)
nf_point() {
    t=$2
    [ "${MODEL:-booksim}" = netfab ] && t=bs-$2
    set -- $(topo_of "$1") "$t" "$3" "$4" "${5:-10000}"
    "$nf" sim --topo "$1" --routing "$2" --router-model "${MODEL:-booksim}" --vcs 2 --buf 8 \
        --pkt "${8}" --threads 1 --traffic "$7" --load "$9" --warmup 3000 --cycles "${10}" \
        --drain 10000 --json | python3 -c '
import json, sys
p = json.load(sys.stdin)[0]
print(p["accepted"], p["lat_mean"], int(p["saturated"]))'
}

# bs_point DIMS TRAFFIC PKT LOAD [CONFIG]: "accepted lat_mean unstable(0/1)"
bs_point() {
    set -- $(topo_of "$1") "$2" "$3" "$4" "${5:-}"
    cfg=$(mktemp)
    cat >"$cfg" <<EOF
topology = $3; k = $4; n = $5; routing_function = $6; num_vcs = 2; vc_buf_size = 8;
wait_for_tail_credit = 0; vc_allocator = separable_input_first; alloc_iters = 1;
sw_allocator = separable_input_first; routing_delay = 0; vc_alloc_delay = 1; sw_alloc_delay = 1;
st_final_delay = 1; credit_delay = 2; input_speedup = 1; output_speedup = 1;
internal_speedup = 1.0; warmup_periods = 3; sample_period = 1000; max_samples = 10;
latency_thres = 500.0; sim_count = 1; priority = none; packet_size = $8; use_noc_latency = 0;
injection_rate_uses_flits = 1; speculative = 0; traffic = $7; injection_rate = $9; ${10}
EOF
    o=$("$bs" "$cfg" 2>&1 || true) # its status: 255 for a stable run, 0 for an unstable one
    rm -f "$cfg"
    acc=$(echo "$o" | sed -n 's/.*Accepted flit rate average *= *\([-0-9.e+]*\).*/\1/p' | tail -1)
    lat=$(echo "$o" | sed -n 's/.*Packet latency average *= *\([-0-9.e+]*\).*/\1/p' | tail -1)
    uns=0
    echo "$o" | grep -q -e unstable -e 'Too many sample periods' && uns=1
    [ -z "$acc" ] && acc=0 lat=1e9 uns=1
    echo "$acc $lat $uns"
}

point() { if [ "$1" = nf ]; then shift; nf_point "$@"; else shift; bs_point "$@"; fi; }

# saturation WHO DIMS TRAFFIC PKT ZERO: the most accepted before the first saturated point
saturation() {
    who=$1 d=$2 t=$3 p=$4 z=$5 best=0 good=0
    for step in 0.05 0.01; do
        l=$(awk "BEGIN { printf \"%.2f\", $good + $step }")
        while awk "BEGIN { exit !($l <= 1.0001) }"; do
            set -- $(point "$who" "$d" "$t" "$p" "$l")
            acc=$1 lat=$2 sat=$3
            awk "BEGIN { exit !($lat > 3 * $z || $acc < 0.95 * $l) }" && sat=1
            [ "$sat" = 1 ] && break
            best=$(awk "BEGIN { print ($acc > $best) ? $acc : $best }")
            good=$l
            l=$(awk "BEGIN { printf \"%.2f\", $l + $step }")
        done
    done
    printf '%.3f %.2f' "$best" "$good"
}

pct() { awk "BEGIN { if ($2 == 0) print \"-\"; else printf \"%+.1f%%\", 100 * ($1 - $2) / $2 }"; }

echo "| fabric | traffic | flits | zero-load netfab / BookSim2 | saturation netfab / BookSim2 | lat 30% / 60% / 90% of sat., netfab vs BookSim2 | accepted at 0.9, netfab / BookSim2 | netfab's own router: zero-load, saturation |"
echo "|---|---|---:|---:|---:|---|---:|---:|"
for c in $cases; do
    d=${c%%,*} r=${c#*,}
    t=${r%%,*} p=${r#*,}
    zn=$(nf_point "$d" "$t" "$p" 0.005 100000 | cut -d' ' -f2)
    sn=$(saturation nf "$d" "$t" "$p" "$zn")
    an=$(nf_point "$d" "$t" "$p" 0.9 | cut -d' ' -f1)
    zo=$(MODEL=netfab nf_point "$d" "$t" "$p" 0.005 100000 | cut -d' ' -f2)
    so=$(MODEL=netfab saturation nf "$d" "$t" "$p" "$zo")
    own=$(printf '%.2f, %.3f' "$zo" "${so% *}")
    if [ -z "$bs" ]; then
        printf '| %s | %s | %s | %.2f / - | %.3f / - | - | %.3f / - | %s |\n' "$d" "$t" "$p" "$zn" \
            "${sn% *}" "$an" "$own"
        continue
    fi
    zb=$(bs_point "$d" "$t" "$p" 0.005 "sample_period = 100000;" | cut -d' ' -f2)
    sb=$(saturation bs "$d" "$t" "$p" "$zb")
    ab=$(bs_point "$d" "$t" "$p" 0.9 "sim_type = throughput;" | cut -d' ' -f1)
    lats=""
    for f in 0.3 0.6 0.9; do
        l=$(awk "BEGIN { printf \"%.3f\", $f * ${sb#* } }")
        ln=$(nf_point "$d" "$t" "$p" "$l" | cut -d' ' -f2)
        lb=$(bs_point "$d" "$t" "$p" "$l" | cut -d' ' -f2)
        lats="$lats$(printf '%.1f/%.1f (%s) ' "$ln" "$lb" "$(pct "$ln" "$lb")")"
    done
    printf '| %s | %s | %s | %.2f / %.2f (%s) | %.3f / %.3f (%s) | %s| %.3f / %.3f | %s |\n' "$d" \
        "$t" "$p" "$zn" "$zb" "$(pct "$zn" "$zb")" "${sn% *}" "${sb% *}" \
        "$(pct "${sn% *}" "${sb% *}")" "$lats" "$an" "$ab" "$own"
done
