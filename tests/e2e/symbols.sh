#!/bin/sh
# SPDX-License-Identifier: MIT
# The shared library's boundary: libnetfab.so exports exactly the functions its public headers
# mark NF_API and none of its internals (nf__), and the netfab command takes no internal function
# from it (those come from the static netfab_internal archive). Run on the shared build only.
# Usage: symbols.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
lib=$(dirname "$nf")/libnetfab.so
[ -e "$lib" ] && ok || bad "no $lib next to $nf"
nm -D --defined-only "$lib" | awk '{print $3}' | sort -u >"$tmp/exported"
grep '^nf__' "$tmp/exported" >"$tmp/internal"
[ -s "$tmp/internal" ] && bad "$(wc -l <"$tmp/internal") internal symbols exported: $(head -5 "$tmp/internal" | tr '\n' ' ')" || ok
# what the headers declare public is what is exported under nf_
sed -n 's/^NF_API .*[ *]\(nf_[a-z0-9_]*\)(.*/\1/p' "$2"/include/netfab/*.h | sort -u >"$tmp/declared"
grep '^nf_' "$tmp/exported" >"$tmp/public"
[ "$(wc -l <"$tmp/declared")" -gt 150 ] && ok || bad "only $(wc -l <"$tmp/declared") NF_API declarations found"
if cmp -s "$tmp/declared" "$tmp/public"; then ok; else
    bad "declared NF_API vs exported nf_ differ: $(diff "$tmp/declared" "$tmp/public" | grep '^[<>]' | head -5 | tr '\n' ' ')"
fi
# nothing else of ours leaks (an OpenMP critical section's lock has a dotted name)
grep -v '^nf_' "$tmp/exported" | grep -v '^\.gomp_critical' | grep -iv '^_' >"$tmp/other"
[ -s "$tmp/other" ] && bad "other exported symbols: $(head -5 "$tmp/other" | tr '\n' ' ')" || ok
# the CLI needs no internal function from the shared library
nm -D --undefined-only "$nf" | awk '{print $2}' | grep '^nf__' >"$tmp/cli_internal"
[ -s "$tmp/cli_internal" ] && bad "netfab takes internals from libnetfab.so: $(head -5 "$tmp/cli_internal" | tr '\n' ' ')" || ok
finish
