#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `netfab mcast --analyze` and of groups from the SA (--groups sa:FILE) on
# the tables and SA dumps OpenSM and infiniband-diags wrote (tests/data/real, capture.sh): the
# trees counted by hand, netfab's minihop rebuilding OpenSM's opensm.mcfdbs byte for byte from
# the SA's groups, netfab's own tables analysed back to its own figures, faults and bad flags.
# Usage: mft.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
real=$2/tests/data/real
x="--topo file:$real/xgft.ibnet"

# the fixture's three trees (xgft-minhop: 0xc001 CAs 0 1 11 | 13 23, 0xc003 CAs 0 1 9 on leaf 0,
# 0xc004 CA 10 | CAs 12-20; spine 'xgft L2 0' roots the two that span both leaves), both views
for f in xgft-minhop.dump_fts-M xgft-minhop.opensm.mcfdbs; do
    expect 0 "$nf" mcast $x --analyze "$real/$f"
    has_line out "0xC001       5        3     2 0x0002c90000000030     1      2       5  -"
    has_line out "0xC003       3        1     0 0x0002c90000000010     1      1       3  -"
    has_line out "0xC004      10        3     2 0x0002c90000000030     1      2      10  -"
    has_line out "EFI over inter-switch links: max 2, mean 2.00, 2 of 4 links used"
    has_line out "       0        2"
    has_line out "       2        2"
    cp "$tmp/out" "$tmp/$f.txt"
done
# the same analysis but for the file named in the summary and the times
[ "$(sed "s|^$real/[^:]*:|F:|; /^read .* s, analysed .* s\$/d" "$tmp/xgft-minhop.dump_fts-M.txt")" = \
    "$(sed "s|^$real/[^:]*:|F:|; /^read .* s, analysed .* s\$/d" "$tmp/xgft-minhop.opensm.mcfdbs.txt")" ] && ok ||
    bad "the two views analyse differently"
expect 0 "$nf" mcast $x --analyze "$real/xgft-minhop.opensm.mcfdbs" --json
json_num out groups 3
json_num out bad_groups 0
json_num out max_efi 2
json_num out links_used 2
json_vals out mlid '"0xC001" "0xC003" "0xC004"'
json_vals out members '5 3 10'
json_vals out roots '["0x0002c90000000030"] ["0x0002c90000000010"] ["0x0002c90000000030"]'
json_vals out efi_hist '[[2,2]]'
# one switch's table (ibroute -M of 'xgft L1 0'): 0xc001 and 0xc004 go up to a spine that holds
# nothing, so their members on the other leaf are unreached and the link is one-sided: exit 1
expect 1 "$nf" mcast $x --analyze "$real/xgft-minhop.ibroute-M-lid1"
has_line out "0xC001       3        1     1 0x0002c90000000010     1      1       3  asymmetric"
has_line out "0xC003       3        1     0 0x0002c90000000010     1      1       3  -"
has err "2 of 3 groups have problems"
# a loop and a port with no link, written by hand: the spines join the leaves both ways
printf '\nSwitch 0x0002c90000000010\nLID    : Out Port(s)\n0xC00A : 0x001  0x00D  0x00E \n' >"$tmp/loop.mft"
printf '\nSwitch 0x0002c90000000020\nLID    : Out Port(s)\n0xC00A : 0x001  0x00D  0x00E \n' >>"$tmp/loop.mft"
printf '\nSwitch 0x0002c90000000030\nLID    : Out Port(s)\n0xC00A : 0x001  0x002 \n' >>"$tmp/loop.mft"
printf '\nSwitch 0x0002c90000000040\nLID    : Out Port(s)\n0xC00A : 0x001  0x002 \n' >>"$tmp/loop.mft"
expect 1 "$nf" mcast $x --analyze "$tmp/loop.mft" --json
json_vals out problems '["loop"]'
json_num out links 4

# --engine beside: the same groups (the tables' members), routed by netfab
expect 0 "$nf" mcast $x --analyze "$real/xgft-minhop.opensm.mcfdbs" --engine minihop,fulb
has_line out "0xC004      10        3     2 0x0002c90000000030     1      2      10        2        2  -"
has_line out "minihop on the same 3 groups: EFI max 2, mean 2.00, 2 links used; height max 2, mean 1.67"
has_line out "fulb on the same 3 groups: EFI max 1, mean 1.00, 4 links used; height max 2, mean 1.67"
expect 0 "$nf" mcast $x --analyze "$real/xgft-minhop.opensm.mcfdbs" --engine minihop \
    --groups "sa:$real/xgft-minhop.opensm-sa.dump" --json
json_vals out engine_height '{"minihop":2} {"minihop":1} {"minihop":2}'
json_num out groups 4 '"engine":"minihop"'

# netfab's minihop on the SA's groups (capture.sh joined them to OpenSM running minhop) sets
# exactly OpenSM's tables, MLIDs kept: the dump is opensm.mcfdbs byte for byte
expect 0 "$nf" mcast $x --groups "sa:$real/xgft-minhop.opensm-sa.dump" --engine minihop \
    --dump-mft "$tmp/nf.mcfdbs" --dump-groups "$tmp/nf.groups"
cmp -s "$tmp/nf.mcfdbs" "$real/xgft-minhop.opensm.mcfdbs" && ok ||
    bad "minihop's tables differ from OpenSM's: $(diff "$tmp/nf.mcfdbs" "$real/xgft-minhop.opensm.mcfdbs" | head -4)"
line "$tmp/nf.groups" 2 "0xC002 0x0002c90000000160"
# saquery -m's three records: 0xc001 CAs 0 and 13, 0xc002 CA 17
expect 0 "$nf" mcast $x --groups "sa:$real/xgft.saquery-m" --engine minihop --json
json_num out groups 2
json_num out memberships 3
# without --smkey, saquery hides the members
sed 's/PortGid\.*.*/PortGid.................::/' "$real/xgft.saquery-m" >"$tmp/hidden"
expect 2 "$nf" mcast $x --groups "sa:$tmp/hidden" --engine minihop
has err "hidden:4: .*--smkey 1"
# a member the fabric does not have: a warning, the rest kept
sed 's/fe80::2:c900:0:121/fe80::2:c900:0:999/' "$real/xgft.saquery-m" >"$tmp/stranger"
expect 0 "$nf" mcast $x --groups "sa:$tmp/stranger" --engine minihop --json
has err "stranger:4: 1 members have a port GUID no cabled CA port"
json_num out memberships 2
# a switch as a member (its port 0 by its node GUID, 'xgft L2 0'): the group 0xC001 of CA 121 and
# the spine; its tree reaches the spine, sets the spine's port 0 in the tables (0x000), and the
# analysis of those tables counts the spine among the members again
sed 's/fe80::2:c900:0:51$/fe80::2:c900:0:30/' "$real/xgft.saquery-m" >"$tmp/swm"
expect 0 "$nf" mcast $x --groups "sa:$tmp/swm" --engine fulb --verify --json --dump-mft "$tmp/swm.mft"
json_val out verified true
json_num out memberships 3
json_num out max_height 1 # CA 121's leaf the root, the spine one hop up: no link beyond it
grep -A3 "^Switch 0x0002c90000000030" "$tmp/swm.mft" | grep -q "^0xC001 : 0x000 " && ok || bad "the spine's port 0 not in its MFT: $(cat "$tmp/swm.mft")"
expect 0 "$nf" mcast $x --analyze "$tmp/swm.mft" --json
json_num out bad_groups 0
json_num out max_height 1

# netfab's own tables, analysed back: its figures again (fattree:k=4, random groups, minihop)
ft="--topo fattree:k=4"
expect 0 "$nf" mcast $ft --groups random:n=24,size=5 --engine minihop --dump-mft "$tmp/ft.mft" --json
max=$(json_said out max_efi) mean=$(json_said out mean_efi) hmax=$(json_said out max_height)
expect 0 "$nf" mcast $ft --analyze "$tmp/ft.mft" --engine minihop --json
json_num out groups 24
json_num out bad_groups 0
json_num out max_efi "$max"
json_num out mean_efi "$mean"
json_num out max_height "$hmax"
json_vals out engine_height "$(json_said out height | sed 's/\([0-9]*\)/{"minihop":\1}/g')"

# bad flags and files
expect 2 "$nf" mcast $x --analyze "$real/xgft-minhop.opensm.mcfdbs" --groups grid2d:2x2
has err "groups from the tables, or from --groups sa:FILE"
expect 2 "$nf" mcast $x --analyze "$real/xgft-minhop.opensm.mcfdbs" --dump-mft "$tmp/y"
has err "no --dump-mft"
expect 2 "$nf" mcast $x --analyze "$real/xgft-minhop.opensm.mcfdbs" --engine nosuch
has err "unknown engine 'nosuch'"
expect 2 "$nf" mcast $x --analyze "$real/xgft.saquery-m"
has err "saquery-m:1: neither dump_fts -M"
expect 1 "$nf" mcast $x --analyze "$tmp/nonexistent"
has err "nonexistent"
expect 2 "$nf" mcast --topo fattree:k=4 --analyze "$real/xgft-minhop.opensm.mcfdbs"
has err "opensm.mcfdbs:4: port 12 of switch ft pod0 edge0, which has 4 ports"
expect 2 "$nf" mcast $x --groups sa: --engine minihop
has err "sa:FILE"

finish
