#!/bin/sh
# SPDX-License-Identifier: MIT
# The group manager against hostile clients (docs/probes.md): keys that bind a requester to its
# own ports, privileged requests, non-loopback listening, invalid MGIDs and MemberCounts, reused
# transaction ids, GetTable under RMPP (nothing large sent unasked), per-port limits under a
# flood, and a members limit that bounds memory whoever floods. Each check here failed before the
# manager had the defence it tests.
# Usage: smd_hostile.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
probe=${NF_SMDPROBE:-$(dirname "$nf")/nf_smdprobe}
pid=
e2e_cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; }
. "$2/tests/e2e/lib/harness.sh"
topo="torus:4x4x2,c=2"
"$nf" topo --topo $topo --out "$tmp/f.ibnet" >/dev/null
set -- $(grep '^Ca' "$tmp/f.ibnet" | head -4 | sed 's/.*"H-\([0-9a-f]*\)".*/0x\1/')
p1=$1 p2=$2 p3=$3 p4=$4
mgr=0x5eC0de0000000001 k1=0x1111 k2=0x2222 k3=0x3333
printf 'manager %s\nport %s %s  # p1\nport %s %s\nport %s %s\n' $mgr $p1 $k1 $p2 $k2 $p3 $k3 >"$tmp/keys"
chmod 600 "$tmp/keys"

# start_smd ARGS...: the daemon on a free loopback port, $srv its address
start_smd() {
    rm -f "$tmp/port"
    "$nf" smd --topo $topo --port-file "$tmp/port" "$@" 2>"$tmp/smd.log" &
    pid=$!
    i=0; while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    srv=127.0.0.1:$(cat "$tmp/port")
}
stop_smd() { kill $pid; wait $pid; st=$?; pid=; [ "$st" = 0 ] && ok || bad "smd exited $st"; }
# status_of: the status of the first reply of the last smdprobe run
status_of() { sed -n 's/^status \(0x[0-9a-f]*\).*/\1/p' "$tmp/out" | head -1; }
# want STATUS PROBE-ARGS...: one request, its answer's status
want() {
    w=$1; shift
    "$probe" req "$srv" "$@" >"$tmp/out" 2>"$tmp/err"
    got=$(status_of)
    [ "$got" = "$w" ] && ok || bad "status $got (want $w): $*"
}

# ---- listening: a non-loopback address needs keys
expect 2 timeout 10 "$nf" smd --topo $topo --listen 0.0.0.0:0
has err "refusing to listen on 0.0.0.0:0 without --keys"
chmod 644 "$tmp/keys"
expect 2 timeout 10 "$nf" smd --topo $topo --listen 127.0.0.1:0 --keys "$tmp/keys"
has err "chmod 600"
chmod 600 "$tmp/keys"
printf 'manager 0x1\nport 0x77 0x2\n' >"$tmp/badkeys"; chmod 600 "$tmp/badkeys"
expect 2 timeout 10 "$nf" smd --topo $topo --listen 127.0.0.1:0 --keys "$tmp/badkeys"
has err "badkeys:2: no endpoint port of the fabric has GUID '0x77'"
start_smd --listen 0.0.0.0:0 --keys "$tmp/keys"
grep -q "keys from" "$tmp/smd.log" && ok || bad "keyed smd on 0.0.0.0: $(cat "$tmp/smd.log")"
stop_smd

# ---- keys: a client acts for its own ports only
start_smd --listen 127.0.0.1:0 --keys "$tmp/keys" --state "$tmp/state"
want 0x0000 --mgid ff12:401b::1 --port-guid $p1 --count 2 --key $k1
want 0x0700 --mgid ff12:401b::1 --port-guid $p2 --count 2 --key $k1   # p2 with p1's key
want 0x0700 --mgid ff12:401b::1 --port-guid $p2 --count 2              # no key
want 0x0700 --method delete --mgid ff12:401b::1 --port-guid $p1 --key $k2  # make p1 leave
want 0x0700 --method delete --mgid ff12:401b::1 --port-guid $p1            # ... without a key
expect 0 "$nf" mcast-state --server $srv --mgid ff12:401b::1 --json
json_num out joined 1
want 0x0000 --mgid ff12:401b::1 --port-guid $p2 --count 2 --key $k2
expect 0 "$nf" mcast-state --server $srv --mgid ff12:401b::1 --json
json_str out state Ready
# the manager's key acts for any port; the CLI carries keys with --key
expect 0 "$nf" mcast-join --server $srv --mgid ff12:401b::2 --port-guid $p4 --member-count 1 --key $mgr
expect 1 "$nf" mcast-leave --server $srv --mgid ff12:401b::2 --port-guid $p4 --key $k1
has out "denied"
# privileged: the whole table and dumps need the manager's key
want 0x0700 --method gettable --attr state
want 0x0700 --method gettable --attr state --key $k1
want 0x0700 --method get --attr dump --key $k1
expect 1 "$nf" mcast-state --server $srv --all
has err "denied"
expect 0 "$nf" mcast-state --server $srv --all --key $mgr
has out "ff12:401b:0000:0000:0000:0000:0000:0002"
expect 0 "$nf" mcast-state --server $srv --dump --key $mgr --timeout 2000
grep -q "^0xC000 :" "$tmp/state/smd.mcfdbs" && ok || bad "no dump"
ls "$tmp/state" | grep -q XXXX && bad "dump temporary left" || ok
# a group's own state stays public (rank 0 polls it)
want 0x0000 --method get --attr state --mgid ff12:401b::1

# ---- invalid MGIDs and MemberCounts
want 0x0500 --mgid :: --port-guid $p3 --count 2 --key $k3
want 0x0500 --mgid fe80::1 --port-guid $p3 --count 2 --key $k3
want 0x0500 --mgid ff32::1 --port-guid $p3 --count 2 --key $k3        # reserved flag bits
want 0x0200 --mgid ff12:401b::3 --port-guid $p3 --count 8388607 --key $k3
want 0x0200 --mgid ff12:401b::3 --port-guid $p3 --count 97 --key $k3  # 64 endpoints and 32 switches
want 0x0000 --mgid ff12:401b::3 --port-guid $p3 --count 96 --key $k3
want 0x0500 --method get --attr state --mgid fe80::1

# ---- a transaction id names one request
# (one socket: a join, a leave with the join's id, the join again: a retransmission)
"$probe" req "$srv" --tid 777 --mgid ff12:401b::4 --port-guid $p3 --count 2 --key $k3 --next \
    --tid 777 --method delete --mgid ff12:401b::4 --port-guid $p3 --key $k3 --next \
    --tid 777 --mgid ff12:401b::4 --port-guid $p3 --count 2 --key $k3 >"$tmp/out"
[ "$(sed -n 's/^status \(0x[0-9a-f]*\).*/\1/p' "$tmp/out" | tr '\n' ' ')" = "0x0000 0x0200 0x0000 " ] \
    && ok || bad "reused tid: $(cat "$tmp/out")"
expect 0 "$nf" mcast-state --server $srv --mgid ff12:401b::4 --json
json_num out joined 1

# ---- GetTable: one segment answers one request; the rest only when acknowledged
i=10; while [ $i -lt 40 ]; do
    "$nf" mcast-join --server $srv --mgid ff12:401b::$i --port-guid $p4 --member-count 1 \
        --key $mgr >/dev/null || bad "join $i"
    i=$((i + 1))
done
"$probe" req "$srv" --method gettable --attr state --key $mgr --wait 500 >"$tmp/out"
has out "replies 1 bytes 256"
has out "seg 1 flags 3 data2 1088"       # Active|First; 34 records of 32 bytes
expect 0 "$nf" mcast-state --server $srv --all --key $mgr --window 1
[ "$(grep -c '^ff12' "$tmp/out")" = 34 ] && ok || bad "window 1: $(grep -c '^ff12' "$tmp/out") groups"
expect 0 "$nf" mcast-state --server $srv --all --key $mgr --json
[ "$(grep -c '"mgid"' "$tmp/out")" = 34 ] && ok || bad "table: $(grep -c '"mgid"' "$tmp/out") groups"
# mutated requests of every kind (ACKs for transfers in flight, dumps, bad lengths): the manager
# answers after them, its groups are intact, and it stops cleanly
expect 0 "$probe" fuzz "$srv" --count 5000 --seed 7 --key $mgr
has out "then state query answered"
expect 0 "$nf" mcast-state --server $srv --mgid ff12:401b::1 --json
json_str out state Ready
# 6,000 datagrams without a MAD header (dropped, nothing to answer), more than a batch holds:
# the manager still reads its socket afterwards (a daemon before this check went deaf)
port=${srv##*:}
python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(6000):
    s.sendto(b'xx', ('127.0.0.1', $port))
"
expect 0 "$nf" mcast-state --server $srv --mgid ff12:401b::1 --json --timeout 500 --retries 4
json_str out state Ready
stop_smd

# ---- a dump being written does not hold up service: the dump's MFT file is a FIFO that nobody
# reads yet, so the dump process waits on it; the manager answers meanwhile
mkfifo "$tmp/slow.mcfdbs"
start_smd --listen 127.0.0.1:0 --dump "$tmp/slow"
want 0x0000 --mgid ff12:401b::4 --port-guid $p1 --count 1       # in the dump: MLID 0xC000
"$nf" mcast-state --server $srv --dump --timeout 20000 --retries 0 >"$tmp/dump.out" 2>&1 &
dpid=$!
sleep 0.3
want 0x0000 --mgid ff12:401b::5 --port-guid $p1 --count 1       # served while the dump waits
want 0x0000 --method get --attr state --mgid ff12:401b::5
cat "$tmp/slow.mcfdbs" >"$tmp/slow.txt"                         # the dump goes on
wait $dpid && ok || bad "dump request: $(cat "$tmp/dump.out")"
grep -q "^0xC000 :" "$tmp/slow.txt" && ok || bad "the dump through the FIFO: $(head -3 "$tmp/slow.txt")"
stop_smd

# ---- a symlink planted where a dump goes is refused, its target untouched
echo precious >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/planted.mcfdbs"
start_smd --listen 127.0.0.1:0 --dump "$tmp/planted"
want 0x0000 --mgid ff12:401b::4 --port-guid $p1 --count 1
expect 1 "$nf" mcast-state --server $srv --dump --timeout 5000 --retries 0
has err "no resources"
[ "$(cat "$tmp/victim")" = precious ] && ok || bad "the dump wrote through a planted symlink"
stop_smd
grep -q "planted.mcfdbs: a symbolic link (refused" "$tmp/smd.log" && ok || bad "log: $(grep dump "$tmp/smd.log")"
# a dump stuck on a FIFO nobody reads does not hold the shutdown (killed after 5 s)
mkfifo "$tmp/stuck.mcfdbs"
start_smd --listen 127.0.0.1:0 --dump "$tmp/stuck"
"$probe" req "$srv" --method get --attr dump --wait 300 >/dev/null
stop_smd

# ---- limits: one port cannot take every multicast LID
start_smd --listen 127.0.0.1:0 --max-pending 5 --max-groups 8
"$probe" flood "$srv" --seconds 1 --port-guid $p1 --count 2 >"$tmp/out"
has out " ok 5 "
grep -q "no_resources [1-9]" "$tmp/out" && ok || bad "flood: $(cat "$tmp/out")"
want 0x0000 --mgid ff12:401b::100 --port-guid $p2 --count 1        # another port is served
want 0x0100 --mgid ff12:401b::101 --port-guid $p1 --count 1        # p1 is at its limit
stop_smd
grep -q "over a per-port or the members limit" "$tmp/smd.log" && ok || bad "no limit count in the log"
# a client acting for every port (no keys) completes groups; the members limit bounds them all
grep '^Ca' "$tmp/f.ibnet" | sed 's/.*"H-\([0-9a-f]*\)".*/0x\1/' >"$tmp/guids"
start_smd --listen 127.0.0.1:0 --max-members 100
"$probe" flood "$srv" --seconds 1 --count 8 --guids "$tmp/guids" >"$tmp/out"
has out " ok 100 "
grep -q "no_resources [1-9]" "$tmp/out" && ok || bad "members flood: $(cat "$tmp/out")"
expect 0 "$nf" mcast-state --server $srv --all
[ "$(grep -c Ready "$tmp/out")" = 12 ] && ok || bad "members flood: $(grep -c Ready "$tmp/out") groups Ready, want 12"
stop_smd

finish
