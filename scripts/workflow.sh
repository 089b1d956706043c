#!/bin/sh
# SPDX-License-Identifier: MIT
# Makes the figures of docs/workflow.md again: a fattree:k=8 that netfab writes, served by ibsim,
# routed by OpenSM (minhop, staying up) with 40 groups of 8 joined through its SA (nf_ibjoin);
# the infiniband-diags dumps of it, then every netfab command of the page on them, and OpenSM's
# ftree tables for the comparison. Needs the real tools (scripts/deps.sh build) and a build
# (make build: build/netfab, build/nf_ibjoin). Writes into OUTDIR (default: a new directory
# under /tmp) and prints each command's output; about half a minute on 2 cores.
# Usage: scripts/workflow.sh [OUTDIR]
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
nf=$src/build/netfab join=$src/build/nf_ibjoin
. "$src/tests/e2e/lib/harness.sh"
. "$src/tests/e2e/lib/ibsim.sh"
ibsim_require
[ -x "$nf" ] && [ -x "$join" ] || { echo "workflow.sh: build first (make build)" >&2; exit 1; }
out=${1:-$(mktemp -d /tmp/netfab-workflow.XXXXXX)}
mkdir -p "$out" && cd "$out" || exit 1
run() { echo "\$ netfab $*"; "$nf" "$@"; echo; }

# 1. the cluster and its dumps
"$nf" topo --topo fattree:k=8 --out cluster-orig.ibnet || exit 1
ibsim_start "$out/cluster-orig.ibnet" || exit 1
printf 'sa_db_dump TRUE\n' >osm.conf
ibsim_opensm -F "$out/osm.conf" || exit 1
ibsim_run ibnetdiscover >cluster.ibnet
ibsim_run dump_fts >lfts.txt
# group g (1-40): CAs (37 g + 11 k) mod 128, k = 0..7; ibsim's CA port GUID is node GUID + 1
awk '/^Ca[ \t]/ { split($0, q, "\""); print substr(q[2], 3) }' cluster-orig.ibnet >cas
: >joins
for g in $(seq 1 40); do
    for k in 0 1 2 3 4 5 6 7; do
        i=$(((g * 37 + k * 11) % 128 + 1))
        printf 'ff12:601b:ffff::%x/%x\n' "$g" $((0x$(sed -n "${i}p" cas) + 1)) >>joins
    done
done
ibsim_run "$join" - <joins >/dev/null || exit 1
ibsim_run dump_fts -M >mfts.txt
kill -HUP "$(pgrep -g "$osm_pg" -x opensm)" # a sweep writes opensm-sa.dump
ibsim__poll 10 sh -c "[ \$(grep -c 'SUBNET UP' '$osm_dir/osm.log') -ge 2 ]"
cp "$osm_dir/opensm-sa.dump" "$osm_dir/opensm-lfts.dump" .
ibsim_run ibtracert 81 200 >ibtracert-81-200.txt
# OpenSM's fat-tree engine on the same fabric, for the comparison of section 5
ibsim_opensm_once -R ftree && ibsim_run dump_fts >ftree.txt
ibsim_stop

# 2-5. netfab on them
run topo --topo file:cluster.ibnet
run route --topo file:cluster.ibnet --routing lft:lfts.txt --check
run route --topo file:cluster.ibnet --routing lft:lfts.txt --check --switch-lids
cat ibtracert-81-200.txt; echo
run route --topo file:cluster.ibnet --routing lft:lfts.txt --trace 81 200
run mcast --topo file:cluster.ibnet --analyze mfts.txt --groups sa:opensm-sa.dump --engine minihop,fulb
run route --topo file:cluster.ibnet --routing minhop --dump-lft nf-minhop.lft
for t in lfts.txt ftree.txt nf-minhop.lft; do
    run sim --topo file:cluster.ibnet --routing "lft:$t" --traffic uniform --load 0.3 \
        --cycles 3000 --warmup 1000
done
run sim --topo file:cluster.ibnet --routing lft:ftree.txt --traffic uniform --sweep 0.5:0.9:0.2 \
    --cycles 3000 --warmup 1000
echo "files in $out"
