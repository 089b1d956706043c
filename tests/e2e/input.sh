#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of what the fabric readers refuse: truncated ibnetdiscover dumps (cut at every
# line boundary and inside lines), duplicate GUIDs, binary and endless input, and the partial=1
# option that reads an incomplete dump anyway.
# Usage: input.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1; src=$2; fabrics=$3
. "$src/tests/e2e/lib/harness.sh"

# ---- truncation: every cut is refused with file:line, or gives the complete fabric -------------
"$nf" topo --topo fattree:k=4 --out "$tmp/ft4.ibnet" >/dev/null || bad "cannot write ft4.ibnet"
"$nf" topo --topo "file:$tmp/ft4.ibnet" --out "$tmp/full.ibnet" >/dev/null || bad "cannot read ft4.ibnet"
size=$(wc -c <"$tmp/ft4.ibnet")
first_header=$(grep -b -m1 '^Switch' "$tmp/ft4.ibnet" | cut -d: -f1)
# cut points: every line boundary, the middle of every line, just before every newline, and every
# byte of the last two lines (test_ibnet's truncation sweep cuts the same text at every byte)
awk -v size="$size" '
    { start = off + 0; off += length($0) + 1; print start; print start + int(length($0) / 2); print off - 1 }
    END { print size }' "$tmp/ft4.ibnet" >"$tmp/cuts"
tail_start=$(head -n -2 "$tmp/ft4.ibnet" | wc -c)
seq "$tail_start" "$size" >>"$tmp/cuts"
sort -n -u "$tmp/cuts" -o "$tmp/cuts"
n_cuts=0; n_refused=0; n_whole=0; n_wrong=0
while read -r cut; do
    n_cuts=$((n_cuts + 1))
    head -c "$cut" "$tmp/ft4.ibnet" >"$tmp/cut.ibnet"
    rm -f "$tmp/back.ibnet"
    "$nf" topo --topo "file:$tmp/cut.ibnet" --out "$tmp/back.ibnet" >/dev/null 2>"$tmp/err"; rc=$?
    if [ "$rc" = 0 ] && cmp -s "$tmp/back.ibnet" "$tmp/full.ibnet"; then
        n_whole=$((n_whole + 1))
    elif [ "$rc" = 2 ] && grep -Eq "^netfab topo: $tmp/cut.ibnet:[0-9]+: " "$tmp/err"; then
        n_refused=$((n_refused + 1))
    elif [ "$rc" = 2 ] && [ "$cut" -le "$first_header" ] && grep -q "not a fabric file\|no node headers" "$tmp/err"; then
        n_refused=$((n_refused + 1)) # cut before the first node header: no line to name
    else
        n_wrong=$((n_wrong + 1))
        [ "$n_wrong" -le 5 ] && bad "cut at byte $cut of $size: exit $rc, $(head -c 300 "$tmp/err")"
    fi
done <"$tmp/cuts"
[ "$n_wrong" = 0 ] && ok || bad "$n_wrong of $n_cuts cuts accepted as a different fabric"
[ "$n_whole" -ge 2 ] && ok || bad "only $n_whole cuts gave the whole fabric (the file and it without its last newline should)"
echo "truncation sweep: $n_cuts cuts, $n_refused refused, $n_whole complete, $n_wrong wrong"

# the message names the first one-sided link and counts them: cut after the switch blocks
n=$(grep -n -m1 '^caguid' "$tmp/ft4.ibnet" | cut -d: -f1)
head -n $((n - 4)) "$tmp/ft4.ibnet" >"$tmp/cut.ibnet"
expect 2 "$nf" topo --topo "file:$tmp/cut.ibnet"
has err "cut.ibnet:11: the peer of \"S-0002c90000000010\"\[1\], \"H-0002c90000000150\", has no node block; 0 links are listed by one end only and 16 to nodes with no block: the file is truncated or incomplete (the partial option reads it anyway)"
# partial=1 reads it anyway: the counts come as warnings, what is consistent is kept
expect 0 "$nf" topo --topo "file:$tmp/cut.ibnet,partial=1" --json
has err "warning: .*cut.ibnet:11: partial file: 16 links to nodes with no block, skipped (the first here)"
json_num out switches 20
# a CA block cut after its header: its link is listed by the switch only; a file cut after its
# first header has a node that lists no ports
head -n 280 "$tmp/ft4.ibnet" >"$tmp/cut.ibnet"
expect 2 "$nf" topo --topo "file:$tmp/cut.ibnet"
has err "cut.ibnet:75: link \"S-0002c90000000080\"\[2\] - \"H-0002c90000000240\"\[1\] is not listed by its other end; 1 link is listed by one end only and 0 to nodes with no block"
expect 0 "$nf" topo --topo "file:$tmp/cut.ibnet,partial=1" --json
has err "cut.ibnet:75: partial file: 1 link listed by one end only, kept"
has err "cut.ibnet:280: partial file: node \"H-0002c90000000240\" lists no ports"
json_num out links 48
head -n 10 "$tmp/ft4.ibnet" >"$tmp/cut.ibnet"
expect 2 "$nf" topo --topo "file:$tmp/cut.ibnet"
has err "cut.ibnet:10: node \"S-0002c90000000010\" lists no ports: the file is truncated"
# a CA port line missing from a two-port block: one-sided
printf 'switchguid=0x10\nSwitch\t4 "S-0000000000000010"\t\t# "sw" lid 1\n[1]\t"H-0000000000000020"[1](20) \t\t# "a" lid 2 4xEDR\n[2]\t"H-0000000000000020"[2](21) \t\t# "a" lid 3 4xEDR\n\ncaguid=0x20\nCa\t2 "H-0000000000000020"\t\t# "a"\n[1](20) \t"S-0000000000000010"[1]\t\t# lid 2 lmc 0 "sw" lid 1 4xEDR\n' >"$tmp/one.ibnet"
expect 2 "$nf" topo --topo "file:$tmp/one.ibnet"
has err "one.ibnet:4: link \"S-0000000000000010\"\[2\] - \"H-0000000000000020\"\[2\] is not listed by its other end; 1 link is listed by one end only and 0 to nodes with no block"
expect 0 "$nf" topo --topo "file:$tmp/one.ibnet,partial=1" --json
has err "one.ibnet:4: partial file: 1 link listed by one end only, kept"
json_num out endpoints 1; json_num out links 2
expect 0 "$nf" topo --topo "file:$tmp/ft4.ibnet,partial=0" --json
expect 2 "$nf" topo --topo "file:$tmp/ft4.ibnet,partial=yes"; has err "partial must be 0 or 1"
expect 2 "$nf" topo --topo "file:$tmp/ft4.ibnet,bogus=1";    has err "unknown option 'bogus' (known: partial)"

# the real dumps are complete: they load without the option and without any one-sided warning,
# each link listed by both ends (its links: half the file's port lines that name a peer)
for f in "$fabrics"/*.ibnet; do
    case "$f" in *.partial.ibnet) continue ;; esac
    expect 0 "$nf" topo --topo "file:$f" --json
    if grep -q "one end\|no node block\|no block" "$tmp/err"; then bad "$f: $(cat "$tmp/err")"; else ok; fi
    ends=$(grep -Ec '^\[[0-9]+\][^"]*"[SH]-[0-9a-fA-F]+"\[' "$f")
    got=$(json_said out links)
    [ $((ends % 2)) = 0 ] && [ "$got" = $((ends / 2)) ] && ok ||
        bad "${f##*/}: links '$got', want half of its $ends port lines"
done

# ---- duplicate GUIDs: both lines named --------------------------------------------------------
cat >"$tmp/dup.ibnet" <<'EOF'
switchguid=0x10
Switch	4 "S-0000000000000010"		# "sw" lid 1
[1]	"H-0000000000000020"[1](21) 		# "a" lid 2 4xEDR
[2]	"H-0000000000000030"[1](21) 		# "b" lid 3 4xEDR

caguid=0x20
Ca	1 "H-0000000000000020"		# "a"
[1](21) 	"S-0000000000000010"[1]		# lid 2 lmc 0 "sw" lid 1 4xEDR

caguid=0x30
Ca	1 "H-0000000000000030"		# "b"
[1](21) 	"S-0000000000000010"[2]		# lid 3 lmc 0 "sw" lid 1 4xEDR
EOF
expect 2 "$nf" topo --topo "file:$tmp/dup.ibnet"
has err "dup.ibnet:12: GUID 0x0000000000000021 of \"H-0000000000000030\"\[1\] is also the GUID of \"H-0000000000000020\"\[1\] (line 8)"
# a CA port with another node's GUID
sed -e 's/(21)/(30)/' "$tmp/dup.ibnet" | sed -e '4s/(30)/(31)/' -e '12s/(30)/(31)/' >"$tmp/dup2.ibnet"
expect 2 "$nf" topo --topo "file:$tmp/dup2.ibnet"
has err "dup2.ibnet:[0-9]*: GUID 0x0000000000000030 of .* is also the GUID of .*(line [0-9]*)"
# two nodes with one GUID
sed -e 's/H-0000000000000030/H-0000000000000020/' -e 's/caguid=0x30/caguid=0x20/' "$tmp/dup.ibnet" >"$tmp/dup3.ibnet"
expect 2 "$nf" topo --topo "file:$tmp/dup3.ibnet"
has err "dup3.ibnet:11: node GUID 0x0000000000000020 of \"H-0000000000000020\" is defined twice (first on line 7)"
# the ibsim net reader: a port GUID given twice, and a node GUID spelled twice
printf 'Switch 4 "sw"\n[1] "a"[1]\n[2] "b"[1]\n\nHca 1 "a"\n[1](99) "sw"[1]\n\nHca 1 "b"\n[1](99) "sw"[2]\n' >"$tmp/dup.net"
expect 2 "$nf" topo --topo "file:$tmp/dup.net"
has err "dup.net:9: GUID 0x0000000000000099 of \"b\"\[1\] is also the GUID of \"a\"\[1\] (line 6)"
printf 'Switch 4 "S-0000000000000010"\n[1] "H-0000000000000010"[1]\n\nHca 1 "H-0000000000000010"\n[1] "S-0000000000000010"[1]\n' >"$tmp/dup2.net"
expect 2 "$nf" topo --topo "file:$tmp/dup2.net"; has err "dup2.net:4: node GUID 0x0000000000000010 .* defined twice (first on line 1)"

# ---- binary and endless input: exit 2 at once, in little memory ------------------------------
# (a sanitizer build reserves terabytes of shadow memory and cannot start under ulimit -v: it runs
# under the timeout alone)
lim='ulimit -v 400000;'
sh -c "$lim exec \"\$0\" --version" "$nf" >/dev/null 2>&1 || lim=''
for dev in /dev/zero /dev/urandom; do
    expect 2 sh -c "$lim"' exec timeout 20 "$0" topo --topo "file:$1"' "$nf" "$dev"
    has err "$dev:[0-9]*: NUL byte at column [0-9]*: binary data, not a fabric file"
done
# a line of 200,000 bytes with no NUL in it (from a pipe and from a file)
expect 2 sh -c "$lim"' head -c 200000 /dev/zero | tr "\0" a | timeout 20 "$0" topo --topo file:/dev/stdin' "$nf"
has err "/dev/stdin:1: line longer than 65536 bytes"
expect 2 sh -c "$lim"' exec timeout 20 "$0" topo --topo file:/dev/stdin < /dev/zero' "$nf"
has err "NUL byte"
{ cat "$tmp/ft4.ibnet"; head -c 70000 /dev/zero | tr '\0' '#'; echo; } >"$tmp/long.ibnet"
expect 2 "$nf" topo --topo "file:$tmp/long.ibnet"; has err "long.ibnet:282: line longer than 65536 bytes"
{ head -n 5 "$tmp/ft4.ibnet"; printf 'vendid=0x2c9\0\n'; } >"$tmp/nul.ibnet"
expect 2 "$nf" topo --topo "file:$tmp/nul.ibnet"; has err "nul.ibnet:6: NUL byte at column 13"
# a file over the size cap is refused before it is read (a sparse file: no disk used)
if truncate -s 1100M "$tmp/huge.ibnet" 2>/dev/null; then
    expect 2 sh -c "$lim"' exec timeout 20 "$0" topo --topo "file:$1"' "$nf" "$tmp/huge.ibnet"
    has err "huge.ibnet: larger than 1024 MiB: not a fabric file"
    rm -f "$tmp/huge.ibnet"
fi

# ---- netfab sim on a disconnected fabric, and load sweeps without end -------------------------
isl="file:$src/tests/data/islands.ibnet"
sim="timeout 120 $nf sim --topo $isl --routing minhop --traffic uniform --load 0.1 --cycles 500 --warmup 100"
expect 2 $sim
has err "netfab sim: 8 source/destination pairs have no path between them (the fabric is not connected), e.g. \"a1\" -> \"b1\"; --exclude-unroutable skips them"
expect 0 $sim --exclude-unroutable
has out "# 8 unroutable source/destination pairs excluded"
has out "excluded"
if grep -q DEAD "$tmp/out"; then bad "excluded pairs still deadlock"; else ok; fi
expect 0 $sim --exclude-unroutable --json
has out '"excluded_msgs": [1-9]'
has out '"deadlock": false'
# links failed by --fail-links are seen: torus:2,c=2 is two switches joined by two links (one
# down leaves them joined, both part them); the only up link of a fat tree's leaf; a CA's cable
cut="the fabric is not connected once the failed links are down"
t2="timeout 120 $nf sim --topo torus:2,c=2 --routing minhop --traffic uniform --load 0.1 --cycles 500 --warmup 100"
printf 'torus 0 3\n' >"$tmp/cut1.txt"
printf 'torus 0 3\ntorus 0 4  # the second\n' >"$tmp/cut2.txt"
expect 0 $t2 --fail-links "$tmp/cut1.txt" --json
has out '"deadlock": false'
expect 2 $t2 --fail-links "$tmp/cut2.txt"
has err "netfab sim: 8 source/destination pairs have no path between them ($cut), e.g. \"torus 0 n0\" -> \"torus 1 n0\"; --exclude-unroutable skips them"
[ -s "$tmp/out" ] && bad "a refused run printed: $(head -2 "$tmp/out")" || ok
expect 0 $t2 --fail-links "$tmp/cut2.txt" --exclude-unroutable --json
has out '"excluded_msgs": [1-9]'; has out '"deadlock": false'; has out '"unroutable": 0,'
from_start=$(sed -n 's/.*"excluded_msgs": \([0-9]*\).*/\1/p' "$tmp/out")
# failing during the run (--fail-at) parts them too: refused the same way; excluded, the pairs'
# messages are skipped from that cycle on (fewer than from the start), nothing deadlocks
expect 2 $t2 --fail-links "$tmp/cut2.txt" --fail-at 300
has err "netfab sim: 8 source/destination pairs have no path between them ($cut)"
expect 0 $t2 --fail-links "$tmp/cut2.txt" --fail-at 300 --exclude-unroutable --json
has out '"deadlock": false'
at_300=$(sed -n 's/.*"excluded_msgs": \([0-9]*\).*/\1/p' "$tmp/out")
[ "${at_300:-0}" -gt 0 ] && [ "$at_300" -lt "${from_start:-0}" ] && ok ||
    bad "excluded from cycle 300: '$at_300', from the start: '$from_start'"
xg="timeout 120 $nf sim --topo xgft:h=2,m=2.2,w=1.1 --routing updown --traffic uniform --load 0.1 --cycles 500 --warmup 100"
printf 'xgft L1 0 3\n' >"$tmp/leaf.txt"
expect 2 $xg --fail-links "$tmp/leaf.txt"
has err "netfab sim: 8 source/destination pairs have no path between them ($cut), e.g. \"xgft node 0\" -> \"xgft node 2\""
printf 'xgft L1 0 1\n' >"$tmp/cable.txt"
expect 2 $xg --fail-links "$tmp/cable.txt"
has err "netfab sim: 6 source/destination pairs have no path between them ($cut), e.g. \"xgft node 0\" -> \"xgft node 1\""
expect 0 $xg --fail-links "$tmp/cable.txt" --exclude-unroutable
has out "# 6 unroutable source/destination pairs excluded"
if grep -q DEAD "$tmp/out"; then bad "a CA cut off still deadlocks"; else ok; fi

# netfab sweep: a cell on a disconnected fabric is refused as netfab sim refuses the run, with
# the cell's parameters; --exclude-unroutable runs it and adds excluded_msgs (only then)
sw="timeout 120 $nf sweep --topo torus:2,c=2 --topo $isl --routing minhop --traffic uniform --loads 0.1,0.2 --cycles 500 --warmup 100 --no-times"
expect 2 $sw
has err "netfab sweep: cell 2 (topo $isl, routing minhop, traffic uniform, seed 0, load 0.1): 8 source/destination pairs have no path between them (the fabric is not connected), e.g. \"a1\" -> \"b1\"; --exclude-unroutable skips them"
[ "$(grep -c 'no path' "$tmp/err")" = 1 ] && ok || bad "the refusal printed $(grep -c 'no path' "$tmp/err") times"
[ -s "$tmp/out" ] && bad "a refused sweep printed rows" || ok
expect 2 $sw --threads 2 --json
has err "netfab sweep: cell 2 (topo $isl, routing minhop"
expect 0 $sw --exclude-unroutable --threads 1
cp "$tmp/out" "$tmp/excl.csv"
line_re "$tmp/excl.csv" 1 ',dropped_pkts,excluded_msgs$'
line_re "$tmp/excl.csv" 2 '^"torus:2,c=2",minhop,uniform,0,0.1,.*,0$'
expect 0 $sw --exclude-unroutable --threads 2
cmp -s "$tmp/excl.csv" "$tmp/out" && ok || bad "--exclude-unroutable: 2 threads differ from 1"
expect 0 $sim --exclude-unroutable --json
want=$(sed -n 's/.*"excluded_msgs": \([0-9]*\).*/\1/p' "$tmp/out")
line_re "$tmp/excl.csv" 4 "^file:.*islands.ibnet,minhop,uniform,0,0.1,.*,$want\$"
expect 0 timeout 120 "$nf" sweep --topo torus:2,c=2 --routing minhop --traffic uniform --loads 0.1 --cycles 500 --warmup 100 --no-times
line_re "$tmp/out" 1 ',dropped_pkts$'

# netfab smd-load --procs-per-node: a whole number from 1 to 1024 (it was atoi'd)
for v in 0 abc 2.5 1025 -3 ''; do
    expect 2 timeout 20 "$nf" smd-load --server 127.0.0.1:9 --topo fattree:k=4 --groups random:n=2,size=2 --deadline 2 --procs-per-node "$v"
    has err "netfab smd-load: --procs-per-node wants a whole number from 1 to 1024, not '$v'"
done
expect 2 timeout 20 "$nf" sim --topo fattree:k=4 --routing minhop --traffic uniform --sweep 0:1:1e-9
has err "netfab sim: --sweep 0:1:1e-9 is 1000000000 load points, more than 1000"
expect 2 timeout 20 "$nf" sim --topo fattree:k=4 --routing minhop --traffic uniform --sweep 0:1:0
has err "STEP > 0"
expect 2 timeout 20 "$nf" sweep --topo fattree:k=4 --routing minhop --traffic uniform --loads 0:1:1e-6
has err "netfab sweep: --loads 0:1:1e-6 is 1000001 load points, more than 1000"
expect 2 timeout 20 "$nf" sweep --topo fattree:k=4 --routing minhop --traffic uniform --loads 0.5,0:1:0.001
has err "is 1002 load points, more than 1000"

finish
