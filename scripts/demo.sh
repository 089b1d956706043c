#!/bin/sh
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
