/* SPDX-License-Identifier: MIT */
/* `netfab smd`: the multicast group manager daemon. Builds the fabric, computes its distances,
 * replays the journal, then serves SA MADs on a loopback UDP port until SIGTERM or SIGINT;
 * SIGHUP writes the live forwarding tables and the group table. */
#define _GNU_SOURCE
#include "cmd.h"
#include "netfab/gen.h"
#include "netfab/hops.h"
#include "netfab/smd.h"
#include "util/afile.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void smd_usage(FILE *out) {
    fprintf(
        out,
        "usage: netfab smd --topo SPEC --listen ADDR:PORT [--keys FILE] [--engine NAME]\n"
        "                  [--state DIR [--repair-journal]] [--join-timeout MS]\n"
        "                  [--leave-timeout MS] [--recompute-each-join] [--max-groups N]\n"
        "                  [--max-pending N] [--max-members N] [--dump PREFIX]\n"
        "                  [--port-file FILE] [--threads N]\n\n"
        "Serves multicast joins, leaves and state queries (InfiniBand SA MADs, one per UDP\n"
        "datagram; docs/protocol.md). A group is routed once, when its MemberCount-th port\n"
        "has joined; leaves never recompute; a group whose joins or leaves are not all in\n"
        "before the timeout is destroyed.\n\n"
        "options:\n"
        "  --listen ADDR:PORT      IPv4 address and UDP port (0: any free port); without\n"
        "                          --keys only a loopback address (127.0.0.0/8)\n"
        "  --keys FILE             'manager KEY' and 'port GUID KEY' lines: a request carries\n"
        "                          the key of the port it acts for (or the manager's) in its\n"
        "                          SM_Key; others are DENIED; GetTable and dumps need the\n"
        "                          manager's. The file must be mode 600. Without it every\n"
        "                          local client is trusted\n"
        "  --engine NAME           multicast engine (default fulb; fulb+ cannot route live)\n"
        "  --state DIR             journal directory: every event is on disk before it is\n"
        "                          acknowledged, and a restart resumes from it; a journal\n"
        "                          damaged before its end is refused, untouched\n"
        "  --repair-journal        salvage a damaged journal instead: keep what can be read\n"
        "                          (the damaged file stays beside it) and say what was lost\n"
        "  --join-timeout MS       from a group's first join to Ready (default 10000)\n"
        "  --leave-timeout MS      from a group's first leave to its last (default 10000)\n"
        "  --recompute-each-join   the old InfiniBand way: route again on every join and leave\n"
        "  --max-groups N          groups one port may have created and not yet seen\n"
        "                          destroyed (default 1024); more are NO_RESOURCES\n"
        "  --max-pending N         ... of them still collecting their joins (default 256)\n"
        "  --max-members N         memberships of all groups together (default 64 per\n"
        "                          endpoint, at least 1048576): bounds memory and journal\n"
        "  --dump PREFIX           SIGHUP and dump requests write PREFIX.mcfdbs (OpenSM's\n"
        "                          layout) and PREFIX.groups (default DIR/smd or ./netfab-smd)\n"
        "  --port-file FILE        write the bound port to FILE once listening\n\n"
        "signals: SIGTERM, SIGINT stop (the journal is synced); SIGHUP dumps.\n\n"
        "example:\n"
        "  netfab smd --topo torus:30x20x20,c=2 --listen 127.0.0.1:4791 --state /var/lib/smd\n");
}

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

/* A 32-bit option from 1 to max through the one integer parser. */
static int u32_arg(const char *opt, const char *s, uint32_t max, uint32_t *out) {
    uint64_t v;
    if (nf_app_u64(opt, s, 1, max, &v)) return -1;
    *out = (uint32_t)v;
    return 0;
}

int nf_cmd_smd(int argc, char **argv) {
    enum {
        O_TOPO = 256,
        O_LISTEN,
        O_ENGINE,
        O_STATE,
        O_JT,
        O_LT,
        O_RECOMP,
        O_DUMP,
        O_PORTF,
        O_THR,
        O_KEYS,
        O_REPAIR,
        O_MAXG,
        O_MAXP,
        O_MAXM
    };
    static const struct option longopts[] = {{"topo", required_argument, NULL, O_TOPO},
                                             {"listen", required_argument, NULL, O_LISTEN},
                                             {"engine", required_argument, NULL, O_ENGINE},
                                             {"state", required_argument, NULL, O_STATE},
                                             {"join-timeout", required_argument, NULL, O_JT},
                                             {"leave-timeout", required_argument, NULL, O_LT},
                                             {"recompute-each-join", no_argument, NULL, O_RECOMP},
                                             {"dump", required_argument, NULL, O_DUMP},
                                             {"port-file", required_argument, NULL, O_PORTF},
                                             {"threads", required_argument, NULL, O_THR},
                                             {"keys", required_argument, NULL, O_KEYS},
                                             {"repair-journal", no_argument, NULL, O_REPAIR},
                                             {"max-groups", required_argument, NULL, O_MAXG},
                                             {"max-pending", required_argument, NULL, O_MAXP},
                                             {"max-members", required_argument, NULL, O_MAXM},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *topo = NULL, *engine = "fulb", *port_file = NULL;
    int threads = 0;
    nf_smd_opts so = {.wake_fd = -1, .log = log_line};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case O_TOPO: topo = optarg; break;
        case O_LISTEN: so.listen = optarg; break;
        case O_ENGINE: engine = optarg; break;
        case O_STATE: so.state_dir = optarg; break;
        case O_JT:
            if (u32_arg("--join-timeout (milliseconds)", optarg, 86400000,
                        &so.mcgm.join_timeout_ms))
                return NF_EXIT_USAGE;
            break;
        case O_LT:
            if (u32_arg("--leave-timeout (milliseconds)", optarg, 86400000,
                        &so.mcgm.leave_timeout_ms))
                return NF_EXIT_USAGE;
            break;
        case O_RECOMP: so.mcgm.recompute_each_join = true; break;
        case O_KEYS: so.keys_file = optarg; break;
        case O_REPAIR: so.repair_journal = true; break;
        case O_MAXG:
            if (u32_arg("--max-groups", optarg, 16383, &so.mcgm.max_groups_per_owner))
                return NF_EXIT_USAGE;
            break;
        case O_MAXP:
            if (u32_arg("--max-pending", optarg, 16383, &so.mcgm.max_pending_per_owner))
                return NF_EXIT_USAGE;
            break;
        case O_MAXM:
            if (u32_arg("--max-members", optarg, UINT32_MAX, &so.mcgm.max_members))
                return NF_EXIT_USAGE;
            break;
        case O_DUMP: so.dump_prefix = optarg; break;
        case O_PORTF: port_file = optarg; break;
        case O_THR:
            if (nf_app_threads(optarg, &threads)) return NF_EXIT_USAGE;
            break;
        case 'h': smd_usage(stdout); return NF_EXIT_OK;
        default:
            fprintf(stderr, "netfab smd: unknown or incomplete option '%s'\n", argv[optind - 1]);
            smd_usage(stderr);
            return NF_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "netfab smd: unexpected argument '%s'\n", argv[optind]);
        return NF_EXIT_USAGE;
    }
    if (so.repair_journal && !so.state_dir) {
        fprintf(stderr,
                "netfab smd: --repair-journal repairs the journal of --state DIR: give it\n");
        return NF_EXIT_USAGE;
    }
    if (!topo || !so.listen) {
        fprintf(stderr, "netfab smd: --topo and --listen are required\n");
        smd_usage(stderr);
        return NF_EXIT_USAGE;
    }
    if (!(so.mcgm.engine = nf_mcast_engine_find(engine))) {
        fprintf(stderr, "netfab smd: unknown engine '%s'\n", engine);
        return NF_EXIT_USAGE;
    }
    if (strcmp(engine, "fulb+") == 0) {
        fprintf(stderr, "netfab smd: fulb+ refines a whole batch of groups after the fact; a live "
                        "manager routes one group at a time: use fulb\n");
        return NF_EXIT_USAGE;
    }
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
        int ex = nf_app_report(rc, &d);
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
