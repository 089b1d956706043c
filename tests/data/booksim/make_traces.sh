#!/bin/sh
# SPDX-License-Identifier: MIT
# Remakes the packet traces of tests/e2e/booksim.sh (see README.md): BookSim2 built with three
# print statements added to its traffic manager (each packet's creation cycle, source and
# destination; the VC its source starts it on; the cycle it is retired), run on each case below;
# CASE.pkts.gz is netfab's --packets file of what it made, CASE.arrived.gz what it retired.
# Usage: sh tests/data/booksim/make_traces.sh BOOKSIM_CHECKOUT OUT_DIR
#   BOOKSIM_CHECKOUT: github.com/booksim/booksim2 (commit 28f43299), its src/ not built here; it
#   needs Debian's flex and bison.
set -eu
src=$1 out=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src/src" "$work/src"
python3 - "$work/src/trafficmanager.cpp" <<'EOF'
import sys
p = sys.argv[1]
s = open(p).read()
def after(anchor, text):
    global s
    if s.count(anchor) != 1:
        sys.exit("make_traces.sh: %r is not in %s once" % (anchor, p))
    s = s.replace(anchor, anchor + text)
after('    int packet_destination = _traffic_pattern[cl]->dest(source);\n',
      '    fprintf(stderr, "G %d %d %d\\n", time, source, packet_destination);\n')
after('                f->itime = _time;\n',
      '                if (f->head) fprintf(stderr, "V %d %d %d\\n", f->src, f->ctime, f->vc);\n')
after('        // Only record statistics once per packet (at tail)\n',
      '        fprintf(stderr, "R %d %d %d\\n", f->src, head->ctime, f->atime);\n')
s = '#include <cstdio>\n' + s
open(p, 'w').write(s)
EOF
make -s -C "$work/src" >/dev/null 2>&1
# case NAME LINES: the config's topology and knob lines
run_case() {
    cat >"$work/cfg" <<CFG
$2
wait_for_tail_credit = 0; vc_allocator = separable_input_first; alloc_iters = 1;
sw_allocator = separable_input_first; routing_delay = 0; vc_alloc_delay = 1; sw_alloc_delay = 1;
st_final_delay = 1; credit_delay = 2; input_speedup = 1; output_speedup = 1;
warmup_periods = 1; max_samples = 1; latency_thres = 100000.0; sim_count = 1;
priority = none; injection_rate_uses_flits = 1; speculative = 0;
use_noc_latency = 0; traffic = uniform;
CFG
    "$work/src/booksim" "$work/cfg" >/dev/null 2>"$work/log" || true
    # the VC a source starts a packet on comes in the order it made them (a FIFO per source)
    python3 - "$work/log" "$out/$1" <<'EOF'
import collections, gzip, sys
vc, made, got = collections.defaultdict(list), [], []
for line in open(sys.argv[1]):
    x = line.split()
    if len(x) != 4 or x[0] not in "GVR":
        continue
    a, b, c = map(int, x[1:])
    if x[0] == "G":
        made.append((a, b, c))
    elif x[0] == "V":
        vc[a].append(c)
    else:
        got.append((b, a, c))
taken = collections.Counter()
with gzip.open(sys.argv[2] + ".pkts.gz", "wt") as o:
    o.write("# cycle src dst vc: BookSim2's packets (tests/data/booksim/README.md)\n")
    rows = []
    for t, s, d in made:
        k = taken[s]
        taken[s] += 1
        rows.append((t, s, d, vc[s][k] if k < len(vc[s]) else -1))
    # BookSim2 makes a packet when its source's queue is empty, stamped with the cycle of its
    # draw (its qtime), so its cycles come out of order: sorted, each source's stay in order
    for r in sorted(rows, key=lambda r: r[0]):
        o.write("%d %d %d %d\n" % r)
with gzip.open(sys.argv[2] + ".arrived.gz", "wt") as o:
    o.write("# cycle src arrived: the packets BookSim2 retired\n")
    for t, s, a in sorted(got):
        o.write("%d %d %d\n" % (t, s, a))
EOF
}
run_case fly4 "topology = fly; k = 4; n = 1; routing_function = dest_tag; num_vcs = 2;
vc_buf_size = 256; internal_speedup = 1.0; sample_period = 1000; injection_rate = 0.6;
packet_size = 1;"
run_case fly4-p4 "topology = fly; k = 4; n = 1; routing_function = dest_tag; num_vcs = 2;
vc_buf_size = 8; internal_speedup = 1.0; sample_period = 2000; injection_rate = 0.5;
packet_size = 4;"
run_case torus7x7-p4 "topology = torus; k = 7; n = 2; routing_function = dim_order; num_vcs = 2;
vc_buf_size = 8; internal_speedup = 1.0; sample_period = 500; injection_rate = 0.3;
packet_size = 4;"
run_case torus5x5x5 "topology = torus; k = 5; n = 3; routing_function = dim_order; num_vcs = 2;
vc_buf_size = 8; internal_speedup = 1.0; sample_period = 300; injection_rate = 0.4;
packet_size = 1;"
run_case df72-s17 "topology = dragonflynew; k = 2; n = 1; routing_function = min; num_vcs = 3;
vc_buf_size = 256; internal_speedup = 1.7; sample_period = 300; injection_rate = 0.7;
packet_size = 1;"
run_case df72-s1 "topology = dragonflynew; k = 2; n = 1; routing_function = min; num_vcs = 3;
vc_buf_size = 256; internal_speedup = 1.0; sample_period = 300; injection_rate = 0.42;
packet_size = 1;"
