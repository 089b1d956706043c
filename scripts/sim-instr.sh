#!/bin/sh
# SPDX-License-Identifier: MIT
# The simulator's work counted rather than timed. valgrind's cachegrind counts the instructions
# of a run (and, with LL=BYTES, the misses of a last-level cache of that size, software
# prefetches not modelled); the counts are the same on any machine and under any load, so two
# builds compare to a fraction of a percent where wall times on a shared VM move by 3-20%.
# Two runs, each reported per flit-hop:
#   paper  the paper Dragonfly (dragonfly:a=18,p=9,h=9, dfmin, uniform 0.5, 10-flit packets,
#          2 VCs, speedup 2) on one thread: 400 cycles less 200, so that the set-up and the
#          first cycles cancel out
#   72     the 72-node Dragonfly at BookSim2's knobs (bench/bench_booksim_model.sh's default
#          router, 13,000 cycles), the whole run
# About a minute on this 2-core machine (with LL, a minute and a half).
# Usage: scripts/sim-instr.sh NETFAB   (LL=1048576 scripts/sim-instr.sh NETFAB: misses too)
set -eu
if [ $# -ne 1 ]; then
    echo "usage: scripts/sim-instr.sh NETFAB" >&2
    exit 2
fi
nf=$1
if [ ! -x "$nf" ]; then
    echo "sim-instr: $nf: not an executable" >&2
    exit 2
fi
if ! command -v valgrind >/dev/null 2>&1; then
    echo "sim-instr: valgrind not found (Debian package valgrind)" >&2
    exit 2
fi
ll=${LL:-}
if [ -n "$ll" ]; then # 16 ways of 64-byte lines: a power of two of 1 KiB or more
    case "$ll" in
    *[!0-9]* | 0*) ll_ok=0 ;;
    *) ll_ok=$(python3 -c 'import sys; n = int(sys.argv[1]); print(int(n >= 1024 and n & (n - 1) == 0))' "$ll") ;;
    esac
    if [ "$ll_ok" != 1 ]; then
        echo "sim-instr: LL=$ll: a size in bytes, a power of two of 1024 or more" >&2
        exit 2
    fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

paper="--topo dragonfly:a=18,p=9,h=9 --routing dfmin --traffic uniform --vcs 2 --buf 256
       --pkt 10 --lat-local 10 --lat-global 100 --speedup 2 --load 0.5 --warmup 0 --drain 1
       --threads 1"
small="--topo dragonfly:a=4,p=2,h=2,arr=consecutive --vcs 3 --buf 256 --pkt 1 --speedup 1.7
       --credit-delay 2 --lat-host 1 --lat-local 10 --lat-global 100 --threads 1 --routing dfmin
       --traffic uniform --load 0.5 --warmup 3000 --cycles 5000 --drain 5000 --alloc-iters 4"

# count NAME ARGS...: netfab sim ARGS under cachegrind; writes NAME.json and NAME.cg
count() {
    name=$1
    shift
    if [ -n "$ll" ]; then
        sim="--cache-sim=yes --LL=$ll,16,64"
    else
        sim="--cache-sim=no"
    fi
    # shellcheck disable=SC2086 # $sim is two options or one
    if ! valgrind --tool=cachegrind $sim --cachegrind-out-file="$tmp/$name.cg" \
        "$nf" sim "$@" --json >"$tmp/$name.json" 2>"$tmp/$name.err"; then
        echo "sim-instr: the $name run failed:" >&2
        tail -5 "$tmp/$name.err" >&2
        exit 1
    fi
}

# shellcheck disable=SC2086 # the knobs are words
count paper400 $paper --cycles 400
# shellcheck disable=SC2086
count paper200 $paper --cycles 200
# shellcheck disable=SC2086
count small $small

python3 - "$tmp" "$ll" <<'EOF'
import json, os, sys
tmp, ll = sys.argv[1], sys.argv[2]

def read(name):
    """(events by name, flit-hops) of a run."""
    ev = {}
    names = []
    with open(os.path.join(tmp, name + ".cg")) as f:
        for line in f:
            if line.startswith("events:"):
                names = line.split()[1:]
            elif line.startswith("summary:"):
                ev = dict(zip(names, (int(x) for x in line.split()[1:])))
    try:
        with open(os.path.join(tmp, name + ".json")) as f:
            hops = json.load(f)[0]["flit_hops"]
    except (ValueError, LookupError, TypeError):
        sys.exit("sim-instr: the %s run printed no netfab sim --json result" % name)
    if "Ir" not in ev or hops <= 0:
        sys.exit("sim-instr: the %s run counted nothing" % name)
    return ev, hops

def misses(ev):
    return ev.get("ILmr", 0) + ev.get("DLmr", 0) + ev.get("DLmw", 0)

p4, h4 = read("paper400")
p2, h2 = read("paper200")
sm, hs = read("small")
rows = [("paper (400 - 200 cycles)", p4["Ir"] - p2["Ir"], misses(p4) - misses(p2), h4 - h2),
        ("72 nodes (13,000 cycles)", sm["Ir"], misses(sm), hs)]
head = "| run | instructions | flit-hops | instructions / flit-hop |"
rule = "|---|---:|---:|---:|"
if ll:
    head += " LL misses / flit-hop (LL %s bytes) |" % ll
    rule += "---:|"
print(head)
print(rule)
for name, ir, ms, hops in rows:
    line = "| %s | %d | %d | %.1f |" % (name, ir, hops, ir / hops)
    if ll:
        line += " %.3f |" % (ms / hops)
    print(line)
EOF
