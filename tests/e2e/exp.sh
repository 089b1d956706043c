#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `netfab exp`: the list, usage errors and exit statuses, the JSON rows and
# their keys, the table, --plot's PNG.
# Usage: exp.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
expect 0 "$nf" exp --help;                  has out "experiments:"; has out "tables"
expect 0 "$nf" exp list;                    has out "^tables "
expect 2 "$nf" exp;                         has err "which experiment"
expect 2 "$nf" exp nosuch;                  has err "unknown experiment 'nosuch' (known: dual-rail, mcast-height, mcast-efi, mcast-workload, collectives, faults, tables, link-errors"
expect 2 "$nf" exp tables list;             has_line err "netfab exp: unexpected argument 'list'"
expect 2 "$nf" exp tables --bogus;          has_line err "netfab exp: unknown option '--bogus' (netfab exp --help lists them)"
expect 2 "$nf" exp tables --threads 0;      has err "--threads wants"
expect 2 "$nf" exp tables --seed -3;        has err "--seed wants"
# the two-level tables: rows for 512, 40,960 and 262,144 endpoints; the seed's saving at 256K
# (supernodes of 256: (256 + 1024) / 262144 entries, 99.51%); every lookup checked where asked
expect 0 "$nf" exp tables --quick --json --plot "$tmp/t.png"
head -c 8 "$tmp/t.png" | od -An -c | grep -q "P   N   G" && ok || bad "--plot wrote no PNG"
json_str out experiment tables; json_val out quick true
json_nums out endpoints "512 40960 262144"; json_nums out supernode_endpoints "256 256 256"
big='"endpoints":262144,'
json_num out two_level_table_bytes 20480 "$big"; json_num out flat_table_bytes 4194304 "$big"
# 1 - 1280 / 262144 = 0.9951171875, printed to 9 digits
json_num out saved 0.995117188 "$big"
# the two smaller fabrics' lookups all checked, none wrong; the largest not checked (null)
json_vals out mismatches "0 0 null"
json_range out lookups_checked 1 1e12 '"endpoints":512,'; json_range out lookups_checked 1 1e12 '"endpoints":40960,'
json_num out lookups_checked 0 "$big"
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
# (1 MiB in 32,768 flit cycles on one rail, 16,384 on two, plus the 52 cycles an 8-byte message
# takes: 32820 and 16436 cycles; bandwidth is bytes / cycles, printed to 9 digits; on two rails
# 4 cycles more: the message engine reads 2 flits a cycle, so the second port's first 8-flit
# packet leaves 4 cycles after the first's: 16440)
expect 0 "$nf" exp dual-rail --quick --json
one='"measure":"bandwidth","rails":1,"mode":"rail 0","msg_bytes":1048576,'
two='"measure":"bandwidth","rails":2,"mode":"dynamic","msg_bytes":1048576,'
busy='"measure":"bandwidth, rail 0 busy","rails":2,"mode":"dynamic","msg_bytes":1048576,'
json_num out cycles 32820 "$one"; json_num out bandwidth 31.9492992 "$one"
json_num out cycles 16440 "$two"; json_num out bandwidth 63.7819951 "$two"
json_num out cycles 32820 "$busy"; json_num out bandwidth 31.9492992 "$busy"
json_num out latency 60 '"mode":"reply word","msg_bytes":256,'
json_num out latency 116 '"mode":"write + notification","msg_bytes":256,'
# a broadcast of 64 KiB to all 512 endpoints completes as a put to the farthest one does: on
# rail 0's multicast chain 40 + 20 + 255 x 8 = 2100 cycles; on both rails' chains, each packet
# on the freer port, 1080 (the dynamic put's 64 KiB above)
json_num out cycles 2100 '"measure":"multicast","rails":1,"mode":"rail 0","msg_bytes":65536,'
json_num out cycles 1080 '"measure":"multicast","rails":2,"mode":"dynamic","msg_bytes":65536,'
# mcast-height: 4 ranks on one leaf (height 1) or on 4 leaves (height 2): the second pays two
# more hops (router 3 + link 1 each: 8 cycles) at every size; 8 bytes in 52 cycles (40 of NIC
# work, 1 + 3 to the leaf, the 8-flit packet to the three others at once: 8). The bare network:
expect 0 "$nf" exp mcast-height --quick --json --host none
json_num out lat_mean 52 '"height":1,"msg_bytes":8,'; json_num out lat_p99 52 '"height":1,"msg_bytes":8,'
json_num out lat_mean 60 '"height":2,"msg_bytes":8,'; json_num out lat_p99 60 '"height":2,"msg_bytes":8,'
json_num out lat_mean 108 '"height":1,"msg_bytes":2048,'; json_num out lat_mean 116 '"height":2,"msg_bytes":2048,'
# the host model (the default): issuing 205 cycles and receiving 205, each with a copy of
# ceil(bytes / 30) cycles, routers of 57; without its jitter the 8-byte multicast takes the
# bare network's 40 + 1 + 57 + 8 = 106 plus 2 x (205 + 1) = 518 at height 1, 2 x (57 + 1)
# more at height 2: 634; 2 KB: 40 + 1 + 57 + 64 = 162 plus 2 x (205 + 69) = 710, and 826
expect 0 "$nf" exp mcast-height --quick --json --host-jitter 0
json_num out lat_mean 518 '"height":1,"msg_bytes":8,'; json_num out lat_mean 634 '"height":2,"msg_bytes":8,'
json_num out lat_mean 710 '"height":1,"msg_bytes":2048,'; json_num out lat_mean 826 '"height":2,"msg_bytes":2048,'
json_num out lat_p99 518 '"height":1,"msg_bytes":8,'; json_num out host_jitter 0 '"height":1,"msg_bytes":8,'
# with the jitter (0..58 cycles on each side): every p99 above its mean, and each mean
# 0..116 above its jitter-free value (about 58 on average)
expect 0 "$nf" exp mcast-height --quick --json
python3 - "$tmp/out" <<'EOF' && ok || bad "mcast-height with jitter: means and tails"
import json, sys
rows = {(r["height"], r["msg_bytes"]): r for r in json.load(open(sys.argv[1]))["rows"]}
for key, base in (((1, 8), 518), ((2, 8), 634), ((1, 2048), 710), ((2, 2048), 826)):
    r = rows[key]
    assert r["lat_p99"] > r["lat_mean"], r
    assert base + 40 < r["lat_mean"] < base + 76, r
    assert r["lat_p99"] <= base + 116, r
EOF
# mcast-efi: one group alone takes what mcast-height's height-1 group does (52 and 108 cycles);
# more groups on the same tree only add
expect 0 "$nf" exp mcast-efi --quick --json --host none
json_num out lat_mean 52 '"efi":1,"msg_bytes":8,'; json_num out lat_mean 108 '"efi":1,"msg_bytes":2048,'
awk '/"msg_bytes": 2048/ { getline; v = $2 + 0; if (v < last) bad = 1; last = v } END { exit bad }' "$tmp/out" && ok || bad "2 KB latency grows with EFI"
# the host model's closed loop (each group's next multicast once its last is done): 2 KB at
# EFI 16 against EFI 1 is the +38% it was fitted to, within the fit's step (bench/fit_mcast_host.sh)
expect 0 "$nf" exp mcast-efi --quick --json
python3 - "$tmp/out" <<'EOF' && ok || bad "mcast-efi with hosts: EFI 16 near +38%"
import json, sys
rows = {(r["efi"], r["msg_bytes"]): r for r in json.load(open(sys.argv[1]))["rows"]}
v = rows[(16, 2048)]["lat_mean"] / rows[(1, 2048)]["lat_mean"] - 1
assert 0.34 < v < 0.42 and rows[(16, 2048)]["closed_loop"], v
EOF
# collectives: hardware broadcast is one multicast (21 cycles for 16 ranks: 8 of NIC work,
# then leaf, spine, leaf); every op has a hw row and its software rows, for 16..128 ranks
expect 0 "$nf" exp collectives --quick --json
json_num out lat_mean 21 '"op":"broadcast","impl":"hw","algorithm":"tree + multicast","nodes":16,'
[ "$(grep -c '"impl": "hw"' "$tmp/out")" = 20 ] && ok || bad "20 hw rows: 16 without host time, 4 with (128 ranks)"
[ "$(grep -c '"impl": "sw"' "$tmp/out")" = 24 ] && ok || bad "24 sw rows: 20 without host time, 4 with (128 ranks, no ring)"
# with the hosts of the multicast model: each of the 7 steps of the 128-rank recursive-doubling
# barrier pays an issuing and a receiving host (205 + 1 of copy each) and 0..58 of jitter on
# each side: 131 + 7 x 412 = 3015 to 131 + 7 x 528 = 3827; the hardware broadcast pays one
# receiving host, after its multicast's last member: 29 + 206 .. 29 + 264
json_num out lat_mean 131 '"op":"barrier","impl":"sw","algorithm":"recursive doubling","nodes":128,'
json_range out lat_mean 3015 3827 '"op":"barrier","impl":"sw","algorithm":"recursive doubling + host","nodes":128,'
json_range out lat_mean 235 293 '"op":"broadcast","impl":"hw","algorithm":"tree + multicast + host","nodes":128,'
json_num out host_cycles 0 '"op":"broadcast","impl":"hw","algorithm":"tree + multicast","nodes":128,'
# --host-cycles, the older model: 356 cycles a message on its issuing host alone: the barrier's
# steps each 356 later than without (131 + 7 x 356 = 2623); binomial broadcast the same (rank
# 0's host issues its 7 sends one after the other: the last leaves 7 x 356 late); the hardware
# rows pay nothing
expect 0 "$nf" exp collectives --quick --json --host-cycles 356
json_num out lat_mean 2623 '"op":"barrier","impl":"sw","algorithm":"recursive doubling + host","nodes":128,'
json_num out lat_mean 2623 '"op":"broadcast","impl":"sw","algorithm":"binomial + host","nodes":128,'
json_num out lat_mean 29 '"op":"broadcast","impl":"hw","algorithm":"tree + multicast + host","nodes":128,'
# the router delay fitted to the multicast paper (bench/fit_height_delay.sh): at 4 cycles an
# 8-byte multicast takes 40 + 1 + 4 + 8 = 53 cycles at height 1 and 2 x (4 + 1) more at
# height 2: 63 (+18.9%, the paper +20%); 2 KB 109 and 119
expect 0 "$nf" exp mcast-height --quick --json --router-delay 4 --host none
json_num out lat_mean 53 '"height":1,"msg_bytes":8,'; json_num out lat_mean 63 '"height":2,"msg_bytes":8,'
json_num out lat_mean 109 '"height":1,"msg_bytes":2048,'; json_num out lat_mean 119 '"height":2,"msg_bytes":2048,'
json_num out router_delay 4 '"height":2,"msg_bytes":2048,'
expect 2 "$nf" exp mcast-efi --period 0;    has err "--period wants"
# mcast-workload: FULB-MC's trees load a link far less than MINIHOP-MC's, and its multicasts
# arrive far sooner
expect 0 "$nf" exp mcast-workload --quick
mh=$(awk '$1 == "minihop" { print $2, $4 }' "$tmp/out") fu=$(awk '$1 == "fulb" { print $2, $4 }' "$tmp/out")
awk -v a="$mh" -v b="$fu" 'BEGIN { split(a, x, " "); split(b, y, " "); exit !(y[1] * 10 < x[1] && y[2] * 4 < x[2]) }' && ok || bad "fulb ($fu) vs minihop ($mh): latency, max EFI"
# link-errors: store-and-forward stores every packet received from a router (saf_frac 1) and
# carries no corrupt copy on; at BER 1e-5 (2% of 256-byte packets corrupt) cut-through does, on
# every link; with 4 bad links far fewer; every row delivers each packet of its window once.
# A multicast under the same errors: each member takes each packet once, the corrupt copies are
# sent again (later, never sooner); under cut-through copies made of a corrupt one are thrown
# away too (more discarded than sent again), under store-and-forward none is made
expect 0 "$nf" exp link-errors --quick --json
json_num out saf_frac 1 '"mode":"saf",'; json_num out wasted_flits 0 '"mode":"saf",'
json_num out saf_frac 0 '"mode":"vct",'
python3 - "$tmp/out" <<'EOF' && ok || bad "link-errors rows: counts, corrupt copies, wasted links"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
mc = [r for r in rows if r["case"] == "multicast"]
rows = [r for r in rows if r["case"] != "multicast"]
assert len(rows) == 12 and len(mc) == 6
for r in mc:  # every member one good copy of each packet; a corrupt copy is sent again
    clean = [x for x in mc if x["mode"] == r["mode"] and x["ber"] == 0][0]
    assert r["member_flits"] == r["clean_flits"] == 15 * 64 * 8, r
    assert (r["replayed_flits"] > 0) == (r["ber"] > 0) and r["cycles"] >= clean["cycles"], r
    assert r["discarded_flits"] == r["replayed_flits"] if r["mode"] == "saf" else r["discarded_flits"] >= r["replayed_flits"], r
assert [x for x in mc if x["mode"] == "vct" and x["ber"] > 0][0]["discarded_flits"] > [x for x in mc if x["mode"] == "vct" and x["ber"] > 0][0]["replayed_flits"]
for r in rows:
    assert r["pkts_generated"] == r["pkts_delivered"] > 1000 and not r["saturated"], r
    assert (r["corrupt_pkts"] > 0) == (r["ber"] > 0), r
    assert r["mode"] != "saf" or r["lat_mean"] > 1.2 * [x for x in rows if x["mode"] == "vct" and x["case"] == r["case"] and x["ber"] == r["ber"]][0]["lat_mean"], r
vct = {(r["case"], r["ber"]): r for r in rows if r["mode"] == "vct"}
assert vct[("all links", 1e-5)]["wasted_flits"] > 4 * vct[("4 bad links", 1e-5)]["wasted_flits"] > 0
EOF
# vs-taihulight: 1,024 processors, 4 links from processor 0 to the last on the prototype against
# 8 on TaihuLight's 4-level tree; two rails against one port; a row per measure and both means
expect 0 "$nf" exp vs-taihulight --quick --json
python3 - "$tmp/out" <<'EOF' && ok || bad "vs-taihulight rows: diameter, bandwidth, ratios"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert len(rows) == 13, len(rows)
d = [r for r in rows if r["measure"] == "diameter"][0]
assert d["prototype"] == 4 and d["taihulight"] == 8 and d["ratio"] == 2, d
for r in rows:
    if r["measure"] == "p2p bandwidth":
        assert 1.5 < r["ratio"] < 2, r
    if "prototype" in r:
        assert abs(r["ratio"] - (r["prototype"] / r["taihulight"] if r["unit"] == "GB/s" else r["taihulight"] / r["prototype"])) < 1e-6 * r["ratio"], r
assert sum(1 for r in rows if r["measure"] == "geometric mean" and r["paper"] == 4) == 2
EOF
# q-adaptive, proxies (the 72-node Dragonfly at the Q-adaptive authors' knobs): a curve row per
# (traffic, routing, load), 4 traffics x 3 loads; every routing carries a light load in full;
# minimal routing holds the worst case at a group's one global channel, 1/(a p) = 0.125; qadapt's
# table is 9 groups x 2 endpoints a router x 5 ports x 4 bytes; learning rows for qadapt, its
# global-source variant and val. Among the proxies every restrictive rule saturates the worst
# case above plain Valiant, the private one (qvp) highest.
expect 0 "$nf" exp q-adaptive --quick --json
python3 - "$tmp/out" <<'EOF' && ok || bad "q-adaptive rows"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
curve = [r for r in rows if r["kind"] == "curve"]
assert len(curve) == 7 * 4 * 3, len(curve)
for r in curve:
    if r["load"] < 0.15 and not (r["routing"] == "dfmin" and r["traffic"] == "worstcase"):
        assert abs(r["accepted"] - 0.1) < 0.01, r
top = lambda t, w: max(r["accepted"] for r in curve if r["traffic"] == t and r["routing"] == w)
assert 0.12 < top("worstcase", "dfmin") < 0.13
assert all(r["state_bytes"] == 360 and r["state_bytes_flat"] == 720 for r in curve if r["routing"].startswith("qadapt"))
assert {r["routing"] for r in rows if r["kind"] == "learning"} == {"val", "qadapt", "qadapt --q-src global"}
EOF
expect 0 "$nf" exp proxies --quick --json
python3 - "$tmp/out" <<'EOF' && ok || bad "proxies rows"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
top = lambda t, w: max(r["accepted"] for r in rows if r["traffic"] == t and r["routing"] == w)
ways = ["val " + p for p in ("restricted", "qvl", "qvr", "qvd", "qvp", "qvq")]
assert all(top("worstcase", w) > top("worstcase", "val") for w in ways)
assert max(ways, key=lambda w: top("worstcase", w)) == "val qvp"
EOF
# queues: an incast of one-packet queue messages (4 a sender) into the last endpoint's ring,
# whose host takes an entry every 40 cycles. Unreliable: the ring's entries are delivered, plus
# one for each host period between the first data in (52: 40 of NIC work, then a sender on the
# target's leaf, host link 1 + router 3 + host link 1 + 7 flits behind the head) and the last
# (308 for 64 messages: the target's two links carry 64 x 8 flits in 256 cycles; 1068 for 256),
# every freed entry being taken at once: 16 senders 4 + 6 and 16 + 6, 64 senders 4 + 25, 16 + 25
# and 64 + 25; the rest dropped. Reliable: all delivered, none dropped; its last entry no sooner
# than the host has freed messages - ring entries of them after the first: 52 + (n - ring) x 40.
# A ring as large as the incast: neither kind loses or retries, both the same times. A
# sender's message engine takes its four messages 8 cycles apart (its descriptor unit,
# nic_short_cycles), so they are released at 0, 8, 16 and 24 and ready 40 cycles later: the last
# data in 8 cycles later than if all four were ready at 40 (316), and the mean from release to
# the ring 8 cycles less (176 against 184 with the 256-entry ring).
expect 2 "$nf" exp queues --quick extra;    has err "unexpected argument 'extra'"
expect 0 "$nf" exp queues --quick --json
json_nums out delivered "10 22 64 64" '"kind":"unreliable","senders":16,'
json_nums out cycles "316 316 316 316" '"kind":"unreliable","senders":16,'
json_nums out delivered "29 41 89 256" '"kind":"unreliable","senders":64,'
json_nums out dropped "54 42 0 0 227 215 167 0" '"kind":"unreliable",'
json_num out retries 0 '"kind":"unreliable",'
json_num out dropped 0 '"kind":"reliable",'; json_num out delivered_frac 1 '"kind":"reliable",'
json_num out retries 0 '"ring_entries":256,'
json_nums out lat_mean "176 176 556.148438 556.148438" '"ring_entries":256,'
json_flat "$tmp/out" | tr '{' '\n' | awk -F'[,:]' '/"kind":"reliable"/ {
    for (i = 1; i < NF; i++) v[$i] = $(i + 1)
    n = v["\"messages\""]; r = v["\"ring_entries\""]; c = v["\"cycles\""]; rows++
    if (r < n && c < 52 + (n - r) * 40) no = 1; if (r < n && v["\"retries\""] < 1) no = 1 }
    END { exit no || rows != 8 }' && ok || bad "queues: reliable rows no sooner than the host allows"
# congestion: at 0.4 the hot endpoint's senders (8 x 0.4 + the others' share) offer more than
# its two links take, so it receives 2 flits a cycle in every mode; at 0.2 they offer
# 8 x 0.2 + 56 x 0.2 / 63 = 1.78, and it takes that
expect 0 "$nf" exp congestion --quick --json
[ "$(grep -c '"preaware":' "$tmp/out")" = 6 ] && ok || bad "congestion: 6 rows"
for m in off routing+rails +throttle; do
  json_num out hot_accepted 2.0 "\"load\":0.4,\"preaware\":\"$m\","
  json_range out hot_accepted 1.7 1.86 "\"load\":0.2,\"preaware\":\"$m\","
done
# desdp: one process's puts fill both ports (64 bytes a cycle, 2 x 32) only when the engines
# share the ports; an engine on its own port gives it one (32); 3 processes leave an engine
# with two of them and one port under one per engine; 2, 4 and 8 fill both ports either way
expect 0 "$nf" exp desdp --quick --json
python3 - "$tmp/out" <<'EOF' && ok || bad "desdp: shared ports against one per engine"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
bw = {(r["ports"].startswith("shared"), r["processes"]): r["bandwidth"] for r in rows}
assert len(rows) == 10 and all(0 < b <= 64 for b in bw.values()), bw
assert bw[(True, 1)] > 62 and 31 < bw[(False, 1)] <= 32, bw
assert bw[(True, 3)] > 1.25 * bw[(False, 3)], bw
for p in (2, 4, 8):
    assert abs(bw[(True, p)] - bw[(False, p)]) < 0.02 * bw[(True, p)] and bw[(True, p)] > 62, bw
EOF
# nic-queues: the arbiter takes the backlogged queues in turn (of its first 16 rounds, 16
# messages a queue: Jain's index 1; one that always started from queue 0 gives 0.25); long puts alone share the bytes evenly; with short puts beside them the bytes do not
# (by design: a turn is a message); the fast flag saves the short puts the 32 cycles of
# overhead (40 against 8)
expect 0 "$nf" exp nic-queues --quick --json
python3 - "$tmp/out" <<'EOF' && ok || bad "nic-queues: round robin, shares, the fast flag"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert len(rows) == 12 and all(r["jain_taken"] == 1 and r["taken"] == 16 for r in rows), rows
case = lambda c: [r for r in rows if r["case"] == c]
assert case("all long")[0]["jain_bytes"] > 0.99
assert case("long + short")[0]["jain_bytes"] < 0.9
slow, fast = case("long + short")[0]["short_lat_mean"], case("long + short, fast")[0]["short_lat_mean"]
assert 31 <= slow - fast <= 33, (slow, fast)
assert all(r["max_in_flight"] <= 256 for r in rows)
EOF
# inflight: never more in flight than asked or than the limit; one process's writes of one
# packet are held to the descriptor unit's pace, 256 bytes each 8 cycles (32 a cycle); with the
# limit lowered to 8, 8 writes in flight at most and the bandwidth of 8 from there on
expect 0 "$nf" exp inflight --quick --json
python3 - "$tmp/out" <<'EOF' && ok || bad "inflight: the limit and the pace"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert len(rows) == 30, len(rows)
for r in rows:
    assert r["max_in_flight"] <= min(r["outstanding"], r["limit"]), r
    assert r["bandwidth"] <= 32.0, r
lim8 = [r for r in rows if r["limit"] == 8]
assert all(r["max_in_flight"] == min(r["outstanding"], 8) for r in lim8), lim8
b8 = [r["bandwidth"] for r in lim8 if r["outstanding"] >= 8]
assert max(b8) - min(b8) < 1e-9 and b8[0] < 30, b8
top = [r["bandwidth"] for r in rows if r["link_cycles"] == 1 and r["limit"] == 256 and r["outstanding"] >= 32]
assert min(top) > 31, top
EOF
# reductions: every type and operator, the NICs' tree against the host's second implementation
# bit for bit; the chain (fan-in 1, ranks reversed) equal to the sequential sum from rank 0; the
# fan-in 4 tree's double sum of these wide values not; the chain's time 14 cycles a rank, the
# tree's a few hops
expect 0 "$nf" exp reductions --quick --json
python3 - "$tmp/out" <<'EOF' && ok || bad "reductions: bits, the ordered sum, the times"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
res = [r for r in rows if r["measure"] == "result"]
assert len(res) == 24 and all(r["equal"] and r["nic_bits"] == r["host_bits"] for r in res), res
assert {(r["type"], r["op"]) for r in res} == {(t, o) for t in ("f32", "f64", "i32", "i64") for o in ("sum", "max", "min", "and", "or", "xor")}
sums = [r for r in res if r["op"] == "sum" and r["type"][0] == "f"]
assert len(sums) == 2 and all(r["chain_equals_sequential"] for r in sums), sums
assert not [r for r in sums if r["type"] == "f64"][0]["tree_equals_sequential"]
bit = [r for r in res if r["op"] in ("and", "or")]
assert all(r["nic_bits"] not in ("0", "ffffffff", "ffffffffffffffff") for r in bit), bit
lat = {(r["ranks"], r["fanin"]): r["lat"] for r in rows if r["measure"] == "latency"}
assert lat[(16, 1)] == 224 and lat[(32, 1)] == 448 and lat[(64, 1)] == 896, lat
assert all(lat[(n, 4)] < lat[(n, 1)] / 2 for n in (16, 32, 64)), lat
EOF
# mcast-table: groups that all hold endpoint 0 share its leaf port, so the tables take 32 of
# them and refuse the rest; a refused group's multicast goes as n - 1 unicast copies: slower
# and more link traffic, the more so the larger the group; one in the tables takes the same
# time whatever its size
expect 0 "$nf" exp mcast-table --quick --json
python3 - "$tmp/out" <<'EOF' && ok || bad "mcast-table: 32 a port, the fallback"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
fit = {r["groups"]: (r["installed"], r["refused"]) for r in rows if r["measure"] == "fit"}
assert fit == {16: (16, 0), 32: (32, 0), 33: (32, 1), 48: (32, 16), 64: (32, 32)}, fit
lat = {(r["members"], r["msg_bytes"], r["way"].startswith("unicast")): r for r in rows if r["measure"] == "latency"}
assert len(lat) == 12
for n in (4, 16, 64):
    for b in (8, 2048):
        hw, sw = lat[(n, b, False)], lat[(n, b, True)]
        assert hw["lat"] < sw["lat"] and hw["link_flits"] < sw["link_flits"], (hw, sw)
        assert hw["lat"] == lat[(4, b, False)]["lat"], hw
assert lat[(64, 2048, True)]["lat"] > 30 * lat[(64, 2048, False)]["lat"]
EOF
# fsw: a put pays the NIC's 40 cycles and two PCIe reads of 110 (its descriptor, its data), an
# FSW the short overhead (8) and its PIO writes of 32 + b bytes at 16 a cycle; the same 20 cycles
# on the wire for both (one 256-byte packet at most): 40 + 220 + 20 = 280, 8 + 3 + 20 = 31 for 8
# bytes, 8 + 18 + 20 = 46 for 256
expect 0 "$nf" exp fsw --quick --json
python3 - "$tmp/out" <<'EOF' && ok || bad "fsw: PIO against two PCIe reads"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
lat = {(r["way"], r["msg_bytes"]): r["lat"] for r in rows}
assert len(rows) == 18
for b in (8, 16, 32, 64, 128, 256):
    assert lat[("put", b)] == 280 and lat[("put, PCIe in the NIC's time", b)] == 60, lat
    assert lat[("fsw", b)] == 8 + (32 + b + 15) // 16 + 20, (b, lat[("fsw", b)])
EOF
# source-routing: with every up link of endpoint 0's leaf down the tables (minhop on the intact
# fabric's distances) deliver only to the leaf's own endpoints (4 of the 64), source routes found
# when sent go by the sibling link and deliver all; with nothing down both take the same paths
expect 0 "$nf" exp source-routing --quick --json
python3 - "$tmp/out" <<'EOF' && ok || bad "source-routing: tables against source routes"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
d = {(r["case"], r["routing"].startswith("source")): r for r in rows}
assert len(rows) == 6
assert d[("no link down", False)]["lat_mean"] == d[("no link down", True)]["lat_mean"]
assert d[("no link down", False)]["delivered"] == 64 == d[("no link down", True)]["delivered"]
leaf = "leaf 0's up links down"
assert d[(leaf, False)]["delivered"] == 4 and d[(leaf, True)]["delivered"] == 64, d
assert d[(leaf, True)]["link_flits"] > d[("no link down", True)]["link_flits"]
assert d[("random links down", True)]["delivered"] == 64
EOF
finish
