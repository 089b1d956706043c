#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `netfab sim` and `netfab route --check`: usage errors and exit statuses,
# the JSON keys, a sweep's rows, the checker's verdicts and exit codes.
# Usage: sim.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
df="--topo dragonfly:a=4,p=2,h=2"
expect 0 "$nf" sim --help;                                     has out "routings:"
has out "dfmin"; has out "worstcase"
# load 0: no packet, so no latency, hops or minimal share: "-", not 0
expect 0 "$nf" sim --topo torus:4x4 --routing dor --traffic uniform --load 0 --timeline 500
line_re "$tmp/out" 2 '^  0\.0000   0\.0000         -         -      -       -     0\.000    no +[0-9]+\.[0-9]{3}$'
line "$tmp/out" 6 "         0     500   0.0000   0.0000         -       -         0"
# a missing option is named, only the missing ones
expect 2 "$nf" sim $df --routing dfmin --traffic uniform
has_line err "netfab sim: --load L (or --sweep A:B:STEP) is required"
expect 2 "$nf" sim $df
has_line err "netfab sim: --routing NAME, --traffic NAME and --load L (or --sweep A:B:STEP) are required"
expect 2 "$nf" sim $df --routing dfmin --traffic uniform --load 0.5 --sweep 0:1:0.1
has_line err "netfab sim: --load or --sweep, not both"
expect 2 "$nf" route --topo torus:4x4 --check
has_line err "netfab route: --routing NAME is required"
# an unknown name: the names there are, all of them (a routing or traffic added is added here)
expect 2 "$nf" sim $df --routing nosuch --traffic uniform --load 0.1
has_line err "netfab sim: unknown routing 'nosuch' (known: minhop, updown, nca-bs, anca-bs, dor, dor-plain, dor-bs, table2, ftable, dfmin, val, ugal-l, ugal-g, ugal-lt, par, qadapt, qadapt-nf, ugal-bs, dfmin-bs; or lft:FILE)"
expect 2 "$nf" sim $df --routing dfmin --traffic nosuch --load 0.1
has_line err "netfab sim: unknown traffic 'nosuch' (known: uniform, permutation, bitcomp, transpose, tornado, hotspot, worstcase, alltoall, stencil3d, fft3d, allreduce, hotspot-set, bs-uniform, bs-randperm, bs-tornado, bs-neighbor, bs-bitcomp, bs-transpose, bs-bitrev, bs-shuffle)"
expect 2 "$nf" sim $df --routing dfmin --traffic uniform --load 1.5;  has err "--load wants"
expect 2 "$nf" sim $df --routing dfmin --traffic uniform --sweep 0.5:0.1:0.1
has err "netfab sim: --sweep (range end) wants a number from 0.5 to 1, not '0.1'"
expect 2 "$nf" sim $df --routing dfmin --traffic uniform --sweep 0.1:0.5; has err "--sweep wants A:B:STEP"
# A + j STEP as netfab sweep makes them: 20 points, the last exactly 1 (adding 0.05 nineteen
# times lands above 1, and that point used to fail with "invalid argument")
# seeds are read exactly: 2^53 + 1 is not 2^53 (a parse through double made them one seed), and
# 0x10 is 16; a fraction or a number past 2^64 - 1 is refused
seedrun() { "$nf" sim --topo fattree:k=4 --routing minhop --traffic uniform --load 0.3 --cycles 300 \
    --warmup 50 --seed "$1" --json | grep -v '"wall_s"'; }
[ "$(seedrun 9007199254740993)" != "$(seedrun 9007199254740992)" ] && ok || bad "seeds 2^53 + 1 and 2^53 ran alike"
[ "$(seedrun 0x10)" = "$(seedrun 16)" ] && ok || bad "seed 0x10 is not 16"
expect 2 "$nf" sim $df --routing dfmin --traffic uniform --load 0.1 --seed 1.5
has err "netfab sim: --seed wants a whole number from 0 to 18446744073709551615, not '1.5'"
expect 2 "$nf" sim $df --routing dfmin --traffic uniform --load 0.1 --seed 18446744073709551616
expect 0 "$nf" sim --topo fattree:k=4 --routing minhop --traffic uniform --sweep 0.05:1.0:0.05 \
    --cycles 100 --warmup 10 --json
[ "$(grep -c '"load":' "$tmp/out")" = 20 ] && ok || bad "sweep points: $(grep -c '"load":' "$tmp/out")"
[ "$(grep '"load":' "$tmp/out" | tail -1 | tr -d ' ,')" = '"load":1.0' ] && ok || bad "last point: $(grep '"load":' "$tmp/out" | tail -1)"
expect 0 "$nf" sweep --topo fattree:k=4 --routing minhop --traffic uniform --loads 0.05:1.0:0.05 \
    --cycles 100 --warmup 10 --json --no-times
[ "$(grep -c '"load":' "$tmp/out")" = 20 ] && ok || bad "sweep's points: $(grep -c '"load":' "$tmp/out")"
expect 2 "$nf" sim $df --routing dfmin --traffic uniform --load 0.1 --vcs 1; has err "needs at least 2 VCs"
expect 2 "$nf" sim $df --routing dfmin --traffic uniform --load 0.1 --buf 2 --pkt 4; has err "cut-through"
expect 2 "$nf" sim --topo fattree:k=4 --routing dor --traffic uniform --load 0.1; has err "tori"
expect 0 "$nf" sim $df --routing dfmin --traffic uniform --sweep 0.1:0.3:0.1 --cycles 1000 --warmup 200
[ "$(wc -l <"$tmp/out")" = 4 ] && ok || bad "a 3-point sweep prints a header and 3 rows: $(cat "$tmp/out")"
# the rows: offered near 0.1, 0.2, 0.3 in turn (random traffic), all minimal, none saturated
awk 'NR > 1 { d = $1 - (NR - 1) / 10; if (d < -0.01 || d > 0.01 || $6 != "1.000" || $8 != "no") no = 1 } END { exit no }' \
    "$tmp/out" && ok || bad "sweep rows: $(cat "$tmp/out")"
# one point: offered and accepted near the load; dfmin is minimal only, so every packet takes at
# most 3 switch links (local, global, local); the run is 1000 warm-up cycles, the 1000 of the
# window, and a drain of a few packet latencies
expect 0 "$nf" sim $df --routing dfmin --traffic uniform --load 0.2 --cycles 1000 --json
json_range out offered 0.19 0.21; json_range out accepted 0.19 0.21
json_range out lat_mean 5 30; json_range out lat_p99 5 60
json_range out hops_mean 1 3; json_num out minimal_frac 1
json_val out saturated false; json_val out deadlock false
json_range out cycles 2000 2200; json_range out wall_s 0 60
# per-link utilisation: a row per switch-to-switch channel direction and load point (the 72-node
# Dragonfly has 36 switches x (3 local + 2 global) = 180), and under the worst case with minimal
# routing the busiest channels are global ones, near full
expect 0 "$nf" sim $df --routing dfmin --traffic worstcase --vcs 2 --sweep 0.1:0.2:0.1 --links "$tmp/links.csv"
[ "$(wc -l <"$tmp/links.csv")" = 361 ] && ok || bad "links.csv: $(wc -l <"$tmp/links.csv") lines, want 361"
hot=$(sort -t, -k8 -gr "$tmp/links.csv" | head -1)
case $hot in 0.2000,*,global,*) ok ;; *) bad "hottest channel not global: $hot" ;; esac
awk -F, -v h="$hot" 'BEGIN { split(h, a, ","); exit !(a[8] > 0.85) }' && ok || bad "hottest channel at $hot"
expect 1 "$nf" sim $df --routing dfmin --traffic uniform --load 0.1 --links /nonexistent/dir/x.csv
has err "cannot write /nonexistent/dir/x.csv"
# the Dragonfly routings' knobs
expect 2 "$nf" sim $df --routing val --traffic uniform --load 0.1 --vcs 2;   has err "needs at least 3 VCs"
expect 2 "$nf" sim $df --routing par --traffic uniform --load 0.1 --vcs 3;   has err "needs at least 4 VCs"
expect 2 "$nf" sim $df --routing ugal-l --traffic uniform --load 0.1 --vcs 3 --bias -1; has err "--bias wants"
expect 2 "$nf" sim $df --routing ugal-l --traffic uniform --load 0.1 --vcs 3 --w-hop -1; has err "--w-hop wants"
expect 2 "$nf" sim $df --routing val --traffic uniform --load 0.1 --vcs 3 --proxy some; has err "all, restricted, qvl, qvr, qvd, qvp or qvq"
expect 0 "$nf" sim $df --routing ugal-g --traffic worstcase --vcs 3 --load 0.1 --cycles 1000 --bias 1 --w-hop 0 --proxy restricted --json
json_val out saturated false
expect 0 "$nf" route --topo dragonfly:a=4,p=2,h=2,arr=consecutive --routing par --check --vcs 4
has out "no cycle (deadlock-free)"
# Q-adaptive, the authors' (qadapt) and netfab's first reading (qadapt-nf): deadlock-free by
# their VC classes on the small and the 1,056-node Dragonflies; their knobs checked; the learned
# tables' size in the JSON (72 nodes, qadapt: 9 groups x 2 endpoints a router = 18 rows x 5
# ports x 4 bytes; qadapt-nf: 9 + 4 rows)
expect 0 "$nf" route --topo dragonfly:a=4,p=2,h=2 --routing qadapt --vcs 5 --check
has out "no cycle (deadlock-free)"
expect 0 "$nf" route --topo dragonfly:a=8,p=4,h=4 --routing qadapt --vcs 5 --check --json
json_val out deadlock_free true
expect 0 "$nf" route --topo dragonfly:a=4,p=2,h=2 --routing qadapt-nf --check
has out "no cycle (deadlock-free)"
expect 2 "$nf" sim $df --routing qadapt --traffic uniform --load 0.1; has err "needs at least 5 VCs"
expect 2 "$nf" sim $df --routing qadapt-nf --traffic uniform --load 0.1 --vcs 2; has err "needs at least 3 VCs"
expect 2 "$nf" sim $df --routing qadapt --vcs 5 --traffic uniform --load 0.1 --q-alpha 0; has err "--q-alpha wants"
expect 2 "$nf" sim $df --routing qadapt --vcs 5 --traffic uniform --load 0.1 --q-alpha2 2; has err "--q-alpha2 wants"
expect 2 "$nf" sim $df --routing qadapt --vcs 5 --traffic uniform --load 0.1 --q-threshold1 -1; has err "--q-threshold1 wants"
expect 2 "$nf" sim $df --routing qadapt --vcs 5 --traffic uniform --load 0.1 --q-row nosuch; has err "--q-row"
expect 2 "$nf" sim $df --routing qadapt --vcs 5 --traffic uniform --load 0.1 --q-explore 2; has err "--q-explore wants"
expect 2 "$nf" sim $df --routing qadapt-nf --traffic uniform --load 0.1 --q-bias 0.5; has err "--q-bias wants"
expect 2 "$nf" sim $df --routing qadapt-nf --traffic uniform --load 0.1 --q-local -1; has err "--q-local wants"
expect 2 "$nf" sim --topo fattree:k=4 --routing qadapt --vcs 5 --traffic uniform --load 0.1; has err "qadapt routes Dragonflies"
# in an empty network its first choice is the minimal way (g0 r2 is g0's gateway to g4): 3
# switch hops, 5 lines; a random choice there would be the exploration's, 1 in 1,000
expect 0 "$nf" route $df --routing qadapt --vcs 5 --trace "df g0 r0 n0" "df g4 r3 n1"
has out '"df g0 r2"'; has out reached
[ "$(grep -c -- "->" "$tmp/out")" = 5 ] && ok || bad "qadapt trace: $(grep -c -- "->" "$tmp/out") hops"
expect 0 "$nf" sim $df --routing qadapt --vcs 5 --traffic worstcase --load 0.2 --cycles 2000 --json
json_val out saturated false; json_num out state_bytes 360; json_num out state_bytes_flat 720
expect 0 "$nf" sim $df --routing qadapt-nf --traffic worstcase --load 0.2 --cycles 2000 --json
json_val out saturated false; json_num out state_bytes 260; json_num out state_bytes_flat 720
# the checker
expect 0 "$nf" route --topo torus:4x4,c=1 --routing dor --check;  has out "no cycle (deadlock-free)"
expect 1 "$nf" route --topo torus:4x4,c=1 --routing dor-plain --check; has out "channel dependency cycle"
expect 0 "$nf" route --topo dragonfly:a=4,p=2,h=2 --routing dfmin --check --json
json_val out deadlock_free true; json_num out cycle_length 0
expect 2 "$nf" route --topo torus:4x4,c=1 --routing dor;          has err "--check"
expect 2 "$nf" route --topo torus:4x4,c=1 --routing dor --check --vcs 1; has err "needs 2 VCs"

# failed links: random ones, from a file (names or GUIDs), bad files and counts
gft="--topo gft:leaves=4,nodes=2,spines=4,sib=1 --routing ftable --traffic uniform --vcs 8 --load 0.2 --cycles 2000 --json"
# links down before the run: with sibling links every pair keeps a way (nothing lost), and
# nothing is dropped in the network (dropped_pkts 0: a packet with no way is not sent)
expect 0 "$nf" sim $gft --fail-links 3
json_num out failed_links 3; json_num out lost_frac 0; json_num out dropped_pkts 0
printf '# leaf 0 up links\ngft rail0 leaf0 3\ngft rail0 leaf0 4\t\ngft rail0 leaf0 5\n  gft rail0 leaf0 6  # last\n' >"$tmp/fail.txt"
expect 0 "$nf" sim $gft --fail-links "$tmp/fail.txt"
json_num out failed_links 4; json_num out lost_frac 0; json_num out dropped_pkts 0
# without siblings leaf 0's 2 endpoints are cut off from the other 6: under uniform traffic
# 2 x (2 x 6) of the 8 x 7 ordered pairs, 24 / 56 = 0.4286 of the traffic has no way (a
# random sample of it: +-0.03)
gft0=$(echo "$gft" | sed 's/sib=1/sib=0/')
expect 0 "$nf" sim $gft0 --fail-links "$tmp/fail.txt"
json_num out failed_links 4; json_range out lost_frac 0.40 0.46; json_num out dropped_pkts 0
printf 'gft rail0 leaf0 99\n' >"$tmp/bad.txt"
expect 2 "$nf" sim $gft --fail-links "$tmp/bad.txt"; has err "bad.txt:1: no cabled port 99 on a node 'gft rail0 leaf0'"
printf 'leaf0\n' >"$tmp/bad.txt"
expect 2 "$nf" sim $gft --fail-links "$tmp/bad.txt"; has err "bad.txt:1: want 'NODE PORT'"
expect 1 "$nf" sim $gft --fail-links /nonexistent/f.txt; has err "cannot read /nonexistent/f.txt"
expect 2 "$nf" sim $gft --fail-links 1000; has err "has 20 switch-to-switch links up"
# failing during the run: the links of the file at cycle 1500 of each point (no siblings: leaf
# 0's endpoints cut off then; packets caught behind the links are discarded, none waits). The
# window is cycles 1000 to 3000, so 3/4 of it loses 24 / 56 of the traffic: 0.3214 (+-0.03).
# ftable discards a packet exactly when it finds no port for it, so dropped_pkts is unroutable
# (counted apart, where the routing is asked); packets were on their way (load 0.2): some are
expect 0 "$nf" sim $gft0 --fail-links "$tmp/fail.txt" --fail-at 1500
json_range out lost_frac 0.29 0.35
unr=$(json_said out unroutable)
json_num out dropped_pkts "$unr"; json_range out dropped_pkts 1 1000
json_val out saturated false; json_val out deadlock false
expect 2 "$nf" sim $gft --fail-at 10;      has err "--fail-at needs --fail-links"
expect 2 "$nf" sim $gft --fail-links 2 --fail-at x; has err "--fail-at wants"
# --timeline: one switch, a permutation of one-flit packets at full load, so every packet is in
# 5 cycles after it was made and the last measured one ends the run at 3 x 100 + 5
# (test_timeline_full_load): windows at 0, 100, 200, 300 (the last 5 cycles long), each
# offering 1 flit per endpoint per cycle; the first delivers from cycle 5 on (0.95)
one="--topo torus:1,c=8 --routing minhop --traffic permutation --load 1 --warmup 200 --cycles 100"
expect 0 "$nf" sim $one --timeline 100 --json
json_nums out cycle "0 100 200 300" '"cycle":'
json_nums out packets "760 800 800 40" '"cycle":'
json_nums out accepted "0.95 1 1 1" '"cycle":'
json_num out offered 1 '"cycle":'; json_num out lat_mean 5 '"cycle":'
json_num out minimal_frac 1 '"cycle":'
json_nums out length "100 100 100 5" '"cycle":'
json_num out cycles 305
expect 0 "$nf" sim $one --timeline 100
[ "$(wc -l <"$tmp/out")" = 9 ] && ok || bad "a result and a timeline of 4 windows: $(cat "$tmp/out")"
line "$tmp/out" 4 "# timeline at load 1.0000, windows of 100 cycles"
line "$tmp/out" 5 "     cycle  length  offered accepted  lat_mean minimal   packets"
line "$tmp/out" 6 "         0     100   1.0000   0.9500      5.00   1.000       760"
line "$tmp/out" 9 "       300       5   1.0000   1.0000      5.00   1.000        40"
# the README's run (qadapt's last window after 6,000 cycles is 22 long: 324 delivered / (72 x 22))
expect 0 "$nf" sim --topo dragonfly:a=4,p=2,h=2 --routing qadapt --vcs 5 --traffic worstcase --load 0.2 --timeline 1000
has_line out "      6000      22   0.2045   0.2045     16.51   0.444       324"
# qadapt-nf's: the last window, after 6,000 cycles, is 32 long; its rates are over those
# 32 (one-flit packets: 483 delivered / (72 x 32) = 0.2096 accepted), so it may show more
# accepted than offered (0.1931: 445 made in it), packets made in the window before arriving
expect 0 "$nf" sim --topo dragonfly:a=4,p=2,h=2 --routing qadapt-nf --traffic worstcase --load 0.2 --timeline 1000
has_line out "      6000      32   0.1931   0.2096     20.27   0.296       483"
# without the option, no timeline; bad windows refused
expect 0 "$nf" sim $one --json
[ "$(json_said out timeline)" = "" ] && ok || bad "a timeline without --timeline"
for v in 0 -3 x 1000000001 2.5; do
    expect 2 "$nf" sim $one --timeline "$v"
    has err "netfab sim: --timeline wants a whole number from 1 to 1000000000, not '$v'"
done
# switches of more than 64 ports: the NDR SuperPOD dump (40 switches of 65 ports, the 65th the
# aggregation port) runs; minhop is minimal, every packet takes 0 or 2 switch links (leaf, spine,
# leaf) and most leave their leaf, so the mean is just under 2
pod="$3/nvidia-topograph-ndr-superpod.ibnet"
expect 0 "$nf" sim --topo "file:$pod" --routing minhop --traffic uniform --load 0.1 --warmup 200 \
    --cycles 500 --json
json_range out accepted 0.09 0.11; json_num out minimal_frac 1; json_range out hops_mean 1.8 2
json_val out saturated false; json_val out deadlock false
# a switch of 256 ports, or a port numbered 256, is refused at its line
sed '0,/^Switch\t65/s//Switch\t256/' "$pod" >"$tmp/sw256.ibnet"
expect 2 "$nf" sim --topo "file:$tmp/sw256.ibnet" --routing minhop --traffic uniform --load 0.1
has err "sw256.ibnet:10: a node has 1 to 255 ports, not 256"
# congestion pre-awareness: its knobs' ranges; with it, a hot spot's run prints the classes
gs="--topo gft:leaves=4,nodes=8,spines=4,sib=2,rails=2 --routing minhop --adaptive"
# shellcheck disable=SC2086
expect 2 "$nf" sim $gs --traffic hotspot --load 0.1 --preaware 100001; has err "--preaware wants"
# shellcheck disable=SC2086
expect 2 "$nf" sim $gs --traffic hotspot --load 0.1 --preaware 8 --preaware-throttle 1.5
has err "--preaware-throttle wants"
# shellcheck disable=SC2086
expect 0 "$nf" sim $gs --traffic hotspot --load 0.1 --preaware 16 --cycles 500 --json
has out '"bg_lat_p99"'; has out '"hot_accepted"'
sed '0,/^\[17\]\t/s//[256]\t/' "$pod" >"$tmp/port256.ibnet"
expect 2 "$nf" sim --topo "file:$tmp/port256.ibnet" --routing minhop --traffic uniform --load 0.1
has err "port256.ibnet:27: port 256 is beyond the limit of 255 ports a node has"
# the options' ranges are the library's: the buffers it caps (60,000 flits a VC), a router delay
# of 0 it takes (tornado on an 8-ring: 3 hops, the host links and one cycle a router: 5 cycles)
expect 2 "$nf" sim --topo torus:4x4 --routing dor --traffic uniform --load 0.1 --buf 60001
has_line err "netfab sim: --buf wants a whole number from 1 to 60000, not '60001'"
expect 2 "$nf" sim --topo torus:4x4 --routing dor --traffic uniform --load 0.1 --shared 60001
has err "from 0 to 60000"
expect 0 "$nf" sim --topo torus:8,c=1 --routing dor --vcs 2 --traffic tornado --load 0.01 \
    --router-delay 0 --cycles 3000 --json
json_range out lat_mean 4.99 5.1
# ---- the settings: printed, read back, in the order given -------------------------------------
expect 0 "$nf" sim --show-settings --json
json_num out vcs 4; json_num out router_delay 3; json_str out vc_alloc combined
json_val out adaptive false; json_num out window 5000; json_num out seed 0
has_line out '  "proxy": "all",'
expect 0 "$nf" sim --router-model booksim --router-delay 5 --vcs 2 --seed 18446744073709551615 \
    --show-settings --json
json_num out router_delay 5; json_num out credit_delay 3; json_num out nic_delay 1
json_str out vc_alloc separate; json_str out inject_vc routing; json_num out vcs 2
json_str out seed 18446744073709551615
cp "$tmp/out" "$tmp/bs.json"
# what --show-settings --json prints, --settings reads back to the same settings
expect 0 "$nf" sim --settings "$tmp/bs.json" --show-settings --json
if cmp -s "$tmp/out" "$tmp/bs.json"; then ok; else bad "--settings did not read back what it printed"; fi
# a text table too: every setting, the library's own marked
expect 0 "$nf" sim --show-settings --vcs 3
line_re "$tmp/out" 1 '^option +key +value +default +range$'
has_line out "$(printf '%-20s %-20s %-12s %-12s %s' --vcs vcs 3 4 'a whole number from 1 to 16')"
has out '^-  *flit_bytes  *32 '
# later options win over the file, the file over earlier ones; the preset leaves the file's
printf '{"vcs": 3, "router_delay": 4, "q_alpha": 0.5, "proxy": "restricted"}\n' >"$tmp/s.json"
expect 0 "$nf" sim --settings "$tmp/s.json" --vcs 2 --router-model booksim --show-settings --json
json_num out vcs 2; json_num out router_delay 4; json_num out q_alpha 0.5; json_num out nic_delay 1
json_str out proxy restricted
expect 0 "$nf" sim --vcs 2 --settings "$tmp/s.json" --show-settings --json
json_num out vcs 3
# a run from a file is the run from the same options
t4="--topo torus:4x4,c=1 --routing dor --traffic uniform --load 0.2 --cycles 500 --json"
printf '{"vcs": 2, "router_delay": 2, "pkt_flits": 4, "buf_flits": 8}\n' >"$tmp/r.json"
# shellcheck disable=SC2086
expect 0 "$nf" sim $t4 --settings "$tmp/r.json"
sed '/wall_s/d' "$tmp/out" >"$tmp/file.out"
# shellcheck disable=SC2086
expect 0 "$nf" sim $t4 --vcs 2 --router-delay 2 --pkt 4 --buf 8
sed '/wall_s/d' "$tmp/out" >"$tmp/flags.out"
if cmp -s "$tmp/file.out" "$tmp/flags.out"; then ok; else bad "--settings and the flags ran apart"; fi
json_range "$tmp/file.out" lat_mean 1 1000
# bad files: the file, the key, what it wants
expect 2 "$nf" sim --settings "$tmp/none.json" --show-settings; has err "none.json:"
printf '[1]\n' >"$tmp/b.json"
expect 2 "$nf" sim --settings "$tmp/b.json" --show-settings; has err "wants a JSON object"
printf '{"vcs": 17}\n' >"$tmp/b.json"
expect 2 "$nf" sim --settings "$tmp/b.json" --show-settings
has_line err "netfab sim: --settings $tmp/b.json: vcs wants a whole number from 1 to 16, not 17"
printf '{"vcs": "4"}\n' >"$tmp/b.json"
expect 2 "$nf" sim --settings "$tmp/b.json" --show-settings; has err 'vcs wants a whole number from 1 to 16, not "4"'
printf '{"switching": "fast"}\n' >"$tmp/b.json"
expect 2 "$nf" sim --settings "$tmp/b.json" --show-settings; has err 'switching wants one of vct, saf, dynamic, not "fast"'
printf '{"adaptive": 1}\n' >"$tmp/b.json"
expect 2 "$nf" sim --settings "$tmp/b.json" --show-settings; has err 'adaptive wants true or false, not 1'
printf '{"vcs": 2, "vcs": 3}\n' >"$tmp/b.json"
expect 2 "$nf" sim --settings "$tmp/b.json" --show-settings; has err "duplicate"
printf '{"nosuch": 2}\n' >"$tmp/b.json"
expect 2 "$nf" sim --settings "$tmp/b.json" --show-settings; has err "no setting 'nosuch'"
printf '{"vcs": 2' >"$tmp/b.json"
expect 2 "$nf" sim --settings "$tmp/b.json" --show-settings; has err "b.json:1:"
# netfab sweep sets the seed and threads of each cell itself: not from a file
printf '{"seed": 2}\n' >"$tmp/b.json"
expect 2 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic uniform --loads 0.1 --settings "$tmp/b.json"
has err "seed is set by netfab sweep's own options here"
expect 0 "$nf" sweep --settings "$tmp/s.json" --show-settings --json; json_num out vcs 3
finish
