#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of the netfab CLI: exit statuses, messages, JSON keys, format round trips.
# Usage: cli.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1; src=$2; fabrics=$3
. "$src/tests/e2e/lib/harness.sh"

expect 0 "$nf" --version;                 has_line out "netfab 0.1.0"
expect 0 "$nf" --help
has_line out "  topo         build, read or convert a fabric and print its statistics"
expect 0 "$nf" topo --help
has_line out "  netfab topo --topo fattree:k=4 --out ft4.ibnet"
expect 2 "$nf";                           has err "usage"
expect 2 "$nf" frobnicate;                has err "unknown command 'frobnicate'"
# every message of a command starts with its name, the library's reports included
expect 2 "$nf" topo --topo nosuch:k=4
has_line err "netfab topo: unknown topology 'nosuch' (known: fattree, xgft, torus, dragonfly, gft, bluelight, taihulight, file)"
expect 1 "$nf" sim --topo file:/nonexistent --routing dor --traffic uniform --load 0.1
has_line err "netfab sim: /nonexistent: cannot read: No such file or directory"
expect 2 "$nf" topo;                      has err "--topo SPEC is required"
expect 2 "$nf" topo --topo fattree:k=4 --bogus
expect 2 "$nf" topo --topo fattree:k=4 --threads zero; has err "--threads"
expect 2 "$nf" topo --topo nosuch:x=1;    has err "unknown topology"
expect 2 "$nf" topo --topo fattree:k=3;   has err "fattree"
expect 2 "$nf" topo --topo fattree:k=4 --out "$tmp/x.unknown"; has err "format"
expect 1 "$nf" topo --topo file:"$tmp/does-not-exist"; has err "does-not-exist"

expect 1 "$nf" topo --topo fattree:k=4 --out /nonexistent-dir/x.ibnet; has err "netfab topo: cannot write /nonexistent-dir/x.ibnet: No such file"
expect 1 "$nf" topo --topo fattree:k=4 --out /dev/full --format json; has err "/dev/full"

# statistics: hand-known numbers of the standard fat tree k=4 (16 endpoints, 20 switches,
# 16 host + 32 switch links, diameter 4)
expect 0 "$nf" topo --topo fattree:k=4 --json
json_num out endpoints 16; json_num out switches 20; json_num out links 48; json_num out diameter 4
json_val out links_by_class '{"host":16,"local":32,"global":0,"sibling":0}'
json_range out build_s 0 60; json_range out distances_s 0 60; json_range out peak_rss_kib 1 4194304
# two fabrics: an array of two objects, and a table of two rows (the 4x4 torus: 16 switches,
# 16 host + 32 switch links, diameter 2 + 2 between switches plus the two host links)
expect 0 "$nf" topo --topo fattree:k=4 --topo torus:4x4,c=1 --json
json_vals out topo '"fattree:k=4" "torus:4x4,c=1"'; json_nums out switches "20 16"
expect 0 "$nf" topo --topo fattree:k=4 --topo torus:4x4,c=1
[ "$(wc -l <"$tmp/out")" = 3 ] && ok || bad "two fabrics: a header and 2 rows: $(cat "$tmp/out")"
awk '$1 == "torus:4x4,c=1" && $2 == 16 && $3 == 16 && $4 == 48 && $5 == 4 { n++ } END { exit n != 1 }' "$tmp/out" \
    && ok || bad "torus row: $(grep torus "$tmp/out")"

# write in every format, read back the two readable ones, same statistics (72 endpoints, 36
# switches: 72 host + 36 x 3 / 2 local + 36 x 2 / 2 global = 162 links, diameter 3)
expect 0 "$nf" topo --topo dragonfly:a=4,p=2,h=2 --json
json_num out links 162
for fmt in ibnet ibsim; do
    expect 0 "$nf" topo --topo dragonfly:a=4,p=2,h=2 --out "$tmp/df.$fmt" --format "$fmt"
    expect 0 "$nf" topo --topo "file:$tmp/df.$fmt" --json
    json_num out endpoints 72; json_num out switches 36; json_num out links 162; json_num out diameter 3
done
# DOT: "graph fabric { ... }" with one node statement per switch and CA and one "--" edge per
# link, the counts those of netfab topo --json
expect 0 "$nf" topo --topo fattree:k=4 --json
nodes=$(($(json_said out endpoints) + $(json_said out switches))) links=$(json_said out links)
expect 0 "$nf" topo --topo fattree:k=4 --out "$tmp/ft.dot"
line "$tmp/ft.dot" 1 "graph fabric {"
line "$tmp/ft.dot" "$(wc -l <"$tmp/ft.dot")" "}"
n=$(grep -Ec '^  n[0-9]+ \[' "$tmp/ft.dot"); [ "$n" = "$nodes" ] && ok || bad "ft.dot: $n nodes, want $nodes"
n=$(grep -Ec '^  n[0-9]+ -- n[0-9]+ \[' "$tmp/ft.dot"); [ "$n" = "$links" ] && ok || bad "ft.dot: $n edges, want $links"
n=$(grep -Ec 'shape=box' "$tmp/ft.dot"); [ "$n" = 20 ] && ok || bad "ft.dot: $n switches, want 20"
# every edge joins two declared nodes, and no node is declared twice
sed -n 's/^  \(n[0-9]*\) \[.*/\1/p' "$tmp/ft.dot" | sort >"$tmp/decl"
sed -n 's/^  \(n[0-9]*\) -- \(n[0-9]*\) \[.*/\1\n\2/p' "$tmp/ft.dot" | sort -u >"$tmp/ends"
[ -z "$(sort -u "$tmp/decl" | comm -13 - "$tmp/ends")" ] && [ -z "$(uniq -d "$tmp/decl")" ] && ok || bad "ft.dot: edges to undeclared nodes, or a node twice"
# the JSON fabric: its counts, a node object per switch and CA, a link object per link
expect 0 "$nf" topo --topo fattree:k=4 --out "$tmp/ft.json"
json_num "$tmp/ft.json" switches 20; json_num "$tmp/ft.json" cas 16
n=$(json_get "$tmp/ft.json" kind | wc -l); [ "$n" = "$nodes" ] && ok || bad "ft.json: $n nodes, want $nodes"
n=$(json_get "$tmp/ft.json" pa | wc -l); [ "$n" = "$links" ] && ok || bad "ft.json: $n links, want $links"
expect 0 "$nf" topo --topo fattree:k=4 --out - --format ibnet
[ "$(grep -c '^Switch' "$tmp/out")" = 20 ] && [ "$(grep -c '^Ca' "$tmp/out")" = 16 ] && ok || bad "ibnet to stdout: not 20 switch and 16 CA blocks"

# malformed input: file:line: message and exit 2
printf 'Switch 4 "S-0000000000000001"\n[9] "S-0000000000000002"[1]\n' >"$tmp/bad.ibnet"
expect 2 "$nf" topo --topo "file:$tmp/bad.ibnet"; has err "bad.ibnet:2:"
printf 'hello world\n' >"$tmp/junk.txt"
expect 2 "$nf" topo --topo "file:$tmp/junk.txt"; has err "junk.txt"

# the real dumps: every complete one loads, to its switches, CAs and links (README.md's figures,
# the same as its Switch and Ca blocks and half its port lines); the stray stderr line warns
n=0
for f in "$fabrics"/*.ibnet; do
    case "${f##*/}" in
    *.partial.ibnet) continue ;;
    nvidia-topograph-ndr-superpod.ibnet) fig="40 582 1114" ;;
    switchib-edr-6sw-96hca.ibnet) fig="6 96 144" ;;
    stage-sx6036-fdr10.ibnet) fig="8 144 192" ;;
    psmn-x5-voltaire-qdr.ibnet) fig="11 89 159" ;;
    nvidia-kb-ufm-lab-edr-fdr.ibnet) fig="2 6 10" ;;
    rdma-core-manpage-voltaire-2007.ibnet) fig="2 4 7" ;;
    fattree-k4-n3.synthetic.ibnet) fig="80 128 384" ;;
    *) fig="(no figures)" ;;
    esac
    n=$((n + 1))
    expect 0 "$nf" topo --topo "file:$f" --json
    got="$(json_said out switches) $(json_said out endpoints) $(json_said out links)"
    [ "$got" = "$fig" ] && ok || bad "${f##*/}: switches, CAs, links '$got', want '$fig'"
done
[ "$n" = 7 ] && ok || bad "$n complete dumps in $fabrics, want 7"
expect 0 "$nf" topo --topo "file:$fabrics/nvidia-kb-ufm-lab-edr-fdr.ibnet"; has err "warning"

# the partial dump: a port listed twice with different peers is a structural error, said clearly
expect 2 "$nf" topo --topo "file:$fabrics/llnl-atlas-2006-voltaire.partial.ibnet"
has_line err "netfab topo: $fabrics/llnl-atlas-2006-voltaire.partial.ibnet:16: port 23 of \"S-0008f104003f1e29\" is listed twice (first on line 13)"

# Debian's ibsim examples are ibsim net files: switches, CAs and links as their blocks list them
ex=/usr/share/doc/ibsim-utils/net-examples
if [ -f "$ex/net" ]; then
    for f in "$ex"/net*; do
        case "${f##*/}" in
        net | net.2sw2path) fig="2 2 4" ;;
        net.1) fig="1 2 2" ;;
        net.2sw2path4hca) fig="2 4 6" ;;
        net.2sw2path4hca2port) fig="2 2 6" ;;
        *) fig="(no figures)" ;;
        esac
        expect 0 "$nf" topo --topo "file:$f" --json
        got="$(json_said out switches) $(json_said out endpoints) $(json_said out links)"
        [ "$got" = "$fig" ] && ok || bad "${f##*/}: switches, CAs, links '$got', want '$fig'"
    done
else
    skip "the ibsim net examples need ibsim-utils ($ex)"
fi

finish
