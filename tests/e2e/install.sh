#!/bin/sh
# SPDX-License-Identifier: MIT
# `make install` layout: install the build into a scratch prefix, then compile and run a program
# against the installed headers and library found through pkg-config; and run `netfab report`
# (one quick step) from the installed tree, whose page's template and text come from the
# installed share/netfab (a changed heading there shows on the page), and which fails clearly
# (exit 1, naming the file) without them.
# Usage: install.sh NETFAB SOURCE_DIR FABRICS_DIR (the build directory is NETFAB's directory)
set -eu
build=$(dirname "$1")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -x "$tmp/prefix/bin/netfab"
"$tmp/prefix/bin/netfab" --version | grep -q "^netfab " # runs without LD_LIBRARY_PATH
test -f "$tmp/prefix/include/netfab/fabric.h"
test -f "$tmp/prefix/share/man/man1/netfab.1" # and a page per subcommand
test -f "$tmp/prefix/share/man/man1/netfab-sim.1"
# the report's data files, read from the installed tree, not from the source tree
test -f "$tmp/prefix/share/netfab/report/page.html"
sed -i 's/^\[M\] Load-balanced/[M] Installed: load-balanced/' "$tmp/prefix/share/netfab/report/papers.txt"
"$tmp/prefix/bin/netfab" report --quick --only mcast-height --jobs 1 --out "$tmp/r" 2>"$tmp/r.err"
grep -q '<h2>\[M\] Installed: load-balanced multicast routing' "$tmp/r/index.html"
grep -q '<section id="mcast-height">' "$tmp/r/index.html"
grep -q 'The paper \[M\]:</b> Fig. 1 and Table 1' "$tmp/r/index.html"
grep -q '^body{font-family:sans-serif' "$tmp/r/index.html"
# without them (NETFAB_DATADIR points elsewhere, or the installed directory is gone): exit 1
st=0; NETFAB_DATADIR="$tmp/none" "$tmp/prefix/bin/netfab" report --quick --only mcast-height --out "$tmp/r2" 2>"$tmp/r.err" || st=$?
test "$st" = 1 && grep -q "cannot read data file $tmp/none/report/" "$tmp/r.err"
mv "$tmp/prefix/share/netfab" "$tmp/moved"
st=0; "$tmp/prefix/bin/netfab" report --quick --only mcast-height --out "$tmp/r2" 2>"$tmp/r.err" || st=$?
test "$st" = 1 && grep -q "cannot read data file $tmp/prefix/bin/../share/netfab/report/" "$tmp/r.err"
pc=$(find "$tmp/prefix" -name netfab.pc | head -1)
test -n "$pc"
export PKG_CONFIG_PATH=$(dirname "$pc")
cat >"$tmp/use.c" <<'C'
#include <netfab/gen.h>
#include <netfab/hops.h>
#include <stdio.h>
int main(void) {
    nf_fabric *f;
    nf_hops *h;
    nf_diag d;
    if (nf_topo_build("fattree:k=4", NULL, &f, &d) || nf_hops_compute(f, 1, &h)) return 1;
    printf("%u %u %d\n", f->n_cas, f->n_switches, nf_hops_diameter(h, NULL));
    nf_hops_free(h);
    nf_fabric_free(f);
    return 0;
}
C
# plain paths, and nothing but what pkg-config says: the .pc carries the rpath of a non-system prefix
cflags=$(pkg-config --cflags netfab | sed "s/ *$//")
test "$cflags" = "-I$tmp/prefix/include"
pkg-config --libs netfab | grep -q -- "-Wl,-rpath,$tmp/prefix/lib"
cc -std=c11 $cflags "$tmp/use.c" -o "$tmp/use" $(pkg-config --libs netfab)
out=$(env -u LD_LIBRARY_PATH "$tmp/use")
if [ "$out" = "16 20 4" ]; then echo "1 passed, 0 failed"; else echo "installed library said '$out', want '16 20 4'"; echo "0 passed, 1 failed"; exit 1; fi
