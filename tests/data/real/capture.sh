#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes the fixtures of this directory again: what the real tools (OpenSM 3.3, infiniband-diags,
# ibsim) print and dump for two small fabrics netfab builds, run as tests/e2e/lib/ibsim.sh runs
# them. docs/real-tools.md describes every file. Two runs give the same files (ibnetdiscover's
# date aside, which is blanked).
# Usage: tests/data/real/capture.sh NETFAB NF_IBJOIN [OUTDIR]   (OUTDIR: this directory)
set -u
nf=$1 join=$2
src=$(cd "$(dirname "$0")/../../.." && pwd)
out=$(cd "${3:-$src/tests/data/real}" && pwd)
. "$src/tests/e2e/lib/harness.sh"
. "$src/tests/e2e/lib/ibsim.sh"
ibsim_require
die() { echo "capture.sh: $*" >&2; exit 1; }
# engine_ran E: OpenSM's last run routed with E (it falls back to minhop when E fails)
engine_ran() { grep -q "$1 tables configured on all switches" "$osm_dir/osm.log" || die "$1 did not route"; }

# --- xgft: 2 leaf switches of 14 ports (12 CAs, 2 up), 2 spines of 2 ports; 24 CAs ------------
x=xgft
"$nf" topo --topo xgft:h=2,m=12.2,w=1.2 --out "$out/$x.ibnet" || die "netfab topo"
ibsim_start "$out/$x.ibnet" || die "ibsim"
for engine in minhop updn; do
    ibsim_opensm_once -R $engine || die "OpenSM -R $engine"
    engine_ran $engine
    cp "$osm_dir/opensm-lfts.dump" "$out/$x-$engine.opensm-lfts.dump"
    ibsim_run dump_fts >"$out/$x-$engine.dump_fts" || die "dump_fts"
done
cp "$osm_dir/opensm.fdbs" "$out/$x-updn.opensm.fdbs"
ibsim_run ibnetdiscover | sed 's/generated on .*/generated on (date)/' >"$out/$x.ibnetdiscover"
ibsim_run ibroute 1 >"$out/$x-updn.ibroute-lid1" || die "ibroute"
ibsim_run ibtracert 5 28 >"$out/$x-updn.ibtracert-5-28" || die "ibtracert"

# groups through OpenSM's SA (minhop): first a state the SA lists whole (ibsim passes one MAD of
# a multi-MAD answer: 3 MCMemberRecords), then more groups for the forwarding tables
printf 'sa_db_dump TRUE\n' >"$tmp/osm.conf"
ibsim_opensm -F "$tmp/osm.conf" || die "OpenSM"
# port GUIDs of CA n (0-23): node GUID 0x2c90000000050 + 0x10 n, port 1: + 1
pg() { printf '%x' $((0x2c90000000051 + 16 * $1)); }
g=ff12:601b:ffff::
ibsim_run "$join" ${g}1/"$(pg 0)" ${g}1/"$(pg 13)" ${g}2/"$(pg 17)" >/dev/null || die "joins"
ibsim_run saquery -m --smkey 1 >"$out/$x.saquery-m" || die "saquery -m"
ibsim_run saquery -g >"$out/$x.saquery-g" || die "saquery -g"
# (CA n is on leaf n / 12, port n % 12 + 1) 0xc001 grows to CAs 0 1 11 13 and 23 (send-only),
# 0xc003 stays on leaf 0 (ports 1, 2 and 10: 2 members and a non-member), 0xc004 has CAs 12-20
# (leaf 1 ports 1-9) and 10 (leaf 0 port 11)
ibsim_run "$join" ${g}1/"$(pg 1)" ${g}1/"$(pg 11)" ${g}3/"$(pg 0)" ${g}3/"$(pg 1)" >/dev/null &&
    ibsim_run "$join" --state 2 ${g}3/"$(pg 9)" >/dev/null &&
    ibsim_run "$join" --state 4 ${g}1/"$(pg 23)" >/dev/null || die "more joins"
for n in 12 13 14 15 16 17 18 19 20 10; do echo "${g}4/$(pg $n)"; done | ibsim_run "$join" - >/dev/null ||
    die "joins of 0xc004"
ibsim_run dump_fts -M >"$out/$x-minhop.dump_fts-M" || die "dump_fts -M"
ibsim_run ibroute -M 1 >"$out/$x-minhop.ibroute-M-lid1" || die "ibroute -M"
cp "$osm_dir/opensm.mcfdbs" "$out/$x-minhop.opensm.mcfdbs"
# the SA database is dumped at a sweep: SIGHUP asks for one
kill -HUP "$(pgrep -g "$osm_pg" -x opensm)"
ibsim__poll 10 sh -c "[ \$(grep -c 'SUBNET UP' '$osm_dir/osm.log') -ge 2 ]" || die "no second sweep"
cp "$osm_dir/opensm-sa.dump" "$out/$x-minhop.opensm-sa.dump"

# --- torus:3x3,c=1: 9 switches of 5 ports; the LFTs of minhop and updn --------------------------
t=torus3x3
"$nf" topo --topo torus:3x3,c=1 --out "$out/$t.ibnet" || die "netfab topo"
ibsim_start "$out/$t.ibnet" || die "ibsim"
# updn finds no roots in a torus by itself: switch 0,0 is the root
echo 0x0002c90000000010 >"$tmp/roots"
for engine in minhop updn; do
    ibsim_opensm_once -R $engine -a "$tmp/roots" || die "OpenSM -R $engine"
    engine_ran $engine
    cp "$osm_dir/opensm-lfts.dump" "$out/$t-$engine.opensm-lfts.dump"
    ibsim_run dump_fts >"$out/$t-$engine.dump_fts" || die "dump_fts"
done
ibsim_stop
ls -l "$out"
