/* SPDX-License-Identifier: MIT */
/* `netfab smd`: the multicast group manager daemon. Builds the fabric, computes its distances,
 * replays the journal, then serves SA MADs on a loopback UDP port until SIGTERM or SIGINT;
 * SIGHUP writes the live forwarding tables and the group table. */
#define _GNU_SOURCE
#include "cmd.h"
#include "opts.h"
#include "netfab/gen.h"
#include "netfab/hops.h"
#include "netfab/smd.h"
#include "util/afile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int wake_pipe[2] = {-1, -1};

static void on_signal(int sig) {
    char c = sig == SIGHUP ? 'H' : 'T';
    int saved = errno;
    ssize_t n = write(wake_pipe[1], &c, 1);
    (void)n;
    errno = saved;
}

static void log_line(void *ud, const char *line) {
    (void)ud;
    fprintf(stderr, "netfab smd: %s\n", line);
}

int nf_cmd_smd(int argc, char **argv) {
    const char *topo = NULL, *engine = "fulb", *port_file = NULL;
    int threads = 0;
    nf_smd_opts so = {.wake_fd = -1, .log = log_line};
    const nf_opt rows[] = {
        {NF_OPT_TOPO(topo)},
        {.name = "listen",
         .arg = "ADDR:PORT",
         .kind = NF_OPT_STR,
         NF_OPT_TO(so.listen),
         .help = "IPv4 address and UDP port (0: any free port); without --keys only a loopback "
                 "address (127.0.0.0/8)"},
        {.name = "keys",
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(so.keys_file),
         .help = "'manager KEY' and 'port GUID KEY' lines: a request carries the key of the port "
                 "it acts for (or the manager's) in its SM_Key; others are DENIED; GetTable and "
                 "dumps need the manager's. The file must be mode 600. Without it every local "
                 "client is trusted"},
        {.name = "engine",
         .arg = "NAME",
         .kind = NF_OPT_STR,
         NF_OPT_TO(engine),
         .help = "multicast engine (default fulb; fulb+ cannot route live)"},
        {.name = "state",
         .arg = "DIR",
         .kind = NF_OPT_STR,
         NF_OPT_TO(so.state_dir),
         .help = "journal directory: every event is on disk before it is acknowledged, and a "
                 "restart resumes from it; a journal damaged before its end is refused, "
                 "untouched"},
        {.name = "repair-journal",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(so.repair_journal),
         .help = "salvage a damaged journal instead: keep what can be read (the damaged file "
                 "stays beside it) and say what was lost"},
        {.name = "join-timeout",
         .arg = "MS",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(so.mcgm.join_timeout_ms),
         .lo = 1,
         .hi = 86400000,
         .help = "milliseconds from a group's first join to Ready (default 10000)"},
        {.name = "leave-timeout",
         .arg = "MS",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(so.mcgm.leave_timeout_ms),
         .lo = 1,
         .hi = 86400000,
         .help = "milliseconds from a group's first leave to its last (default 10000)"},
        {.name = "recompute-each-join",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(so.mcgm.recompute_each_join),
         .help = "the old InfiniBand way: route again on every join and leave"},
        {.name = "max-groups",
         .arg = "N",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(so.mcgm.max_groups_per_owner),
         .lo = 1,
         .hi = 16383,
         .help = "groups one port may have created and not yet seen destroyed (default 1024); "
                 "more are NO_RESOURCES"},
        {.name = "max-pending",
         .arg = "N",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(so.mcgm.max_pending_per_owner),
         .lo = 1,
         .hi = 16383,
         .help = "... of them still collecting their joins (default 256)"},
        {.name = "max-members",
         .arg = "N",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(so.mcgm.max_members),
         .lo = 1,
         .hi = UINT32_MAX,
         .help = "memberships of all groups together (default 64 per endpoint, at least "
                 "1048576): bounds memory and journal"},
        {.name = "dump",
         .arg = "PREFIX",
         .kind = NF_OPT_STR,
         NF_OPT_TO(so.dump_prefix),
         .help = "SIGHUP and dump requests write PREFIX.mcfdbs (OpenSM's layout) and "
                 "PREFIX.groups (default DIR/smd or ./netfab-smd)"},
        {.name = "port-file",
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(port_file),
         .help = "write the bound port to FILE once listening"},
        {NF_OPT_THREADS(threads, "threads for the distance computation (default: all cores)")},
    };
    const nf_cmd_spec spec = {
        .name = "smd",
        .synopsis = "netfab smd --topo SPEC --listen ADDR:PORT [--keys FILE] [--engine NAME]\n"
                    "                  [--state DIR [--repair-journal]] [--join-timeout MS]\n"
                    "                  [--leave-timeout MS] [--recompute-each-join] "
                    "[--max-groups N]\n"
                    "                  [--max-pending N] [--max-members N] [--dump PREFIX]\n"
                    "                  [--port-file FILE] [--threads N]\n",
        .description =
            "Serves multicast joins, leaves and state queries (InfiniBand SA MADs, one per UDP\n"
            "datagram; docs/protocol.md). A group is routed once, when its MemberCount-th port\n"
            "has joined; leaves never recompute; a group whose joins or leaves are not all in\n"
            "before the timeout is destroyed.\n",
        .group = {{"options", rows, sizeof rows / sizeof rows[0]}},
        .notes = "signals: SIGTERM, SIGINT stop (the journal is synced); SIGHUP dumps.\n",
        .examples = "  netfab smd --topo torus:30x20x20,c=2 --listen 127.0.0.1:4791 --state "
                    "/var/lib/smd\n"};
    int argi, ex = nf_opt_parse(&spec, argc, argv, &argi);
    if (ex) return ex == NF_OPT_HELP ? NF_EXIT_OK : ex;
    if (so.repair_journal && !so.state_dir)
        return nf_opt_usage("smd", "--repair-journal repairs the journal of --state DIR: give it");
    const char *need[] = {"--topo SPEC", "--listen ADDR:PORT"};
    bool have[] = {topo, so.listen};
    if ((ex = nf_app_require("smd", 2, need, have))) return ex;
    if (!(so.mcgm.engine = nf_mcast_engine_find(engine))) {
        char known[512];
        return nf_opt_usage("smd", "unknown engine '%s' (%s)", engine,
                            nf_app_known(NF_APP_ENGINES, known, sizeof known));
    }
    if (strcmp(engine, "fulb+") == 0)
        return nf_opt_usage("smd", "fulb+ refines a whole batch of groups after the fact; a live "
                                   "manager routes one group at a time: use fulb");
    nf_diag d = {{0}, 0, {0}};
    nf_fabric *f = NULL;
    nf_hops *h = NULL;
    nf_smd *s = NULL;
    int rc = nf_app_fabric(topo, threads, &f, &h);
    if (rc) return rc;
    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK)) {
        perror("netfab smd: pipe");
        rc = NF_EIO;
        goto out;
    }
    so.wake_fd = wake_pipe[0];
    if ((rc = nf_smd_new(f, h, &so, &s, &d))) {
        ex = nf_app_report(rc, &d);
        nf_hops_free(h);
        nf_fabric_free(f);
        close(wake_pipe[0]);
        close(wake_pipe[1]);
        return rc == NF_ELOCKED ? NF_EXIT_FAIL : ex;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    nf_smd_stats st;
    nf_smd_get_stats(s, &st);
    fprintf(stderr,
            "netfab smd: %s: %u switches, %u endpoints; engine %s; listening on UDP port %u", topo,
            f->n_switches, f->n_cas, engine, nf_smd_port(s));
    if (so.state_dir)
        fprintf(stderr, "; journal %s (%llu records replayed, %llu torn bytes dropped)",
                so.state_dir, (unsigned long long)st.replayed, (unsigned long long)st.torn_bytes);
    fprintf(stderr,
            so.keys_file ? "; keys from %s\n"
                         : "; no --keys: every local client may act for any port\n",
            so.keys_file);
    if (port_file) { /* whole or not at all: a script waiting for it never reads half */
        nf__afile af;
        int w = nf__afile_open(&af, port_file);
        if (!w) {
            fprintf(af.fp, "%u\n", nf_smd_port(s));
            w = nf__afile_commit(&af); /* a failed write shows here (ferror) */
        }
        if (w) {
            fprintf(stderr, "netfab smd: cannot write %s: %s\n", port_file, strerror(errno));
            rc = NF_EIO;
            goto out;
        }
    }
    rc = nf_smd_run(s, &d);
    nf_smd_get_stats(s, &st);
    nf_mcgm_counters mc;
    nf_mcgm_get_counters(nf_smd_manager(s), &mc);
    fprintf(stderr,
            "netfab smd: stopped: %llu datagrams, %llu answered (%llu with an error status, "
            "%llu retransmissions), %llu dropped; %llu joins, %llu leaves, %llu routes, %llu "
            "groups Ready, %llu destroyed; %llu journal syncs, %llu compactions\n",
            (unsigned long long)st.datagrams, (unsigned long long)st.answered,
            (unsigned long long)st.errors, (unsigned long long)st.retransmits,
            (unsigned long long)st.dropped, (unsigned long long)mc.joins,
            (unsigned long long)mc.leaves, (unsigned long long)mc.routes,
            (unsigned long long)mc.ready, (unsigned long long)mc.destroyed,
            (unsigned long long)st.journal_syncs, (unsigned long long)st.compactions);
    fprintf(stderr,
            "netfab smd: refused: %llu denied (not the requester's port, or privileged), %llu "
            "reused transaction ids, %llu over a per-port or the members limit, %llu changes while "
            "the journal "
            "had no space; %llu GetTable transfers (%llu segments, %llu expired, %llu busy), "
            "%llu dumps (%llu failed)\n",
            (unsigned long long)st.denied, (unsigned long long)st.tid_reused,
            (unsigned long long)mc.refused_limit, (unsigned long long)st.refused_no_space,
            (unsigned long long)st.transfers, (unsigned long long)st.segments,
            (unsigned long long)st.transfers_expired, (unsigned long long)st.busy,
            (unsigned long long)st.dumps, (unsigned long long)st.dump_failures);
    if (rc) nf_app_report(rc, &d);
out:
    nf_smd_free(s);
    nf_hops_free(h);
    nf_fabric_free(f);
    if (wake_pipe[0] >= 0) close(wake_pipe[0]);
    if (wake_pipe[1] >= 0) close(wake_pipe[1]);
    return rc ? NF_EXIT_FAIL : NF_EXIT_OK;
}
