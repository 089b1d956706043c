#!/bin/sh
# SPDX-License-Identifier: MIT
# BookSim2's own packets through netfab, packet by packet (docs/results.md, "Packet by packet"):
# tests/data/booksim/make_traces.sh builds BookSim2 from CHECKOUT with its traffic manager
# printing each packet's creation, injection VC and retirement, runs its cases (a 4-port router
# with 1- and 4-flit packets; the 72-node Dragonfly with minimal routing at speedups 1.7 and 1; a
# 7x7 torus with 4-flit packets and a 5x5x5 one), and netfab runs each trace
# with --router-model booksim (--packets, --packet-log). Per case: the packets BookSim2 retired,
# how many netfab delivers in another cycle, and both mean latencies.
#
# Usage: sh bench/bench_booksim_replay.sh NETFAB BOOKSIM_CHECKOUT   (github.com/booksim/booksim2;
#   its src/ is copied and built, with Debian's flex and bison)
set -eu
nf=$1 src=$2
here=$(dirname "$0")/..
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh "$here/tests/data/booksim/make_traces.sh" "$src" "$tmp"
fly="--topo torus:1,c=4 --routing minhop --vcs 2 --buf 256 --speedup 1"
df="--topo dragonfly:a=4,p=2,h=2,arr=consecutive --routing dfmin-bs --vcs 3 --buf 256
    --lat-local 10 --lat-global 100"
echo "| case | packets | arriving in another cycle | mean latency netfab / BookSim2 |"
echo "|---|---:|---:|---:|"
tor="--routing dor-bs --vcs 2 --buf 8"
for c in "fly4 $fly" "fly4-p4 $fly --buf 8 --pkt 4" "df72-s17 $df --speedup 1.7" \
    "df72-s1 $df --speedup 1" "torus7x7-p4 --topo torus:7x7,c=1 $tor --pkt 4" \
    "torus5x5x5 --topo torus:5x5x5,c=1 $tor"; do
    # shellcheck disable=SC2086
    set -- $c
    name=$1
    shift
    zcat "$tmp/$name.pkts.gz" >"$tmp/p"
    zcat "$tmp/$name.arrived.gz" >"$tmp/w"
    last=$(tail -1 "$tmp/p" | cut -d' ' -f1)
    "$nf" sim "$@" --router-model booksim --packets "$tmp/p" --packet-log "$tmp/l" --warmup 0 \
        --cycles $((last + 1)) --drain 20000 --threads 1 >/dev/null
    awk -v name="$name" 'FNR == 1 { f++ } /^#/ { next }
        f == 1 { want[$1 " " $2] = $3; next }
        ($1 " " $2) in want { n++; w = want[$1 " " $2]; if (w != $4) d++; a += $4 - $1; b += w - $1 }
        END { printf "| %s | %d | %d | %.3f / %.3f |\n", name, n, d, a / n, b / n }' "$tmp/w" "$tmp/l"
done
