#!/bin/sh
# SPDX-License-Identifier: MIT
# Q-adaptive (issue 18), what bench_dragonfly.sh does not show:
#  1. its knobs: saturation throughput on the 72-node Dragonfly, uniform and worst case, 1- and
#     4-flit packets, for the choices docs/qadapt.md weighs (every sweep climbs by 0.05 to its
#     first saturated point; the most any point accepted);
#  2. the learning curve: accepted load, latency and minimal share per 250-cycle window over a
#     run from an empty network (worst case at 0.3 on the 72- and 1,056-node Dragonflies; qadapt-nf,
#     qadapt-nf on its estimates alone (--q-local 0), dfmin and val), as CSV and, with gnuplot, a
#     PNG in OUT;
#  3. with `full`, the paper-scale point: dragonfly:a=18,p=9,h=9, worst case at 0.3, qadapt-nf
#     (local weight 1, 0 and 2) beside par and ugal-g (about a minute each on 2 threads).
# Usage: bench/bench_qadapt.sh NETFAB OUT [full]
set -eu
nf=$1 out=$2 full=${3:-}
mkdir -p "$out"
df="dragonfly:a=4,p=2,h=2"
common="--vcs 4 --buf 32 --warmup 1000 --cycles 3000 --drain 3000 --json"
field() { sed -n "s/^ *\"$1\": \([-0-9.e+a-z]*\),*$/\1/p" | head -1; }
sat() { # TOPO TRAFFIC PKT ROUTING-ARGS...
    topo=$1 traffic=$2 pkt=$3
    shift 3
    best=0
    for load in 0.05 0.1 0.15 0.2 0.25 0.3 0.35 0.4 0.45 0.5 0.55 0.6 0.65 0.7 0.75 0.8 0.85 0.9; do
        j=$("$nf" sim --topo "$topo" --traffic "$traffic" --pkt "$pkt" --load "$load" $common "$@")
        acc=$(echo "$j" | field accepted) s=$(echo "$j" | field saturated)
        best=$(awk "BEGIN{print ($acc > $best) ? $acc : $best}")
        [ "$s" = true ] && break
    done
    printf '%.3f' "$best"
}
echo "#### qadapt-nf's knobs, \`$df\`: saturation throughput"
echo
echo "| knobs | uniform, 1 flit | worst case, 1 flit | uniform, 4 flits | worst case, 4 flits |"
echo "|---|---:|---:|---:|---:|"
knobs() { # LABEL ARGS...
    label=$1
    shift
    row="| $label |"
    for case in "uniform 1" "worstcase 1" "uniform 4" "worstcase 4"; do
        row="$row $(sat "$df" "${case% *}" "${case#* }" --routing qadapt-nf "$@") |"
    done
    echo "$row"
}
knobs "estimates alone: every long way, α 0.5, no threshold" --q-local 0 --q-sample 0 --q-alpha 0.5 --q-threshold 0.001 --q-explore 0
knobs "estimates alone: one long way, α 0.5, no threshold" --q-local 0 --q-alpha 0.5 --q-threshold 0.001 --q-explore 0
knobs "estimates alone: one long way, α 0.2, no threshold" --q-local 0 --q-threshold 0.001 --q-explore 0
knobs "estimates alone (--q-local 0), the other defaults" --q-local 0
knobs "defaults: one long way, α 0.2, threshold a local hop, exploration 0.001, local weight 1"
knobs "defaults, local weight 2" --q-local 2
knobs "defaults, bias 1.25" --q-bias 1.25
knobs "defaults, long ways shut (threshold 1000)" --q-threshold 1000
for r in dfmin ugal-l par; do
    row="| \`$r\` |"
    for case in "uniform 1" "worstcase 1" "uniform 4" "worstcase 4"; do
        row="$row $(sat "$df" ${case% *} ${case#* } --routing "$r") |"
    done
    echo "$row"
done
echo

# the learning curve: every window of a run from an empty network
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
cat >"$rows" <<'PY'
import json, sys
for p in json.load(sys.stdin):
    for w in p["timeline"]:
        print("%s,%d,%.4f,%.4f,%.2f,%.4f,%d" % (sys.argv[1], w["cycle"], w["offered"],
              w["accepted"], w["lat_mean"], w["minimal_frac"], w["packets"]))
PY
for topo in "$df" dragonfly:a=8,p=4,h=4; do
    tag=$(echo "$topo" | sed 's/dragonfly:a=\([0-9]*\),p=\([0-9]*\),h=\([0-9]*\)/a\1p\2h\3/')
    csv="$out/learning-$tag-worstcase.csv"
    echo "routing,cycle,offered,accepted,lat_mean,minimal_frac,packets" >"$csv"
    for r in qadapt-nf "qadapt-nf --q-local 0" dfmin val; do
        name=$(echo "$r" | sed 's/qadapt-nf --q-local 0/qadapt-estimates/')
        "$nf" sim --topo "$topo" --routing $r --traffic worstcase --load 0.3 --vcs 4 --warmup 0 \
            --cycles 6000 --drain 2000 --timeline 250 --json | python3 "$rows" "$name" >>"$csv"
    done
    echo "learning curve, \`$topo\`, worst case at 0.3: $csv"
    if command -v gnuplot >/dev/null 2>&1; then
        gnuplot <<EOF
set terminal pngcairo size 720,720 noenhanced
set output '$out/learning-$tag-worstcase.png'
set datafile separator ','
set multiplot layout 2,1 title '$topo, worst case at 0.3 from an empty network, 250-cycle windows'
set ylabel 'mean packet latency (cycles)'
set logscale y
set key top right
set grid
plot for [r in 'qadapt-nf qadapt-estimates dfmin val'] '< grep ^'.r.', $csv' using 2:5 with lines title r
unset logscale y
set ylabel 'accepted (flits per endpoint per cycle)'
set xlabel 'cycle'
plot for [r in 'qadapt-nf qadapt-estimates dfmin val'] '< grep ^'.r.', $csv' using 2:4 with lines title r
unset multiplot
EOF
    fi
done
echo

if [ "$full" = full ]; then
    echo "#### The paper-scale Dragonfly (a=18, p=9, h=9), worst case at 0.3"
    echo
    echo "| routing | accepted | latency | minimal share | saturated | wall s | table per router |"
    echo "|---|---:|---:|---:|---|---:|---:|"
    for r in qadapt-nf "qadapt-nf --q-local 0" "qadapt-nf --q-local 2" par ugal-g; do
        j=$("$nf" sim --topo dragonfly:a=18,p=9,h=9 --routing $r --traffic worstcase --vcs 4 \
            --load 0.3 --warmup 1000 --cycles 2000 --drain 2000 --json)
        printf '| %s | %.3f | %.1f | %.3f | %s | %.0f | %s |\n' "$r" "$(echo "$j" | field accepted)" \
            "$(echo "$j" | field lat_mean)" "$(echo "$j" | field minimal_frac)" \
            "$(echo "$j" | field saturated)" "$(echo "$j" | field wall_s)" \
            "$(echo "$j" | field state_bytes)"
    done
fi
