#!/bin/sh
# SPDX-License-Identifier: MIT
# netfab with BookSim2's router model (--router-model booksim) against BookSim2's own figures on
# tori and a k-ary n-tree, stored in tests/data/booksim/points.tsv (the BookSim2 commit,
# configuration and commands in its README.md; BookSim2's torus with dim_order is netfab's
# torus:KxK..,c=1 with dor-bs, its fattree with nca / anca the xgft k-ary n-tree with nca-bs /
# anca-bs): per point, netfab's mean latency within 5% of BookSim2's below saturation
# (2% at zero load)
# and its accepted load within 0.01 of BookSim2's, past saturation too (BookSim2's throughput
# runs); then the preset's options and its errors.
# Usage: booksim.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
ref="$2/tests/data/booksim/points.tsv"
[ -r "$ref" ] || { bad "no $ref"; finish; }

# every stored point; the zero-load ones run longer (their figure is a mean over few packets)
tab=$(printf '\t')
n=0
while IFS="$tab" read -r topo k dn routing traffic pkt load type acc lat; do
    [ "$topo" = topology ] && continue
    n=$((n + 1))
    cycles=10000
    [ "$load" = 0.005 ] && cycles=30000
    if [ "$topo" = torus ]; then
        spec="torus:$k$(i=1; while [ $i -lt "$dn" ]; do printf 'x%s' "$k"; i=$((i + 1)); done),c=1"
        r=dor-bs
    else
        m=$k w=1 i=1
        while [ $i -lt "$dn" ]; do m="$m.$k" w="$w.$k" i=$((i + 1)); done
        spec="xgft:h=$dn,m=$m,w=$w" r=$routing-bs
    fi
    expect 0 "$nf" sim --topo "$spec" --routing "$r" --router-model booksim \
        --vcs 2 --buf 8 --pkt "$pkt" --threads 1 --traffic "$traffic" --load "$load" \
        --warmup 3000 --cycles "$cycles" --drain 10000 --json
    lo=$(awk "BEGIN { print $acc - 0.01 }") hi=$(awk "BEGIN { print $acc + 0.01 }")
    json_range out accepted "$lo" "$hi"
    if [ "$type" = latency ]; then
        # within 5%; at zero load within 2% (netfab and BookSim2 differed by 0.4% at most
        # there, and one cycle off, as before --nic-delay, is 3 to 5.5%)
        tol=0.05
        [ "$load" = 0.005 ] && tol=0.02
        lo=$(awk "BEGIN { print (1 - $tol) * $lat }") hi=$(awk "BEGIN { print (1 + $tol) * $lat }")
        json_range out lat_mean "$lo" "$hi"
        json_val out saturated false
    else
        json_val out saturated true # past saturation: accepted as BookSim2's throughput run
    fi
done <"$ref"
[ "$n" -ge 23 ] && ok || bad "only $n stored points"

# the preset against its flags written out: the same run (the seed's draws, the same figures)
run() {
    "$nf" sim --topo torus:4x4,c=1 --routing dor-bs --vcs 2 --buf 8 --load 0.3 --cycles 2000 \
        --warmup 500 --json "$@" | grep -v '"wall_s"'
}
a=$(run --router-model booksim --traffic uniform)
b=$(run --vc-alloc separate --inject-vc routing --eject-vc routing --alloc-iters 1 \
    --router-delay 1 --credit-delay 3 --nic-delay 1 --sw-input output --pass-clock every \
    --xbar-pass --nic-prompt-credits --port-order booksim --body-delay 1 --traffic bs-uniform)
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "--router-model booksim is not its flags"
# a flag given wins over the preset: one more cycle in the NIC, one more cycle of latency
expect 0 "$nf" sim --topo torus:8,c=1 --routing dor-bs --vcs 2 --buf 8 --traffic tornado \
    --load 0.005 --cycles 20000 --router-model booksim --nic-delay 2 --json
json_range out lat_mean 18.9 19.2 # BookSim2: 4 x 3 hops + 6 = 18, and the cycle given
# the default model keeps netfab's own patterns: tornado is the 1-D shift of endpoints (on 8x8:
# 31 endpoints on, 4.875 hops over the 64 sources), not BookSim2's per-dimension one (6 hops)
expect 0 "$nf" sim --topo torus:8x8,c=1 --routing dor-bs --vcs 2 --buf 8 --traffic tornado \
    --load 0.005 --cycles 5000 --json
json_range out hops_mean 4.8 4.95
expect 0 "$nf" sim --topo torus:8x8,c=1 --routing dor-bs --vcs 2 --buf 8 --traffic tornado \
    --load 0.005 --cycles 5000 --router-model booksim --json
json_range out hops_mean 5.99 6.01
# BookSim2's patterns by name under either model; the ones netfab lacks are refused under its own
expect 0 "$nf" sim --topo torus:4x4,c=1 --routing dor-bs --vcs 2 --traffic bs-neighbor \
    --load 0.1 --cycles 1000
expect 2 "$nf" sim --topo torus:4x4,c=1 --routing dor-bs --vcs 2 --traffic neighbor \
    --load 0.1 --cycles 1000
has err "unknown traffic 'neighbor'"
has err "bs-neighbor"
# errors: a model, a NIC delay, a VC rule not known
expect 2 "$nf" sim --topo torus:4x4,c=1 --routing dor-bs --traffic uniform --load 0.1 \
    --router-model bs
has err "router-model"
has err "netfab"
expect 2 "$nf" sim --topo torus:4x4,c=1 --routing dor-bs --traffic uniform --load 0.1 \
    --nic-delay 256
has err "nic-delay"
expect 2 "$nf" sim --topo torus:4x4,c=1 --routing dor-bs --traffic uniform --load 0.1 \
    --inject-vc first
has err "inject-vc"
# netfab sweep takes the preset too, and its patterns
expect 0 "$nf" sweep --topo torus:4x4,c=1 --routing dor-bs --traffic tornado --loads 0.005 \
    --vcs 2 --buf 8 --cycles 20000 --router-model booksim --json --no-times
json_range out lat_mean 13.8 14.2 # BookSim2's tornado on 4x4: 1 hop a dimension, 4 x 2 + 6
json_str out traffic bs-tornado # the row names the pattern that ran

# BookSim2's own packets, run through netfab packet by packet (--packets, tests/data/booksim/
# CASE.pkts.gz: when each was made, where to and the VC its source started it on), arrive in the
# very cycles BookSim2 retired them (CASE.arrived.gz): every one of them, on one router (1- and
# 4-flit packets), on the 72-node Dragonfly at internal speedups 1.7 and 1 and on a 7x7 (4-flit)
# and a 5x5x5 torus (odd rings: BookSim2 draws the way round at a tie); the same packets
# through a router that
# allocates its input side netfab's way arrive otherwise, so the comparison can fail.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
data="$2/tests/data/booksim"
# replay CASE OPTS...: prints "<packets compared> <arrivals that differ>"
replay() {
    c=$1
    shift
    zcat "$data/$c.pkts.gz" >"$tmp/$c.pkts" && zcat "$data/$c.arrived.gz" >"$tmp/$c.want" || {
        echo "0 0"
        return
    }
    last=$(tail -1 "$tmp/$c.pkts" | cut -d' ' -f1)
    "$nf" sim --packets "$tmp/$c.pkts" --packet-log "$tmp/$c.log" --warmup 0 \
        --cycles $((last + 1)) --drain 20000 --threads 1 "$@" >/dev/null 2>"$tmp/err" || {
        echo "0 0"
        return
    }
    awk 'FNR == 1 { f++ } /^#/ { next }
         f == 1 { want[$1 " " $2] = $3; next }
         ($1 " " $2) in want { n++; if (want[$1 " " $2] != $4) d++ }
         END { print n + 0, d + 0 }' "$tmp/$c.want" "$tmp/$c.log"
}
fly="--topo torus:1,c=4 --routing minhop --vcs 2 --buf 256 --router-model booksim"
df="--topo dragonfly:a=4,p=2,h=2,arr=consecutive --routing dfmin-bs --vcs 3 --buf 256
    --lat-local 10 --lat-global 100 --router-model booksim"
tor="--routing dor-bs --vcs 2 --buf 8 --router-model booksim"
for c in "fly4 $fly --speedup 1" "fly4-p4 $fly --speedup 1 --buf 8 --pkt 4" \
    "df72-s17 $df --speedup 1.7" "df72-s1 $df --speedup 1" \
    "torus7x7-p4 --topo torus:7x7,c=1 $tor --pkt 4" "torus5x5x5 --topo torus:5x5x5,c=1 $tor"; do
    # shellcheck disable=SC2086
    set -- $c
    name=$1
    shift
    # shellcheck disable=SC2046
    set -- $(replay "$name" "$@")
    want=$(zcat "$data/$name.arrived.gz" | grep -vc '^#')
    [ "$1" = "$want" ] && [ "$2" = 0 ] && ok ||
        bad "$name: $2 of $1 packets (of $want) arrive in other cycles than BookSim2's"
done
# shellcheck disable=SC2046,SC2086
set -- $(replay fly4 $fly --speedup 1 --sw-input vc)
[ "$1" -gt 1000 ] && [ "$2" -gt 100 ] && ok || bad "fly4 with --sw-input vc: $2 of $1 differ"
# shellcheck disable=SC2046,SC2086
set -- $(replay df72-s17 $df --speedup 1.7 --pass-clock busy)
[ "$1" -gt 1000 ] && [ "$2" -gt 100 ] && ok || bad "df72-s17 with --pass-clock busy: $2 of $1"
# shellcheck disable=SC2046,SC2086
set -- $(replay torus7x7-p4 --topo torus:7x7,c=1 $tor --pkt 4 --port-order own)
[ "$1" -gt 1000 ] && [ "$2" -gt 50 ] && ok || bad "torus7x7-p4 with --port-order own: $2 of $1"
# shellcheck disable=SC2046,SC2086
set -- $(replay torus7x7-p4 --topo torus:7x7,c=1 $tor --pkt 4 --credit-delay 2)
[ "$1" -gt 1000 ] && [ "$2" -gt 10 ] && ok || bad "torus7x7-p4 with --credit-delay 2: $2 of $1"
echo '{"nic_prompt_credits": false}' >"$tmp/nopc"
# shellcheck disable=SC2046,SC2086
set -- $(replay fly4-p4 $fly --speedup 1 --buf 8 --pkt 4 --settings "$tmp/nopc")
[ "$1" -gt 500 ] && [ "$2" -gt 0 ] && ok || bad "fly4-p4, NIC credits delayed: $2 of $1 differ"
# the list's errors: a line that is not one, cycles out of order, an endpoint out of range
flysim() { "$nf" sim --topo torus:1,c=4 --routing minhop --vcs 2 --router-model booksim "$@"; }
printf '0 0 1\n5 x 2\n' >"$tmp/bad1"
expect 2 flysim --packets "$tmp/bad1"
has err "bad1:2: want 'CYCLE SRC DST"
printf '9 0 1\n5 1 2\n' >"$tmp/bad2"
expect 2 flysim --packets "$tmp/bad2"
has err "bad2:2: cycle 5 before the line above's (9)"
printf '0 0 4\n' >"$tmp/bad3"
expect 2 flysim --packets "$tmp/bad3"
has err "endpoint 4: there are 4"
printf '0 0 1 2\n' >"$tmp/bad4"
expect 2 flysim --packets "$tmp/bad4"
has err "VC 2"
expect 1 flysim --packets "$tmp/none"
has err "cannot read"
expect 2 flysim --packets "$tmp/bad1" --traffic uniform
has err "--packets replaces"
expect 2 flysim --traffic uniform --load 0.1 --packet-log "$tmp/x"
has err "--packet-log needs --packets"
finish
