#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of the group manager's commands: usage errors and their exit statuses, a
# client with nobody listening, then a session: daemon on a free port, joins, state (text and
# JSON), the table, leaves, a dump, smd-load with loss and crashed ranks, SIGTERM.
# Usage: smd.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
pid=
e2e_cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; }
. "$2/tests/e2e/lib/harness.sh"
topo="torus:4x4x2,c=2"
# usage
expect 0 "$nf" smd --help;                                   has out "usage: netfab smd"
expect 2 "$nf" smd --listen 127.0.0.1:0;  has_line err "netfab smd: --topo SPEC is required"
expect 2 "$nf" smd --topo $topo;           has_line err "netfab smd: --listen ADDR:PORT is required"
expect 2 "$nf" smd --topo $topo --listen localhost:1;        has err "bad listen address"
expect 2 "$nf" smd --topo $topo --listen 127.0.0.1:99999;    has err "bad listen address"
expect 2 "$nf" smd --topo $topo --listen 127.0.0.1:0 --engine fulb+; has err "use fulb"
expect 2 "$nf" smd --topo $topo --listen 127.0.0.1:0 --engine nosuch
has_line err "netfab smd: unknown engine 'nosuch' (known: minihop, minihop-new, minihop-new-high, sssp, sssp-new, fulb-paper, fulb-paper+lookahead, fulb-paper+global, fulb-paper+trials, fulb, fulb+)"
expect 2 "$nf" smd --topo $topo --listen 127.0.0.1:0 --join-timeout 0
has_line err "netfab smd: --join-timeout wants a whole number from 1 to 86400000, not '0'"
expect 2 "$nf" smd --topo $topo --listen 127.0.0.1:0 --bogus; has_line err "netfab smd: unknown option '--bogus' (netfab smd --help lists them)"
expect 0 "$nf" mcast-join --help;                            has out "MemberCount"
expect 2 "$nf" mcast-join --mgid ff12::1 --port-guid 1 --member-count 2; has err "--server"
expect 2 "$nf" mcast-join --server 127.0.0.1:1 --mgid ff12:::1 --port-guid 1 --member-count 2
has err "wants a GID"
expect 2 "$nf" mcast-join --server 127.0.0.1:1 --mgid ff12::1 --port-guid 1
has_line err "netfab mcast-join: --member-count N is required"
expect 2 "$nf" mcast-join --server 127.0.0.1:1 --mgid ff12::1 --port-guid 1 --member-count 9999999
expect 2 "$nf" mcast-state --server 127.0.0.1:1 --all --mgid ff12::1; has err "exactly one"
expect 2 "$nf" smd-load --server 127.0.0.1:1 --topo $topo
has_line err "netfab smd-load: --groups PATTERN is required"
expect 2 "$nf" smd-load --server 127.0.0.1:1 --topo $topo --groups grid2d:8x8 --loss 1
# nobody listening: the host refuses every datagram; the client says so after its retries
for c in "mcast-state --all" "mcast-state --dump" "mcast-state --mgid ff12::1" \
    "mcast-join --mgid ff12::1 --port-guid 1 --member-count 2" "mcast-leave --mgid ff12::1 --port-guid 1"; do
    expect 1 "$nf" $c --server 127.0.0.1:9 --timeout 20 --retries 2
    has_line err "netfab ${c%% *}: 127.0.0.1:9: connection refused: no netfab smd listens on that port (one starts with \`netfab smd --topo SPEC --listen 127.0.0.1:9\`)"
done

# a session
"$nf" smd --topo $topo --listen 127.0.0.1:0 --port-file "$tmp/port" --state "$tmp/state" \
    --join-timeout 2000 2>"$tmp/smd.log" &
pid=$!
i=0; while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
srv=127.0.0.1:$(cat "$tmp/port")
# a manager that listens but does not answer (stopped): a timeout, not a refusal
kill -STOP $pid
expect 1 "$nf" mcast-state --server $srv --mgid ff12::7 --timeout 20 --retries 2
has_line err "netfab mcast-state: $srv: no answer (timed out after every retry)"
kill -CONT $pid
"$nf" topo --topo $topo --out "$tmp/f.ibnet" >/dev/null
# port GUIDs of the first three endpoints, from the ibnetdiscover dump
guids=$(grep '^Ca' "$tmp/f.ibnet" | head -3 | sed 's/.*"H-\([0-9a-f]*\)".*/0x\1/')
set -- $guids
expect 0 "$nf" mcast-join --server $srv --mgid ff12:401b::1 --port-guid $1 --member-count 2
has_line out "join ff12:401b:0000:0000:0000:0000:0000:0001: ok (status 0x0000), MLID 0xC000, MemberCount 2"
expect 0 "$nf" mcast-state --server $srv --mgid ff12:401b::1
has out "ReceivingJoinReq"
expect 1 "$nf" mcast-join --server $srv --mgid ff12:401b::1 --port-guid $2 --member-count 3
has out "invalid request"
expect 1 "$nf" mcast-join --server $srv --mgid ff12:401b::1 --port-guid 0x99 --member-count 2
has out "unknown port"
expect 0 "$nf" mcast-join --server $srv --mgid ff12:401b::1 --port-guid $2 --member-count 2 --json
json_num out status 0
expect 0 "$nf" mcast-state --server $srv --mgid ff12:401b::1 --json
json_str out state Ready; json_num out joined 2
expect 0 "$nf" mcast-leave --server $srv --mgid ff12:401b::1 --port-guid $1
expect 0 "$nf" mcast-state --server $srv --all
has out "ReceivingLeaveReq"
expect 1 "$nf" mcast-state --server $srv --mgid ff12:401b::77
has err "no such group"
expect 0 "$nf" mcast-state --server $srv --dump
[ -s "$tmp/state/smd.mcfdbs" ] && grep -q "^0xC000 :" "$tmp/state/smd.mcfdbs" && ok || bad "no MFT dump"
grep -q "ReceivingLeaveReq 2 1 1 0x" "$tmp/state/smd.groups" && ok || bad "group table: $(cat "$tmp/state/smd.groups")"
# a switch joins by its own GUID (its port 0): a group of an endpoint and a switch is routed, and
# the dumped tables set the switch's port 0 (0x000) for it
sw=$(grep '^Switch' "$tmp/f.ibnet" | tail -1 | sed 's/.*"S-\([0-9a-f]*\)".*/0x\1/')
expect 0 "$nf" mcast-join --server $srv --mgid ff12:401b::5 --port-guid $3 --member-count 2
expect 0 "$nf" mcast-join --server $srv --mgid ff12:401b::5 --port-guid $sw --member-count 2
expect 0 "$nf" mcast-state --server $srv --mgid ff12:401b::5 --json
json_str out state Ready; json_num out joined 2
expect 0 "$nf" mcast-state --server $srv --dump
ml=$(grep -B1 -A0 "0x000 " "$tmp/state/smd.mcfdbs" | head -1)
awk -v sw="$(printf 'Switch 0x%016x' "$sw")" '$0 == sw { on = 1; next } /^Switch/ { on = 0 } on && / 0x000 / { hit = 1 } END { exit !hit }' "$tmp/state/smd.mcfdbs" && ok || bad "the switch's port 0 is not in the dumped tables: $ml"
expect 0 "$nf" mcast-leave --server $srv --mgid ff12:401b::5 --port-guid $sw
# load: 2% of the requests lost, 5% of the endpoints crashed
expect 0 "$nf" smd-load --server $srv --topo $topo --groups grid3d:4x4x4 --loss 0.02 --crash 0.05 --json
json_num out groups 48; json_val out timed_out false
expect 0 "$nf" smd-load --server $srv --topo $topo --groups random:n=30,size=8 --seed 3
grep -Eq "(^| )groups 30: 30 Ready, 0 destroyed" "$tmp/out" && ok || bad "smd-load: $(cat "$tmp/out")"
has out "the server had them Ready (their last join answered)"
# rank 0's view beside the server's: it polls every 200 ms from its own join on, so it sees a
# group Ready after the server had it so (its last join answered), at most a poll interval and
# a round trip later (0.5 s of slack for a loaded machine), and later on average
expect 0 "$nf" smd-load --server $srv --topo $topo --groups random:n=30,size=8 --seed 4 --poll 200 --json
json_num out ready 30; json_num out poll_ms 200
python3 - "$tmp/out" <<'EOF' && ok || bad "smd-load: rank 0's view against the server's: $(cat "$tmp/out")"
import json, sys
o = json.load(open(sys.argv[1]))
assert 0 < o["server_wait_mean_s"] <= o["wait_mean_s"], o
assert o["server_wait_max_s"] <= o["wait_max_s"] + 1e-9, o
assert 0 < o["poll_lag_mean_s"] <= o["poll_lag_max_s"] <= 0.2 + 0.5, o
EOF
kill $pid; wait $pid; st=$?; pid=
[ "$st" = 0 ] && ok || bad "smd exited $st on SIGTERM"
grep -q "stopped:" "$tmp/smd.log" && ok || bad "no summary line"

finish
