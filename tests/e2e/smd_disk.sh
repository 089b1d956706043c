#!/bin/sh
# SPDX-License-Identifier: MIT
# The group manager and its state directory when the disk is unkind (docs/probes.md): a byte
# flipped in the middle of the journal is refused loudly with the file untouched, and salvaged
# on request; a torn tail is cut; a planted journal.tmp symlink is not followed; a state
# directory others can write is refused; a full disk (a small tmpfs: a real ENOSPC) refuses
# changes with NO_RESOURCES and keeps answering queries, resumes when space returns, and a
# restart on a full disk starts without compacting; nothing acknowledged is lost through it.
# Usage: smd_disk.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
probe=${NF_SMDPROBE:-$(dirname "$nf")/nf_smdprobe}
pid=
disk=
e2e_cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    [ -n "$disk" ] && umount "$disk" 2>/dev/null
}
. "$2/tests/e2e/lib/harness.sh"
topo="torus:4x4x2,c=2"
"$nf" topo --topo $topo --out "$tmp/f.ibnet" >/dev/null
set -- $(grep '^Ca' "$tmp/f.ibnet" | head -2 | sed 's/.*"H-\([0-9a-f]*\)".*/0x\1/')
p1=$1

start_smd() {
    rm -f "$tmp/port"
    "$nf" smd --topo $topo --listen 127.0.0.1:0 --port-file "$tmp/port" "$@" 2>"$tmp/smd.log" &
    pid=$!
    i=0; while [ ! -s "$tmp/port" ] && kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do
        sleep 0.1; i=$((i + 1)); done
    srv=127.0.0.1:$(cat "$tmp/port" 2>/dev/null)
}
stop_smd() { kill $pid; wait $pid; st=$?; pid=; [ "$st" = 0 ] && ok || bad "smd exited $st"; }
# join K: a one-member group ff12:401b::K (Ready at once); prints the answer's status
join() {
    "$probe" req "$srv" --mgid ff12:401b::$1 --port-guid $p1 --count 1 --wait 1000 |
        sed -n 's/^status \(0x[0-9a-f]*\).*/\1/p' | head -1
}

# ---- a damaged journal
st2=$tmp/st2
start_smd --state "$st2"
k=1; while [ $k -le 100 ]; do [ "$(join $k)" = 0x0000 ] || bad "join $k"; k=$((k + 1)); done
stop_smd
size=$(stat -c %s "$st2/journal")
cp "$st2/journal" "$tmp/journal.orig"
printf '\377' | dd of="$st2/journal" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
cp "$st2/journal" "$tmp/journal.flipped"
expect 2 timeout 20 "$nf" smd --topo $topo --listen 127.0.0.1:0 --state "$st2"
has err "left untouched"
has err "--repair-journal"
cmp -s "$st2/journal" "$tmp/journal.flipped" && ok || bad "the damaged journal was modified"
start_smd --state "$st2" --repair-journal
kill -0 $pid 2>/dev/null && ok || bad "repair did not start: $(cat "$tmp/smd.log")"
grep -q "repaired: .* records read" "$tmp/smd.log" && ok || bad "no repair report: $(cat "$tmp/smd.log")"
cmp -s "$st2/journal.damaged.1" "$tmp/journal.flipped" && ok || bad "the damaged file is not kept"
ready=0; k=1
while [ $k -le 100 ]; do
    "$nf" mcast-state --server $srv --mgid ff12:401b::$k --json 2>/dev/null | grep -q Ready &&
        ready=$((ready + 1))
    k=$((k + 1))
done
# one record is lost (a JOIN or a TREE: that group only; a CREATE: its group)
[ $ready -ge 99 ] && ok || bad "after repair only $ready of 100 groups are Ready"
stop_smd
# a torn tail (a crash in the middle of a write) is the one thing cut silently
cp "$tmp/journal.orig" "$st2/journal"
rm -f "$st2/journal.damaged.1"
printf '\040\000\000\000\001\002' >>"$st2/journal"
start_smd --state "$st2"
grep -q "6 torn bytes dropped" "$tmp/smd.log" && ok || bad "torn tail: $(cat "$tmp/smd.log")"
stop_smd

# ---- a planted symlink, a directory others can write
mkdir -p "$tmp/st3"; chmod 700 "$tmp/st3"
echo "precious" >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/st3/journal.tmp"
start_smd --state "$tmp/st3"
[ "$(join 1)" = 0x0000 ] && ok || bad "join with a planted journal.tmp"
stop_smd
[ "$(cat "$tmp/victim")" = precious ] && ok || bad "the symlink's target was overwritten"
chmod 1777 "$tmp/st3"
expect 2 timeout 20 "$nf" smd --topo $topo --listen 127.0.0.1:0 --state "$tmp/st3"
has err "chmod 700"

mkdir -p "$tmp/disk"
if ! mount -t tmpfs -o size=256k tmpfs "$tmp/disk" 2>"$tmp/err"; then
    bad "cannot mount a small tmpfs for a real ENOSPC (root is needed): $(cat "$tmp/err")"
    finish; exit 1
fi
disk=$tmp/disk
state=$disk/state
: >"$tmp/acked"   # the groups whose join was acknowledged

start_smd --state "$state"
k=1; while [ $k -le 20 ]; do
    [ "$(join $k)" = 0x0000 ] && echo $k >>"$tmp/acked"; k=$((k + 1)); done
[ "$(wc -l <"$tmp/acked")" = 20 ] && ok || bad "joins before the disk filled"
# fill the disk, then join until a join is refused (the journal's last page may have room)
dd if=/dev/zero of="$disk/fill" bs=4k 2>/dev/null
refused=0
while [ $k -le 400 ] && [ $refused = 0 ]; do
    s=$(join $k)
    case $s in
    0x0000) echo $k >>"$tmp/acked" ;;
    0x0100) refused=$k ;;
    *) bad "join $k: status '$s'" ; break ;;
    esac
    k=$((k + 1))
done
[ $refused != 0 ] && ok || bad "no join refused on a full disk"
kill -0 $pid 2>/dev/null && ok || bad "smd died on a full disk: $(tail -3 "$tmp/smd.log")"
grep -q "No space left on device" "$tmp/smd.log" && ok || bad "log lacks the real errno text"
expect 0 "$nf" mcast-state --server $srv --mgid ff12:401b::1 --json   # queries go on
json_str out state Ready
[ "$(join $((k + 1)))" = 0x0100 ] && ok || bad "a change accepted while the disk is full"
# space returns: the refused join is accepted when asked again
rm -f "$disk/fill"
sleep 1.5
s=$(join $refused)
[ "$s" = 0x0000 ] && { echo $refused >>"$tmp/acked"; ok; } || bad "join after space returned: $s"
stop_smd

# a restart on a full disk: no room to compact, it starts on the journal as it is
dd if=/dev/zero of="$disk/fill" bs=4k 2>/dev/null
start_smd --state "$state"
kill -0 $pid 2>/dev/null && ok || bad "smd refused to start on a full disk: $(cat "$tmp/smd.log")"
grep -q "no space to compact the journal" "$tmp/smd.log" && ok || bad "$(cat "$tmp/smd.log")"
# every acknowledged group is there, Ready
lost=0
for g in $(cat "$tmp/acked"); do
    "$nf" mcast-state --server $srv --mgid ff12:401b::$g --json >"$tmp/out" 2>&1
    grep -q '"state": "Ready"' "$tmp/out" || lost=$((lost + 1))
done
[ $lost = 0 ] && ok || bad "$lost acknowledged groups lost of $(wc -l <"$tmp/acked")"
stop_smd
rm -f "$disk/fill"

finish
