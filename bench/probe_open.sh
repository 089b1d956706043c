#!/bin/sh
# SPDX-License-Identifier: MIT
# The group manager's answers to invalid requests, without keys (docs/probes.md, the "before"
# and "now" of the MGID, MemberCount, reused-tid and GetTable rows): run it with any netfab
# build, e.g. dd914ec's, and this tree's nf_smdprobe.
# Usage: bench/probe_open.sh NETFAB SMDPROBE
set -eu
nf=$1
probe=$2
topo="torus:4x4x2,c=2"
work=$(mktemp -d /tmp/netfab-probe-open.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT INT TERM
"$nf" topo --topo $topo --out "$work/f.ibnet" >/dev/null
set -- $(grep '^Ca' "$work/f.ibnet" | head -2 | sed 's/.*"H-\([0-9a-f]*\)".*/0x\1/')
p1=$1 p2=$2
"$nf" smd --topo $topo --listen 127.0.0.1:0 --port-file "$work/port" 2>/dev/null &
pid=$!
i=0; while [ ! -s "$work/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
srv=127.0.0.1:$(cat "$work/port")
st() { "$probe" req "$srv" "$@" | sed -n 's/^status \(0x[0-9a-f]*\).*/\1/p' | tr '\n' ' '; }
echo "join with MGID ::                  -> $(st --mgid :: --port-guid $p1 --count 1)"
echo "join with MGID fe80::1             -> $(st --mgid fe80::1 --port-guid $p1 --count 1)"
echo "join with MemberCount 8,388,607    -> $(st --mgid ff12:401b::5 --port-guid $p1 --count 8388607)"
echo "join, leave with its tid, join     -> $(st --tid 9 --mgid ff12:401b::6 --port-guid $p1 --count 2 \
    --next --tid 9 --method delete --mgid ff12:401b::6 --port-guid $p1 \
    --next --tid 9 --mgid ff12:401b::6 --port-guid $p1 --count 2)"
i=10; while [ $i -lt 44 ]; do
    "$probe" req "$srv" --mgid ff12:401b::$i --port-guid $p2 --count 1 >/dev/null; i=$((i + 1)); done
echo "one GetTable request (34 groups)   -> $("$probe" req "$srv" --method gettable --attr state --wait 500 | tail -1)"
