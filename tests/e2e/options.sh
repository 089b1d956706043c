#!/bin/sh
# SPDX-License-Identifier: MIT
# The option layer (apps/netfab/opts.c) in every command: each option a command's --help lists
# is one its parser takes; an unknown option, a missing argument, a malformed or out-of-range
# number are refused (exit 2) in one format; whole numbers are read exactly (0x hex; no fraction,
# sign or exponent), reals are finite; seeds keep all 64 bits; and every value is checked before
# a fabric is built.
# Usage: options.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"

cmds=$("$nf" --help | sed -n '/^commands:/,/^$/p' | sed -n 's/^  \([a-z-]*\) .*/\1/p')
[ "$(echo $cmds | wc -w)" = 13 ] && ok || bad "netfab --help lists $(echo $cmds | wc -w) commands: $cmds"

# the operands after which a command line is complete but for one stray operand: the parser
# then stops at 'stray' (exit 2), after it has taken every option before it (route takes one,
# the DST of --trace SRC DST)
operands() {
    case $1 in exp) echo "tables stray" ;; plot) echo "latency stray" ;; route) echo "dst stray" ;;
    *) echo stray ;; esac
}
# only CMD ARGS...: the options are taken, and the one complaint is the stray operand
only_stray() {
    c=$1; shift
    # shellcheck disable=SC2046
    expect 2 "$nf" "$c" "$@" $(operands "$c")
    has_line err "netfab $c: unexpected argument 'stray'"
    [ "$(wc -l <"$tmp/err")" = 1 ] && ok || bad "netfab $c $*: $(cat "$tmp/err")"
}

for c in $cmds; do
    expect 0 "$nf" "$c" --help
    cp "$tmp/out" "$tmp/help"
    # the option lines of its options sections: "  --name ARG", "  -x, --name ARG" or
    # "      --name ARG"
    sed -n '/^[a-z ]*options:$/,/^$/p' "$tmp/help" |
        sed -n 's/^  \(-[a-zA-Z], \|    \)\{0,1\}--\([a-z][a-z0-9-]*\)\( \([^ ]*\)\)\{0,1\}.*/\2 \4/p' >"$tmp/rows"
    n=$(wc -l <"$tmp/rows")
    [ "$n" -ge 2 ] && ok || bad "netfab $c --help lists $n options"
    grep -q '^help $' "$tmp/rows" && ok || bad "netfab $c --help does not list --help"
    # every listed option is taken: with an argument "1" the answer is the stray operand, or
    # a complaint about that option's value (not an unknown option)
    while read -r name arg; do
        [ "$name" = help ] && continue
        if [ -z "$arg" ]; then
            only_stray "$c" "--$name"
        else
            # shellcheck disable=SC2046
            "$nf" "$c" "--$name" 1 $(operands "$c") >/dev/null 2>"$tmp/err"
            st=$?
            if [ $st = 2 ] && grep -qxF -e "netfab $c: unexpected argument 'stray'" "$tmp/err" ||
                grep -q "^netfab $c: --$name wants " "$tmp/err"; then ok
            else bad "netfab $c --$name 1: exit $st, $(cat "$tmp/err")"; fi
            # and without its argument it says what it wants
            expect 2 "$nf" "$c" "--$name"
            has_line err "netfab $c: --$name wants an argument ($arg)"
        fi
    done <"$tmp/rows"
    expect 2 "$nf" "$c" --no-such-option
    has_line err "netfab $c: unknown option '--no-such-option' (netfab $c --help lists them)"
done
# an option of another command is unknown here
expect 2 "$nf" mcast-join --window 4 --server 127.0.0.1:1
has_line err "netfab mcast-join: unknown option '--window' (netfab mcast-join --help lists them)"
# an abbreviation is taken when it names one option, refused when it names several
only_stray topo --thr 2 --topo fattree:k=4
expect 2 "$nf" sim --fail 2
has_line err "netfab sim: ambiguous option '--fail' (netfab sim --help lists them)"
expect 2 "$nf" topo --json=yes
has_line err "netfab topo: --json takes no argument, not '--json=yes'"

# ---- whole numbers: one integer option per command, its range ------------------------------
while read -r c opt lo hi; do
    only_stray "$c" "--$opt" 0x10
    only_stray "$c" "--$opt" "$hi"
    for v in 1.5 -1 1e3 junk '' ' 5' +5 0x 16k 99999999999999999999 $((hi + 1)); do
        # shellcheck disable=SC2046
        expect 2 "$nf" "$c" "--$opt" "$v" $(operands "$c")
        has_line err "netfab $c: --$opt wants a whole number from $lo to $hi, not '$v'"
    done
    if [ "$lo" -gt 0 ]; then
        expect 2 "$nf" "$c" "--$opt" $((lo - 1))
        has_line err "netfab $c: --$opt wants a whole number from $lo to $hi, not '$((lo - 1))'"
    fi
done <<EOF
topo threads 1 1024
mcast procs-per-node 1 1024
smd max-groups 1 16383
mcast-join member-count 1 8388607
mcast-leave retries 0 1000
mcast-state window 1 64
smd-load window 1 1048576
sim cycles 1 1000000000
route vcs 1 16
exp threads 1 1024
sweep warmup 0 1000000000
plot group 0 4294967295
report jobs 1 256
EOF
# 0x10 is 16 and 0X2 is 2 where it shows: the same run
nojson() { grep -v '_s"'; }
"$nf" route --topo torus:4x4,c=1 --routing dor --check --vcs 0X2 --json >"$tmp/hex" 2>&1
"$nf" route --topo torus:4x4,c=1 --routing dor --check --vcs 2 --json >"$tmp/dec" 2>&1
"$nf" route --topo torus:4x4,c=1 --routing dor --check --vcs 3 --json >"$tmp/three" 2>&1
cmp -s "$tmp/hex" "$tmp/dec" && ok || bad "route --vcs 0X2: $(cat "$tmp/hex"); --vcs 2: $(cat "$tmp/dec")"
cmp -s "$tmp/hex" "$tmp/three" && bad "route: --vcs 2 and 3 alike: $(cat "$tmp/three")" || ok
small="--topo torus:4x4,c=1 --routing dor --traffic uniform --warmup 50"
# shellcheck disable=SC2086
a=$("$nf" sim $small --load 0.5 --cycles 0x12c --json | nojson)
# shellcheck disable=SC2086
b=$("$nf" sim $small --load 0.5 --cycles 300 --json | nojson)
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "sim --cycles 0x12c is not --cycles 300"

# ---- reals: finite, all of the text, in range (open ends where the option says) -------------
while read -r c opt good range; do
    only_stray "$c" "--$opt" "$good"
    for v in nan NaN inf -inf infinity 1e999 junk 0.5x '' ' 0.5' 0.5e -0.25; do
        # shellcheck disable=SC2046
        expect 2 "$nf" "$c" "--$opt" "$v" $(operands "$c")
        has_line err "netfab $c: --$opt wants $range, not '$v'"
    done
done <<EOF
sim load 0x1p-1 a number from 0 to 1
sweep bias 2.5e0 a number from 0 to 1e+12
smd-load loss 0.999 a number from 0 and below 1
smd-load deadline 1e-3 a number above 0 and at most 1e+09
EOF
expect 2 "$nf" smd-load --loss 1 stray; has_line err "netfab smd-load: --loss wants a number from 0 and below 1, not '1'"
expect 2 "$nf" smd-load --deadline 0 stray; has_line err "netfab smd-load: --deadline wants a number above 0 and at most 1e+09, not '0'"
# 5e-1 and 0x1p-1 are the load 0.5
# shellcheck disable=SC2086
"$nf" sim $small --cycles 300 --load 5e-1 --json | nojson >"$tmp/l1"
# shellcheck disable=SC2086
"$nf" sim $small --cycles 300 --load 0x1p-1 --json | nojson >"$tmp/l2"
json_num "$tmp/l1" load 0.5
cmp -s "$tmp/l1" "$tmp/l2" && ok || bad "sim --load 5e-1 and 0x1p-1 differ"
# --procs-per-node is a whole number in sweep too (it took 1.5 as 1)
expect 2 "$nf" sweep --topo torus:4x4,c=1 --groups grid2d:4x4 --engine fulb --procs-per-node 1.5
has_line err "netfab sweep: --procs-per-node wants a whole number from 1 to 1048576, not '1.5'"
# the simulator's integer knobs too (they took 2.5 as 2)
expect 2 "$nf" sim $small --load 0.1 --vcs 2.5
has_line err "netfab sim: --vcs wants a whole number from 1 to 16, not '2.5'"

# ---- seeds: every one of the 64 bits ----------------------------------------------------------
big=18446744073709551615
sweep1() { "$nf" sweep --topo torus:4x4,c=1 --routing minhop --traffic uniform --loads 0.6 --cycles 300 --warmup 50 --no-times --json --seeds "$1"; }
sweep1 $big >"$tmp/s1"
json_str "$tmp/s1" seed "$big"
sweep1 0xffffffffffffffff >"$tmp/s2"
cmp -s "$tmp/s1" "$tmp/s2" && ok || bad "sweep: seed 0xffffffffffffffff is not $big"
sweep1 18446744073709551614 >"$tmp/s3"
json_str "$tmp/s3" seed 18446744073709551614
[ "$(json_said "$tmp/s1" lat_mean)" != "$(json_said "$tmp/s3" lat_mean)" ] && ok || bad "sweep: seeds 2^64 - 1 and 2^64 - 2 ran alike"
# the CSV keeps the digits; a seed up to 2^63 - 1 stays a JSON number
"$nf" sweep --topo torus:4x4,c=1 --routing minhop --traffic uniform --loads 0.6 --cycles 300 --warmup 50 --no-times --seeds $big >"$tmp/s.csv"
line_re "$tmp/s.csv" 2 "^\"torus:4x4,c=1\",minhop,uniform,$big,0.6,"
sweep1 9223372036854775807 >"$tmp/s4"
json_val "$tmp/s4" seed 9223372036854775807
expect 2 "$nf" sweep --topo torus:4x4,c=1 --routing minhop --traffic uniform --loads 0.6 --seeds 18446744073709551616
has_line err "netfab sweep: --seeds wants a whole number from 0 to $big, not '18446744073709551616'"

# ---- checked before anything is built ---------------------------------------------------------
# fattree:k=96 takes seconds to build and to compute its distances (more under a sanitizer);
# every refusal below comes within a second of the time an unknown option takes to be refused
# (the program's start, which a sanitizer and a busy machine stretch)
huge=fattree:k=96
now_ms() { echo $(($(date +%s%N) / 1000000)); }
base=0
for i in 1 2 3; do
    t0=$(now_ms)
    "$nf" sim --no-such-option 2>/dev/null
    t=$(($(now_ms) - t0))
    [ $t -gt $base ] && base=$t
done
while read -r line; do
    t0=$(now_ms)
    # shellcheck disable=SC2086
    "$nf" $line >/dev/null 2>"$tmp/err"
    st=$?
    ms=$(($(now_ms) - t0))
    [ $st = 2 ] && [ -s "$tmp/err" ] && ok || bad "netfab $line: exit $st, $(cat "$tmp/err")"
    [ $ms -lt $((base + 1000)) ] && ok || bad "netfab $line: refused after $ms ms (a start: $base ms)"
done <<EOF
sim --topo $huge --routing dor --traffic uniform --load 2
sim --topo $huge --routing minhop --traffic uniform --load 0.1 --fail-at 100
sim --topo $huge --routing minhop --traffic uniform --sweep 0.5:0.1:0.1
sim --topo $huge --routing nosuch --traffic uniform --load 0.1
route --topo $huge --routing minhop --check --vcs 17
route --topo $huge --routing minhop
topo --topo $huge --threads 0
topo --topo $huge --format dot
mcast --topo $huge --groups grid2d:4x4 --mapping nosuch
mcast --topo $huge --groups grid2d:4x4 --engine fulb,sssp --dump-mft x.mcfdbs
mcast --topo $huge --groups grid2d:4x4 --engine nosuch
smd --topo $huge --listen 127.0.0.1:0 --max-groups 0
smd --topo $huge --listen 127.0.0.1:0 --engine fulb+
smd-load --server 127.0.0.1:9 --topo $huge --groups grid2d:4x4 --loss 1
sweep --topo $huge --routing minhop --traffic uniform --loads 0.1,1.5
sweep --topo $huge --routing minhop --traffic uniform --loads 0.1 --verify
sweep --topo $huge --groups grid2d:4x4 --engine fulb --seeds 1,x
plot tree --topo $huge --groups grid2d:4x4 --group 0 --engine nosuch --out t.dot
plot tree --topo $huge --groups grid2d:4x4 --group 0 --mapping nosuch --out t.dot
EOF
finish
