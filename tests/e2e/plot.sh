#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `netfab plot`: usage errors and exit statuses; latency curves from a real
# sim run and from sweep-shaped rows (series found, points sorted by x, rows without x or y
# skipped, saturated points flagged and the y axis cut); EFI histograms from netfab mcast --json;
# a multicast tree worked out by hand, in DOT, PNG and SVG; names that need escaping; gnuplot and
# dot failing or missing. --script shows the gnuplot input the pictures are drawn from.
# Usage: plot.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && ok || bad "$1 is no PNG"; }
is_svg() { grep -q "<svg" "$1" && ok || bad "$1 is no SVG"; }
absent() { [ ! -e "$1" ] && ok || bad "$1 was left behind"; }
# the data blocks of a --script file: from the first '# series' comment on
blocks() { sed -n '/^# series/,$p' "$1"; }

# ---- usage --------------------------------------------------------------------------------
expect 0 "$nf" plot --help; has out "usage: netfab plot latency"; has out "^examples:$"
has out "netfab plot efi --in"; has out "netfab plot tree --topo"
expect 2 "$nf" plot;                                   has err "what to plot"
expect 2 "$nf" plot bogus --in x.json --out x.png;     has err "unknown kind 'bogus'"
expect 2 "$nf" plot latency efi;                       has_line err "netfab plot: unexpected argument 'efi'"
expect 2 "$nf" plot latency --out "$tmp/x.png";        has err "--in FILE.json is required"
expect 2 "$nf" plot efi --in x.json;                   has err "--out FILE is required"
expect 2 "$nf" plot latency --in x.json --out "$tmp/x.jpg"; has err "--out wants a .png or .svg file"
expect 2 "$nf" plot latency --in x.json --out "$tmp/x.dot"; has err "--out wants a .png or .svg file"
expect 2 "$nf" plot latency --in x.json --out "$tmp/png";   has err "--out wants a .png or .svg file"
expect 2 "$nf" plot tree --topo fattree:k=4 --groups grid2d:4x4 --group 0 --out "$tmp/t.gif"
has err "--out wants a .png, .svg or .dot file"
expect 2 "$nf" plot latency --bogus;                   has_line err "netfab plot: unknown option '--bogus' (netfab plot --help lists them)"
expect 2 "$nf" plot latency --in;                      has_line err "netfab plot: --in wants an argument (FILE.json)"
expect 2 "$nf" plot latency --in x.json --out "$tmp/x.png" --group 3; has err "--group does not apply to latency"
expect 2 "$nf" plot efi --in x.json --out "$tmp/x.png" --x load;      has err "--x does not apply to efi"
expect 2 "$nf" plot tree --in x.json --out "$tmp/x.png";              has err "--in does not apply to tree"
expect 2 "$nf" plot latency --in x.json --out "$tmp/x.png" --series 'a,,b'; has err "bad --series list"
expect 2 "$nf" plot tree --groups grid2d:4x4 --group 0 --out "$tmp/t.dot";     has err "tree wants --topo"
expect 2 "$nf" plot tree --topo fattree:k=4 --group 0 --out "$tmp/t.dot";      has err "tree wants --groups"
expect 2 "$nf" plot tree --topo fattree:k=4 --groups grid2d:4x4 --out "$tmp/t.dot"; has err "tree wants --group N"
expect 2 "$nf" plot tree --topo fattree:k=4 --groups grid2d:4x4 --group -1 --out "$tmp/t.dot"; has_line err "netfab plot: --group wants a whole number from 0 to 4294967295, not '-1'"
expect 2 "$nf" plot tree --topo fattree:k=4 --groups grid2d:4x4 --group 0 --mapping x --out "$tmp/t.dot"; has err "--mapping"
expect 2 "$nf" plot latency --in x.json --out "$(printf 'x\ny.png')"; has err "no control characters"
absent "$tmp/x.png"; absent "$tmp/t.dot"

# ---- unreadable or unusable input ---------------------------------------------------------
expect 1 "$nf" plot latency --in "$tmp/nope.json" --out "$tmp/x.png"; has err "netfab plot: $tmp/nope.json: No such file"
expect 1 "$nf" plot latency --in "$tmp" --out "$tmp/x.png";           has err "Is a directory"
printf '[{"offered": 0.1,' >"$tmp/bad.json"
expect 2 "$nf" plot latency --in "$tmp/bad.json" --out "$tmp/x.png";  has err "netfab plot: $tmp/bad.json:1:"
: >"$tmp/empty.json"
expect 2 "$nf" plot efi --in "$tmp/empty.json" --out "$tmp/x.png";   has err "netfab plot: $tmp/empty.json:"
echo '{"a": 1}' >"$tmp/obj.json"
expect 2 "$nf" plot latency --in "$tmp/obj.json" --out "$tmp/x.png";  has err 'expected an array of rows, or an object with "rows" or "results"'
echo '[1, 2]' >"$tmp/nums.json"
expect 2 "$nf" plot latency --in "$tmp/nums.json" --out "$tmp/x.png"; has err "a row is not an object"
absent "$tmp/x.png"

# ---- latency: a real sim run ----------------------------------------------------------------
expect 0 "$nf" sim --topo torus:4x4,c=1 --routing dor --traffic uniform --sweep 0.1:0.5:0.2 \
    --cycles 500 --warmup 200 --json
cp "$tmp/out" "$tmp/sim.json"
expect 0 "$nf" plot latency --in "$tmp/sim.json" --out "$tmp/lat.png" --script "$tmp/lat.gp"
is_png "$tmp/lat.png"
has_gp() { grep -qF -- "$2" "$1" && ok || bad "$1 lacks '$2'"; }
has_gp "$tmp/lat.gp" "set terminal pngcairo size 900,560 noenhanced"
has_gp "$tmp/lat.gp" "set output '$tmp/lat.png'"
has_gp "$tmp/lat.gp" "set xlabel 'offered'"; has_gp "$tmp/lat.gp" "set ylabel 'lat_mean'"
# one line (nothing varies), titled by y, with the 3 load points in ascending x, none saturated:
# the y axis is left alone
[ "$(grep -c '^# series' "$tmp/lat.gp")" = 1 ] && ok || bad "sim: not one series"
has_gp "$tmp/lat.gp" "# series 1: lat_mean"
[ "$(grep -c '^e$' "$tmp/lat.gp")" = 1 ] && ok || bad "sim: not one data block"
blocks "$tmp/lat.gp" | awk '/^[0-9]/ { n++; if ($1 <= last || $3 != 0) bad = 1; last = $1 } END { exit bad || n != 3 }' \
    && ok || bad "sim: want 3 unsaturated points in ascending x: $(blocks "$tmp/lat.gp" | tr '\n' ' ')"
lacks "$tmp/lat.gp" "set yrange"
# the points are the rows' offered and lat_mean
awk '/^[0-9]/ { print $1, $2 }' "$tmp/lat.gp" >"$tmp/pts"
tr -d ' \n' <"$tmp/sim.json" | tr '{' '\n' | sed -n 's/.*"offered":\([0-9.e-]*\),.*"lat_mean":\([0-9.e-]*\),.*/\1 \2/p' >"$tmp/rows"
awk 'NR == FNR { x[NR] = $1; y[NR] = $2; n = NR; next }
     { m++; if ((x[m] - $1)^2 > 1e-12 || (y[m] - $2)^2 > 1e-9) bad = 1 }
     END { exit bad || m != n }' "$tmp/rows" "$tmp/pts" && ok || bad "sim: points differ from the rows: $(cat "$tmp/pts" | tr '\n' ' ')"
expect 0 "$nf" plot latency --in "$tmp/sim.json" --out "$tmp/lat.svg" --x load --y lat_p99 \
    --title "it's lat_p99" --script "$tmp/lat2.gp"
is_svg "$tmp/lat.svg"
has_gp "$tmp/lat2.gp" "set terminal svg"; has_gp "$tmp/lat2.gp" "set title 'it''s lat_p99'"
has_gp "$tmp/lat2.gp" "set xlabel 'load'"; has_gp "$tmp/lat2.gp" "set ylabel 'lat_p99'"
# from standard input, the script to standard output
expect 0 sh -c "\"$nf\" plot latency --in - --out \"$tmp/lat3.png\" --script - <\"$tmp/sim.json\""
is_png "$tmp/lat3.png"; has out "^plot '-' using 1:2"
expect 1 "$nf" plot latency --in "$tmp/sim.json" --out "$tmp/x.png" --x nosuch
has err "no row has both \"nosuch\" and \"lat_mean\" as numbers"
expect 1 "$nf" plot latency --in "$tmp/sim.json" --out /nonexistent-dir/x.png; has err "cannot write /nonexistent-dir/x.png"
absent "$tmp/x.png"

# ---- latency: sweep-shaped rows -----------------------------------------------------------
# traffic and seed take two values each (topo and routing one): four series, in the order first
# seen, each sorted by x; a row without lat_mean and one whose offered is no number are skipped;
# the saturated point (900) is kept but flagged, and the y axis stops at 4 x 40
cat >"$tmp/rows.txt" <<'EOF'
[{"topo": "torus:4x4,c=1", "routing": "dor", "traffic": "uniform", "seed": 1, "offered": 0.5, "lat_mean": 20.0, "saturated": false},
 {"topo": "torus:4x4,c=1", "routing": "dor", "traffic": "uniform", "seed": 1, "offered": 0.1, "lat_mean": 10, "saturated": false},
 {"topo": "torus:4x4,c=1", "routing": "dor", "traffic": "uniform", "seed": 1, "offered": 0.9, "lat_mean": 900.0, "saturated": true},
 {"topo": "torus:4x4,c=1", "routing": "dor", "traffic": "tornado", "seed": 1, "offered": 0.3, "lat_mean": 30.0},
 {"topo": "torus:4x4,c=1", "routing": "dor", "traffic": "tornado", "seed": 1, "offered": 0.1, "lat_mean": 12.0},
 {"topo": "torus:4x4,c=1", "routing": "dor", "traffic": "uniform", "seed": 2, "offered": 0.1, "lat_mean": 11.0},
 {"topo": "torus:4x4,c=1", "routing": "dor", "traffic": "uniform", "seed": 2, "offered": 0.3, "lat_mean": 14.0},
 {"topo": "torus:4x4,c=1", "routing": "dor", "traffic": "tornado", "seed": 2, "offered": 0.2, "lat_mean": 40.0},
 {"topo": "torus:4x4,c=1", "routing": "dor", "traffic": "uniform", "seed": 2, "offered": 0.7},
 {"topo": "torus:4x4,c=1", "routing": "dor", "traffic": "uniform", "seed": 2, "offered": "n/a", "lat_mean": 5.0}]
EOF
cat >"$tmp/want4" <<'EOF'
# series 1: traffic=uniform, seed=1
0.1 10 0
0.5 20 0
0.9 900 1
e
# series 2: traffic=tornado, seed=1
0.1 12 0
0.3 30 0
e
# series 3: traffic=uniform, seed=2
0.1 11 0
0.3 14 0
e
# series 4: traffic=tornado, seed=2
0.2 40 0
e
EOF
{ printf '{"results": '; cat "$tmp/rows.txt"; echo '}'; } >"$tmp/sweep.json"
{ printf '{"experiment": "x", "rows": '; cat "$tmp/rows.txt"; echo '}'; } >"$tmp/exp.json"
for f in rows.txt sweep.json exp.json; do
    expect 0 "$nf" plot latency --in "$tmp/$f" --out "$tmp/sw.png" --script "$tmp/sw.gp"
    is_png "$tmp/sw.png"
    blocks "$tmp/sw.gp" | cmp -s - "$tmp/want4" && ok || { bad "$f: data blocks differ"; blocks "$tmp/sw.gp" | diff - "$tmp/want4" | head -20; }
done
has_gp "$tmp/sw.gp" "set yrange [*:160]"
has_gp "$tmp/sw.gp" "with linespoints pt variable title 'traffic=tornado, seed=2', 1/0 with points pt 6 lc rgb 'black' title 'saturated'"
# --to-saturation: a line ends at its first saturated point (one more saturated row at 0.95 on
# series 1 is dropped, the one at 0.9 kept)
sed 's/^\[{/[{"topo": "torus:4x4,c=1", "routing": "dor", "traffic": "uniform", "seed": 1, "offered": 0.95, "lat_mean": 950.0, "saturated": true},\n {/' "$tmp/rows.txt" >"$tmp/rows5.txt"
expect 0 "$nf" plot latency --in "$tmp/rows5.txt" --out "$tmp/s5.png" --script "$tmp/s5.gp"
blocks "$tmp/s5.gp" | grep -q "^0.95 950 1$" && ok || bad "without --to-saturation the 0.95 point is drawn"
expect 0 "$nf" plot latency --in "$tmp/rows5.txt" --out "$tmp/s5.png" --script "$tmp/s5.gp" --to-saturation
blocks "$tmp/s5.gp" | cmp -s - "$tmp/want4" && ok || { bad "--to-saturation: data blocks differ"; blocks "$tmp/s5.gp" | diff - "$tmp/want4" | head; }
expect 2 "$nf" plot efi --in "$tmp/rows5.txt" --out "$tmp/s5.png" --to-saturation; has err "--to-saturation does not apply to efi"
# one key chosen: the two seeds' points merge, ties in x kept in row order
expect 0 "$nf" plot latency --in "$tmp/sweep.json" --out "$tmp/sw.svg" --series traffic --script "$tmp/sw1.gp"
is_svg "$tmp/sw.svg"
[ "$(grep -c '^# series' "$tmp/sw1.gp")" = 2 ] && ok || bad "--series traffic: not 2 series"
[ "$(blocks "$tmp/sw1.gp" | sed -n '2,6p' | tr '\n' ' ')" = "0.1 10 0 0.1 11 0 0.3 14 0 0.5 20 0 0.9 900 1 " ] && ok || bad "--series traffic: uniform's points"
has_gp "$tmp/sw1.gp" "# series 2: traffic=tornado"
# no key: one line of all 8 points; two keys given, one constant
expect 0 "$nf" plot latency --in "$tmp/sweep.json" --out "$tmp/sw.png" --series '' --script "$tmp/sw0.gp"
[ "$(grep -c '^# series' "$tmp/sw0.gp")" = 1 ] && ok || bad "--series '': not 1 series"
[ "$(grep -c '^0\.' "$tmp/sw0.gp")" = 8 ] && ok || bad "--series '': not 8 points"
expect 0 "$nf" plot latency --in "$tmp/sweep.json" --out "$tmp/sw.png" --series routing,seed --script "$tmp/sw2.gp"
has_gp "$tmp/sw2.gp" "# series 1: routing=dor, seed=1"; has_gp "$tmp/sw2.gp" "# series 2: routing=dor, seed=2"

# ---- efi ----------------------------------------------------------------------------------
# by hand (as in mcast.sh): the same pod-0 group twice gives minihop two links at EFI 2 and
# minihop-new four at EFI 1; the two histograms stand side by side (boxes 0.4 wide, 0.2 off)
printf '0 2\n0 2\n' >"$tmp/g2.txt"
expect 0 "$nf" mcast --topo fattree:k=4 --groups "file:$tmp/g2.txt" --engine minihop,minihop-new --json
cp "$tmp/out" "$tmp/m2.json"
expect 0 "$nf" plot efi --in "$tmp/m2.json" --out "$tmp/efi.png" --script "$tmp/efi.gp"
is_png "$tmp/efi.png"
[ "$(blocks "$tmp/efi.gp" | tr '\n' ' ')" = "# series 1: minihop 2 2 e # series 2: minihop-new 1 4 e " ] && ok || bad "efi blocks: $(blocks "$tmp/efi.gp" | tr '\n' ' ')"
has_gp "$tmp/efi.gp" "set boxwidth 0.4 absolute"; has_gp "$tmp/efi.gp" "set xrange [0.4:2.6]"
has_gp "$tmp/efi.gp" "plot '-' using (\$1 -0.2):2 with boxes title 'minihop', '-' using (\$1 +0.2):2 with boxes title 'minihop-new'"
# every engine on a real workload: one histogram each, its pairs those of efi_hist
expect 0 "$nf" mcast --topo fattree:k=4 --groups grid2d:4x4 --json
cp "$tmp/out" "$tmp/m.json"
expect 0 "$nf" plot efi --in "$tmp/m.json" --out "$tmp/efi.svg" --script "$tmp/efi6.gp"
is_svg "$tmp/efi.svg"
[ "$(grep -c '^# series' "$tmp/efi6.gp")" = 11 ] && ok || bad "efi: not 11 histograms"
{ tr -d ' \n' <"$tmp/m.json" | sed 's/.*"efi_hist":\[\[\([^}]*\)\]\]}\]$/\1/; s/\],\[/\n/g; s/,/ /g'; echo; } >"$tmp/want6"
sed -n '/^# series 11: fulb+$/,/^e$/p' "$tmp/efi6.gp" | sed '1d;$d' >"$tmp/got6"
[ -s "$tmp/want6" ] && cmp -s "$tmp/want6" "$tmp/got6" && ok || bad "efi: fulb+'s pairs '$(cat "$tmp/got6")' vs efi_hist '$(cat "$tmp/want6")'"
# sweep-shaped objects: the topo that varies goes into the titles; an empty histogram gets a
# title only; a row without efi_hist is skipped
cat >"$tmp/efis.json" <<'EOF'
{"results": [{"engine": "fulb", "topo": "A", "efi_hist": [[1, 3], [2, 1]]},
             {"engine": "fulb", "topo": "B", "efi_hist": []},
             {"engine": "sssp", "topo": "B", "efi_hist": [[1, 2], [3, 1]]},
             {"engine": "sssp", "topo": "C"}]}
EOF
expect 0 "$nf" plot efi --in "$tmp/efis.json" --out "$tmp/efis.png" --script "$tmp/efis.gp" --title 'EFI_x'
is_png "$tmp/efis.png"
has_gp "$tmp/efis.gp" "set title 'EFI_x'"
has_gp "$tmp/efis.gp" "title 'fulb, topo=A', 1/0 with boxes title 'fulb, topo=B (no links)', '-' using (\$1 +0.2):2 with boxes title 'sssp, topo=B'"
[ "$(blocks "$tmp/efis.gp" | tr '\n' ' ')" = "# series 1: fulb 1 3 2 1 e # series 3: sssp 1 2 3 1 e " ] && ok || bad "efis blocks: $(blocks "$tmp/efis.gp" | tr '\n' ' ')"
expect 1 "$nf" plot efi --in "$tmp/sim.json" --out "$tmp/x.png"; has err "no row has an \"efi_hist\""
echo '[{"engine": "fulb", "efi_hist": []}]' >"$tmp/e0.json"
expect 1 "$nf" plot efi --in "$tmp/e0.json" --out "$tmp/x.png"; has err "every efi_hist is empty"
echo '[{"engine": "fulb", "efi_hist": [[1, 2], [3]]}]' >"$tmp/e1.json"
expect 2 "$nf" plot efi --in "$tmp/e1.json" --out "$tmp/x.png"; has err "row 0: efi_hist is not a list of \[efi, links\]"
absent "$tmp/x.png"

# ---- tree ---------------------------------------------------------------------------------
# fattree:k=4 by hand: switches 0-7 edge (2 per pod), 8-15 aggregation, 16-19 core; rank r is CA
# node 20 + r. Ranks 0 and 4 sit in pods 0 and 1: minihop roots the tree at the first core
# switch (2 hops from both edge switches) and goes down through each pod's first aggregation
# switch: 4 switch links and 2 host links, 7 nodes on 4 ranks
printf '0 2\n0 4\n' >"$tmp/g.txt"
tree="--topo fattree:k=4 --groups file:$tmp/g.txt"
expect 0 "$nf" plot tree $tree --group 1 --engine minihop --out "$tmp/t.dot"
for l in '  n16 -> n8 [taillabel="1" headlabel="3"];' '  n8 -> n0 [taillabel="1" headlabel="3"];' \
    '  n16 -> n10 [taillabel="2" headlabel="3"];' '  n10 -> n2 [taillabel="1" headlabel="3"];' \
    '  n0 -> n20 [taillabel="1" headlabel="1"];' '  n2 -> n24 [taillabel="1" headlabel="1"];' \
    '  { rank=same; n16; }' '  { rank=same; n8; n10; }' '  { rank=same; n0; n2; }' '  { rank=same; n20; n24; }' \
    '  n20 [shape=ellipse label="ft pod0 edge0 n0" tooltip="0x0002c90000000150 lid 21"];' \
    '  n24 [shape=ellipse label="ft pod1 edge0 n0" tooltip="0x0002c90000000190 lid 25"];' \
    '  n16 [shape=box label="ft core0" tooltip="0x0002c90000000110 lid 17, root" style="filled,bold" fillcolor="gold" penwidth=2];'; do
    grep -qxF -- "$l" "$tmp/t.dot" && ok || bad "t.dot lacks: $l"
done
[ "$(grep -c -- ' -> ' "$tmp/t.dot")" = 6 ] && ok || bad "t.dot: not 6 edges"
[ "$(grep -c 'shape=box' "$tmp/t.dot")" = 5 ] && ok || bad "t.dot: not 5 switches"
[ "$(grep -c 'shape=ellipse' "$tmp/t.dot")" = 2 ] && ok || bad "t.dot: not 2 endpoints"
[ "$(grep -c 'fillcolor' "$tmp/t.dot")" = 1 ] && ok || bad "t.dot: not one root"
has_gp "$tmp/t.dot" 'label="group 1 (MLID 0xC002), minihop: 2 members, height 3"'
# every engine: a minimal tree for two pods is 6 links under a core switch, members 20 and 24;
# for one pod (group 0) 4 links under an aggregation switch, members 20 and 22
for e in minihop minihop-new sssp sssp-new fulb fulb+; do
    expect 0 "$nf" plot tree $tree --group 1 --engine $e --out "$tmp/t.dot"
    [ "$(grep -c -- ' -> ' "$tmp/t.dot")" = 6 ] && ok || bad "$e: group 1 has not 6 edges"
    grep -Eq '^  n1[6-9] \[shape=box label="ft core[0-3]" .*fillcolor="gold"' "$tmp/t.dot" && ok || bad "$e: group 1's root is no core switch"
    grep -q '^  n20 \[shape=ellipse' "$tmp/t.dot" && grep -q '^  n24 \[shape=ellipse' "$tmp/t.dot" && ok || bad "$e: group 1's members"
    expect 0 "$nf" plot tree $tree --group 0 --engine $e --out "$tmp/t0.dot"
    [ "$(grep -c -- ' -> ' "$tmp/t0.dot")" = 4 ] && ok || bad "$e: group 0 has not 4 edges"
    grep -Eq '^  n(8|9) \[shape=box label="ft pod0 agg[01]" .*fillcolor="gold"' "$tmp/t0.dot" && ok || bad "$e: group 0's root"
    grep -q '^  n20 \[shape=ellipse' "$tmp/t0.dot" && grep -q '^  n22 \[shape=ellipse' "$tmp/t0.dot" && ok || bad "$e: group 0's members"
done
expect 0 "$nf" plot tree $tree --group 1 --out "$tmp/t.png"; is_png "$tmp/t.png"
expect 0 "$nf" plot tree $tree --group 1 --out "$tmp/t.svg" --title 'two pods'
is_svg "$tmp/t.svg"; has_gp "$tmp/t.svg" ">two pods</text>"; has_gp "$tmp/t.svg" ">ft pod1 edge0 n0</text>"
# the workload options as in netfab mcast: the endpoints drawn are the group's members as
# mcast --dump-groups lists them (port GUIDs; a generated CA's port 1 has its node's GUID)
wl="--topo fattree:k=4 --groups random:n=4,size=5 --procs-per-node 2 --mapping random --seed 5"
expect 0 "$nf" mcast $wl --engine sssp --dump-groups "$tmp/gr.out"
sed -n 3p "$tmp/gr.out" | cut -d' ' -f2- | tr ' ' '\n' | sort >"$tmp/want_m"
expect 0 "$nf" plot tree $wl --engine sssp --group 2 --out "$tmp/r.dot"
sed -n 's/.*shape=ellipse.*tooltip="\(0x[0-9a-f]*\) .*/\1/p' "$tmp/r.dot" | sort >"$tmp/got_m"
[ -s "$tmp/want_m" ] && cmp -s "$tmp/want_m" "$tmp/got_m" && ok || bad "random workload: members $(cat "$tmp/got_m" | tr '\n' ' ') vs $(cat "$tmp/want_m" | tr '\n' ' ')"
expect 2 "$nf" plot tree $wl --group 0 --procs-per-node 0 --out "$tmp/x.dot"
has_line err "netfab plot: --procs-per-node wants a whole number from 1 to 1024, not '0'"
# a name ending in a backslash and one that is not UTF-8, from a real-format dump: escaped in the
# DOT text, and dot draws them
sed -e 's/rack:A   x/rack:A \\/g' -e "s/\"spine\"/\"sp$(printf '\351')ne\"/g" "$2/tests/data/small.ibnet" >"$tmp/w.ibnet"
printf '0 1\n' >"$tmp/g1.txt"
expect 0 "$nf" plot tree --topo "file:$tmp/w.ibnet" --groups "file:$tmp/g1.txt" --group 0 --out "$tmp/w.dot"
has_gp "$tmp/w.dot" 'label="leaf #1 [0-3]; rack:A \\"'; has_gp "$tmp/w.dot" 'label="sp?ne"'
[ "$(grep -c -- ' -> ' "$tmp/w.dot")" = 3 ] && ok || bad "w.dot: not 3 edges"
expect 0 "$nf" plot tree --topo "file:$tmp/w.ibnet" --groups "file:$tmp/g1.txt" --group 0 --out "$tmp/w.svg"
has_gp "$tmp/w.svg" 'rack:A \</text>'
# refusals
expect 2 "$nf" plot tree $tree --group 2 --out "$tmp/x.dot";             has err "--group 2 is out of range"
expect 2 "$nf" plot tree $tree --group 0 --engine nosuch --out "$tmp/x.dot"
has err "^netfab plot: unknown engine 'nosuch' (known: minihop, .*fulb+)$"
expect 2 "$nf" plot tree --topo nosuch:x=1 --groups grid2d:4x4 --group 0 --out "$tmp/x.dot"; has err "unknown topology"
expect 2 "$nf" plot tree --topo fattree:k=24 --groups random:n=1,size=500 --group 0 --out "$tmp/x.dot"
has err "group 0's tree has [0-9]* nodes, too many to draw readably (at most 400)"
# two switches with no cable between them: a group across them cannot be routed (the cut leaves
# one CA link listed on the CA side only, so the file is read with partial=1)
grep -v '"S-0000000000000[ab]00"\[[34]\]' "$2/tests/data/small.ibnet" | grep -v '^\[7\]' >"$tmp/cut.ibnet"
printf '0\n0 1\n' >"$tmp/gc.txt"
expect 0 "$nf" plot tree --topo "file:$tmp/cut.ibnet,partial=1" --groups "file:$tmp/gc.txt" --group 0 --out "$tmp/c.dot"
expect 2 "$nf" plot tree --topo "file:$tmp/cut.ibnet,partial=1" --groups "file:$tmp/gc.txt" --group 1 --out "$tmp/x.dot"
has err "group 1 was not routed by fulb"
expect 1 "$nf" plot tree $tree --group 1 --out /nonexistent-dir/t.dot; has err "cannot write /nonexistent-dir/t.dot"
expect 1 "$nf" plot tree $tree --group 1 --out /nonexistent-dir/t.svg; has err "cannot write /nonexistent-dir/t.svg"
absent "$tmp/x.dot"

# ---- gnuplot and dot failing or missing: exit 1, no picture left -------------------------------
mkdir "$tmp/bin" "$tmp/nobin"
printf '#!/bin/sh\necho "gnuplot: broken" >&2\nexit 3\n' >"$tmp/bin/gnuplot"
printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/dot"
chmod +x "$tmp/bin/gnuplot" "$tmp/bin/dot"
expect 1 env PATH="$tmp/bin" "$nf" plot latency --in "$tmp/sim.json" --out "$tmp/x.png"
has err "netfab plot: gnuplot failed (exit status 3)"; absent "$tmp/x.png"
# a gnuplot that exits without reading 20,000 rows (more than a pipe holds): reported, not a
# SIGPIPE death
awk 'BEGIN { printf "["; for (i = 0; i < 20000; i++) printf "%s{\"offered\": %d, \"lat_mean\": %d}", i ? "," : "", i, i; print "]" }' >"$tmp/big.json"
expect 1 env PATH="$tmp/bin" "$nf" plot latency --in "$tmp/big.json" --out "$tmp/x.png"
has err "netfab plot: gnuplot failed (exit status 3)"; absent "$tmp/x.png"
expect 1 env PATH="$tmp/nobin" "$nf" plot efi --in "$tmp/m.json" --out "$tmp/x.svg"
has err "cannot run gnuplot"; absent "$tmp/x.svg"
expect 1 env PATH="$tmp/bin" "$nf" plot tree $tree --group 1 --out "$tmp/x.svg"
has err "dot wrote nothing to $tmp/x.svg"; absent "$tmp/x.svg"
expect 0 env PATH="$tmp/nobin" "$nf" plot tree $tree --group 1 --out "$tmp/x.dot"
# no dot needed for a .dot: the graph is written whole, group 1's 6 edges and its 2 members
[ "$(grep -c -- ' -> ' "$tmp/x.dot")" = 6 ] && ok || bad "x.dot: not 6 edges"
grep -q '^  n20 \[shape=ellipse' "$tmp/x.dot" && grep -q '^  n24 \[shape=ellipse' "$tmp/x.dot" && ok || bad "x.dot: group 1's members"
[ "$(tail -n 1 "$tmp/x.dot")" = "}" ] && ok || bad "x.dot does not end the graph"

finish
