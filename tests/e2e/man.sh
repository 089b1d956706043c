#!/bin/sh
# SPDX-License-Identifier: MIT
# The man pages (scripts/manpage.sh, from each command's --help): one for netfab and one per
# subcommand, each rendering without a groff warning, with its NAME, SYNOPSIS and the example
# its --help shows.
# Usage: man.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
expect 0 sh "$2/scripts/manpage.sh" "$nf" "$tmp/man"
cmds=$("$nf" --help | sed -n '/^commands:/,/^$/p' | sed -n 's/^  \([a-z-]*\) .*/\1/p')
[ -n "$cmds" ] && ok || bad "no commands in netfab --help"
for page in netfab $(for c in $cmds; do echo "netfab-$c"; done); do
    f="$tmp/man/$page.1"
    if [ ! -f "$f" ]; then bad "no $page.1"; continue; fi
    w=$(groff -man -Tutf8 -ww -z "$f" 2>&1)
    [ -z "$w" ] && ok || bad "$page.1: $w"
    txt=$(groff -man -Tutf8 -P-cbou "$f" 2>/dev/null)
    for sec in NAME SYNOPSIS DESCRIPTION "EXIT STATUS" "SEE ALSO"; do
        echo "$txt" | grep -q "^$sec" && ok || bad "$page.1 lacks $sec"
    done
    echo "$txt" | grep -Eq "^ +$page +- " && ok || bad "$page.1: NAME line"
done
# every subcommand's --help shows an example, and its page carries it
for c in $cmds; do
    ex=$("$nf" "$c" --help | sed -n '/^examples*:$/{n;p;}' | sed 's/^ *//')
    [ -n "$ex" ] && ok || bad "netfab $c --help has no example"
    groff -man -Tutf8 -P-cbou "$tmp/man/netfab-$c.1" 2>/dev/null | grep -qF -- "$ex" && ok || bad "netfab-$c.1 lacks its example"
done
finish
