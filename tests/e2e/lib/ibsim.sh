# SPDX-License-Identifier: MIT
# The real InfiniBand tools on a simulated fabric, for the e2e scripts: ibsim serves a net file,
# OpenSM and the infiniband-diags tools reach it through the umad2sim preload. Sourced after
# harness.sh (uses $tmp and its e2e_cleanup hook; not a test itself). docs/real-tools.md has the
# same steps by hand.
#
#   ibsim_require            exit 77 (ctest: "Not Run") saying which tool is missing
#   ibsim_start NETFILE      start ibsim on NETFILE, wait until its socket is there
#   ibsim_opensm OPT...      start OpenSM (stays up), wait until it logs "SUBNET UP"
#   ibsim_opensm_once OPT... run OpenSM for one sweep (-o) and wait until it exits
#   ibsim_run CMD...         run a tool attached to the fabric (cwd: the OpenSM directory)
#   ibsim_stop               stop OpenSM and ibsim (the harness's exit calls it)
#
# Each ibsim gets its own socket name (IBSIM_SOCKNAME), so several tests run side by side. The
# daemons run in their own process groups behind a watchdog that ends them when this script's
# shell is gone, even when it was killed with SIGKILL (a ctest timeout).

ibsim_so=${IBSIM_UMAD2SIM:-}
ibsim_dir=
ibsim_pg=
osm_pg=
osm_dir=
ibsim_seq=0
ibsim_wait_s=${IBSIM_WAIT_S:-30}

# ibsim_require: every package the real-tools tests need is installed, else say which is missing
# and exit 77 (SKIP_RETURN_CODE of the e2e tests: ctest lists the test as "Not Run")
ibsim_require() {
    missing=""
    for t in ibsim:ibsim-utils opensm:opensm ibnetdiscover:infiniband-diags \
        dump_fts:infiniband-diags ibroute:infiniband-diags saquery:infiniband-diags \
        ibtracert:infiniband-diags setsid:util-linux timeout:coreutils; do
        command -v "${t%%:*}" >/dev/null 2>&1 || missing="$missing ${t#*:} (${t%%:*})"
    done
    if [ -z "$ibsim_so" ]; then
        for so in /usr/lib/*/umad2sim/libumad2sim.so /usr/lib/umad2sim/libumad2sim.so \
            /usr/local/lib/umad2sim/libumad2sim.so; do
            if [ -f "$so" ]; then ibsim_so=$so; break; fi
        done
    fi
    [ -n "$ibsim_so" ] && [ -f "$ibsim_so" ] || missing="$missing libumad2sim0 (libumad2sim.so)"
    if [ -n "$missing" ]; then
        echo "SKIP: packages missing:$missing; scripts/deps.sh build installs them"
        # checks that ran before this one and failed still fail the test
        if [ "${failn:-0}" != 0 ]; then finish; exit 1; fi
        exit 77
    fi
}

# ibsim__daemon PGVAR DIR LOG CMD...: start CMD in DIR in a new session (its pid is the group id,
# stored in PGVAR) with a watchdog beside it in that group: when this shell or CMD is gone, the
# group ends
ibsim__daemon() {
    pgvar=$1 dir=$2 log=$3
    shift 3
    # shellcheck disable=SC2016
    setsid sh -c '
        parent=$1; cd "$2" || exit 1; shift 2
        "$@" </dev/null &
        child=$!
        # the parent runs while /proc has it and it is no zombie (a killed shell may wait a while
        # for its parent to reap it)
        up() { read -r st <"/proc/$1/stat" 2>/dev/null && st=${st##*) } && [ "${st%% *}" != Z ]; }
        while up "$parent" && up "$child"; do sleep 0.2; done
        kill "$child" 2>/dev/null; wait "$child"' ibsim-watch $$ "$dir" "$@" >"$log" 2>&1 &
    eval "$pgvar=\$!"
}

# ibsim__end PG: end process group PG (TERM, then KILL after 5 s), wait until none of its
# processes runs (a zombie left to init no longer counts)
ibsim__end() {
    [ -n "$1" ] || return 0
    # right after the start, setsid may not have made the group yet: wait for it
    ibsim__poll 2 ibsim__grouped "$1"
    kill -TERM "-$1" 2>/dev/null
    i=0
    while ibsim__running "$1"; do
        i=$((i + 1))
        if [ $i = 100 ]; then kill -KILL "-$1" 2>/dev/null; fi
        if [ $i -gt 200 ]; then echo "ibsim.sh: process group $1 does not end" >&2; return 1; fi
        sleep 0.05
    done
    wait "$1" 2>/dev/null
    return 0
}
ibsim__running() { ps -e -o pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { f = 1 } END { exit !f }'; }

# ibsim__poll SECONDS TEST...: run TEST every 0.05 s until it succeeds (0) or SECONDS pass (1)
ibsim__poll() {
    n=$(($1 * 20))
    shift
    while ! "$@"; do
        n=$((n - 1))
        [ $n -gt 0 ] || return 1
        sleep 0.05
    done
}

ibsim__sock_up() { grep -q "@$IBSIM_SOCKNAME:ctl@" /proc/net/unix; }
# the watchdog (the group's leader) of group PG is running; it is in its own group
ibsim__alive() { kill -0 "$1" 2>/dev/null; }
ibsim__grouped() { ! ibsim__alive "$1" || [ "$(ps -o pgid= -p "$1" | tr -d ' ')" = "$1" ]; }

# ibsim_start NETFILE [SIM_HOST]: start ibsim on NETFILE in a fresh directory under $tmp; the
# tools attach at node SIM_HOST (a node id of the file: "H-..."), by default its first CA.
# Stops any earlier ibsim and OpenSM first. Returns 1 (saying why) when ibsim does not come up.
ibsim_start() {
    ibsim_stop
    case $1 in /*) net=$1 ;; *) net=$PWD/$1 ;; esac
    ibsim_seq=$((ibsim_seq + 1))
    ibsim_dir=$tmp/ibsim$ibsim_seq
    osm_dir=$ibsim_dir/osm
    mkdir -p "$osm_dir"
    IBSIM_SOCKNAME=nf$$x$ibsim_seq
    SIM_HOST=${2:-$(awk '/^(Ca|Hca)[ \t]/ { split($0, q, "\""); print q[2]; exit }' "$net")}
    export IBSIM_SOCKNAME SIM_HOST
    # ibsim stops at 256 switches and 2048 nodes unless told otherwise
    ibsim__daemon ibsim_pg "$ibsim_dir" "$ibsim_dir/ibsim.log" ibsim -s -n -S 1024 -N 8192 "$net"
    if ! ibsim__poll "$ibsim_wait_s" ibsim__sock_up; then
        echo "ibsim.sh: ibsim did not come up on $1 within ${ibsim_wait_s}s:" >&2
        tail -5 "$ibsim_dir/ibsim.log" | sed 's/^/  | /' >&2
        return 1
    fi
}

# ibsim__osm_env: OpenSM's cache and temporary files in $osm_dir. Every run here also gets: files in $osm_dir, log flushed per line
# (so "SUBNET UP" can be polled), routing dumps (-D 0x43 = errors, info, routing) written there
ibsim__osm_env() {
    OSM_CACHE_DIR=$osm_dir OSM_TMP_DIR=$osm_dir
    export OSM_CACHE_DIR OSM_TMP_DIR
}
ibsim__subnet_up() { grep -q "SUBNET UP" "$osm_dir/osm.log" 2>/dev/null; }
ibsim__osm_waiting() { ibsim__subnet_up || ! ibsim__alive "$osm_pg"; }

# ibsim_opensm [OPTION...]: start OpenSM on the running ibsim with these extra options (e.g.
# -R updn), no periodic sweeps; return once it logged "SUBNET UP" (1, saying why, if it did not)
ibsim_opensm() {
    ibsim__end "$osm_pg"
    osm_pg=
    rm -f "$osm_dir/osm.log"
    ibsim__osm_env
    ibsim__daemon osm_pg "$osm_dir" "$osm_dir/opensm.out" env LD_PRELOAD="$ibsim_so" \
        opensm -d 2 -D 0x43 -s 0 -f "$osm_dir/osm.log" --dump_files_dir "$osm_dir" "$@"
    ibsim__poll "$ibsim_wait_s" ibsim__osm_waiting
    if ! ibsim__subnet_up; then
        echo "ibsim.sh: OpenSM $* did not bring the subnet up within ${ibsim_wait_s}s:" >&2
        tail -5 "$osm_dir/osm.log" "$osm_dir/opensm.out" 2>/dev/null | sed 's/^/  | /' >&2
        return 1
    fi
}

# ibsim_opensm_once [OPTION...]: one OpenSM sweep (-o) with these extra options; return 0 when
# it exited after logging "SUBNET UP", else 1 saying why. The switches keep the tables it set.
ibsim_opensm_once() {
    ibsim__end "$osm_pg"
    osm_pg=
    rm -f "$osm_dir/osm.log"
    ibsim__osm_env
    (cd "$osm_dir" && timeout "$ibsim_wait_s" env LD_PRELOAD="$ibsim_so" opensm -o -d 2 -D 0x43 \
        -f "$osm_dir/osm.log" --dump_files_dir "$osm_dir" "$@" >"$osm_dir/opensm.out" 2>&1)
    st=$?
    if [ $st != 0 ] || ! ibsim__subnet_up; then
        echo "ibsim.sh: OpenSM -o $* exited $st without bringing the subnet up:" >&2
        tail -5 "$osm_dir/osm.log" "$osm_dir/opensm.out" 2>/dev/null | sed 's/^/  | /' >&2
        return 1
    fi
}

# ibsim_run CMD [ARG...]: run CMD with the umad2sim preload, attached at $SIM_HOST, in $osm_dir
# (umad2sim makes its sysfs copy ./sys-PID there), at most $ibsim_wait_s seconds; CMD's status.
# A program built with AddressSanitizer accepts the preload ahead of its runtime, and ASan does
# not stop it for umad2sim's own faults (its read() copies 320 bytes out of a shorter buffer on
# an SA error answer): they are not the program's.
ibsim_run() {
    printf 'interceptor_via_lib:libumad2sim.so\n' >"$tmp/umad2sim.supp"
    (cd "$osm_dir" &&
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:suppressions=$tmp/umad2sim.supp \
            timeout "$ibsim_wait_s" env LD_PRELOAD="$ibsim_so" "$@")
}

# ibsim_stop: end OpenSM, then ibsim, and wait until they are gone
ibsim_stop() {
    ibsim__end "$osm_pg"
    osm_pg=
    ibsim__end "$ibsim_pg"
    ibsim_pg=
}

# the harness's exit hook; a script with its own e2e_cleanup calls ibsim_stop there
e2e_cleanup() { ibsim_stop; }
# a signal ends the script through its exit trap, so the daemons go with it
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
