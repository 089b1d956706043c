#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs every libFuzzer target (fuzz_*) built in BUILD_DIR for SECONDS seconds each, on a corpus in
# fuzz/corpus-<name>/ seeded from the shared ibnetdiscover dumps, tests/data and tests/data/real
# (what the real tools wrote), ibsim's examples and
# the target's own seeds in tests/data/<name>/ (the SA datagrams for fuzz_sa).
# Exits non-zero when a target crashes, leaks, aborts or hangs; reproducers land in fuzz/crash-*.
# Usage: fuzz/run.sh BUILD_DIR SECONDS
set -eu

if [ $# -ne 2 ]; then
    echo "usage: $0 BUILD_DIR SECONDS" >&2
    exit 2
fi
build=$1
seconds=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
fabrics=${NF_FABRICS_DIR:-$root/tests/data/fabrics}

status=0
found=0
for bin in "$build"/fuzz_*; do
    [ -f "$bin" ] && [ -x "$bin" ] || continue
    found=$((found + 1))
    name=$(basename "$bin")
    name=${name#fuzz_}
    corpus=$here/corpus-$name
    mkdir -p "$corpus"
    for seed in "$fabrics"/*.ibnet "$root"/tests/data/* "$root"/tests/data/real/* \
        "$root/tests/data/$name"/* \
        /usr/share/doc/ibsim-utils/net-examples/net*; do
        [ -f "$seed" ] || continue
        [ -e "$corpus/seed-$(basename "$seed")" ] || cp "$seed" "$corpus/seed-$(basename "$seed")"
    done
    echo "== fuzz_$name: ${seconds}s on $corpus"
    if "$bin" -max_total_time="$seconds" -max_len=32768 -timeout=20 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$here/crash-$name-" "$corpus"; then
        echo "== fuzz_$name: clean"
    else
        echo "== fuzz_$name: FAILED (reproducer in $here/crash-$name-*)" >&2
        status=1
    fi
done
if [ "$found" -eq 0 ]; then
    echo "$0: no fuzz_* binaries in $build (configure with -DNF_FUZZ=ON and CC=clang)" >&2
    exit 2
fi
exit $status
