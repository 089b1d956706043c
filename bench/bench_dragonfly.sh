#!/bin/sh
# SPDX-License-Identifier: MIT
# Dragonfly adaptive routing (issues 6 and 18): latency-throughput sweeps for every routing under
# uniform and worst-case traffic, 1-flit and 4-flit packets; a table on stdout (markdown) of each
# routing's saturation throughput and its mean latency at half of it, the sweeps as CSV and, when
# gnuplot is there, one PNG per (fabric, packet size, traffic) in OUT.
# Each sweep climbs (0.01 to 0.05 by 0.01, then by 0.05 to 1) and stops at its first saturated
# point (BookSim's way); the saturation throughput is the most any point accepted; the latency at
# half of it is one more run at that load.
# Usage: bench/bench_dragonfly.sh NETFAB OUT [quick]   (quick: the 72-node Dragonfly only)
set -eu
nf=$1 out=$2 quick=${3:-}
mkdir -p "$out"
topos="dragonfly:a=4,p=2,h=2"
[ "$quick" = quick ] || topos="$topos dragonfly:a=8,p=4,h=4"
routings="dfmin val ugal-l ugal-g par qadapt-nf"
loads="0.01 0.02 0.03 0.04 0.05 $(awk 'BEGIN { for (l = 0.1; l < 1.0001; l += 0.05) printf "%.2f ", l }')"
common="--vcs 4 --buf 32 --warmup 1000 --cycles 3000 --drain 3000 --json"
field() { sed -n "s/^ *\"$1\": \([-0-9.e+a-z]*\),*$/\1/p"; }
echo "| fabric | packet flits | traffic | $(echo $routings | sed 's/ / | /g') | qadapt-nf at val's half |"
echo "|---|---:|---|$(for r in $routings; do printf -- '---:|'; done)---:|"
for topo in $topos; do
    tag=$(echo "$topo" | sed 's/dragonfly:a=\([0-9]*\),p=\([0-9]*\),h=\([0-9]*\)/a\1p\2h\3/')
    for pkt in 1 4; do
        for traffic in uniform worstcase; do
            csv="$out/$tag-pkt$pkt-$traffic.csv"
            echo "routing,offered,accepted,lat_mean,minimal_frac,saturated" >"$csv"
            row="| \`$topo\` | $pkt | $traffic |"
            for r in $routings; do
                best=0
                for load in $loads; do
                    j=$("$nf" sim --topo "$topo" --routing "$r" --traffic "$traffic" --pkt "$pkt" \
                        --load "$load" $common)
                    acc=$(echo "$j" | field accepted) lat=$(echo "$j" | field lat_mean)
                    off=$(echo "$j" | field offered) sat=$(echo "$j" | field saturated)
                    mf=$(echo "$j" | field minimal_frac)
                    echo "$r,$off,$acc,$lat,$mf,$sat" >>"$csv"
                    best=$(awk "BEGIN{print ($acc > $best) ? $acc : $best}")
                    [ "$sat" = true ] && break
                done
                half=$(awk "BEGIN{printf \"%.3f\", $best / 2}")
                hl=$("$nf" sim --topo "$topo" --routing "$r" --traffic "$traffic" --pkt "$pkt" \
                    --load "$half" $common | field lat_mean)
                row="$row $(printf '%.3f / %.1f' "$best" "$hl") |"
                [ "$r" = val ] && valhalf=$half
            done
            # the aim under the worst case: qadapt-nf's latency below val's at half val's saturation
            if [ "$traffic" = worstcase ]; then
                ql=$("$nf" sim --topo "$topo" --routing qadapt-nf --traffic "$traffic" --pkt "$pkt" \
                    --load "$valhalf" $common | field lat_mean)
                row="$row $(printf '%.1f' "$ql") |"
            else
                row="$row - |"
            fi
            echo "$row"
            if command -v gnuplot >/dev/null 2>&1; then
                plot="plot"
                for r in $routings; do
                    plot="$plot '< grep ^$r, $csv' using 3:4 with linespoints title '$r',"
                done
                # BookSim2's curves on the same fabric, when bench_booksim_dragonfly.sh left them
                bcsv="$out/booksim-$tag-pkt$pkt-$traffic.csv"
                if [ -f "$bcsv" ]; then
                    for r in $(tail -n +2 "$bcsv" | cut -d, -f1 | sort -u); do
                        plot="$plot '< grep ^$r, $bcsv' using 3:4 with linespoints dt 2 title '$r',"
                    done
                fi
                gnuplot <<EOF
set terminal pngcairo size 720,480 noenhanced
set output '$out/$tag-pkt$pkt-$traffic.png'
set datafile separator ','
set title '$topo, $traffic, $pkt-flit packets, 4 VCs x 32 flits'
set xlabel 'accepted load (flits per endpoint per cycle)'
set ylabel 'mean packet latency (cycles)'
set logscale y
set key top left
set grid
${plot%,}
EOF
                if [ "$traffic" = worstcase ]; then # UGAL-L's latency below saturation, linear
                    zoom="plot"
                    for r in val ugal-l par ugal-g qadapt-nf; do
                        zoom="$zoom '< grep ^$r, $csv' using 3:4 with linespoints title '$r',"
                    done
                    gnuplot <<EOF
set terminal pngcairo size 720,480 noenhanced
set output '$out/$tag-pkt$pkt-$traffic-zoom.png'
set datafile separator ','
set title '$topo, $traffic, $pkt-flit packets: latency below saturation'
set xlabel 'accepted load (flits per endpoint per cycle)'
set ylabel 'mean packet latency (cycles)'
set yrange [0:100]
set key top left
set grid
${zoom%,}
EOF
                fi
            fi
        done
    done
done
