#!/bin/sh
# SPDX-License-Identifier: MIT
# Results of a fixed set of runs, timings stripped, for checking that a refactor or an
# optimisation leaves every result as it was: run it with the old and the new build and
# `diff -r` the two directories (24 runs: sim on every routing family with failures, --w-hop 0,
# bursty sources, a shared pool and 1-3 threads; mcast on all engines; route --check; each
# netfab exp --quick). About 30 s on 2 cores.
# Usage: scripts/results-snapshot.sh NETFAB OUTDIR
set -u
nf=$1; out=$2; mkdir -p "$out"
norm() { python3 -c '
import json,sys
def strip(o):
    if isinstance(o,dict):
        return {k:strip(v) for k,v in o.items() if not (k.endswith("_s") or k.endswith("_ms") or "rss" in k or k in ("seconds","elapsed","time","wall_s","cycles_per_s","rate"))}
    if isinstance(o,list): return [strip(v) for v in o]
    return o
try:
    d=json.load(sys.stdin)
except Exception as e:
    print("NOT JSON", e); sys.exit(0)
print(json.dumps(strip(d),indent=1,sort_keys=True))'; }
# run NAME ARGS...: netfab ARGS --json, its normalised JSON in NAME.json, stderr and exit status
# in NAME.err
run() {
    name=$1
    shift
    "$nf" "$@" --json 2>"$out/$name.err" >"$out/$name.raw"
    echo "exit $?" >>"$out/$name.err"
    norm <"$out/$name.raw" >"$out/$name.json"
    rm -f "$out/$name.raw"
}
run df_dfmin sim --topo dragonfly:a=4,p=2,h=2 --routing dfmin --traffic uniform --sweep 0.1:0.9:0.2 --threads 2
run df_ugalg sim --topo dragonfly:a=4,p=2,h=2 --routing ugal-g --traffic worstcase --load 0.3 --vcs 3 --threads 2
run df_ugall_w0 sim --topo dragonfly:a=4,p=2,h=2 --routing ugal-l --traffic worstcase --load 0.3 --vcs 3 --w-hop 0
run df_par sim --topo dragonfly:a=4,p=2,h=2 --routing par --traffic uniform --load 0.5 --vcs 4 --pkt 4 --threads 3
run df_val sim --topo dragonfly:a=4,p=2,h=2 --routing val --traffic uniform --load 0.2 --vcs 3 --proxy restricted
run ft_updown sim --topo fattree:k=8 --routing updown --traffic uniform --load 0.6 --adaptive --threads 2
run ft_minhop_fail sim --topo fattree:k=8 --routing minhop --traffic uniform --load 0.4 --fail-links 6 --vcs 6
run ft_ftable_failat sim --topo fattree:k=8 --routing ftable --traffic uniform --load 0.4 --fail-links 6 --fail-at 2000 --threads 2
run gft_ftable_failat sim --topo gft:preset=sunway-proto --routing ftable --traffic uniform --load 0.3 --fail-links 4 --fail-at 1500 --cycles 2000
run torus_dor sim --topo torus:6x6,c=1 --routing dor --traffic tornado --load 0.3 --shared 16 --threads 2
run torus_bursty sim --topo torus:4x4x4,c=1 --routing dor --traffic hotspot --load 0.2 --bursty --msg 4
run table2 sim --topo gft:preset=sunway-proto --routing table2 --traffic transpose --load 0.3 --cycles 2000
run alltoall sim --topo fattree:k=4 --routing minhop --traffic alltoall --load 0.5
run mc_ft mcast --topo fattree:k=8 --groups grid2d:8x16 --engine all
run mc_torus mcast --topo torus:6x6x6,c=1 --groups grid3d:6x6x6 --engine all
run route_dor route --topo torus:4x4,c=1 --routing dor --check
run route_par route --topo dragonfly:a=4,p=2,h=2 --routing par --check --vcs 4
for e in dual-rail mcast-height mcast-efi mcast-workload collectives faults tables; do
  run "exp_$e" exp "$e" --quick --threads 2
done
