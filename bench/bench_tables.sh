#!/bin/sh
# SPDX-License-Identifier: MIT
# Reading a subnet manager's forwarding tables (part of `make bench`): for fattree:k=16 and
# torus:8x8x8,c=2, OpenSM (minhop) routes the fabric under ibsim, dump_fts reads the tables back
# from the switches, and bench_uft times netfab's reader on that text and on OpenSM's own
# opensm-lfts.dump, then the route check over CA LIDs and with the switch LIDs. Without the real
# tools (scripts/deps.sh build installs them) it times the reader on netfab's own minhop tables
# (`netfab route --dump-lft`, OpenSM's layout) and says so.
# Usage: bench/bench_tables.sh NETFAB BENCH_UFT
set -u
nf=$1 bu=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/e2e/lib/harness.sh"
. "$here/../tests/e2e/lib/ibsim.sh"
real=1 times=""
for t in ibsim opensm dump_fts; do command -v $t >/dev/null 2>&1 || real=0; done
ls /usr/lib/*/umad2sim/libumad2sim.so >/dev/null 2>&1 || real=0
[ $real = 1 ] && ibsim_require # finds the preload; all is there, so it returns
ibsim_wait_s=120
echo "| fabric, tables | MB | parse ms (best of 5) | MB/s | check, CA LIDs: ms | check, + switch LIDs: ms |"
echo "|---|---:|---:|---:|---:|---:|"
for spec in fattree:k=16 torus:8x8x8,c=2; do
    net=$tmp/fabric.ibnet
    "$nf" topo --topo "$spec" --out "$net" || exit 1
    if [ $real = 1 ]; then
        ibsim_start "$net" || exit 1
        t0=$(date +%s.%N)
        ibsim_opensm_once -R minhop || exit 1
        t1=$(date +%s.%N)
        ibsim_run dump_fts >"$tmp/tables.dump_fts" || exit 1
        t2=$(date +%s.%N)
        ibsim_stop
        "$bu" "$net" "$tmp/tables.dump_fts" "$spec, OpenSM minhop, dump_fts" 5 || exit 1
        "$bu" "$net" "$osm_dir/opensm-lfts.dump" "$spec, OpenSM minhop, opensm-lfts.dump" 5 || exit 1
        times="$times
$spec: OpenSM -o (minhop) $(printf %.1f "$(echo "$t1 - $t0" | bc)") s, dump_fts $(printf %.1f "$(echo "$t2 - $t1" | bc)") s"
    else
        "$nf" route --topo "$net" --routing minhop --dump-lft "$tmp/tables.lft" || exit 1
        "$bu" "$net" "$tmp/tables.lft" "$spec, netfab minhop, opensm-lfts.dump layout" 5 || exit 1
    fi
done
echo
if [ $real = 1 ]; then
    echo "The real tools on the same fabrics (ibsim; wall time, 2 shared cores):${times:-}"
else
    echo "(the real tools are not installed: netfab's own tables were read)"
fi
