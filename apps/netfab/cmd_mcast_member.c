/* SPDX-License-Identifier: MIT */
/* `netfab mcast-join` and `netfab mcast-leave`: one request to the group manager, with retries,
 * and its answer; also the option parsing the client commands share (client.h). */
#define _GNU_SOURCE
#include "client.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nf_client_parse(nf_client_args *a, const char *cmd, int argc, char **argv,
                    void (*usage)(FILE *)) {
    enum {
        O_SERVER = 256,
        O_MGID,
        O_PGUID,
        O_PGID,
        O_COUNT,
        O_TIMEOUT,
        O_RETRIES,
        O_JSON,
        O_ALL,
        O_DUMP,
        O_KEY,
        O_WINDOW
    };
    static const struct option longopts[] = {{"server", required_argument, NULL, O_SERVER},
                                             {"mgid", required_argument, NULL, O_MGID},
                                             {"port-guid", required_argument, NULL, O_PGUID},
                                             {"port-gid", required_argument, NULL, O_PGID},
                                             {"member-count", required_argument, NULL, O_COUNT},
                                             {"timeout", required_argument, NULL, O_TIMEOUT},
                                             {"retries", required_argument, NULL, O_RETRIES},
                                             {"json", no_argument, NULL, O_JSON},
                                             {"all", no_argument, NULL, O_ALL},
                                             {"dump", no_argument, NULL, O_DUMP},
                                             {"key", required_argument, NULL, O_KEY},
                                             {"window", required_argument, NULL, O_WINDOW},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    optind = 1;
    opterr = 0;
    int c;
    uint64_t v;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case O_SERVER: a->server = optarg; break;
        case O_MGID:
            if (nf_gid_parse(optarg, &a->mgid)) {
                fprintf(stderr, "netfab %s: --mgid wants a GID like ff12:401b::1, not '%s'\n", cmd,
                        optarg);
                return NF_EXIT_USAGE;
            }
            a->have_mgid = true;
            break;
        case O_PGUID:
            if (nf_app_u64("--port-guid", optarg, 0, UINT64_MAX, &v)) return NF_EXIT_USAGE;
            a->port_gid = nf_gid_make(NF_GID_DEFAULT_PREFIX, v);
            a->have_port = true;
            break;
        case O_PGID:
            if (nf_gid_parse(optarg, &a->port_gid)) {
                fprintf(stderr, "netfab %s: --port-gid wants a GID, not '%s'\n", cmd, optarg);
                return NF_EXIT_USAGE;
            }
            a->have_port = true;
            break;
        case O_COUNT:
            if (nf_app_u64("--member-count", optarg, 0, NF_MEMBER_COUNT_MAX, &v))
                return NF_EXIT_USAGE;
            a->member_count = (uint32_t)v;
            break;
        case O_TIMEOUT:
            if (nf_app_u64("--timeout", optarg, 0, 600000, &v) || v == 0) return NF_EXIT_USAGE;
            a->o.timeout_ms = (uint32_t)v;
            break;
        case O_RETRIES:
            if (nf_app_u64("--retries", optarg, 0, 1000, &v)) return NF_EXIT_USAGE;
            a->o.retries = (uint32_t)v;
            a->retries_set = true;
            break;
        case O_KEY:
            if (nf_app_u64("--key", optarg, 0, UINT64_MAX, &v)) return NF_EXIT_USAGE;
            a->o.sm_key = v;
            break;
        case O_WINDOW:
            if (nf_app_u64("--window", optarg, 0, 64, &v) || v == 0) return NF_EXIT_USAGE;
            a->o.window = (uint32_t)v;
            break;
        case O_JSON: a->json = true; break;
        case O_ALL: a->all = true; break;
        case O_DUMP: a->dump = true; break;
        case 'h': usage(stdout); return NF_EXIT_OK + 100;
        default:
            fprintf(stderr, "netfab %s: unknown or incomplete option '%s'\n", cmd,
                    argv[optind - 1]);
            usage(stderr);
            return NF_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "netfab %s: unexpected argument '%s'\n", cmd, argv[optind]);
        return NF_EXIT_USAGE;
    }
    if (!a->server) {
        fprintf(stderr, "netfab %s: --server ADDR:PORT is required\n", cmd);
        return NF_EXIT_USAGE;
    }
    if (a->o.timeout_ms && !a->retries_set) a->o.retries = 10;
    return NF_EXIT_OK;
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

static void join_usage(FILE *out) {
    fprintf(
        out,
        "usage: netfab mcast-join --server ADDR:PORT --mgid GID (--port-guid G | --port-gid GID)\n"
        "                         --member-count N [--key KEY] [--timeout MS] [--retries N]\n"
        "                         [--json]\n\n"
        "Sends SubnAdmSet(MCMemberRecord) with MemberCount N (the group's size) and prints\n"
        "the answer. Exit status 0 when the manager accepted the join.\n\n"
        "  --key KEY    the port's key (or the manager's) when the manager runs with --keys\n\n"
        "example:\n"
        "  netfab mcast-join --server 127.0.0.1:4791 --mgid ff12:401b::7 \\\n"
        "      --port-guid 0x0002c90300000011 --member-count 4\n");
}

static void leave_usage(FILE *out) {
    fprintf(
        out,
        "usage: netfab mcast-leave --server ADDR:PORT --mgid GID (--port-guid G | --port-gid GID)\n"
        "                          [--key KEY] [--timeout MS] [--retries N] [--json]\n\n"
        "Sends SubnAdmDelete(MCMemberRecord). Exit status 0 when the manager accepted it.\n\n"
        "  --key KEY    the port's key (or the manager's) when the manager runs with --keys\n\n"
        "example:\n"
        "  netfab mcast-leave --server 127.0.0.1:4791 --mgid ff12:401b::7 \\\n"
        "      --port-guid 0x0002c90300000011\n");
}

static int member(int argc, char **argv, bool join) {
    const char *cmd = join ? "mcast-join" : "mcast-leave";
    nf_client_args a;
    int ex = nf_client_parse(&a, cmd, argc, argv, join ? join_usage : leave_usage);
    if (ex) return ex == 100 ? NF_EXIT_OK : ex;
    if (!a.have_mgid || !a.have_port || (join && !a.member_count)) {
        fprintf(stderr, "netfab %s: --mgid, --port-guid (or --port-gid)%s are required\n", cmd,
                join ? " and --member-count" : "");
        return NF_EXIT_USAGE;
    }
    nf_smc *c;
    nf_diag d = {{0}, 0, {0}};
    int rc = nf_smc_open(a.server, &c, &d);
    if (rc) return nf_app_report(rc, &d);
    uint16_t st = 0;
    nf_mcmember_rec r;
    rc = join ? nf_smc_join(c, &a.o, &a.mgid, &a.port_gid, a.member_count, &st, &r)
              : nf_smc_leave(c, &a.o, &a.mgid, &a.port_gid, &st, &r);
    nf_smc_close(c);
    if (rc) {
        fprintf(stderr, "netfab %s: %s: %s\n", cmd, a.server,
                rc == NF_ETIMEDOUT ? "no answer (timed out after every retry)" : nf_strerror(rc));
        return NF_EXIT_FAIL;
    }
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
