#!/bin/sh
# SPDX-License-Identifier: MIT
# Unicast forwarding tables against the real tools, both ways: OpenSM loads the tables netfab
# writes (-R file -U) and the switches hold them entry for entry (dump_fts); ibtracert follows
# the same paths as `netfab route --trace`; and OpenSM's own tables (minhop, updn, dfsssp), read
# back with dump_fts, get from `netfab route --check` what OpenSM says of their credit loops.
# Fat tree, torus and Dragonfly written by netfab, served by ibsim. Skipped (exit 77, ctest "Not
# Run") when the tools are missing; scripts/deps.sh installs them.
# Usage: realtables.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
. "$2/tests/e2e/lib/ibsim.sh"
. "$2/tests/e2e/lib/tables.sh"
ibsim_require
t0=$(date +%s)

# ---- unicast forwarding tables: netfab's loaded into OpenSM, OpenSM's read by netfab ------------
# hops FILE: "OUT IN LID" per hop of ibtracert's output or netfab route --trace's
hops() { sed -n 's/^\[\([0-9]*\)\] -> .*\[\([0-9]*\)\] lid \([0-9]*\).*/\1 \2 \3/p' "$1"; }
# osm_loads SPEC NET ROUTING: netfab writes ROUTING's tables for the fabric of SPEC (written as NET,
# which ibsim serves), OpenSM loads them (-R file -U), dump_fts reads the switches back: the same
# entries, and netfab reads dump_fts's text back to the same file
osm_loads() {
    lft=$tmp/$3.lft
    expect 0 "$nf" route --topo "$1" --routing "$3" --dump-lft "$lft"
    ibsim_opensm_once -R file -U "$lft" && grep -q "file tables configured on all switches" "$osm_dir/osm.log" ||
        { bad "$1 $3: OpenSM did not load netfab's tables"; return 1; }
    ibsim_run dump_fts >"$tmp/$3.back" || { bad "$1 $3: dump_fts"; return 1; }
    lft_canon "$lft" >"$tmp/$3.want"
    lft_canon "$tmp/$3.back" >"$tmp/$3.got"
    n=$(wc -l <"$tmp/$3.want")
    [ "$n" -gt 100 ] && cmp -s "$tmp/$3.want" "$tmp/$3.got" && ok ||
        bad "$1 $3: the switches hold other tables than netfab wrote ($n entries): $(diff "$tmp/$3.want" "$tmp/$3.got" | head -3)"
    expect 0 "$nf" route --topo "$2" --routing "lft:$tmp/$3.back" --dump-lft "$tmp/$3.again"
    cmp -s "$lft" "$tmp/$3.again" && ok || bad "$1 $3: netfab reads dump_fts to other tables"
}
# traces SPEC ROUTING EVERY: ibtracert and netfab route --trace give the same hops (out port, in
# port, LID) for every EVERY-th ordered pair of the fabric's LIDs (switches and CAs)
traces() {
    lids=$(grep -o ' lid [0-9]*' "$net" | awk '{ print $2 }' | sort -un)
    : >"$tmp/pairs"
    i=0
    for s in $lids; do for d in $lids; do
        [ "$s" = "$d" ] && continue
        i=$((i + 1)); [ $((i % $3)) = 0 ] && echo "$s $d" >>"$tmp/pairs"
    done; done
    # ibtracert and netfab, three pairs at a time (ibsim serves ten clients)
    printf '#!/bin/sh\ncd "%s" && env LD_PRELOAD="%s" timeout 20 ibtracert "$3" "$4" >"%s/tr.$3.$4" 2>&1\n"$1" route --topo "$2" --routing "$5" --trace "$3" "$4" >"%s/nt.$3.$4" 2>&1\nexit 0\n' \
        "$osm_dir" "$ibsim_so" "$tmp" "$tmp" >"$tmp/tr.sh"
    sed "s|^|$nf $1 |; s|\$| $2|" "$tmp/pairs" | xargs -P 3 -n 5 sh "$tmp/tr.sh"
    n=0 same=0
    while read -r s d; do
        n=$((n + 1))
        hops "$tmp/tr.$s.$d" >"$tmp/h.osm"; hops "$tmp/nt.$s.$d" >"$tmp/h.nf"
        if [ -s "$tmp/h.osm" ] && cmp -s "$tmp/h.osm" "$tmp/h.nf"; then same=$((same + 1)); else
            [ $((n - same)) -le 3 ] && bad "$1 $2: $s -> $d: ibtracert $(tr '\n' ' ' <"$tmp/h.osm"), netfab $(tr '\n' ' ' <"$tmp/h.nf")"
        fi
    done <"$tmp/pairs"
    [ "$n" -ge 80 ] && [ "$same" = "$n" ] && ok || bad "$1 $2: ibtracert and netfab agree on $same of $n paths"
    echo "$1 $2: ibtracert and netfab --trace agree on $same of $n paths"
}
# verdict SPEC NET ENGINE CA ALL [OPENSM...]: OpenSM routes with ENGINE (options OPENSM...),
# dump_fts reads its tables back, and netfab's check finds a credit loop (1) or none (0) over CA
# LIDs (CA) and with the switch LIDs (ALL; - : not asked), every route delivering. CA "osm": what
# DFSSSP logged ("Virtual Lanes needed: 1": none)
verdict() {
    spec=$1 vnet=$2 engine=$3 want_ca=$4 want_all=$5
    shift 5
    ibsim_opensm_once -R "$engine" "$@" && grep -q "$engine tables configured on all switches" "$osm_dir/osm.log" ||
        { bad "$spec: OpenSM's $engine did not route"; return 1; }
    if [ "$want_ca" = osm ]; then
        vls=$(sed -n 's/.*Virtual Lanes needed: \([0-9]*\).*/\1/p' "$osm_dir/osm.log")
        [ -n "$vls" ] || { bad "$spec: DFSSSP logged no VL count"; return 1; }
        want_ca=$([ "$vls" -gt 1 ] && echo 1 || echo 0)
        echo "$spec: OpenSM's DFSSSP needs $vls VLs; netfab must find $([ "$want_ca" = 1 ] || echo "no ")credit loop"
    fi
    ibsim_run dump_fts >"$tmp/$engine.osm" || { bad "$spec $engine: dump_fts"; return 1; }
    for lids in ca all; do
        want=$want_ca opt=
        [ $lids = all ] && want=$want_all opt=--switch-lids
        [ "$want" = - ] && continue
        "$nf" route --topo "$vnet" --routing "lft:$tmp/$engine.osm" --check $opt --json >"$tmp/v.out" 2>"$tmp/v.err"
        got=$(json_get "$tmp/v.out" credit_loop)
        delivered=$(json_get "$tmp/v.out" delivered) routes=$(json_get "$tmp/v.out" routes)
        holes=$(json_get "$tmp/v.out" holes) loops=$(json_get "$tmp/v.out" loops)
        # every route between CAs delivers; to and from switches up/down leaves routes that
        # would go down and up again out (holes), never a loop
        [ "$got" = "$([ "$want" = 1 ] && echo true || echo false)" ] && [ -n "$routes" ] &&
            [ "$loops" = 0 ] && { [ "$delivered" = "$routes" ] ||
                { [ $lids = all ] && [ $((delivered + holes)) = "$routes" ]; }; } && ok ||
            { bad "$spec: OpenSM's $engine tables, $lids LIDs: credit loop $got (want $want), $delivered of $routes routes delivered"; head -3 "$tmp/v.err"; }
        echo "$spec: OpenSM's $engine, $lids LIDs: credit loop $got, $delivered of $routes routes delivered"
    done
}

for spec in fattree:k=4 torus:4x4,c=1 dragonfly:a=4,p=2,h=2; do
    net=$tmp/$(echo "$spec" | tr ':=,' '___').ibnet
    [ -f "$net" ] || "$nf" topo --topo "$spec" --out "$net"
    ibsim_start "$net" || { bad "ibsim on $spec"; continue; }
    case $spec in
        fattree*) for r in minhop ftable table2 updown; do osm_loads "$spec" "file:$net" $r; done
            traces "$spec" updown 15
            # OpenSM's minhop: no credit loop between CAs; with the switch LIDs, routes from
            # switch to switch turning down and up close one. updn: none (its manual's claim).
            # DFSSSP logged how many VLs its paths need: 1 means no loop on one VL.
            verdict "$spec" "file:$net" minhop 0 1
            verdict "$spec" "file:$net" updn 0 0
            verdict "$spec" "file:$net" dfsssp osm - ;;
        torus*) for r in minhop dor; do osm_loads "$spec" "file:$net" $r; done
            traces "$spec" dor 12
            grep -m1 '^Switch' "$net" | sed 's/.*"S-\([0-9a-f]*\)".*/0x\1/' >"$tmp/roots"
            verdict "$spec" "file:$net" minhop 1 1
            verdict "$spec" "file:$net" updn 0 0 -a "$tmp/roots"
            verdict "$spec" "file:$net" dfsssp osm - ;;
        dragonfly*) osm_loads "$spec" "file:$net" dfmin && traces "$spec" dfmin 120 ;;
    esac
done
ibsim_stop
took=$(($(date +%s) - t0))
echo "real tables: ${took}s"
finish
