#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of the progress bar: drawn on stderr with its ETA when stderr is a terminal
# (a pseudo-terminal from script(1)) and the run lasts more than a second, erased at the end;
# never drawn when stderr is not a terminal, nor for a run shorter than a second.
# Usage: progress.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
# the long run takes ~3.5 s here (400,000 cycles took ~1 s, at the bar's threshold, and failed
# when the engine got faster); under the sanitizers 400,000 cycles take ~10 s
cycles=1500000
[ "${NF_SANITIZED:-0}" = 1 ] && cycles=400000
# a drain limit twice the window: the bar counts the cycles the run needs, not the limit (the
# last bar read 33% when it counted the limit)
long="$nf sim --topo torus:4x4,c=1 --routing dor --traffic uniform --load 0.3 --warmup 0 --cycles $cycles --drain $((2 * cycles))"
short="$nf sim --topo torus:4x4,c=1 --routing dor --traffic uniform --load 0.3 --warmup 0 --cycles 1000"
if ! command -v script >/dev/null 2>&1; then
    # nothing ran: finish exits 77 (ctest "Not Run")
    skip "the progress bar checks need script(1) (util-linux)"; finish; exit
fi
# on a terminal: "netfab sim: load 0.300 [####....]  42% 0:01, ETA 0:01", redrawn in place
script -q -e -c "$long >$tmp/o" "$tmp/ts" >/dev/null 2>&1 && ok || bad "the long run failed"
tr '\r' '\n' <"$tmp/ts" >"$tmp/lines"
grep -Eq '^netfab sim: load 0\.300 \[#*\.*\] +[0-9]+% [0-9]+:[0-9]{2}, ETA [0-9]+:[0-9]{2}' "$tmp/lines" && ok || bad "no bar with an ETA: $(head -c 300 "$tmp/lines")"
# the last bar drawn (at most 0.1 s before the end of a run of seconds) is past 90%
last=$(grep -E '^netfab sim: load' "$tmp/lines" | tail -n 1 | sed -E 's/.*\] +([0-9]+)%.*/\1/')
[ "${last:-0}" -ge 90 ] 2>/dev/null && ok || bad "the last bar is at ${last:-nothing}%, want 90% or more"
# the bar is 24 characters of # and . wherever it is drawn
grep -E '^netfab sim: load' "$tmp/lines" | grep -Evq '\[[#.]{24}\]' && bad "a bar of the wrong width" || ok
# erased at the end (carriage return, erase to the end of the line) before the results
grep -q "$(printf '\033')\[K" "$tmp/ts" && ok || bad "the bar is not erased"
# the results on stdout, whole, nothing of the bar in them
grep -q "offered" "$tmp/o" && ok || bad "the results are missing"
lacks "$tmp/o" "ETA"
# not a terminal: nothing on stderr
$long >/dev/null 2>"$tmp/err" && ok || bad "the long run failed"
[ ! -s "$tmp/err" ] && ok || bad "a bar without a terminal: $(head -c 200 "$tmp/err")"
# under a second: no bar even on a terminal (the results on it show the run was there)
script -q -e -c "$short" "$tmp/ts2" >/dev/null 2>&1 && ok || bad "the short run failed"
grep -q "offered" "$tmp/ts2" && ok || bad "the short run's results are not on the terminal"
lacks "$tmp/ts2" "ETA"
finish
