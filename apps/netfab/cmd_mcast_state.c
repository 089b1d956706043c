/* SPDX-License-Identifier: MIT */
/* `netfab mcast-state`: one group's state (SubnAdmGet MCGStateRecord), every group's (GetTable,
 * answered over as many datagrams as it needs), or a dump request. */
#include "client.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

static json_t *rec_json(const nf_mcgstate_rec *r) {
    char mg[40];
    nf_gid_format(&r->mgid, mg);
    return json_pack("{s:s, s:i, s:s, s:i, s:i, s:i}", "mgid", mg, "mlid", (int)r->mlid, "state",
                     nf_mcg_state_name(r->state), "member_count", (int)r->member_count, "joined",
                     (int)r->joined, "left", (int)r->left);
}

static void rec_text(const nf_mcgstate_rec *r) {
    char mg[40];
    nf_gid_format(&r->mgid, mg);
    printf("%-39s 0x%04X %-17s %8u %8u %8u\n", mg, r->mlid, nf_mcg_state_name(r->state),
           r->member_count, r->joined, r->left);
}

static void header(void) {
    printf("%-39s %-6s %-17s %8s %8s %8s\n", "mgid", "mlid", "state", "members", "joined", "left");
}

int nf_cmd_mcast_state(int argc, char **argv) {
    nf_client_args a;
    nf_opt rows[NF_CLI_MAX_ROWS];
    size_t n_rows = nf_client_opts(&a, NF_CLI_MGID | NF_CLI_STATE, rows);
    const nf_cmd_spec spec = {
        .name = "mcast-state",
        .synopsis = "netfab mcast-state --server ADDR:PORT (--mgid GID | --all | --dump)\n"
                    "                          [--key KEY] [--window N] [--timeout MS] "
                    "[--retries N]\n"
                    "                          [--json]\n",
        .description = "Asks the group manager for one group's state (SubnAdmGet "
                       "MCGStateRecord), every\n"
                       "group's (GetTable, over as many datagrams as it needs), or a dump.\n",
        .group = {{"options", rows, n_rows}},
        .examples = "  netfab mcast-state --server 127.0.0.1:4791 --all --json\n"};
    int argi, ex = nf_opt_parse(&spec, argc, argv, &argi);
    if (!ex) ex = nf_client_check(&a, "mcast-state");
    if (ex) return ex == NF_OPT_HELP ? NF_EXIT_OK : ex;
    if ((int)a.have_mgid + (int)a.all + (int)a.dump != 1)
        return nf_opt_usage("mcast-state", "give exactly one of --mgid, --all, --dump");
    nf_smc *c;
    nf_diag d = {{0}, 0, {0}};
    int rc = nf_smc_open(a.server, &c, &d);
    if (rc) return nf_app_report(rc, &d);
    uint16_t st = 0;
    nf_mcgstate_rec one, *all = NULL;
    size_t n = 0;
    if (a.dump)
        rc = nf_smc_dump(c, &a.o, &st);
    else if (a.all)
        rc = nf_smc_table(c, &a.o, &st, &all, &n);
    else
        rc = nf_smc_state(c, &a.o, &a.mgid, &st, &one);
    nf_smc_close(c);
    if (rc) return nf_client_failed("mcast-state", a.server, rc); /* all: NULL on failure */
    if (st) {
        fprintf(stderr, "netfab mcast-state: %s (status 0x%04x)\n", nf_client_status(st), st);
        nf_free(all);
        return NF_EXIT_FAIL;
    }
    if (a.dump) {
        if (!a.json) printf("dump written by the manager\n");
        if (a.json) printf("{\"status\": 0}\n");
        return NF_EXIT_OK;
    }
    if (a.json) {
        json_t *out = a.all ? json_array() : rec_json(&one);
        for (size_t i = 0; a.all && i < n; i++)
            json_array_append_new(out, rec_json(&all[i]));
        json_dumpf(out, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(out);
    } else {
        header();
        if (a.all)
            for (size_t i = 0; i < n; i++)
                rec_text(&all[i]);
        else
            rec_text(&one);
    }
    nf_free(all);
    return NF_EXIT_OK;
}
