/* SPDX-License-Identifier: MIT */
/* `netfab mcast-join` and `netfab mcast-leave`: one request to the group manager, with retries,
 * and its answer; also the option parsing the client commands share (client.h). */
#define _GNU_SOURCE
#include "client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --mgid, --port-gid: a GID as nf_gid_parse reads it */
static int gid_arg(const char *cmd, const nf_opt *o, const char *arg) {
    char opt[32];
    snprintf(opt, sizeof opt, "--%s", o->name);
    return nf_gid_parse(arg, o->dst) ? nf_opt_bad(cmd, opt, "a GID like ff12:401b::1", arg)
                                     : NF_EXIT_OK;
}

/* --port-guid: a port GUID (the one integer parser), as a GID with the default prefix */
static int guid_arg(const char *cmd, const nf_opt *o, const char *arg) {
    uint64_t v;
    if (nf_app_u64(arg, 0, UINT64_MAX, &v))
        return nf_opt_bad(cmd, "--port-guid", "a GUID, a whole number from 0 to 0xffffffffffffffff",
                          arg);
    *(nf_gid *)o->dst = nf_gid_make(NF_GID_DEFAULT_PREFIX, v);
    return NF_EXIT_OK;
}

size_t nf_client_opts(nf_client_args *a, unsigned which, nf_opt *rows) {
    memset(a, 0, sizeof *a);
    size_t n = 0;
    rows[n++] = (nf_opt){.name = "server",
                         .arg = "ADDR:PORT",
                         .kind = NF_OPT_STR,
                         NF_OPT_TO(a->server),
                         .help = "the group manager (netfab smd --listen)"};
    if (which & NF_CLI_MGID)
        rows[n++] = (nf_opt){.name = "mgid",
                             .arg = "GID",
                             .kind = NF_OPT_CUSTOM,
                             NF_OPT_TO(a->mgid),
                             .parse = gid_arg,
                             .given = &a->have_mgid,
                             .help = which & NF_CLI_STATE
                                         ? "the group's state, MLID, MemberCount, joined and "
                                           "left counts"
                                         : "the group's multicast GID"};
    if (which & NF_CLI_PORT) {
        rows[n++] = (nf_opt){.name = "port-guid",
                             .arg = "G",
                             .kind = NF_OPT_CUSTOM,
                             NF_OPT_TO(a->port_gid),
                             .parse = guid_arg,
                             .given = &a->have_port,
                             .help = "the member port's GUID (0x... or decimal)"};
        rows[n++] = (nf_opt){.name = "port-gid",
                             .arg = "GID",
                             .kind = NF_OPT_CUSTOM,
                             NF_OPT_TO(a->port_gid),
                             .parse = gid_arg,
                             .given = &a->have_port,
                             .help = "or its whole GID"};
    }
    if (which & NF_CLI_COUNT)
        rows[n++] = (nf_opt){.name = "member-count",
                             .arg = "N",
                             .kind = NF_OPT_UINT,
                             NF_OPT_TO(a->member_count),
                             .lo = 1,
                             .hi = NF_MEMBER_COUNT_MAX,
                             .help = "the group's size: it is routed once N ports have joined"};
    if (which & NF_CLI_STATE) {
        rows[n++] = (nf_opt){.name = "all",
                             .kind = NF_OPT_FLAG,
                             NF_OPT_TO(a->all),
                             .help = "every group the manager knows (destroyed ones while they "
                                     "linger); the answer comes N datagrams at a time as they "
                                     "are acknowledged (RMPP; --window)"};
        rows[n++] = (nf_opt){.name = "dump",
                             .kind = NF_OPT_FLAG,
                             NF_OPT_TO(a->dump),
                             .help = "ask the manager to write its live forwarding tables and "
                                     "group table"};
        rows[n++] = (nf_opt){.name = "window",
                             .arg = "N",
                             .kind = NF_OPT_UINT,
                             NF_OPT_TO(a->o.window),
                             .lo = 1,
                             .hi = 64,
                             .help = "--all: datagrams in flight (default 32)"};
    }
    rows[n++] = (nf_opt){.name = "key",
                         .arg = "KEY",
                         .kind = NF_OPT_SEED,
                         NF_OPT_TO(a->o.sm_key),
                         .help = which & NF_CLI_STATE
                                     ? "the manager's key, for --all and --dump when it runs "
                                       "with --keys"
                                     : "the port's key (or the manager's) when the manager runs "
                                       "with --keys"};
    rows[n++] = (nf_opt){.name = "timeout",
                         .arg = "MS",
                         .kind = NF_OPT_UINT,
                         NF_OPT_TO(a->o.timeout_ms),
                         .lo = 1,
                         .hi = 600000,
                         .help = "how long to wait for an answer before sending the request "
                                 "again (default 200)"};
    rows[n++] = (nf_opt){.name = "retries",
                         .arg = "N",
                         .kind = NF_OPT_UINT,
                         NF_OPT_TO(a->o.retries),
                         .lo = 0,
                         .hi = 1000,
                         .given = &a->retries_set,
                         .help = "send it again at most N times (default 10)"};
    rows[n++] = (nf_opt){.name = "json",
                         .kind = NF_OPT_FLAG,
                         NF_OPT_TO(a->json),
                         .help = "the answer as one JSON object"};
    return n;
}

int nf_client_check(nf_client_args *a, const char *cmd) {
    if (!a->server) return nf_opt_usage(cmd, "--server ADDR:PORT is required");
    if (a->o.timeout_ms && !a->retries_set) a->o.retries = 10;
    return NF_EXIT_OK;
}

int nf_client_failed(const char *cmd, const char *server, int rc) {
    if (rc == NF_EREFUSED)
        fprintf(stderr,
                "netfab %s: %s: connection refused: no netfab smd listens on that port (one "
                "starts with `netfab smd --topo SPEC --listen %s`)\n",
                cmd, server, server);
    else if (rc == NF_ETIMEDOUT)
        fprintf(stderr, "netfab %s: %s: no answer (timed out after every retry)\n", cmd, server);
    else
        fprintf(stderr, "netfab %s: %s: %s\n", cmd, server, nf_strerror(rc));
    return NF_EXIT_FAIL;
}

const char *nf_client_status(uint16_t st) {
    switch (st) {
    case NF_MAD_STATUS_OK: return "ok";
    case NF_MAD_STATUS_BAD_VERSION: return "bad version or class";
    case NF_MAD_STATUS_BAD_METHOD: return "method not supported";
    case NF_MAD_STATUS_BAD_ATTR: return "attribute not supported";
    case NF_MAD_STATUS_INVALID_FIELD: return "invalid field";
    case NF_SA_STATUS_NO_RESOURCES:
        return "no resources (no multicast LID left, a per-port limit, the journal out of space, "
               "or busy)";
    case NF_SA_STATUS_REQ_INVALID: return "invalid request (MemberCount, JoinState or member)";
    case NF_SA_STATUS_NO_RECORDS: return "no such group";
    case NF_SA_STATUS_INVALID_GID: return "unknown port, or an MGID that is not multicast";
    case NF_SA_STATUS_DENIED:
        return "denied (a wrong key, a privileged request, a group being destroyed, or a port "
               "that has left it)";
    default: return "unknown status";
    }
}

static int member(int argc, char **argv, bool join) {
    const char *cmd = join ? "mcast-join" : "mcast-leave";
    nf_client_args a;
    nf_opt rows[NF_CLI_MAX_ROWS];
    size_t n = nf_client_opts(&a, NF_CLI_MGID | NF_CLI_PORT | (join ? NF_CLI_COUNT : 0), rows);
    const nf_cmd_spec join_spec = {
        .name = "mcast-join",
        .synopsis = "netfab mcast-join --server ADDR:PORT --mgid GID (--port-guid G | --port-gid "
                    "GID)\n"
                    "                         --member-count N [--key KEY] [--timeout MS] "
                    "[--retries N]\n"
                    "                         [--json]\n",
        .description = "Sends SubnAdmSet(MCMemberRecord) with MemberCount N (the group's size) "
                       "and prints\n"
                       "the answer. Exit status 0 when the manager accepted the join.\n",
        .group = {{"options", rows, n}},
        .examples = "  netfab mcast-join --server 127.0.0.1:4791 --mgid ff12:401b::7 \\\n"
                    "      --port-guid 0x0002c90300000011 --member-count 4\n"};
    const nf_cmd_spec leave_spec = {
        .name = "mcast-leave",
        .synopsis = "netfab mcast-leave --server ADDR:PORT --mgid GID (--port-guid G | "
                    "--port-gid GID)\n"
                    "                          [--key KEY] [--timeout MS] [--retries N] "
                    "[--json]\n",
        .description = "Sends SubnAdmDelete(MCMemberRecord). Exit status 0 when the manager "
                       "accepted it.\n",
        .group = {{"options", rows, n}},
        .examples = "  netfab mcast-leave --server 127.0.0.1:4791 --mgid ff12:401b::7 \\\n"
                    "      --port-guid 0x0002c90300000011\n"};
    int argi, ex = nf_opt_parse(join ? &join_spec : &leave_spec, argc, argv, &argi);
    if (!ex) ex = nf_client_check(&a, cmd);
    if (ex) return ex == NF_OPT_HELP ? NF_EXIT_OK : ex;
    const char *need[] = {"--mgid GID", "--port-guid G (or --port-gid GID)", "--member-count N"};
    bool have[] = {a.have_mgid, a.have_port, !join || a.member_count};
    if ((ex = nf_app_require(cmd, 3, need, have))) return ex;
    nf_smc *c;
    nf_diag d = {{0}, 0, {0}};
    int rc = nf_smc_open(a.server, &c, &d);
    if (rc) return nf_app_report(rc, &d);
    uint16_t st = 0;
    nf_mcmember_rec r;
    rc = join ? nf_smc_join(c, &a.o, &a.mgid, &a.port_gid, a.member_count, &st, &r)
              : nf_smc_leave(c, &a.o, &a.mgid, &a.port_gid, &st, &r);
    nf_smc_close(c);
    if (rc) return nf_client_failed(cmd, a.server, rc);
    char mg[40];
    nf_gid_format(&a.mgid, mg);
    if (a.json)
        printf("{\"status\": %u, \"status_text\": \"%s\", \"mgid\": \"%s\", \"mlid\": %u, "
               "\"member_count\": %u}\n",
               st, nf_client_status(st), mg, r.mlid, r.member_count);
    else
        printf("%s %s: %s (status 0x%04x), MLID 0x%04X, MemberCount %u\n", join ? "join" : "leave",
               mg, nf_client_status(st), st, r.mlid, r.member_count);
    return st ? NF_EXIT_FAIL : NF_EXIT_OK;
}

int nf_cmd_mcast_join(int argc, char **argv) { return member(argc, argv, true); }
int nf_cmd_mcast_leave(int argc, char **argv) { return member(argc, argv, false); }
