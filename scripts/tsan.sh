#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs netfab's multi-threaded paths under ThreadSanitizer: the unit tests that compare thread
# counts, and the commands that run OpenMP threads (sim, sweep, topo, mcast). Fails on the first
# report. Usage: scripts/tsan.sh BUILD_DIR (a build made by `make tsan`: clang, -fsanitize=thread,
# LLVM's OpenMP runtime).
#
# TSan sees only instrumented code. The OpenMP runtime's barriers, criticals and reductions are
# made visible to it by LLVM's OMPT tool "archer" (libarcher.so, loaded through
# OMP_TOOL_LIBRARIES), which reports each of them to TSan as a happens-before edge; without it
# every barrier would look like no synchronisation at all. GCC's libgomp has no such tool, which
# is why this build uses clang and libomp. scripts/tsan.supp lists the false positives left
# (inside libomp and archer themselves) and why; archer's advice to set
# ignore_noninstrumented_modules=1 instead is not taken, as that would ignore every
# uninstrumented library (jansson, cmocka), not just the OpenMP runtime.
set -eu
B=${1:?usage: scripts/tsan.sh BUILD_DIR}
SRC=$(cd "$(dirname "$0")/.." && pwd)
NF="$B/netfab"
[ -x "$NF" ] || { echo "tsan.sh: no $NF (make tsan builds it)" >&2; exit 2; }

# archer beside the libomp the program actually loads
omp=$(ldd "$NF" | awk '/libomp\.so/ {print $3; exit}')
[ -n "$omp" ] || { echo "tsan.sh: $NF does not use LLVM's libomp" >&2; exit 2; }
archer="$(dirname "$(readlink -f "$omp")")/libarcher.so"
[ -f "$archer" ] || { echo "tsan.sh: no $archer (Debian: libomp-dev)" >&2; exit 2; }
export OMP_TOOL_LIBRARIES="$archer" ARCHER_OPTIONS="verbose=1"
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$SRC/scripts/tsan.supp"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
# run NAME CMD...: CMD under TSan; fails when it exits non-zero, when TSan reports anything, or
# when archer did not attach (OpenMP's synchronisation would then be invisible to TSan).
# nomp=1 run ...: a program without OpenMP (archer has nothing to attach to).
nomp=0
run() {
    name=$1
    shift
    n=$((n + 1))
    start=$(date +%s)
    if ! "$@" >"$tmp/out" 2>"$tmp/err"; then
        echo "tsan.sh: FAILED: $name: $*" >&2
        cat "$tmp/err" >&2
        exit 1
    fi
    if grep -q 'ThreadSanitizer' "$tmp/out" "$tmp/err"; then
        echo "tsan.sh: FAILED: $name: ThreadSanitizer reported" >&2
        cat "$tmp/err" >&2
        exit 1
    fi
    if [ "$nomp" = 0 ] &&
        ! grep -q '^Archer detected OpenMP application with TSan' "$tmp/out" "$tmp/err"; then
        echo "tsan.sh: FAILED: $name: archer did not attach ($archer)" >&2
        cat "$tmp/out" "$tmp/err" >&2
        exit 1
    fi
    echo "tsan: ok  $name ($(($(date +%s) - start)) s)"
}

# unit tests: the ones that run the simulator on 1, 2 and 3 threads and compare (named
# *_threads, and two with a threaded part), distances and unicast tables on 2 threads, and two
# fabrics built at once from two pthreads
run "test_sim *threads*" env NF_TEST_FILTER='*threads*' "$B/test_sim"
for t in test_script test_mcast_hw; do
    run "test_sim $t" env NF_TEST_FILTER="$t" "$B/test_sim"
done
run "test_hops threads" env NF_TEST_FILTER=test_thread_count_invariance "$B/test_hops"
run test_lft "$B/test_lft"
nomp=1 run test_fabric "$B/test_fabric"

# the simulator on 2 and 3 threads
short="--cycles 1500 --warmup 300 --drain 5000"
df=dragonfly:a=4,p=2,h=2
for T in 2 3; do
    # shellcheck disable=SC2086
    {
        run "sim dfmin T=$T" "$NF" sim --topo $df --routing dfmin --traffic uniform \
            --load 0.4 $short --threads $T
        run "sim ugal-g T=$T" "$NF" sim --topo $df --routing ugal-g --traffic worstcase \
            --load 0.3 $short --threads $T
        run "sim fat tree, links failing T=$T" "$NF" sim --topo fattree:k=4 --routing ftable \
            --traffic uniform --load 0.3 --cycles 3000 --warmup 300 --fail-links 4 \
            --fail-at 1500 --threads $T
        run "sim two rails T=$T" "$NF" sim --topo gft:leaves=4,nodes=4,spines=2,rails=2 \
            --routing minhop --traffic uniform --load 0.4 $short --threads $T
        run "sim allreduce, bursty, shared pool T=$T" "$NF" sim --topo torus:4x4,c=2 \
            --routing dor --traffic allreduce --load 0.3 $short --msg 4 --bursty \
            --shared 16 --adaptive --threads $T
        run "sim link errors, dynamic switching T=$T" "$NF" sim --topo torus:4x4,c=2 \
            --routing dor --traffic uniform --load 0.4 $short --pkt 4 --ber 1e-4 \
            --switching dynamic --threads $T
    }
done

# netfab sweep: one cell per thread, then both threads on one cell; a multicast grid
run "sweep cells on 2 threads" "$NF" sweep --topo $df --routing dfmin,ugal-l --traffic uniform \
    --loads 0.2,0.4 --cycles 800 --warmup 200 --threads 2 --no-times
run "sweep one cell, 2 threads" "$NF" sweep --topo $df --routing ugal-g --traffic uniform \
    --loads 0.3 --cycles 800 --warmup 200 --threads 2 --no-times
run "sweep multicast on 2 threads" "$NF" sweep --topo fattree:k=4 --groups random:n=20,size=4 \
    --engine all --seeds 1,2 --threads 2 --no-times

# distances, and multicast routing after them
run "topo distances on 2 threads" "$NF" topo --topo fattree:k=8 --topo dragonfly:a=6,p=3,h=3 \
    --threads 2
run "mcast on 2 threads" "$NF" mcast --topo fattree:k=8 --groups random:n=50,size=8 \
    --engine all --threads 2

# the group manager: its journal writer thread against the loop, under a burst of joins
n=$((n + 1))
"$NF" smd --topo torus:4x4x4,c=2 --listen 127.0.0.1:0 --port-file "$tmp/port" \
    --state "$tmp/state" --join-timeout 5000 >"$tmp/smd.out" 2>"$tmp/smd.err" &
spid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
if ! "$NF" smd-load --server "127.0.0.1:$(cat "$tmp/port")" --topo torus:4x4x4,c=2 \
    --groups grid3d:4x4x4 >"$tmp/out" 2>"$tmp/err"; then
    kill "$spid" 2>/dev/null
    echo "tsan.sh: FAILED: smd-load against the daemon" >&2
    cat "$tmp/err" "$tmp/smd.err" >&2
    exit 1
fi
kill "$spid"
st=0
wait "$spid" || st=$?
if [ "$st" != 0 ] || grep -q 'ThreadSanitizer' "$tmp/smd.out" "$tmp/smd.err"; then
    echo "tsan.sh: FAILED: smd (exit $st)" >&2
    cat "$tmp/smd.err" >&2
    exit 1
fi

echo "tsan: $n runs, no ThreadSanitizer report"
