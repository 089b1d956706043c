#!/bin/sh
# SPDX-License-Identifier: MIT
# The multicast paper's Dragonfly figure (a=18, p=h=9, the 81x27x12 grid: MINIHOP-MC-new 41,
# FULB-MC 54) against netfab's, under each reading the paper leaves open: the arrangement of the
# global links (palm tree, consecutive), the mapping of ranks to processors (aware: rank order
# follows the switches; random), processes per processor (1, 2, 4), which link is counted
# (switch-to-switch links, host links: max_efi / max_efi_host), then the grid's dimensions in
# another order (which one runs fastest over the ranks). One row per reading, the max EFI of
# each engine. About ten seconds.
# Usage: sh bench/mcast_df_causes.sh NETFAB [GROUPS]   (GROUPS: default grid3d:81x27x12)
set -eu
nf=$1
groups=${2:-grid3d:81x27x12}
engines=minihop-new,minihop-new-high,sssp-new,fulb-paper,fulb-paper+global,fulb
printf '| arrangement, groups | mapping | procs/processor |'
for e in $(echo "$engines" | tr ',' ' '); do printf ' %s |' "$e"; done
printf '\n|---|---|---|'
for _ in $(echo "$engines" | tr ',' ' '); do printf -- '---:|'; done
printf '\n'
# row ARRANGEMENT GROUPS MAPPING PPN
row() {
    printf '| %s, `%s` | %s | %s |' "$1" "$2" "$3" "$4"
    "$nf" mcast --topo "dragonfly:a=18,p=9,h=9,arr=$1" --groups "$2" --mapping "$3" \
        --procs-per-node "$4" --engine "$engines" --json |
        python3 -c '
import json, sys
print("".join(" %d / %d |" % (o["max_efi"], o["max_efi_host"]) for o in json.load(sys.stdin)))'
}
for arr in palmtree consecutive; do
    for map in aware random; do
        for ppn in 1 2 4; do
            row "$arr" "$groups" "$map" "$ppn"
        done
    done
done
if [ "$groups" = grid3d:81x27x12 ]; then
    for g in grid3d:12x27x81 grid3d:27x12x81 grid3d:12x81x27; do
        row palmtree "$g" aware 1
    done
fi
