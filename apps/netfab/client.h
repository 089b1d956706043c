/* SPDX-License-Identifier: MIT */
/* What the group-manager client commands share: their options and status texts. */
#ifndef NETFAB_APP_CLIENT_H
#define NETFAB_APP_CLIENT_H

#include "cmd.h"
#include "netfab/smd.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct nf_client_args {
    const char *server;
    nf_gid mgid, port_gid;
    bool have_mgid, have_port;
    uint32_t member_count;
    nf_smc_opts o;
    bool retries_set, json, all, dump;
} nf_client_args;

/* Parses --server --mgid --port-guid/--port-gid --member-count --timeout --retries --json --all
 * --dump. Returns NF_EXIT_OK, NF_EXIT_USAGE (message printed), or 100 after --help. */
int nf_client_parse(nf_client_args *a, const char *cmd, int argc, char **argv,
                    void (*usage)(FILE *));

/* A short text for an SA/MAD status. */
const char *nf_client_status(uint16_t status);

#endif
