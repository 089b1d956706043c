/* SPDX-License-Identifier: MIT */
/* What the group-manager client commands share: their options and status texts. */
#ifndef NETFAB_APP_CLIENT_H
#define NETFAB_APP_CLIENT_H

#include "cmd.h"
#include "opts.h"
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

/* The client options, as bits of `which` for nf_client_opts. */
enum {
    NF_CLI_MGID = 1,  /* --mgid GID */
    NF_CLI_PORT = 2,  /* --port-guid G, --port-gid GID */
    NF_CLI_COUNT = 4, /* --member-count N */
    NF_CLI_STATE = 8, /* --all, --dump, --window N */
    NF_CLI_MAX_ROWS = 13
};

/* Fills rows (room for NF_CLI_MAX_ROWS) with the option rows of a client command that writes
 * into a (cleared here): --server, --key, --timeout, --retries and --json always, the others
 * as which says; returns their count. */
size_t nf_client_opts(nf_client_args *a, unsigned which, nf_opt *rows);

/* After parsing: --server is there, and --timeout without --retries means 10 retries.
 * NF_EXIT_OK or NF_EXIT_USAGE after saying why. */
int nf_client_check(nf_client_args *a, const char *cmd);

/* Says on stderr, as "netfab CMD: SERVER: ...", why a request to the manager got no answer
 * (rc: nf_smc_*'s failure); returns NF_EXIT_FAIL. */
int nf_client_failed(const char *cmd, const char *server, int rc);

/* A short text for an SA/MAD status. */
const char *nf_client_status(uint16_t status);

#endif
