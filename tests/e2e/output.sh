#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks that the commands' output files appear complete or not at all: on a full disk
# (a 64 KiB tmpfs) and after a failed run the previous file is still there and no temporary file
# is left; SIGINT in the middle of a long write leaves the previous file or the complete new one;
# netfab report stopped by SIGINT stops its steps and keeps its previous page and data. And
# --threads: the same range, message and exit status in every command.
# Usage: output.sh NETFAB SOURCE_DIR FABRICS_DIR (needs root for the tmpfs, else skips that part)
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"

# same A B: the files are equal; notemp DIR: no temporary file (.NAME.RANDOM.tmp) in DIR
same() { if cmp -s "$1" "$2"; then ok; else bad "$1 differs from $2"; fi; }
notemp() {
    left=$(ls -A "$1" | grep '\.tmp$')
    if [ -z "$left" ]; then ok; else bad "temporary files left in $1: $left"; fi
}
# old FILE: FILE still holds the "old" line it was given
old() { if [ "$(cat "$1" 2>/dev/null)" = old ]; then ok; else bad "$1 lost its previous contents"; fi; }

# ---- --threads: every command alike ---------------------------------------------------------
T=torus:4x4,c=1
for cmd in "topo --topo $T" "mcast --topo $T --groups grid2d:4x4" \
    "sim --topo $T --routing dor --traffic uniform --load 0.1" "smd --topo $T" \
    "sweep --topo $T --routing dor --traffic uniform --loads 0.1" "exp tables --quick"; do
    for v in 100000 0 -1 abc 1.5 1025 ""; do
        # shellcheck disable=SC2086
        expect 2 timeout 20 "$nf" $cmd --threads "$v"
        has err "^netfab ${cmd%% *}: --threads wants a whole number from 1 to 1024, not '$v'\$"
    done
done
expect 2 "$nf" report --out "$tmp/x" --jobs 0; has err "^netfab report: --jobs wants a whole number from 1 to 256, not '0'\$"

# ---- a full disk: the previous file stays, no temporary is left ------------------------------
"$nf" sim --topo $T --routing dor --traffic uniform --sweep 0.1:0.3:0.1 --cycles 200 --warmup 50 \
    --json >"$tmp/sim.json" 2>/dev/null || bad "sim --json for the plots"
full=$tmp/full
mkdir "$full"
mounted=0
e2e_cleanup() { if [ "$mounted" = 1 ]; then umount "$full"; fi; }
if mount -t tmpfs -o size=64k tmpfs "$full" 2>"$tmp/mount.err"; then
    mounted=1
elif [ "$(id -u)" = 0 ]; then
    bad "cannot mount a tmpfs on $full: $(cat "$tmp/mount.err")"
else
    skip "the full-disk checks need root (mount -t tmpfs)"
fi
# enospc FILE WHY CMD...: FILE (in $full) holds "old", the disk is then filled; CMD must exit 1
# saying WHY (empty: not checked, a child program writes), FILE keep "old", no temporary stay
enospc() {
    f=$full/$1 why=$2
    shift 2
    printf 'old\n' >"$f"
    dd if=/dev/zero of="$full/filler" bs=4k >/dev/null 2>&1
    expect 1 "$@"
    if [ -n "$why" ]; then has err "$why"; fi
    old "$f"
    notemp "$full"
    rm -f "$full/filler"
}
if [ "$mounted" = 1 ]; then
    nospace="cannot write $full/.*: No space left on device"
    enospc t.ibnet "$nospace" "$nf" topo --topo fattree:k=4 --out "$full/t.ibnet"
    enospc g.txt "$nospace" "$nf" mcast --topo fattree:k=4 --groups grid2d:4x4 --engine fulb --dump-groups "$full/g.txt"
    enospc m.txt "$nospace" "$nf" mcast --topo fattree:k=4 --groups grid2d:4x4 --engine fulb --dump-mft "$full/m.txt"
    enospc l.csv "$nospace" "$nf" sim --topo $T --routing dor --traffic uniform --load 0.1 --cycles 200 --warmup 50 --links "$full/l.csv"
    enospc s.csv "$nospace" "$nf" sweep --topo $T --routing dor --traffic uniform --loads 0.1,0.2 --cycles 200 --warmup 50 --out "$full/s.csv"
    enospc s.json "$nospace" "$nf" sweep --topo $T --routing dor --traffic uniform --loads 0.1 --cycles 200 --warmup 50 --json --out "$full/s.json"
    enospc p.gp "$nospace" "$nf" plot latency --in "$tmp/sim.json" --out "$tmp/p.png" --script "$full/p.gp"
    enospc p.png "" "$nf" plot latency --in "$tmp/sim.json" --out "$full/p.png"
    enospc t.dot "$nospace" "$nf" plot tree --topo fattree:k=4 --groups grid2d:4x4 --group 1 --out "$full/t.dot"
    enospc t.svg "" "$nf" plot tree --topo fattree:k=4 --groups grid2d:4x4 --group 1 --out "$full/t.svg"
    enospc e.png "" "$nf" exp tables --quick --plot "$full/e.png"
fi

# ---- a run that fails after its output was opened keeps the previous file ---------------------
printf 'old\n' >"$tmp/s.csv"
expect 2 "$nf" sweep --topo $T --topo nosuch:x=1 --routing dor --traffic uniform --loads 0.1 --out "$tmp/s.csv"
old "$tmp/s.csv"
printf 'old\n' >"$tmp/p.png"
expect 1 env PATH=/nonexistent "$nf" plot latency --in "$tmp/sim.json" --out "$tmp/p.png"
has err "cannot run gnuplot"; old "$tmp/p.png"
printf 'old\n' >"$tmp/e.png"
expect 1 env PATH=/nonexistent "$nf" exp tables --quick --plot "$tmp/e.png"
old "$tmp/e.png"
notemp "$tmp"
# a device is written, not replaced; a symbolic link's file is replaced, the link stays
expect 0 "$nf" topo --topo fattree:k=4 --out /dev/null --format json
[ -c /dev/null ] && ok || bad "/dev/null is no longer a device"
printf 'old\n' >"$tmp/target.ibnet"
ln -s target.ibnet "$tmp/link.ibnet"
expect 0 "$nf" topo --topo fattree:k=4 --out "$tmp/link.ibnet"
[ -L "$tmp/link.ibnet" ] && ok || bad "link.ibnet is no longer a link"
grep -q Switch "$tmp/target.ibnet" && ok || bad "the link's target was not written"
# a new file gets the mode of any new file
(umask 027 && "$nf" topo --topo fattree:k=4 --out "$tmp/mode.ibnet")
[ "$(stat -c %a "$tmp/mode.ibnet")" = 640 ] && ok || bad "mode $(stat -c %a "$tmp/mode.ibnet"), want 640"

# ---- SIGINT while writing: the previous file or the complete new one, never a part ------------
# (env --default-signal: a background job of a script starts with SIGINT ignored)
big=torus:30x20x20,c=2
"$nf" topo --topo $big --out "$tmp/ref.ibnet" || bad "topo $big"
for d in 0.05 0.1 0.15 0.2 0.25 0.3 0.35; do
    printf 'old\n' >"$tmp/big.ibnet"
    env --default-signal=INT "$nf" topo --topo $big --out "$tmp/big.ibnet" 2>/dev/null &
    pid=$!
    sleep $d
    kill -INT $pid 2>/dev/null
    wait $pid
    st=$?
    case $st in 0 | 130) ok ;; *) bad "topo interrupted after $d s: exit $st" ;; esac
    if [ "$(cat "$tmp/big.ibnet")" = old ] || cmp -s "$tmp/big.ibnet" "$tmp/ref.ibnet"; then
        ok
    else
        bad "topo interrupted after $d s left $(wc -c <"$tmp/big.ibnet") bytes, neither old nor complete"
    fi
    notemp "$tmp"
done
printf 'old\n' >"$tmp/s.csv"
env --default-signal=INT "$nf" sweep --topo torus:8x8,c=1 --routing dor --traffic uniform \
    --loads 0.1:0.9:0.1 --cycles 20000 --warmup 100 --threads 1 --out "$tmp/s.csv" 2>/dev/null &
pid=$!
sleep 1
kill -INT $pid
wait $pid
st=$?
[ $st = 130 ] && ok || bad "sweep interrupted: exit $st, want 130"
old "$tmp/s.csv"
notemp "$tmp"

# ---- netfab report stopped by SIGINT ---------------------------------------------------------
r=$tmp/r
mkdir -p "$r/data" "$r/img"
outs="index.html data/dragonfly-uniform.json data/dragonfly-worstcase.json img/dragonfly-uniform.png img/dragonfly-worstcase.png"
for f in $outs; do printf 'old\n' >"$r/$f"; done
# the two slowest quick steps (8 and 25 s on 2 cores): both still run when the signal comes
env --default-signal=INT "$nf" report --quick --out "$r" --only dragonfly-uniform,dragonfly-worstcase --jobs 2 \
    >/dev/null 2>"$tmp/report.err" &
pid=$!
sleep 1.5
kids=$(pgrep -P $pid | tr '\n' ' ')
[ -n "$kids" ] && ok || bad "report had no step running after 1.5 s"
kill -INT $pid
wait $pid
st=$?
[ $st = 130 ] && ok || bad "report interrupted: exit $st, want 130"
sleep 0.2
left=""
for k in $kids; do
    if kill -0 "$k" 2>/dev/null || [ -n "$(pgrep -g "$k")" ]; then left="$left $k"; fi
done
[ -z "$left" ] && ok || bad "report's steps still running after it was interrupted:$left"
for k in $left; do kill -KILL -- "-$k" "$k" 2>/dev/null; done
for f in $outs; do old "$r/$f"; done
notemp "$r"; notemp "$r/data"; notemp "$r/img"

finish
