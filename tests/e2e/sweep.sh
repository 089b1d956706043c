#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `netfab sweep`: usage errors, the CSV and JSON layouts, every cell equal
# to the single command (netfab sim, netfab mcast) with the same parameters, and results that do
# not depend on the number of threads or, when built with MPI, of ranks (mpirun --oversubscribe
# -np 4 on any machine).
# Usage: sweep.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
nf=$1
. "$2/tests/e2e/lib/harness.sh"
sim_opts="--cycles 400 --warmup 100"

expect 0 "$nf" sweep --help;    has out "This build: with"
has_line out "  netfab sweep --topo dragonfly:a=4,p=2,h=2 --routing dfmin,ugal-l --traffic uniform,worst"
expect 2 "$nf" sweep;           has err "topo is required"
expect 2 "$nf" sweep --topo torus:4x4,c=1; has err "say what to sweep"
expect 2 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic uniform; has err "needs --routing, --traffic and --loads"
expect 2 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic uniform --loads 0.1 --engine fulb; has err "not both"
expect 2 "$nf" sweep --topo torus:4x4,c=1 --groups grid2d:4x4 --engine fulb --vcs 3; has err "simulator options belong"
expect 2 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic uniform --loads 0.1 --verify; has err "belong to a multicast grid"
expect 2 "$nf" sweep --topo torus:4x4,c=1 --routing nosuch --traffic uniform --loads 0.1; has err "^netfab sweep: unknown routing 'nosuch' (known: minhop, .*; or lft:FILE)$"
expect 2 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic nosuch --loads 0.1; has err "^netfab sweep: unknown traffic 'nosuch' (known: uniform, .*bs-shuffle)$"
expect 2 "$nf" sweep --topo torus:4x4,c=1 --groups grid2d:4x4 --engine nosuch; has err "^netfab sweep: unknown engine 'nosuch' (known: minihop, .*fulb+)$"
expect 2 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic uniform --loads 0.1,,0.2
has_line err "netfab sweep: --loads wants a comma-separated list, no item empty, not '0.1,,0.2'"
expect 2 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic uniform --loads 1.5; has err "from 0 to 1, not '1.5'"
expect 2 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic uniform --loads 0.5:0.1:0.1; has err "range end"
expect 2 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic uniform --loads 0.1:0.5; has err "netfab sweep: --loads wants A:B:STEP, not '0.1:0.5'"
expect 2 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic uniform --loads 0.1 --seeds -1; has err "netfab sweep: --seeds wants a whole number from 0 to 18446744073709551615, not '-1'"
expect 2 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic uniform --loads 0.1 --bogus; has_line err "netfab sweep: unknown option '--bogus' (netfab sweep --help lists them)"
expect 2 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic uniform --loads 0.1 extra; has err "unexpected argument 'extra'"
expect 2 "$nf" sweep --topo nosuch:1 --routing dor --traffic uniform --loads 0.1; has err "unknown topology"
expect 1 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic uniform --loads 0.1 --out /nonexistent/x.csv; has err "cannot write /nonexistent/x.csv"
# a cell that cannot run says which, with its parameters
expect 1 "$nf" sweep --topo fattree:k=4 --routing dor --traffic uniform --loads 0.2
has err "cell 0 (topo fattree:k=4, routing dor, traffic uniform, seed 0, load 0.2): dor routes tori"
expect 1 "$nf" sweep --topo torus:4x4,c=1 --groups grid2d:40x40 --engine fulb; has err "needs 1600 ranks"

# the CSV: a header, then the cells in grid order (topo, routing, traffic, seed, load); a topo
# spec with commas is quoted; 2 routings x 2 traffics x 2 seeds x 3 loads (a list and a range)
expect 0 "$nf" sweep --topo torus:4x4,c=1 --routing dor,minhop --traffic uniform,tornado \
    --loads 0.1,0.2:0.3:0.1 --seeds 1,2 $sim_opts --no-times
cp "$tmp/out" "$tmp/grid.csv"
line "$tmp/grid.csv" 1 "topo,routing,traffic,seed,load,offered,accepted,lat_mean,lat_p99,msg_lat_mean,net_lat_mean,hops_mean,minimal_frac,link_util_mean,link_util_max,saturated,deadlock,packets,cycles,flit_hops,unroutable,failed_links,lost_frac,dropped_pkts"
[ "$(wc -l <"$tmp/grid.csv")" = 25 ] && ok || bad "24 cells: $(wc -l <"$tmp/grid.csv") lines"
line_re "$tmp/grid.csv" 2 '^"torus:4x4,c=1",dor,uniform,1,0.1,'
line_re "$tmp/grid.csv" 4 '^"torus:4x4,c=1",dor,uniform,1,0.3,'
line_re "$tmp/grid.csv" 5 '^"torus:4x4,c=1",dor,uniform,2,0.1,'
line_re "$tmp/grid.csv" 8 '^"torus:4x4,c=1",dor,tornado,1,0.1,'
line_re "$tmp/grid.csv" 25 '^"torus:4x4,c=1",minhop,tornado,2,0.3,'
# the same grid on 1 thread (one cell at a time, the simulator's own threads) and on 3 (a cell
# per thread): the same bytes
expect 0 "$nf" sweep --topo torus:4x4,c=1 --routing dor,minhop --traffic uniform,tornado \
    --loads 0.1,0.2:0.3:0.1 --seeds 1,2 $sim_opts --no-times --threads 1 --out "$tmp/t1.csv"
[ ! -s "$tmp/out" ] && ok || bad "--out leaves stdout empty"
cmp -s "$tmp/grid.csv" "$tmp/t1.csv" && ok || bad "1 thread differs"
expect 0 "$nf" sweep --topo torus:4x4,c=1 --routing dor,minhop --traffic uniform,tornado \
    --loads 0.1,0.2:0.3:0.1 --seeds 1,2 $sim_opts --no-times --threads 3
cmp -s "$tmp/grid.csv" "$tmp/out" && ok || bad "3 threads differ"
# timings are there unless --no-times
expect 0 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic uniform --loads 0.1 $sim_opts
has out ",wall_s,"

# a cell is what netfab sim prints for the same parameters (less wall_s; plus the parameters)
keys_of() { grep -v -e '"wall_s"' -e '"topo"' -e '"routing"' -e '"traffic"' -e '"seed"' -e '^\[' -e '^\]' "$1" | sed 's/,$//'; }
for cell in "dor uniform 1 0.3" "minhop tornado 2 0.2"; do
    set -- $cell
    expect 0 "$nf" sweep --topo torus:4x4,c=1 --routing "$1" --traffic "$2" --seeds "$3" --loads "$4" $sim_opts --json
    keys_of "$tmp/out" >"$tmp/a"
    expect 0 "$nf" sim --topo torus:4x4,c=1 --routing "$1" --traffic "$2" --seed "$3" --load "$4" $sim_opts --json
    keys_of "$tmp/out" >"$tmp/b"
    [ "$(wc -l <"$tmp/b")" -ge 20 ] && cmp -s "$tmp/a" "$tmp/b" && ok || bad "sweep cell $cell differs from netfab sim"
done

# the multicast grid: topo x groups x seed x engine, each row what netfab mcast prints
expect 0 "$nf" sweep --topo fattree:k=4 --topo "torus:3x3x3,c=1" --groups grid2d:4x4 \
    --groups random:n=6,size=5 --engine minihop,fulb --seeds 3,4 --json --no-times
cp "$tmp/out" "$tmp/mc.json"
[ "$(grep -c '"engine":' "$tmp/mc.json")" = 16 ] && ok || bad "16 multicast cells"
for k in groups memberships max_efi mean_efi max_height lower_bound links_used efi_hist seed; do
    has out "\"$k\":"
done
grep -q '"route_s"' "$tmp/mc.json" && bad "--no-times leaves route_s" || ok
mkeys() { grep -v -e '_s"' -e '"seed"' -e '"peak_rss_kib"' -e '^\[' -e '^\]' "$1" | sed 's/,$//'; }
expect 0 "$nf" sweep --topo "torus:3x3x3,c=1" --groups random:n=6,size=5 --engine fulb --seeds 4 --json
mkeys "$tmp/out" >"$tmp/a"
expect 0 "$nf" mcast --topo "torus:3x3x3,c=1" --groups random:n=6,size=5 --engine fulb --seed 4 --json
mkeys "$tmp/out" >"$tmp/b"
[ "$(wc -l <"$tmp/b")" -ge 15 ] && cmp -s "$tmp/a" "$tmp/b" && ok || bad "multicast cell differs from netfab mcast"
# the seed changes random groups: the two seeds' rows are not all alike
expect 0 "$nf" sweep --topo fattree:k=4 --groups random:n=6,size=5 --engine fulb --seeds 3,4 --no-times
# (the rows less their last column, the seed itself)
[ "$(sed -n 2p "$tmp/out" | sed 's/,[0-9]*$//')" != "$(sed -n 3p "$tmp/out" | sed 's/,[0-9]*$//')" ] && ok || bad "seeds 3 and 4 gave the same groups"
line_re "$tmp/out" 1 ',seed$'

# MPI: the same bytes from 1, 2 and 4 ranks (4 ranks, 2 cells: two ranks have none); a cell
# failing on one rank fails the job with its message, printed once
if "$nf" sweep --help | grep -q "with Open MPI" && command -v mpirun >/dev/null 2>&1; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    mpi="mpirun --oversubscribe"
    for np in 2 4; do
        expect 0 $mpi -np $np "$nf" sweep --topo torus:4x4,c=1 --routing dor,minhop \
            --traffic uniform,tornado --loads 0.1,0.2:0.3:0.1 --seeds 1,2 $sim_opts --no-times
        cmp -s "$tmp/grid.csv" "$tmp/out" && ok || bad "$np ranks differ from one process"
    done
    expect 0 $mpi -np 3 "$nf" sweep --topo fattree:k=4 --topo "torus:3x3x3,c=1" --groups grid2d:4x4 \
        --groups random:n=6,size=5 --engine minihop,fulb --seeds 3,4 --json --no-times
    cmp -s "$tmp/mc.json" "$tmp/out" && ok || bad "3 ranks differ (multicast grid)"
    expect 0 $mpi -np 4 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic uniform --loads 0.1,0.2 $sim_opts --no-times
    [ "$(wc -l <"$tmp/out")" = 3 ] && ok || bad "4 ranks, 2 cells: $(wc -l <"$tmp/out") lines"
    expect 0 $mpi -np 2 "$nf" sweep --topo torus:4x4,c=1 --routing dor --traffic uniform --loads 0.1 $sim_opts --out "$tmp/np.csv"
    [ "$(wc -l <"$tmp/np.csv")" = 2 ] && ok || bad "--out under mpirun"
    $mpi -np 4 "$nf" sweep --topo torus:4x4,c=1 --topo fattree:k=4 --routing dor --traffic uniform \
        --loads 0.1,0.2 $sim_opts >"$tmp/out" 2>"$tmp/err"
    [ $? != 0 ] && ok || bad "a failed cell under mpirun exits 0"
    [ "$(grep -c "dor routes tori" "$tmp/err")" = 2 ] && ok || bad "each failed cell said once: $(grep -c "dor routes tori" "$tmp/err")"
    [ ! -s "$tmp/out" ] && ok || bad "no results after a failure"
    $mpi -np 2 "$nf" sweep --topo torus:4x4,c=1 --routing nosuch --traffic uniform --loads 0.1 >"$tmp/out" 2>"$tmp/err"
    [ "$(grep -c "unknown routing" "$tmp/err")" = 1 ] && ok || bad "a usage error said once under mpirun"
else
    # built without MPI: a launcher's environment is refused rather than run N times over
    expect 2 env OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 "$nf" sweep --topo torus:4x4,c=1 \
        --routing dor --traffic uniform --loads 0.1
    has err "built without MPI"
    skip "the rank checks need a build with MPI and mpirun"
fi
finish
