#!/bin/sh
# SPDX-License-Identifier: MIT
# UGAL's sensitivity to its two knobs (issue 6): for every bias in {1, 1.5, 2, 2.5, 3, 4} and
# w_hop in {0, 1, 4} flits, the saturation throughput and the mean latency at half of it, for a
# routing under uniform and worst-case traffic, 4 VCs of 32 flits.
# The saturation load is found by bisection on the run's `saturated` flag over [0, 1] to 1/128;
# the saturation throughput is the most accepted by the unsaturated runs and by the lowest
# saturated one (what a climbing sweep that stops at its first saturated point would report).
# Usage: bench/bench_ugal.sh NETFAB [ROUTING [TOPO [PACKET_FLITS]]]
#        (defaults: ugal-l, dragonfly:a=4,p=2,h=2, 1)
set -eu
nf=$1 r=${2:-ugal-l} topo=${3:-dragonfly:a=4,p=2,h=2} pkt=${4:-1}
common="--vcs 4 --buf 32 --pkt $pkt --warmup 1000 --cycles 3000 --drain 3000 --json"
field() { sed -n "s/^ *\"$1\": \([-0-9.e+a-z]*\),*$/\1/p"; }
for traffic in uniform worstcase; do
    echo "#### \`$r\`, \`$topo\`, $pkt-flit packets, $traffic: saturation throughput / latency at half of it (cycles)"
    echo
    echo "| bias | w_hop 0 | w_hop 1 | w_hop 4 |"
    echo "|---:|---:|---:|---:|"
    for bias in 1 1.5 2 2.5 3 4; do
        row="| $bias |"
        for w in 0 1 4; do
            lo=0 hi=1 best=0 satacc=-1 i=0
            while [ $i -lt 7 ]; do
                load=$(awk "BEGIN{print ($lo + $hi) / 2}")
                j=$("$nf" sim --topo "$topo" --routing "$r" --traffic "$traffic" --bias "$bias" \
                    --w-hop "$w" --load "$load" $common)
                acc=$(echo "$j" | field accepted) sat=$(echo "$j" | field saturated)
                if [ "$sat" = true ]; then
                    hi=$load satacc=$acc
                else
                    lo=$load best=$(awk "BEGIN{print ($acc > $best) ? $acc : $best}")
                fi
                i=$((i + 1))
            done
            # the lowest saturated run is at hi (when none saturated, hi is 1 and satacc -1)
            best=$(awk "BEGIN{print ($satacc > $best) ? $satacc : $best}")
            half=$(awk "BEGIN{printf \"%.3f\", $best / 2}")
            lat=$("$nf" sim --topo "$topo" --routing "$r" --traffic "$traffic" --bias "$bias" \
                --w-hop "$w" --load "$half" $common | field lat_mean)
            row="$row $(printf '%.3f / %.1f' "$best" "$lat") |"
        done
        echo "$row"
    done
    echo
done
