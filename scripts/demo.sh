#!/bin/sh
# SPDX-License-Identifier: MIT
# `make demo`: the statistics of the five paper fabrics, built and measured on this machine.
set -eu
netfab=${1:-build/netfab}
echo "netfab demo: the fabrics of the papers, built and with all-pairs switch distances computed"
echo
"$netfab" topo --topo fattree:k=40 --topo torus:30x20x20,c=2 --topo dragonfly:a=18,p=9,h=9 \
    --topo bluelight --topo taihulight --topo gft:preset=sunway-proto
echo
echo "One fabric in detail:"
"$netfab" topo --topo dragonfly:a=18,p=9,h=9
echo
echo "Multicast routing, one workload per paper fabric (the multicast paper's grid; max/mean EFI over inter-switch links):"
for case in "fattree:k=40 grid2d:160x100 1" "torus:30x20x20,c=2 grid3d:40x30x20 1" \
    "dragonfly:a=18,p=9,h=9 grid3d:81x27x12 1" "bluelight grid3d:34x32x32 4" "taihulight grid2d:320x128 1"; do
    set -- $case
    echo
    echo "== $1, $2, $3 process(es) per node"
    "$netfab" mcast --topo "$1" --groups "$2" --procs-per-node "$3" --engine all
done
