#!/bin/sh
# SPDX-License-Identifier: MIT
# netfab mcast --analyze on installed tables: OpenSM's trees (netfab's minihop builds them, as
# tests/e2e/mft.sh checks against OpenSM itself) of 1,000 random groups of 8 on fattree:k=16,
# written with --dump-mft, then read back and analysed; the time to read and to analyse (best of
# RUNS, default 3), the tables' EFI and height against FULB-MC's on the same groups (--engine
# fulb beside), and the whole command's wall time.
# Usage: bench/bench_mft.sh NETFAB [RUNS]
set -eu
nf=$1
runs=${2:-3}
topo="--topo fattree:k=16"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$nf" mcast $topo --groups random:n=1000,size=8 --engine minihop --dump-mft "$tmp/t.mcfdbs" >/dev/null
# value KEY FILE: the first number after "KEY": in jansson's indented JSON
value() { sed -n "s/^  \"$1\": \\([0-9.e+-]*\\),\\{0,1\\}\$/\\1/p" "$2" | head -1; }
best_read="" best_an="" best_wall=""
i=0
while [ $i -lt "$runs" ]; do
    t0=$(date +%s.%N)
    "$nf" mcast $topo --analyze "$tmp/t.mcfdbs" --json >"$tmp/a.json"
    w=$(echo "$(date +%s.%N) - $t0" | bc -l)
    r=$(value read_s "$tmp/a.json") a=$(value analyze_s "$tmp/a.json")
    if [ -z "$best_wall" ] || [ "$(echo "$w < $best_wall" | bc -l)" = 1 ]; then best_wall=$w; fi
    if [ -z "$best_read" ] || [ "$(echo "$r < $best_read" | bc -l)" = 1 ]; then best_read=$r; fi
    if [ -z "$best_an" ] || [ "$(echo "$a < $best_an" | bc -l)" = 1 ]; then best_an=$a; fi
    i=$((i + 1))
done
"$nf" mcast $topo --analyze "$tmp/t.mcfdbs" --engine fulb >"$tmp/b.txt"
printf '| tables | bytes | groups | read s | analyse s | wall s | max EFI | mean EFI | links used | max height |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
printf '| minihop (OpenSM trees) | %s | %s | %.4f | %.4f | %.2f | %s | %.2f | %s | %s |\n' \
    "$(wc -c <"$tmp/t.mcfdbs" | tr -d ' ')" "$(value groups "$tmp/a.json")" "$best_read" "$best_an" \
    "$best_wall" "$(value max_efi "$tmp/a.json")" "$(value mean_efi "$tmp/a.json")" \
    "$(value links_used "$tmp/a.json")" "$(value max_height "$tmp/a.json")"
sed -n 's/^fulb on the same \([0-9]*\) groups: EFI max \([0-9]*\), mean \([0-9.]*\), \([0-9]*\) links used; height max \([0-9]*\).*/| fulb, same groups | - | \1 | - | - | - | \2 | \3 | \4 | \5 |/p' "$tmp/b.txt"
