#!/bin/sh
# UGAL's sensitivity to its two knobs (issue 6): for every bias in {1, 1.5, 2, 2.5, 3, 4} and
# w_hop in {0, 1, 4} flits, the saturation throughput (the most a sweep accepted, climbing by 0.02
# to its first saturated point) and the mean latency at half of it, for a routing under uniform
# and worst-case traffic on the 72-node Dragonfly, 1-flit packets, 4 VCs of 32 flits.
# Usage: bench/bench_ugal.sh NETFAB [ROUTING]   (default ugal-l)
set -eu
nf=$1 r=${2:-ugal-l}
topo="dragonfly:a=4,p=2,h=2"
common="--vcs 4 --buf 32 --warmup 1000 --cycles 3000 --drain 3000 --json"
field() { sed -n "s/^ *\"$1\": \([-0-9.e+a-z]*\),*$/\1/p"; }
for traffic in uniform worstcase; do
    echo "#### \`$r\`, $traffic: saturation throughput / latency at half of it (cycles)"
    echo
    echo "| bias | w_hop 0 | w_hop 1 | w_hop 4 |"
    echo "|---:|---:|---:|---:|"
    for bias in 1 1.5 2 2.5 3 4; do
        row="| $bias |"
        for w in 0 1 4; do
            best=0 load=0.02
            while :; do
                j=$("$nf" sim --topo "$topo" --routing "$r" --traffic "$traffic" --bias "$bias" \
                    --w-hop "$w" --load "$load" $common)
                acc=$(echo "$j" | field accepted) sat=$(echo "$j" | field saturated)
                best=$(awk "BEGIN{print ($acc > $best) ? $acc : $best}")
                [ "$sat" = true ] && break
                load=$(awk "BEGIN{l = $load + 0.02; print (l > 1.0001) ? \"\" : l}")
                [ -n "$load" ] || break
            done
            half=$(awk "BEGIN{printf \"%.3f\", $best / 2}")
            lat=$("$nf" sim --topo "$topo" --routing "$r" --traffic "$traffic" --bias "$bias" \
                --w-hop "$w" --load "$half" $common | field lat_mean)
            row="$row $(printf '%.3f / %.1f' "$best" "$lat") |"
        done
        echo "$row"
    done
    echo
done
