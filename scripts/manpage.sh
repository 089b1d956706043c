#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes the man pages of netfab and of each subcommand into OUT, from the program's own --help
# (so they cannot drift from it): usage lines become the SYNOPSIS, the text the DESCRIPTION,
# indented blocks (lists, examples) stay as they are, "name:" lines become subsections.
# Usage: scripts/manpage.sh NETFAB OUT
set -eu
nf=$1 out=$2
mkdir -p "$out"
version=$("$nf" --version | sed 's/^netfab //')
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%d 2>/dev/null || date -u +%Y-%m-%d)
# roff: escape backslashes and hyphens, protect lines that would start with a control character
esc() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
# body TEXT: the --help text after its usage lines as man source
body() {
    awk '
    function flush_pre() { if (pre) { print ".fi"; print ".RE"; pre = 0 } }
    /^usage:/ || (head && /^ /) { head = 1; next }
    { head = 0 }
    /^$/ { flush_pre(); para = 1; next }
    /^[a-z][a-z0-9 ()-]*:$/ { flush_pre(); sub(/:$/, ""); print ".SS " $0; para = 0; next }
    /^  / { if (!pre) { print ".RS 2"; print ".nf"; pre = 1 } sub(/^  /, ""); print; next }
    { flush_pre(); if (para) { print ".PP"; para = 0 } print }
    END { flush_pre() }'
}
synopsis() { sed -n '/^usage:/,/^$/p' | sed -e 's/^usage: *//' -e 's/^ *//' -e '/^$/d'; }
page() { # page NAME SUMMARY HELP-TEXT-FILE
    {
        printf '.TH %s 1 %s "netfab %s" "netfab manual"\n' "$(echo "$1" | tr a-z A-Z | esc)" \
            "$date" "$version"
        printf '.SH NAME\n%s \\- %s\n' "$(echo "$1" | esc)" "$(echo "$2" | esc)"
        printf '.SH SYNOPSIS\n.nf\n'
        synopsis <"$3" | esc
        printf '.fi\n.SH DESCRIPTION\n'
        esc <"$3" | body
        printf '.SH EXIT STATUS\n'
        printf '0 on success, 1 when the work failed, 2 for bad input (a wrong option, spec or file).\n'
        printf '.SH SEE ALSO\n'
        if [ "$1" = netfab ]; then
            echo "$cmds" | awk '{ printf "%s\\fBnetfab\\-%s\\fR(1)", (NR > 1 ? ", " : ""), $1 }
                                END { print "" }' | sed 's/\([a-z]\)-\([a-z]\)/\1\\-\2/g'
        else
            printf '\\fBnetfab\\fR(1); the README of the netfab source tree.\n'
        fi
    } >"$out/$1.1"
}
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
"$nf" --help >"$tmp"
cmds=$(sed -n '/^commands:/,/^$/p' "$tmp" | sed -n 's/^  \([a-z-]*\) .*/\1/p')
page netfab "HPC interconnect fabrics: build, route, run multicast groups, simulate" "$tmp"
for c in $cmds; do
    summary=$(sed -n "s/^  $c  *//p" "$tmp" | head -1)
    "$nf" "$c" --help >"$tmp.c"
    page "netfab-$c" "$summary" "$tmp.c"
done
rm -f "$tmp.c"
