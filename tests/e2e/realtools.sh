#!/bin/sh
# SPDX-License-Identifier: MIT
# netfab against the real InfiniBand tools: ibsim serves a fabric netfab wrote, OpenSM routes it,
# and the real ibnetdiscover finds netfab's fabric again: the same nodes, GUIDs, LIDs and
# port-to-port links. Skipped (exit 77, ctest "Not Run") when opensm, infiniband-diags,
# ibsim-utils or libumad2sim0 are missing; scripts/deps.sh installs them.
# Usage: realtools.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
. "$2/tests/e2e/lib/ibsim.sh"
. "$2/tests/e2e/lib/tables.sh"
# the captured fixtures (tests/data/real/capture.sh): OpenSM's dump and dump_fts -M hold the same
# multicast tables, on leaf switches of 14 ports (tens digits above the ports line) too
d=$2/tests/data/real
mft_osm "$d/xgft-minhop.opensm.mcfdbs" >"$tmp/fx.osm"
mft_diag "$d/xgft-minhop.dump_fts-M" >"$tmp/fx.diag"
# (leaf 0x10: CA 10 on port 11, up on 13; leaf 0x20: CAs on ports 1-9, up on 13)
grep -qx '0002c90000000010 0xc004 11 13' "$tmp/fx.diag" && ok || bad "fixture: leaf 0x10 of 0xc004"
grep -qx '0002c90000000020 0xc004 1 2 3 4 5 6 7 8 9 13' "$tmp/fx.diag" && ok || bad "fixture: leaf 0x20 of 0xc004"
cmp -s "$tmp/fx.osm" "$tmp/fx.diag" && ok ||
    bad "fixture: mcfdbs and dump_fts -M differ: $(diff "$tmp/fx.osm" "$tmp/fx.diag" | head -4)"

ibsim_require

# canon FILE [name]: an ibnetdiscover-format file (ibnetdiscover's output, netfab's .ibnet, ibsim's
# net format) as sorted lines, one fact a line: "node KIND ID ports=N [lid=L] DESC", "link ID[P]
# ID[P]" from each end, "caport ID[P] lid=L". ID is the node GUID (from the "S-"/"H-" node id), or
# the node's description with "name"; port GUIDs are left out (canon_guids checks them)
canon() {
    awk -v by="${2-guid}" '
    FNR == NR { if ($0 ~ /^(Switch|Ca|Hca|Rt)[ \t]/) { split($0, q, "\""); desc[q[2]] = q[4] } next }
    function id(x) { return by == "name" ? "\"" desc[x] "\"" : tolower(substr(x, 3)) }
    /^(Switch|Ca|Hca|Rt)[ \t]/ {
        split($0, q, "\""); cur = q[2]; kind = $1 == "Switch" ? "switch" : "ca"; lid = ""
        if (kind == "switch" && match($0, / lid [0-9]+/)) lid = " lid=" substr($0, RSTART + 5, RLENGTH - 5)
        print "node", kind, id(cur), "ports=" $2 + 0 lid, "\"" desc[cur] "\""
        next
    }
    /^\[[0-9]+\]/ {
        p = substr($0, 2, index($0, "]") - 2)
        split($0, q, "\""); peer = q[2]
        rest = substr($0, index($0, "\"" peer "\"") + length(peer) + 2)
        pp = substr(rest, 2, index(rest, "]") - 2)
        print "link", id(cur) "[" p "]", id(peer) "[" pp "]"
        if (kind == "ca" && match($0, /# lid [0-9]+/))
            print "caport", id(cur) "[" p "]", "lid=" substr($0, RSTART + 6, RLENGTH - 6)
    }' "$1" "$1" | sort
}

# canon_guids FILE: "NODEGUID PORT PORTGUID" for every CA port line "[P](PORTGUID) ..." of FILE
canon_guids() {
    awk '/^(Switch|Ca|Hca|Rt)[ \t]/ { split($0, q, "\""); cur = substr(q[2], 3); ca = $1 != "Switch" }
        ca && /^\[[0-9]+\]\(/ { p = substr($0, 2, index($0, "]") - 2)
            g = substr($0, index($0, "(") + 1); g = substr(g, 1, index(g, ")") - 1); print cur, p, g }' "$1"
}

# same_fabric WHAT WANT GOT: WANT and GOT (canon output) are equal, else say which lines differ
same_fabric() {
    if cmp -s "$2" "$3"; then ok; else
        bad "$1: the fabrics differ (< netfab's, > found):"
        diff "$2" "$3" | grep '^[<>]' | head -8 | sed 's/^/  | /'
    fi
}

# discover NETFILE OUT: ibsim serves NETFILE, OpenSM routes it once (LIDs assigned), the real
# ibnetdiscover writes OUT; 1 when a step fails
discover() {
    ibsim_start "$1" && ibsim_opensm_once && ibsim_run ibnetdiscover >"$2" 2>"$tmp/disc.err" ||
        { bad "discovery of $1: $(tail -2 "$tmp/disc.err" 2>/dev/null)"; return 1; }
}

t0=$(date +%s)
for spec in fattree:k=4 torus:4x4,c=1; do
    f=$tmp/$(echo "$spec" | tr ':=,' '___')
    "$nf" topo --topo "$spec" --out "$f.ibnet" && "$nf" topo --topo "$spec" --out "$f.net" ||
        bad "netfab topo $spec"
    canon "$f.ibnet" >"$f.want"
    canon "$f.ibnet" name >"$f.want-names"
    # netfab's own numbers, to check the file and the reader as well: 16 CAs on 20 switches, 48
    # links (k=4: 16 edge-CA, 16 edge-agg, 16 agg-core); 16 CAs on 16 switches, 16 + 32 links
    nodes=$(grep -c '^node' "$f.want") links=$(grep -c '^link' "$f.want")
    case $spec in
        fattree*) [ "$nodes" = 36 ] && [ "$links" = 96 ] && ok || bad "$spec: $nodes nodes, $links link ends" ;;
        torus*) [ "$nodes" = 32 ] && [ "$links" = 96 ] && ok || bad "$spec: $nodes nodes, $links link ends" ;;
    esac

    # 1. the ibnetdiscover file: ibsim takes its GUIDs (switchguid=, caguid=) and LIDs (comments);
    # OpenSM keeps LIDs it finds valid, so ibnetdiscover after OpenSM sees netfab's LIDs too
    if discover "$f.ibnet" "$f.found"; then
        grep -q 'SUBNET UP' "$osm_dir/osm.log" && ok || bad "$spec: OpenSM logged no SUBNET UP"
        canon "$f.found" >"$f.got"
        same_fabric "$spec (.ibnet through ibsim)" "$f.want" "$f.got"
        # ibsim gives a CA port the GUID node GUID + port number (netfab: the node GUID)
        canon_guids "$f.found" >"$f.pg"
        [ -s "$f.pg" ] && [ "$(wc -l <"$f.pg")" = 16 ] && ok || bad "$spec: CA port GUIDs: $(wc -l <"$f.pg") found"
        while read -r node port pg; do
            [ $((0x$pg)) = $((0x$node + port)) ] && ok || bad "$spec: CA $node port $port has GUID $pg"
        done <"$f.pg"
        # netfab reads the real tool's file back to the same fabric
        expect 0 "$nf" topo --topo "file:$f.found" --out "$f.back.ibnet"
        canon "$f.back.ibnet" >"$f.back"
        same_fabric "$spec (netfab reading ibnetdiscover)" "$f.want" "$f.back"
    fi

    # 2. ibsim's own net format as netfab writes it: the same nodes, GUIDs (switchguid=, caguid=
    # above each block), LIDs and links, and by their descriptions too
    if discover "$f.net" "$f.found-net"; then
        canon "$f.found-net" >"$f.got-net"
        same_fabric "$spec (.net through ibsim)" "$f.want" "$f.got-net"
        canon "$f.found-net" name >"$f.got-names"
        same_fabric "$spec (.net through ibsim, by name)" "$f.want-names" "$f.got-names"
    fi
done

# the check fails on a wrong fabric: two CAs of the first edge switch swap ports in the file
# ibsim serves, which the comparison must report as exactly these moved links
f=$tmp/fattree_k_4
sed 's/2c90000000150/SWAPPED/g; s/2c90000000160/2c90000000150/g; s/SWAPPED/2c90000000160/g' \
    "$f.ibnet" >"$tmp/moved.ibnet"
if discover "$tmp/moved.ibnet" "$tmp/moved.found"; then
    canon "$tmp/moved.found" >"$tmp/moved.got"
    diff "$f.want" "$tmp/moved.got" | grep '^[<>] link' | sort >"$tmp/moved.diff"
    cat >"$tmp/moved.want" <<'EOF'
< link 0002c90000000010[1] 0002c90000000150[1]
< link 0002c90000000010[2] 0002c90000000160[1]
< link 0002c90000000150[1] 0002c90000000010[1]
< link 0002c90000000160[1] 0002c90000000010[2]
> link 0002c90000000010[1] 0002c90000000160[1]
> link 0002c90000000010[2] 0002c90000000150[1]
> link 0002c90000000150[1] 0002c90000000010[2]
> link 0002c90000000160[1] 0002c90000000010[1]
EOF
    if cmp -s "$tmp/moved.want" "$tmp/moved.diff"; then ok; else
        bad "a moved link is not reported as such:"; sed 's/^/  | /' "$tmp/moved.diff" | head -8
    fi
fi

# ---- multicast groups joined through OpenSM's SA (nf_ibjoin), read back by three real tools ----
if [ -z "${NF_IBJOIN:-}" ] || [ ! -x "${NF_IBJOIN:-}" ]; then
    skip "the multicast checks need nf_ibjoin (built when libibmad-dev is installed)"
else
    f=$tmp/fattree_k_4
    printf 'sa_db_dump TRUE\n' >"$tmp/osm.conf"
    # group 1: two CAs of edge switch 0x10 and one of 0x80; group 2: a single member
    if ibsim_start "$f.ibnet" && ibsim_opensm -F "$tmp/osm.conf"; then
        expect 0 ibsim_run "$NF_IBJOIN" ff12:601b:ffff::1/2c90000000151 \
            ff12:601b:ffff::1/2c90000000161 ff12:601b:ffff::1/2c90000000231 ff12:601b:ffff::2
        has_line out "ff12:601b:ffff::1 0002c90000000161 0xc001"
        has_line out "ff12:601b:ffff::2 0002c90000000151 0xc002"
        # a group is created by a full member only; an unknown port cannot join
        expect 1 ibsim_run "$NF_IBJOIN" --state 4 ff12:601b:ffff::3
        expect 1 ibsim_run "$NF_IBJOIN" ff12:601b:ffff::1/2c90000000999
        # the SA lists the members (SM_Key 1: OpenSM's default; without it PortGIDs read ::)
        expect 0 ibsim_run saquery -m 0xc001 --smkey 1
        got=$(grep -o 'fe80::[0-9a-f:]*' "$tmp/out" | sort | tr '\n' ' ')
        [ "$got" = "fe80::2:c900:0:151 fe80::2:c900:0:161 fe80::2:c900:0:231 " ] && ok ||
            bad "saquery -m 0xc001 lists '$got'"
        # OpenSM's dump and the switches (dump_fts -M) hold the same tree; a group of one member
        # gets no entries
        expect 0 ibsim_run dump_fts -M
        mft_diag "$tmp/out" >"$tmp/mft.diag"
        mft_osm "$osm_dir/opensm.mcfdbs" >"$tmp/mft.osm"
        [ -s "$tmp/mft.osm" ] && cmp -s "$tmp/mft.osm" "$tmp/mft.diag" && ok ||
            bad "opensm.mcfdbs and dump_fts -M differ: $(diff "$tmp/mft.osm" "$tmp/mft.diag" | head -4)"
        grep -q ' 0xc002' "$tmp/mft.diag" && bad "a one-member group got MFT entries" || ok
        # netfab's minihop does as OpenSM on the same fabric: a group of three members (MLID
        # 0xC001) gets entries, one of a single member (0xC002) none, on any switch
        printf '0 1 5\n0\n' >"$tmp/single.groups"
        expect 0 "$nf" mcast --topo "file:$f.ibnet" --groups "file:$tmp/single.groups" \
            --engine minihop --verify --dump-mft "$tmp/single.mft"
        grep -q '^0xC001 :' "$tmp/single.mft" && ok || bad "netfab's minihop: no tree for 3 members"
        grep -q '^0xC002 :' "$tmp/single.mft" && bad "netfab's minihop: a one-member group got MFT entries" || ok
        # 0x10 sends down to its two members and up to the root; 0x80 down to its one member
        grep -q '^0002c90000000010 0xc001 1 2 [34]$' "$tmp/mft.diag" && ok || bad "edge 0x10: $(grep '^0002c90000000010' "$tmp/mft.diag")"
        grep -q '^0002c90000000080 0xc001 1 [34]$' "$tmp/mft.diag" && ok || bad "edge 0x80: $(grep '^0002c90000000080' "$tmp/mft.diag")"
        expect 0 ibsim_run "$NF_IBJOIN" --leave ff12:601b:ffff::1/2c90000000231
        expect 0 ibsim_run saquery -m 0xc001 --smkey 1
        has out "fe80::2:c900:0:161"
        grep -q "fe80::2:c900:0:231" "$tmp/out" && bad "saquery still lists the member that left" || ok
    else
        bad "OpenSM on $f.ibnet for the multicast checks"
    fi
fi
ibsim_stop
took=$(($(date +%s) - t0))
echo "real tools: ${took}s"
finish
