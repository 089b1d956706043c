#!/bin/sh
# End-to-end checks of `netfab exp`: the list, usage errors and exit statuses, the JSON rows and
# their keys, the table, --plot's PNG.
# Usage: exp.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
expect 0 "$nf" exp --help;                  has out "experiments:"; has out "tables"
expect 0 "$nf" exp list;                    has out "^tables "
expect 2 "$nf" exp;                         has err "which experiment"
expect 2 "$nf" exp nosuch;                  has err "unknown experiment 'nosuch' (known: faults, tables"
expect 2 "$nf" exp tables list;             has err "one experiment at a time"
expect 2 "$nf" exp tables --bogus;          has err "unknown or incomplete option '--bogus'"
expect 2 "$nf" exp tables --threads 0;      has err "--threads wants"
expect 2 "$nf" exp tables --seed -3;        has err "--seed wants"
# the two-level tables: rows for 512, 40,960 and 262,144 endpoints; the seed's saving at 256K
# (supernodes of 256: (256 + 1024) / 262144 entries, 99.51%); every lookup checked where asked
expect 0 "$nf" exp tables --quick --json --plot "$tmp/t.png"
head -c 8 "$tmp/t.png" | od -An -c | grep -q "P   N   G" && ok || bad "--plot wrote no PNG"
has out '"rows"'; has out '"experiment": "tables"'
for k in endpoints flat_bytes two_level_bytes saved lookups_checked mismatches; do has out "\"$k\""; done
has out '"endpoints": 512,'; has out '"endpoints": 40960,'; has out '"endpoints": 262144,'
has out '"two_level_table_bytes": 20480,'; has out '"flat_table_bytes": 4194304,'
has out '"saved": 0.9951'
[ "$(grep -c '"mismatches": 0,' "$tmp/out")" = 2 ] && ok || bad "two fabrics checked without mismatch"
expect 0 "$nf" exp tables --quick
line_re "$tmp/out" 1 "^ +fabric +endpoints +supernodes"
[ "$(wc -l <"$tmp/out")" = 4 ] && ok || bad "table: a header and 3 rows: $(cat "$tmp/out")"
expect 1 "$nf" exp tables --quick --plot /nonexistent/dir/t.png; has err "cannot write /nonexistent/dir/t.png"
# faults: the leaf-0 case cuts its 8 endpoints off in the fat tree (1 - 2 x 8 x 56 / (64 x 63)
# = 0.7778 of the pairs left) and none in the gft; the rows' keys
expect 0 "$nf" exp faults --quick --json
for k in fabric failed_links reachability saturation; do has out "\"$k\""; done
tr -d ' \n' <"$tmp/out" | grep -q '"fabric":"fattree","case":"leaf0uplinks","failed_links":8,"trials":1,"reachability":0.7777' && ok || bad "fat tree leaf case"
tr -d ' \n' <"$tmp/out" | grep -q '"fabric":"gft,1rail","case":"leaf0uplinks","failed_links":8,"trials":1,"reachability":1.0' && ok || bad "gft leaf case"
[ "$(grep -c '"saturation": [0-9]' "$tmp/out")" = 27 ] && ok || bad "27 rows with a saturation"
finish
