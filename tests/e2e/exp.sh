#!/bin/sh
# End-to-end checks of `netfab exp`: the list, usage errors and exit statuses, the JSON rows and
# their keys, the table, --plot's PNG.
# Usage: exp.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
expect 0 "$nf" exp --help;                  has out "experiments:"; has out "tables"
expect 0 "$nf" exp list;                    has out "^tables "
expect 2 "$nf" exp;                         has err "which experiment"
expect 2 "$nf" exp nosuch;                  has err "unknown experiment 'nosuch' (known: dual-rail, mcast-height, mcast-efi, mcast-workload, collectives, faults, tables"
expect 2 "$nf" exp tables list;             has err "one experiment at a time"
expect 2 "$nf" exp tables --bogus;          has err "unknown or incomplete option '--bogus'"
expect 2 "$nf" exp tables --threads 0;      has err "--threads wants"
expect 2 "$nf" exp tables --seed -3;        has err "--seed wants"
# the two-level tables: rows for 512, 40,960 and 262,144 endpoints; the seed's saving at 256K
# (supernodes of 256: (256 + 1024) / 262144 entries, 99.51%); every lookup checked where asked
expect 0 "$nf" exp tables --quick --json --plot "$tmp/t.png"
head -c 8 "$tmp/t.png" | od -An -c | grep -q "P   N   G" && ok || bad "--plot wrote no PNG"
has out '"rows"'; has out '"experiment": "tables"'
for k in endpoints flat_bytes two_level_bytes saved lookups_checked mismatches; do has out "\"$k\""; done
has out '"endpoints": 512,'; has out '"endpoints": 40960,'; has out '"endpoints": 262144,'
has out '"two_level_table_bytes": 20480,'; has out '"flat_table_bytes": 4194304,'
has out '"saved": 0.9951'
[ "$(grep -c '"mismatches": 0,' "$tmp/out")" = 2 ] && ok || bad "two fabrics checked without mismatch"
expect 1 "$nf" exp tables --quick --plot /nonexistent/dir/t.png; has err "cannot write /nonexistent/dir/t.png"
# faults, as a table: the leaf-0 case cuts its 8 endpoints off in the fat tree (1 - 2 x 8 x 56 /
# (64 x 63) = 0.7778 of the pairs left) and none in the gft
expect 0 "$nf" exp faults --quick
line_re "$tmp/out" 1 "^ +fabric +case +failed_links +trials +reachability +reachability_min +saturation_trials +saturation$"
[ "$(wc -l <"$tmp/out")" = 28 ] && ok || bad "faults: a header and 27 rows: $(wc -l <"$tmp/out")"
grep -Eq "^ +fat tree +leaf 0 up links +8 +1 +0.7778 +0.7778 +1 +0\.[0-9]+$" "$tmp/out" && ok || bad "fat tree leaf case"
grep -Eq "^ +gft, 1 rail +leaf 0 up links +8 +1 +1 +1 +1 +0\.[0-9]+$" "$tmp/out" && ok || bad "gft leaf case"
grep -Eq "^ +fat tree +random +0 +1 +1 +1 +1 +0\.[0-9]+$" "$tmp/out" && ok || bad "no failures, all reachable"
# dual-rail: 1 MiB over one rail moves a flit (32 bytes) a cycle, over two with the port chosen
# per packet twice that; the target learns of 256 bytes 56 cycles sooner by the reply word
# (write + ack + notification: 60 + (8 + 20) + (8 + 20) = 116 against 60)
expect 0 "$nf" exp dual-rail --quick --json
tr -d ' \n' <"$tmp/out" >"$tmp/flat"
grep -q '"rails":1,"mode":"rail0","msg_bytes":1048576,"bandwidth":31.9' "$tmp/flat" && ok || bad "one rail"
grep -q '"rails":2,"mode":"dynamic","msg_bytes":1048576,"bandwidth":63.79' "$tmp/flat" && ok || bad "two rails"
grep -q '"mode":"replyword","msg_bytes":256,"latency":60}' "$tmp/flat" && ok || bad "reply word"
grep -q '"measure":"bandwidth,rail0busy","rails":2,"mode":"dynamic","msg_bytes":1048576,"bandwidth":31.9' "$tmp/flat" && ok || bad "busy rail avoided"
grep -q '"mode":"write+notification","msg_bytes":256,"latency":116}' "$tmp/flat" && ok || bad "notification"
# mcast-height: 4 ranks on one leaf (height 1) or on 4 leaves (height 2): the second pays two
# more hops (router 3 + link 1 each: 8 cycles) at every size; 8 bytes in 52 cycles (40 of NIC
# work, 1 + 3 to the leaf, the 8-flit packet to the three others at once: 8)
expect 0 "$nf" exp mcast-height --quick --json
tr -d ' \n' <"$tmp/out" >"$tmp/flat"
grep -q '"height":1,"msg_bytes":8,"lat_mean":52.0,"lat_p99":52' "$tmp/flat" && ok || bad "height 1"
grep -q '"height":2,"msg_bytes":8,"lat_mean":60.0,"lat_p99":60' "$tmp/flat" && ok || bad "height 2"
grep -q '"height":2,"msg_bytes":2048,"lat_mean":116.0' "$tmp/flat" && ok || bad "height 2, 2 KB"
# mcast-efi: one group alone takes what mcast-height's height-1 group does (52 and 108 cycles);
# more groups on the same tree only add
expect 0 "$nf" exp mcast-efi --quick --json
tr -d ' \n' <"$tmp/out" >"$tmp/flat"
grep -q '"efi":1,"msg_bytes":8,"lat_mean":52.0' "$tmp/flat" && ok || bad "EFI 1, 8 bytes"
grep -q '"efi":1,"msg_bytes":2048,"lat_mean":108.0' "$tmp/flat" && ok || bad "EFI 1, 2 KB"
awk '/"msg_bytes": 2048/ { getline; v = $2 + 0; if (v < last) bad = 1; last = v } END { exit bad }' "$tmp/out" && ok || bad "2 KB latency grows with EFI"
# collectives: hardware broadcast is one multicast (21 cycles for 16 ranks: 8 of NIC work,
# then leaf, spine, leaf); every op has a hw row and its software rows, for 16..128 ranks
expect 0 "$nf" exp collectives --quick --json
tr -d ' \n' <"$tmp/out" >"$tmp/flat"
grep -q '"op":"broadcast","impl":"hw","algorithm":"tree+multicast","nodes":16,"lat_mean":21.0' "$tmp/flat" && ok || bad "hw broadcast"
[ "$(grep -c '"impl": "hw"' "$tmp/out")" = 16 ] && ok || bad "16 hw rows"
[ "$(grep -c '"impl": "sw"' "$tmp/out")" = 20 ] && ok || bad "20 sw rows"
# mcast-workload: FULB-MC's trees load a link far less than MINIHOP-MC's, and its multicasts
# arrive far sooner
expect 0 "$nf" exp mcast-workload --quick
mh=$(awk '$1 == "minihop" { print $2, $4 }' "$tmp/out") fu=$(awk '$1 == "fulb" { print $2, $4 }' "$tmp/out")
awk -v a="$mh" -v b="$fu" 'BEGIN { split(a, x, " "); split(b, y, " "); exit !(y[1] * 10 < x[1] && y[2] * 4 < x[2]) }' && ok || bad "fulb ($fu) vs minihop ($mh): latency, max EFI"
finish
