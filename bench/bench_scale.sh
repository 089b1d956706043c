#!/bin/sh
# SPDX-License-Identifier: MIT
# Fabrics of 160,000 switches and 262,656 endpoints (part of `make bench`): wall time,
# user CPU time and peak RSS of netfab topo, mcast (grid3d groups) and sim (uniform load 0.3,
# 2,000 measured cycles) on torus:48x48x72,c=1 (165,888 switches, distances from coordinates) and
# on dragonfly:a=32,p=16,h=16 (16,416 switches, the dense matrix). One thread each (THREADS=N to
# change), so the figures do not depend on what else runs. Load 0.3 is past the torus's capacity
# for uniform traffic (about 0.1): its sim runs the 2,000 cycles from empty with no warm-up and
# no drain, which would only grow the sources' queues; the Dragonfly's has both. The two sims
# take tens of minutes of CPU; SCALE_QUICK=1 leaves them out.
# Usage: bench/bench_scale.sh NETFAB
set -eu
nf=$1
threads=${THREADS:-1}
torus=torus:48x48x72,c=1
df=dragonfly:a=32,p=16,h=16
sim="--traffic uniform --load 0.3 --warmup 500 --cycles 2000 --drain 2000"
tsim="--traffic uniform --load 0.3 --warmup 0 --cycles 2000 --drain 0"
# run WHAT ARGS...: one table row, the command's wall and user seconds and peak RSS
run() {
    what=$1
    shift
    t=$(mktemp)
    if OMP_NUM_THREADS=$threads /usr/bin/time -f "%e %U %M" -o "$t" "$nf" "$@" --threads "$threads" \
        >/dev/null 2>&1; then
        read -r wall user rss <"$t"
        printf '| %s | %s | %s | %.0f |\n' "$what" "$wall" "$user" "$((rss / 1024))"
    else
        printf '| %s | failed | | |\n' "$what"
    fi
    rm -f "$t"
}
echo "| run | wall s | user s | peak RSS MiB |"
echo "|---|---:|---:|---:|"
run "topo $torus" topo --topo "$torus"
run "mcast $torus grid3d:48x48x72 fulb" mcast --topo "$torus" --groups grid3d:48x48x72 --engine fulb
run "mcast $torus grid3d:48x48x72 minihop-new" mcast --topo "$torus" --groups grid3d:48x48x72 \
    --engine minihop-new
[ -n "${SCALE_QUICK:-}" ] || run "sim $torus dor" sim --topo "$torus" --routing dor $tsim
run "topo $df" topo --topo "$df"
run "mcast $df grid3d:64x64x64 fulb" mcast --topo "$df" --groups grid3d:64x64x64 --engine fulb
run "mcast $df grid3d:64x64x64 minihop-new" mcast --topo "$df" --groups grid3d:64x64x64 \
    --engine minihop-new
[ -n "${SCALE_QUICK:-}" ] || run "sim $df dfmin" sim --topo "$df" --routing dfmin $sim
