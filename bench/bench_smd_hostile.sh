#!/bin/sh
# SPDX-License-Identifier: MIT
# The group manager under hostile load (part of `make bench`; docs/probes.md): what one flooding
# client costs the manager (groups, peak memory, journal size) and whether others are still
# served, what one GetTable request brings back unasked, and how long a state query waits while
# dump requests pile up. Usage: bench/bench_smd_hostile.sh NETFAB SMDPROBE [SECONDS]
# (SECONDS: each flood's length, default 60; 0 skips the floods, so that the table and dump part
# also runs with a netfab from before keys existed, e.g. dd914ec's, for the "before" figures).
set -eu
netfab=$1
probe=$2
secs=${3:-60}
topo=torus:30x20x20,c=2
# shellcheck source=bench/lib/smd.sh
. "$(dirname "$0")/lib/smd.sh"
smd_init bench-hostile

"$netfab" topo --topo $topo --out "$work/f.ibnet" >/dev/null
grep '^Ca' "$work/f.ibnet" | sed 's/.*"H-\([0-9a-f]*\)".*/0x\1/' >"$work/guids"
p1=$(sed -n 1p "$work/guids")
p2=$(sed -n 2p "$work/guids")
mgr=0x5ec0de0000000001
{ echo "manager $mgr"; echo "port $p1 0x1111"; echo "port $p2 0x2222"; } >"$work/keys"
chmod 600 "$work/keys"

# start [OPTION...]: a fresh manager (no journal) on the torus
start() {
    rm -rf "$work/state"
    smd_start $topo "$@"
}
kib() { sed -n "s/^$1:[^0-9]*\([0-9]*\) kB/\1/p" "/proc/$pid/status"; }

if [ "$secs" != 0 ]; then
echo "| flood ($secs s, one client, MemberCount 1024) | joins sent | accepted | refused | groups at the end | peak RSS MiB | journal MiB | another port's join |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
for mode in keyed open rotating; do
    case $mode in
    keyed) start --keys "$work/keys"; args="--port-guid $p1 --key 0x1111"; other="--key 0x2222"
           name="with keys: one port's key" ;;
    open) start; args="--port-guid $p1"; other=; name="without keys: one PortGID" ;;
    rotating) start; args="--guids $work/guids"; other=
              name="without keys: joins for 1024 PortGIDs (completes groups)" ;;
    esac
    base=$(kib VmRSS)
    "$probe" flood "$srv" --seconds "$secs" --count 1024 $args >"$work/flood"
    got=$("$probe" req "$srv" --mgid ff12:401b::77 --port-guid $p2 --count 1 $other |
        sed -n 's/^status \(0x[0-9a-f]*\).*/\1/p')
    "$netfab" mcast-state --server "$srv" --all --key $mgr --timeout 2000 >"$work/all" 2>&1 || true
    groups=$(($(wc -l <"$work/all") - 1))
    hwm=$(kib VmHWM)
    jb=$(stat -c %s "$work/state/journal")
    set -- $(cat "$work/flood")
    echo "| $name | $2 | $6 | $(($8 + ${12})) | $groups | $(awk "BEGIN{printf \"%.0f\", $hwm / 1024}") (idle $(awk "BEGIN{printf \"%.0f\", $base / 1024}")) | $(awk "BEGIN{printf \"%.1f\", $jb / 1048576}") | $got |"
    smd_stop
done
echo
fi

# a full table: GetTable's bytes for one request, and a state query while 20 dumps are asked for
start
"$netfab" smd-load --server "$srv" --topo $topo --groups grid3d:40x30x20 --deadline 900 \
    --json >/dev/null
"$probe" req "$srv" --method gettable --attr state --wait 1000 >"$work/table"
"$netfab" mcast-state --server "$srv" --dump --timeout 30000 >/dev/null
dump_mib=$(du -cm "$work/state/smd.mcfdbs" "$work/state/smd.groups" | tail -1 | cut -f1)
i=0
while [ $i -lt 20 ]; do
    "$probe" req "$srv" --method get --attr dump --wait 1 >/dev/null 2>&1 || true
    i=$((i + 1))
done
t0=$(date +%s.%N)
"$netfab" mcast-state --server "$srv" --mgid ff12:401b::1 --timeout 100 --retries 600 >/dev/null 2>&1 || true
t1=$(date +%s.%N)
echo "| 2,600 groups, 72,000 members | |"
echo "|---|---:|"
echo "| one GetTable request, no acknowledgement: bytes back | $(sed -n 's/^replies [0-9]* bytes \([0-9]*\)/\1/p' "$work/table") |"
echo "| dump files written | $dump_mib MiB |"
echo "| a state query sent after 20 dump requests: answered in | $(awk "BEGIN{printf \"%.1f\", ($t1 - $t0) * 1000}") ms |"
smd_stop
grep "dumps (" "$work/smd.log" | sed 's/^netfab smd: /manager: /' || true
