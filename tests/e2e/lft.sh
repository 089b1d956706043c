#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of forwarding tables in the simulator: `netfab sim --routing lft:FILE` on
# OpenSM's tables (tests/data/real), `netfab route --dump-lft` (a routing as tables, and back),
# `netfab route --trace` (text and JSON, a loop, a hole), and the bad inputs (exit 2).
# Usage: lft.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
R="$2/tests/data/real"
xg="--topo file:$R/xgft.ibnet"
t3="--topo file:$R/torus3x3.ibnet"
run="--traffic uniform --load 0.05 --cycles 2000 --warmup 200 --json"

# OpenSM's tables, in its own layout and as the switches print them: every packet delivered
for tab in xgft-updn.opensm-lfts.dump xgft-minhop.opensm-lfts.dump xgft-updn.dump_fts; do
    expect 0 "$nf" sim $xg --routing "lft:$R/$tab" $run
    json_num out lost_frac 0; json_num out dropped_pkts 0; json_num out unroutable 0
    json_val out saturated false; json_val out deadlock false; json_num out minimal_frac 1
done
for tab in torus3x3-minhop.opensm-lfts.dump torus3x3-updn.dump_fts; do
    expect 0 "$nf" sim $t3 --routing "lft:$R/$tab" $run
    json_num out lost_frac 0; json_val out saturated false
done
expect 0 "$nf" sim --help; has out "lft:FILE"
# netfab sweep takes them too, read against each fabric
expect 0 "$nf" sweep $xg --routing "minhop,lft:$R/xgft-updn.opensm-lfts.dump" --traffic uniform \
    --loads 0.05 --cycles 500 --warmup 100 --json --no-times
[ "$(json_get "$tmp/out" routing | grep -c lft:)" = 1 ] && ok || bad "sweep rows: $(cat "$tmp/out")"

# --dump-lft: OpenSM's layout; dumped, loaded as lft: and dumped again, the same file
expect 0 "$nf" route $xg --routing minhop --dump-lft "$tmp/a.dump"
has_line "$tmp/a.dump" "Unicast lids [0-28] of switch Lid 1 guid 0x0002c90000000010 ('xgft L1 0'):"
has_line "$tmp/a.dump" "0x0001 000 # Switch portguid 0x0002c90000000010: 'xgft L1 0'"
[ "$(grep -c '^Unicast lids' "$tmp/a.dump")" = 4 ] && ok || bad "4 switch headers"
[ "$(grep -c '^0x' "$tmp/a.dump")" = 112 ] && ok || bad "4 x 28 entries: $(grep -c '^0x' "$tmp/a.dump")"
expect 0 "$nf" route $xg --routing "lft:$tmp/a.dump" --dump-lft "$tmp/b.dump"
cmp -s "$tmp/a.dump" "$tmp/b.dump" && ok || bad "dump, load, dump: the files differ"
# OpenSM's own file, through netfab, comes out entry for entry (LID and port) as it went in
expect 0 "$nf" route $xg --routing "lft:$R/xgft-updn.opensm-lfts.dump" --dump-lft "$tmp/o.dump"
awk '/^0x/ { print $1, $2 }' "$R/xgft-updn.opensm-lfts.dump" >"$tmp/o1"
awk '/^0x/ { print $1, $2 }' "$tmp/o.dump" >"$tmp/o2"
cmp -s "$tmp/o1" "$tmp/o2" && ok || bad "OpenSM's entries changed on the way through"
# against the fabric as ibnetdiscover saw it (the CAs' own port GUIDs), every line of OpenSM's
# file comes back as OpenSM wrote it; only the switches' order is the fabric's
expect 0 "$nf" route --topo "file:$R/xgft.ibnetdiscover" \
    --routing "lft:$R/xgft-updn.opensm-lfts.dump" --dump-lft "$tmp/o.dump"
sort "$R/xgft-updn.opensm-lfts.dump" >"$tmp/o1"; sort "$tmp/o.dump" >"$tmp/o2"
cmp -s "$tmp/o1" "$tmp/o2" && ok || bad "OpenSM's lines differ: $(diff "$tmp/o1" "$tmp/o2" | head -3)"
# ftable's tables simulate to ftable's figures (timings aside): a second implementation
for topo in fattree:k=4 torus:4x4,c=2; do
    expect 0 "$nf" route --topo "$topo" --routing ftable --dump-lft "$tmp/f.dump"
    "$nf" sim --topo "$topo" --routing ftable --traffic uniform --sweep 0.2:0.8:0.3 --seed 5 \
        --cycles 1500 --json | grep -v wall_s >"$tmp/s1"
    "$nf" sim --topo "$topo" --routing "lft:$tmp/f.dump" --traffic uniform --sweep 0.2:0.8:0.3 \
        --seed 5 --cycles 1500 --json | grep -v wall_s >"$tmp/s2"
    [ -s "$tmp/s1" ] && cmp -s "$tmp/s1" "$tmp/s2" && ok || bad "$topo: ftable and its tables differ"
done
# a deterministic routing of every kind dumps; the ones that choose per packet are refused
expect 0 "$nf" route --topo torus:4x4,c=1 --routing dor --dump-lft "$tmp/dor.dump"
# 16 switches, each a header and 32 entries (LIDs 1-32: 16 switches, 16 CAs); the first
# switch reaches itself on port 0
[ "$(grep -c '^Unicast lids \[0-32\] of switch' "$tmp/dor.dump")" = 16 ] && ok || bad "dor: not 16 switch headers"
[ "$(grep -c '^0x' "$tmp/dor.dump")" = 512 ] && ok || bad "dor: not 16 x 32 entries: $(grep -c '^0x' "$tmp/dor.dump")"
has_line "$tmp/dor.dump" "0x0001 000 # Switch portguid 0x0002c90000000010: 'torus 0,0'"
expect 0 "$nf" route --topo dragonfly:a=4,p=2,h=2 --routing dfmin --dump-lft -
has out "^Unicast lids"
expect 2 "$nf" route --topo dragonfly:a=4,p=2,h=2 --routing ugal-l --dump-lft "$tmp/u.dump"
has err "chooses ports per packet"
[ ! -e "$tmp/u.dump" ] && ok || bad "a refused dump left a file"
expect 2 "$nf" route $xg --routing nosuch --dump-lft "$tmp/n.dump"; has err "unknown routing 'nosuch'"

# --trace: as the ibtracert fixture (LID 5 to LID 28 through OpenSM's updn tables)
expect 0 "$nf" route $xg --routing "lft:$R/xgft-updn.opensm-lfts.dump" --trace 5 28
has_line out 'From ca 0x0002c90000000050 port 1 lid 5 "xgft node 0"'
has_line out '[1] -> switch 0x0002c90000000010[1] lid 1 "xgft L1 0"'
has_line out '[14] -> switch 0x0002c90000000040[1] lid 4 "xgft L2 1"'
has_line out '[2] -> switch 0x0002c90000000020[14] lid 2 "xgft L1 1"'
has_line out '[12] -> ca 0x0002c900000001c0[1] lid 28 "xgft node 23"'
has_line out 'reached'
# the same by name and GUID, in JSON
expect 0 "$nf" route $xg --routing "lft:$R/xgft-updn.opensm-lfts.dump" --trace "xgft node 0" \
    0x0002c900000001c0 --json
[ "$(json_said out out_port)" = "1 14 2 12 0" ] && ok || bad "out ports: $(json_said out out_port)"
[ "$(json_said out in_port)" = "0 1 1 14 1" ] && ok || bad "in ports: $(json_said out in_port)"
[ "$(json_said out lid)" = "5 1 4 2 28" ] && ok || bad "lids: $(json_said out lid)"
json_val out reached true; json_val out problem null; json_str out dst "xgft node 23"
# a routing with several candidates: the first followed, their number shown
expect 0 "$nf" route $xg --routing minhop --trace 5 28 --json
[ "$(json_said out candidates)" = "1 2 1 1 0" ] && ok || bad "candidates: $(json_said out candidates)"
# to a switch (its LID)
expect 0 "$nf" route $xg --routing "lft:$R/xgft-updn.opensm-lfts.dump" --trace 5 4
has_line out 'reached'
# a loop: L1 0 and L2 0 sending LID 28 to each other
awk '/switch Lid 1 /{s=1} /switch Lid 3 /{s=3} /switch Lid [24] /{s=0}
    /^0x001c / && s == 1 { $2 = "013" } /^0x001c / && s == 3 { $2 = "001" } { print }' \
    "$tmp/a.dump" >"$tmp/loop.dump"
expect 1 "$nf" route $xg --routing "lft:$tmp/loop.dump" --trace 5 28
has_line out 'loop: "xgft L1 0" -> "xgft L2 0" -> "xgft L1 0"'
expect 1 "$nf" route $xg --routing "lft:$tmp/loop.dump" --trace 5 28 --json
json_val out reached false; json_str out problem 'loop: \"xgft L1 0\" -> \"xgft L2 0\" -> \"xgft L1 0\"'
# ... which the simulator counts lost (1 of 23 destinations for the 12 CAs of L1 0), and ends
expect 0 "$nf" sim $xg --routing "lft:$tmp/loop.dump" --traffic uniform --load 0.05 --cycles 4000 --json
json_range out lost_frac 0.005 0.06; json_val out deadlock false; json_val out saturated false
# a hole: L2 0 without an entry for LID 28
grep -v '^0x001c 001' "$tmp/loop.dump" >"$tmp/hole.dump"
expect 1 "$nf" route $xg --routing "lft:$tmp/hole.dump" --trace 5 28
has out '^hole: "xgft L2 0"'

# bad inputs: exit 2 with the reason
expect 2 "$nf" sim $xg --routing "lft:$tmp/missing.dump" $run; has err "missing.dump"
printf 'Unicast lids [0-28] of switch Lid 1 guid 0x0002c90000000010:\nnonsense here\n' >"$tmp/bad.dump"
expect 2 "$nf" sim $xg --routing "lft:$tmp/bad.dump" $run; has err "bad.dump:2"
expect 2 "$nf" route $xg --routing "lft:$tmp/bad.dump" --trace 5 28
expect 2 "$nf" sim $xg --routing lft: $run; has err "wants a file name"
expect 2 "$nf" route --topo fattree:k=4 --routing minhop --trace 5; has err "SRC DST"
expect 2 "$nf" route $xg --routing minhop --trace 5 nosuch; has err "no node 'nosuch'"
expect 2 "$nf" route $xg --routing minhop --check --trace 5 28; has err "one at a time"
# a fabric without LIDs has nothing to read tables against
expect 2 "$nf" sim --topo "file:$2/tests/data/small.net" --routing "lft:$tmp/a.dump" $run
has err "no LIDs"
# tables of another fabric: refused at the first entry that does not fit it
expect 2 "$nf" route $t3 --routing "lft:$R/xgft-updn.opensm-lfts.dump" --check
has err "xgft-updn.opensm-lfts.dump:3: port 13 of switch torus 0,0, which has 5 ports"
# warnings with their counts: entries for LIDs the fabric lacks
sed 's/^0x001c /0x0fff /' "$tmp/a.dump" >"$tmp/extra.dump"
expect 1 "$nf" route $xg --routing "lft:$tmp/extra.dump" --trace 5 28
has err "4 entries for LIDs that no port of the fabric has"
# --check of installed tables (one VL): OpenSM's min-hop tables of the 3x3 torus have no credit
# loop between CAs, and one of 6 channels once switches send to switches (hand-checked: three
# +x and three +y hops round both rings); up/down on xgft leaves the two spines unreachable from
# each other, as OpenSM's own opensm.fdbs says (UNREACHABLE)
expect 0 "$nf" route $t3 --routing "lft:$R/torus3x3-minhop.dump_fts" --check
has out "81 routes, 81 delivered"; has out "no credit loop"
expect 1 "$nf" route $t3 --routing "lft:$R/torus3x3-minhop.dump_fts" --check --switch-lids
has out "162 routes, 162 delivered"; has out "a credit loop"
[ "$(grep -c 'waits on the next' "$tmp/out")" = 6 ] && ok || bad "the torus's loop is not 6 channels"
has_line out '  "torus 0,0" port 2 waits on the next, for LID 14'
expect 1 "$nf" route $t3 --routing "lft:$R/torus3x3-minhop.dump_fts" --check --switch-lids --json
json_val out credit_loop true; json_num out routes 162; json_num out edges 107
json_nums out port "2 4 2 4 2 4"
expect 1 "$nf" route $xg --routing "lft:$R/xgft-updn.dump_fts" --check --switch-lids --json
json_num out holes 2; json_num out delivered 110; json_val out credit_loop false
json_num out lid 3 '"switch":"xgft L2 1"'
expect 0 "$nf" route $xg --routing "lft:$R/xgft-updn.dump_fts" --check --json
json_num out routes 48; json_val out problem null
# a forwarding loop: counted, and shown as the failing route
expect 1 "$nf" route $xg --routing "lft:$tmp/loop.dump" --check
has out "go round a forwarding loop"; has out "first failing route, to LID 28"
expect 2 "$nf" route $xg --routing minhop --check --switch-lids; has err "lft:FILE"
expect 2 "$nf" route $xg --routing "lft:$R/xgft-updn.dump_fts" --trace 5 28 --switch-lids
has err "goes with --check"
finish
