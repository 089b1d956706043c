#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `netfab report`: usage errors; a quick report whose page holds every step
# with its table, its plot and the paper's figures beside the ones measured here; the page
# loaded in headless Chromium (pagecheck: every image loaded, no console error, no failed
# resource), and pagecheck itself failing on a broken page; a failed step reported on the page
# and in the exit status. Under the sanitizers the report runs the light steps only.
# Usage: report.sh NETFAB SOURCE_DIR FABRICS_DIR (NF_PAGECHECK: the checker; NF_SANITIZED)
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
check=${NF_PAGECHECK:-$(dirname "$nf")/nf_pagecheck}

expect 0 "$nf" report --help;             has out "--quick"
has_line out "  netfab report --quick --out report && chromium report/index.html"
expect 0 "$nf" report --list
[ "$(wc -l <"$tmp/out")" = 26 ] && ok || bad "26 steps listed: $(wc -l <"$tmp/out")"
has out "^mcast-height .*\[M\]"; has out "^tables .*\[S\]"; has out "^dragonfly-uniform .*\[U\]"
expect 2 "$nf" report;                    has err "--out DIR is required"
expect 2 "$nf" report --out "$tmp/x" --quick --full; has err "not both"
expect 2 "$nf" report --out "$tmp/x" --only tables,nosuch; has err "no step 'nosuch'"
expect 2 "$nf" report --out "$tmp/x" --jobs 0; has err "--jobs wants"
expect 2 "$nf" report --out "$tmp/x" extra; has err "unexpected argument 'extra'"
expect 1 "$nf" report --out /proc/nonexistent/r --only collectives; has err "cannot make"
# the page's template and text are data files: without them, exit 1 before any step runs
expect 1 env NETFAB_DATADIR="$tmp/nodata" "$nf" report --out "$tmp/nd" --only tables
has err "cannot read data file $tmp/nodata/report/"
[ ! -e "$tmp/nd" ] && ok || bad "report made $tmp/nd without its data files"

case "${NF_SANITIZED:-0}" in
1 | ON | TRUE | true) only="--only mcast-engines,mcast-hist,mcast-height,mcast-efi,collectives,dual-rail,mcast-height-fit" ;;
*) only="" ;;
esac
# shellcheck disable=SC2086
expect 0 "$nf" report --quick --out "$tmp/r" $only
has err "index.html"
page="$tmp/r/index.html"
[ -s "$page" ] && ok || bad "no index.html"
steps=$("$nf" report --list | awk '{print $1}')
[ -n "$only" ] && steps=$(echo "${only#--only }" | tr ',' ' ')
for s in $steps; do
    grep -q "<section id=\"$s\">" "$page" && ok || bad "no section $s"
    [ -s "$tmp/r/data/$s.log" ] && ok || bad "no log for $s"
done
# every image on the page is a PNG in img/, and every PNG there is on the page
imgs=$(grep -o 'src="img/[^"]*"' "$page" | sed 's/src="//; s/"$//')
n=0
for i in $imgs; do
    n=$((n + 1))
    head -c 8 "$tmp/r/$i" | od -An -c | grep -q "P   N   G" && ok || bad "$i is no PNG"
done
[ "$n" = "$(ls "$tmp/r/img" | wc -l)" ] && [ "$n" -ge 5 ] && ok || bad "$n images on the page, $(ls "$tmp/r/img" | wc -l) in img/"
# the paper beside what was measured here: the multicast paper's Table 1 (+20% / +15%) against the
# height-2 cost with the fitted hosts and routers (the jitter-free latencies hand-checked in
# exp.sh; these, with the jitter, are the seed's draws: 575.2 -> 691.2 cycles at 8 B)
grep -q "The paper \[M\]:</b> Fig. 1 and Table 1" "$page" && ok || bad "paper box of mcast-height"
grep -q "Height 2 against height 1, mean (p99) latency: 8 B +20.2% (+18.5%); 2048 B +15.1% (+14.2%)" "$page" && ok || bad "mcast-height comparison"
grep -q "+38% at EFI 16" "$page" && ok || bad "paper's EFI figure"
grep -q "EFI 128 (not measured at this scale)" "$page" && ok || bad "EFI 128 is past --quick"
# the network alone with its fitted router delay (issue 19): 4 cycles, 53 -> 63 at 8 B and
# 109 -> 119 at 2 KB (exp.sh)
grep -q "Router delay 4 cycles (fitted to the paper's +20% at 8 B): 8 B +18.9%; predicted 2 KB +9.2%" "$page" && ok || bad "mcast-height-fit comparison"
grep -c "<table>" "$page" | grep -qv "^0$" && ok || bad "no tables"
if [ -z "$only" ]; then
    grep -q "Two-level tables at 262,144 endpoints save 99.51%" "$page" && ok || bad "tables comparison"
    grep -q "fat tree 0.7778, gft with sibling links (1 rail) 1.0000" "$page" && ok || bad "faults comparison"
    # the quick run's geometric means (exp vs-taihulight --quick), against the paper's 4x
    grep -q "the geometric mean of the ratios: 6.91x for the networks and NICs alone, 3.99x with the hosts' time; the paper: 4x." "$page" && ok || bad "vs-taihulight comparison"
    # the quick runs' most accepted loads (exp q-adaptive --quick, exp proxies --quick): the
    # seed's; the private proxies carry the most under the worst case
    grep -q "72 nodes, worstcase, most accepted load: dfmin 0.125; val 0.411; ugal-g 0.324; par 0.416; qadapt 0.415; qadapt --q-src global 0.435." "$page" && ok || bad "q-adaptive comparison"
    grep -q "72 nodes, worstcase, most accepted load: val 0.411; val qvl 0.497; val qvr 0.492; val qvp 0.550; val qvq 0.495." "$page" && ok || bad "proxies comparison"
fi

# the page in a browser: loads, every image there, nothing on the console
expect 0 "$check" --min-images "$n" "file://$page"
has out "images: $n, loaded: $n; errors: 0"
# and the checker is not blind: a page missing an image, a page with a console error
cp -r "$tmp/r" "$tmp/broken"
rm "$tmp/broken/$(echo "$imgs" | head -n 1)"
expect 1 "$check" "file://$tmp/broken/index.html"; has out "MISSING"; has out "ERR_FILE_NOT_FOUND"
printf '<!DOCTYPE html><html><body><script>console.error("boom")</script></body></html>\n' >"$tmp/c.html"
expect 1 "$check" "file://$tmp/c.html"; has out "console error: boom"

# a step that fails (no gnuplot on PATH: the plot cannot be drawn) is on the page, exit 1
expect 1 env PATH=/nonexistent "$nf" report --quick --out "$tmp/f" --only collectives
has err "step collectives failed"
grep -q 'This step failed' "$tmp/f/index.html" && ok || bad "the page does not say the step failed"
grep -q "gnuplot" "$tmp/f/data/collectives.log" && ok || { bad "the log says why"; cat "$tmp/f/data/collectives.log"; }
finish
