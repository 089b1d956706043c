#!/bin/sh
# SPDX-License-Identifier: MIT
# Multicast groups against the real tools: groups joined through OpenSM's SA (nf_ibjoin), their
# trees read back from the switches (dump_fts -M, ibroute -M) and the SA (opensm-sa.dump,
# saquery -m); `netfab mcast --analyze` must report what the tables hold, and netfab's minihop,
# given the SA's groups, must build OpenSM's trees table for table. On a fat tree and a torus
# that netfab wrote and ibsim serves. Skipped (exit 77, ctest "Not Run") when the tools or
# nf_ibjoin are missing; scripts/deps.sh installs them.
# Usage: realgroups.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
. "$2/tests/e2e/lib/ibsim.sh"
. "$2/tests/e2e/lib/tables.sh"
ibsim_require
if [ -z "${NF_IBJOIN:-}" ] || [ ! -x "${NF_IBJOIN:-}" ]; then
    echo "SKIP: nf_ibjoin is not built (libibmad-dev and libibumad-dev: scripts/deps.sh build)"
    exit 77
fi
t0=$(date +%s)
printf 'sa_db_dump TRUE\n' >"$tmp/osm.conf"

for spec in fattree:k=4 torus:4x4,c=1; do
    net=$tmp/$(echo "$spec" | tr ':=,' '___').ibnet
    "$nf" topo --topo "$spec" --out "$net" || { bad "netfab topo $spec"; continue; }
    ibsim_start "$net" && ibsim_opensm -F "$tmp/osm.conf" || { bad "OpenSM on $spec"; continue; }
    # ten groups: member k of group g is CA (g * 7 + k * 5) mod 16, sizes 1 .. 6 (group 1 has a
    # single member: no tree, for OpenSM as for netfab); ibsim's CA port GUID is node GUID + 1
    awk '/^Ca[ \t]/ { split($0, q, "\""); print substr(q[2], 3) }' "$net" >"$tmp/cas"
    : >"$tmp/joins"
    for g in 1 2 3 4 5 6 7 8 9 10; do
        size=$((g % 6 + 1)); [ $g = 1 ] && size=1
        k=0
        while [ $k -lt $size ]; do
            i=$(((g * 7 + k * 5) % 16 + 1))
            printf 'ff12:601b:ffff::%x/%x\n' $g $((0x$(sed -n "${i}p" "$tmp/cas") + 1)) >>"$tmp/joins"
            k=$((k + 1))
        done
    done
    expect 0 ibsim_run "$NF_IBJOIN" - <"$tmp/joins"
    members=$(sort -u "$tmp/joins" | wc -l)
    # the switches' tables, one switch's through ibroute, OpenSM's dump, the SA (a sweep
    # writes opensm-sa.dump: SIGHUP asks for one)
    ibsim_run dump_fts -M >"$tmp/mft" || bad "$spec: dump_fts -M"
    ibsim_run ibroute -M 1 >"$tmp/mft1" || bad "$spec: ibroute -M"
    kill -HUP "$(pgrep -g "$osm_pg" -x opensm)"
    ibsim__poll 10 sh -c "[ \$(grep -c 'SUBNET UP' '$osm_dir/osm.log') -ge 2 ]" || bad "$spec: no second sweep"
    cp "$osm_dir/opensm.mcfdbs" "$tmp/osm.mcfdbs"
    ibsim_run saquery -m --smkey 1 >"$tmp/saq" || bad "$spec: saquery -m"
    mft_diag "$tmp/mft" >"$tmp/mft.diag"
    mft_osm "$tmp/osm.mcfdbs" >"$tmp/mft.osm"
    [ -s "$tmp/mft.osm" ] && cmp -s "$tmp/mft.osm" "$tmp/mft.diag" && ok ||
        bad "$spec: opensm.mcfdbs and dump_fts -M differ"
    sw1=$(grep -m1 ' lid 1 ' "$net" | sed 's/.*"S-\([0-9a-f]*\)".*/\1/')
    mft_diag "$tmp/mft1" >"$tmp/mft1.diag"
    grep "^$sw1 " "$tmp/mft.diag" | cmp -s - "$tmp/mft1.diag" && ok || bad "$spec: ibroute -M 1 and dump_fts -M differ"

    # netfab reads the SA's groups: ten, all members, MLIDs kept (saquery shows what umad2sim
    # lets through, at most 3 records: those must be groups of the dump too)
    expect 0 "$nf" mcast --topo "file:$net" --groups "sa:$osm_dir/opensm-sa.dump" --dump-groups "$tmp/groups"
    [ "$(grep -c . "$tmp/groups")" = 10 ] && ok || bad "$spec: $(grep -c . "$tmp/groups") SA groups read"
    [ "$(tr ' ' '\n' <"$tmp/groups" | grep -c '^0x0*2c9')" = "$members" ] && ok ||
        bad "$spec: the SA's groups do not hold the $members members joined"
    expect 0 "$nf" mcast --topo "file:$net" --groups "sa:$tmp/saq" --dump-groups "$tmp/groups-saq"

    # --analyze reports what the tables hold: a tree for each group of two or more members (8),
    # each reaching all its members from its root, no problem, on the switches dump_fts shows
    expect 0 "$nf" mcast --topo "file:$net" --analyze "$tmp/mft" --groups "sa:$osm_dir/opensm-sa.dump" \
        --engine minihop --json
    cp "$tmp/out" "$tmp/analyze.json"
    json_num out bad_groups 0
    [ "$(json_get "$tmp/out" mlid | wc -l)" = 8 ] && ok || bad "$spec: --analyze found $(json_get "$tmp/out" mlid | wc -l) trees"
    expect 0 "$nf" mcast --topo "file:$net" --analyze "$tmp/mft"
    # the rows: MLID members switches links root roots height reached problems
    awk '/^0xC/ { print tolower($1), $3; if ($2 != $8 || $9 != "-") print "BAD", $0 }' "$tmp/out" |
        sort >"$tmp/rows"
    awk '{ print $2 }' "$tmp/mft.diag" | sort | uniq -c | awk '{ print $2, $1 }' | sort >"$tmp/rows.want"
    cmp -s "$tmp/rows" "$tmp/rows.want" && ok ||
        bad "$spec: --analyze's switches per MLID, or reach: $(diff "$tmp/rows.want" "$tmp/rows" | head -4)"
    # netfab's minihop on the SA's groups builds OpenSM's trees, table for table (roots and links
    # follow), with the MLIDs OpenSM gave
    expect 0 "$nf" mcast --topo "file:$net" --groups "sa:$osm_dir/opensm-sa.dump" --engine minihop \
        --dump-mft "$tmp/nf.mcfdbs"
    mft_osm "$tmp/nf.mcfdbs" >"$tmp/nf.osm"
    if cmp -s "$tmp/mft.osm" "$tmp/nf.osm"; then ok; else
        bad "$spec: netfab's minihop and OpenSM's trees differ (< OpenSM, > netfab):"
        diff "$tmp/mft.osm" "$tmp/nf.osm" | grep '^[<>]' | head -6 | sed 's/^/  | /'
    fi
    cmp -s "$tmp/osm.mcfdbs" "$tmp/nf.mcfdbs" && ok || bad "$spec: netfab's --dump-mft is not byte for byte OpenSM's"
    expect 0 "$nf" mcast --topo "file:$net" --analyze "$tmp/nf.mcfdbs" --json
    [ "$(json_get "$tmp/out" roots)" = "$(json_get "$tmp/analyze.json" roots)" ] && ok ||
        bad "$spec: the roots of netfab's trees differ from OpenSM's"
    echo "$spec: $members members in 10 groups; trees of $(awk '{ print $2 }' "$tmp/mft.diag" | sort -u | wc -l) MLIDs on $(wc -l <"$tmp/mft.diag") switch entries"
done
ibsim_stop
echo "real groups: $(($(date +%s) - t0))s"
finish
