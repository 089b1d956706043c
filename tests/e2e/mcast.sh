#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `netfab mcast`: exit statuses and messages, JSON keys, hand-known numbers
# on a small fat tree, verification, and the mcfdbs and group dumps.
# Usage: mcast.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
ft="--topo fattree:k=4"

# usage
expect 0 "$nf" mcast --help;                        has out "usage: netfab mcast"
has out "fulb+"
expect 2 "$nf" mcast $ft;                           has err "--groups PATTERN is required"
expect 2 "$nf" mcast --groups grid2d:4x4;           has err "--topo SPEC is required"
expect 2 "$nf" mcast $ft --groups grid2d:4x4 --engine nosuch
has_line err "netfab mcast: unknown engine 'nosuch' (known: minihop, minihop-new, minihop-new-high, sssp, sssp-new, fulb-paper, fulb-paper+lookahead, fulb-paper+global, fulb-paper+trials, fulb, fulb+; or all)"
expect 2 "$nf" mcast $ft --groups grid2d:4x4 --engine fulb,,sssp
has_line err "netfab mcast: --engine wants a list of engine names, or all, not 'fulb,,sssp'"
expect 2 "$nf" mcast $ft --groups grid2d:4x4 --engine fulb,sssp --dump-mft "$tmp/x.mft"
has err "one engine"
[ ! -e "$tmp/x.mft" ] && ok || bad "--dump-mft with two engines wrote a file"
expect 2 "$nf" mcast $ft --groups grid2d:4x4 --dump-mft "$tmp/x.mft"; has err "one engine"
expect 2 "$nf" mcast $ft --groups bogus:1;          has err "unknown groups pattern 'bogus'"
expect 2 "$nf" mcast $ft --groups grid2d:3;         has err "grid2d"
expect 2 "$nf" mcast $ft --groups grid2d:8x8;       has err "needs 64 ranks"
expect 2 "$nf" mcast $ft --groups grid2d:4x4 --mapping sideways; has err "--mapping"
expect 2 "$nf" mcast $ft --groups grid2d:4x4 --procs-per-node 0
has_line err "netfab mcast: --procs-per-node wants a whole number from 1 to 1024, not '0'"
expect 2 "$nf" mcast $ft --groups grid2d:4x4 --seed -3;           has err "--seed"
expect 2 "$nf" mcast $ft --groups grid2d:4x4 stray;               has err "unexpected argument"
expect 1 "$nf" mcast $ft --groups "file:$tmp/does-not-exist";     has err "does-not-exist"
expect 2 "$nf" mcast --topo nosuch:x=1 --groups grid2d:4x4;       has err "unknown topology"

# a small workload known by hand on the k=4 fat tree (2 endpoints per edge switch, 2 edge
# switches per pod): ranks 0 1 share an edge switch (height 1), 0 2 share a pod (height 2),
# 0 4 are in different pods (height 3, through a core switch)
printf '0 1\n0 2\n# a comment\n\n0 4\n' >"$tmp/g.txt"
# (every engine: heights 1, 2, 3, mean 2; the pod group's 2 switch links and the cross-pod
# group's 4 share one, edge 0 up, in all but fulb+, which spreads them: 5 links for 6 link
# memberships, max EFI 2 and mean 1.2, or 6 links at EFI 1, the lower bound)
expect 0 "$nf" mcast $ft --groups "file:$tmp/g.txt" --json --verify
json_vals out engine '"minihop" "minihop-new" "minihop-new-high" "sssp" "sssp-new" "fulb-paper" "fulb-paper+lookahead" "fulb-paper+global" "fulb-paper+trials" "fulb" "fulb+"'
json_num out groups 3; json_num out memberships 6; json_num out max_height 3; json_num out mean_height 2
json_nums out max_efi "2 2 2 2 2 2 2 2 2 2 1"
json_nums out mean_efi "1.2 1.2 1.2 1.2 1.2 1.2 1.2 1.2 1.2 1.2 1"
json_nums out links_used "5 5 5 5 5 5 5 5 5 5 6"; json_num out lower_bound 1
json_range out route_s 0 60; json_range out root_s 0 60
json_num out failed 0; json_val out verified true
n=$(grep -c '"engine":' "$tmp/out")
[ "$n" = 11 ] && ok || bad "--json with every engine gave $n objects, want 11"
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); assert len(a) == 11; assert all(o["max_efi"] >= o["lower_bound"] for o in a)' "$tmp/out" && ok || bad "--json is not a valid array of 11 objects"
else
    skip "the --json array check needs python3"
fi

# efi_hist: [EFI, links] pairs over the inter-switch links in use, so the links sum to links_used,
# the weighted mean is mean_efi and the last EFI is max_efi, for every engine
cat >"$tmp/efi.py" <<'PY'
import json, sys
for o in json.load(open(sys.argv[1])):
    h = o["efi_hist"]
    assert all(len(p) == 2 and p[0] >= 1 and p[1] >= 1 for p in h), (o["engine"], h)
    assert [p[0] for p in h] == sorted(set(p[0] for p in h)), (o["engine"], "not ascending", h)
    links = sum(p[1] for p in h)
    assert links == o["links_used"], (o["engine"], links, o["links_used"])
    assert (h[-1][0] if h else 0) == o["max_efi"], (o["engine"], h, o["max_efi"])
    mean = sum(p[0] * p[1] for p in h) / links if links else 0.0
    assert abs(mean - o["mean_efi"]) < 1e-9, (o["engine"], mean, o["mean_efi"])
PY
if command -v python3 >/dev/null 2>&1; then
    python3 "$tmp/efi.py" "$tmp/out" && ok || bad "efi_hist disagrees with links_used, mean_efi or max_efi"
else
    skip "the efi_hist checks need python3"
fi
# by hand: ranks 0 and 2 hang off the two edge switches of pod 0, and both pod-0 aggregation
# switches are one hop from each. The same group twice: minihop roots both at the first
# aggregation switch (two links at EFI 2), minihop-new rotates the second root to the other one
# (four links at EFI 1)
printf '0 2\n0 2\n' >"$tmp/g2.txt"
expect 0 "$nf" mcast $ft --groups "file:$tmp/g2.txt" --engine minihop,minihop-new --json
tr -d ' \n' <"$tmp/out" >"$tmp/flat"
grep -q '"engine":"minihop",.*"max_efi":2,"mean_efi":2.0,.*"links_used":2,"efi_hist":\[\[2,2\]\]}' "$tmp/flat" && ok || bad "minihop efi_hist is not [[2, 2]]"
grep -q '"engine":"minihop-new",.*"max_efi":1,"mean_efi":1.0,.*"links_used":4,"efi_hist":\[\[1,4\]\]}' "$tmp/flat" && ok || bad "minihop-new efi_hist is not [[1, 4]]"

# the text table: one row per engine, the lower bound line
expect 0 "$nf" mcast --topo torus:4x4,c=1 --groups grid2d:4x4 --engine minihop,fulb --verify
# (the 4x4 grid's rows and columns on the 4x4 torus: 8 groups of 4, each a line of switches,
# no link shared: max EFI 1, heights 3)
line_re "$tmp/out" 1 "^engine +groups +memberships +max_efi +mean_efi +max_h +mean_h "
for e in minihop fulb; do
    awk -v e=$e '$1 == e && $2 == 8 && $3 == 32 && $4 == 1 && $5 == "1.00" && $6 == 3 && $NF == 0 { n++ } END { exit n != 1 }' \
        "$tmp/out" && ok || bad "$e row: $(grep "^$e " "$tmp/out")"
done
has_line out "lower bound on max_efi for this workload: 1; every tree verified"

# verification on every engine, random mapping and 4 ranks per node
expect 0 "$nf" mcast --topo dragonfly:a=4,p=2,h=2 --groups grid3d:4x6x12 --procs-per-node 4 \
    --mapping random --seed 3 --verify --json
json_val out verified true; json_num out groups 144; json_num out failed 0
if command -v python3 >/dev/null 2>&1; then
    python3 "$tmp/efi.py" "$tmp/out" && ok || bad "dragonfly: efi_hist disagrees with the statistics"
else
    skip "the dragonfly efi_hist checks need python3"
fi

# dumps: groups file exactly by hand (CA node n has GUID 0x0002c90000000000 + ((n + 1) << 4),
# and its port 1 the same; the 20 switches come first, so rank r is node 20 + r)
expect 0 "$nf" mcast $ft --groups "file:$tmp/g.txt" --engine minihop --dump-mft "$tmp/m.mft" \
    --dump-groups "$tmp/g.out"
# MLIDs from 0xC001 (OpenSM gives 0xC000 to IPoIB's broadcast group)
line "$tmp/g.out" 1 "0xC001 0x0002c90000000150 0x0002c90000000160"
line "$tmp/g.out" 2 "0xC002 0x0002c90000000150 0x0002c90000000170"
line "$tmp/g.out" 3 "0xC003 0x0002c90000000150 0x0002c90000000190"
n=$(wc -l <"$tmp/g.out"); [ "$n" -eq 3 ] && ok || bad "groups dump has $n lines, want 3"
# mcfdbs: an empty line, the switch, the column header, then MLID rows
line "$tmp/m.mft" 1 ""
line_re "$tmp/m.mft" 2 '^Switch 0x[0-9a-f]{16}$'
line "$tmp/m.mft" 3 "LID    : Out Port(s)"
line_re "$tmp/m.mft" 4 '^0xC00[1-3] :( 0x0[0-9A-F]{2} )+$'
# every group's MLID appears; group 0 (one edge switch, ports 1 and 2) exactly once
grep -q '^0xC001 : 0x001  0x002 $' "$tmp/m.mft" && ok || bad "mcfdbs lacks group 0's row"
lacks "$tmp/m.mft" '^0xC000 '
n=$(grep -c '^0xC001 ' "$tmp/m.mft"); [ "$n" = 1 ] && ok || bad "0xC001 on $n switches, want 1"
n=$(grep -c '^0xC002 ' "$tmp/m.mft"); [ "$n" = 3 ] && ok || bad "0xC002 on $n switches, want 3"
n=$(grep -c '^0xC003 ' "$tmp/m.mft"); [ "$n" = 5 ] && ok || bad "0xC003 on $n switches, want 5"
# to stdout, and to an unwritable place
expect 0 "$nf" mcast $ft --groups "file:$tmp/g.txt" --engine fulb --dump-mft - --json
has_line out "LID    : Out Port(s)"
expect 1 "$nf" mcast $ft --groups grid2d:4x4 --engine fulb --dump-mft /nonexistent-dir/x.mft
has err "/nonexistent-dir/x.mft"

# switches of more than 64 ports: the NDR SuperPOD dump (65-port switches) routes and verifies
pod="$3/nvidia-topograph-ndr-superpod.ibnet"
expect 0 "$nf" mcast --topo "file:$pod" --groups random:n=8,size=64 --engine minihop,sssp,fulb \
    --verify --json
json_num out failed 0; json_val out verified true; json_num out memberships 512
finish
