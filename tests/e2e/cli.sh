#!/bin/sh
# End-to-end checks of the netfab CLI: exit statuses, messages, JSON keys, format round trips.
# Usage: cli.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1; src=$2; fabrics=$3
. "$src/tests/e2e/lib/harness.sh"

expect 0 "$nf" --version;                 has out "netfab 0.1.0"
expect 0 "$nf" --help;                    has out "topo"
expect 0 "$nf" topo --help;               has out "example"
expect 2 "$nf";                           has err "usage"
expect 2 "$nf" frobnicate;                has err "unknown command 'frobnicate'"
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
for key in '"endpoints": 16' '"switches": 20' '"links": 48' '"diameter": 4' '"build_s"' '"distances_s"' '"peak_rss_kib"'; do
    has out "$key"
done
expect 0 "$nf" topo --topo fattree:k=4 --topo torus:4x4,c=1 --json
has out '"topo": "torus:4x4,c=1"'
expect 0 "$nf" topo --topo fattree:k=4 --topo torus:4x4,c=1
has out "torus:4x4,c=1"

# write in every format, read back the two readable ones, same statistics
for fmt in ibnet ibsim; do
    expect 0 "$nf" topo --topo dragonfly:a=4,p=2,h=2 --out "$tmp/df.$fmt" --format "$fmt"
    expect 0 "$nf" topo --topo "file:$tmp/df.$fmt" --json
    has out '"endpoints": 72'
    has out '"switches": 36'
    has out '"diameter": 3'
done
expect 0 "$nf" topo --topo fattree:k=4 --out "$tmp/ft.dot"
grep -q "graph" "$tmp/ft.dot" && ok || bad "dot output has no graph"
expect 0 "$nf" topo --topo fattree:k=4 --out "$tmp/ft.json"
grep -q '"links"' "$tmp/ft.json" && ok || bad "json output has no links"
expect 0 "$nf" topo --topo fattree:k=4 --out - --format ibnet; has out 'Switch'

# malformed input: file:line: message and exit 2
printf 'Switch 4 "S-0000000000000001"\n[9] "S-0000000000000002"[1]\n' >"$tmp/bad.ibnet"
expect 2 "$nf" topo --topo "file:$tmp/bad.ibnet"; has err "bad.ibnet:2:"
printf 'hello world\n' >"$tmp/junk.txt"
expect 2 "$nf" topo --topo "file:$tmp/junk.txt"; has err "junk.txt"

# the real dumps: every complete one loads; the stray stderr line gives a warning
for f in "$fabrics"/*.ibnet; do
    case "$f" in *.partial.ibnet) continue ;; esac
    expect 0 "$nf" topo --topo "file:$f" --json
done
expect 0 "$nf" topo --topo "file:$fabrics/nvidia-kb-ufm-lab-edr-fdr.ibnet"; has err "warning"

# the partial dump: a port listed twice with different peers is a structural error, said clearly
expect 2 "$nf" topo --topo "file:$fabrics/llnl-atlas-2006-voltaire.partial.ibnet"
has err "llnl-atlas-2006-voltaire.partial.ibnet:16: port 23"
has err "listed twice"

# Debian's ibsim examples are ibsim net files
for f in /usr/share/doc/ibsim-utils/net-examples/net*; do
    expect 0 "$nf" topo --topo "file:$f" --json
done

finish
