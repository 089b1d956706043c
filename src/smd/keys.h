/* SPDX-License-Identifier: MIT */
/* Internal: the group manager's keys file (docs/protocol.md, "Keys"): the manager key and one key
 * per endpoint port, which a request carries in its SA header's SM_Key to show that it acts for
 * its own port, or with the manager's authority. */
#ifndef NF_SMD_KEYS_H
#define NF_SMD_KEYS_H

#include "netfab/core.h"
#include "netfab/fabric.h"
#include "util/u64map.h"

typedef struct nf__smd_keys {
    uint64_t manager; /* never 0 */
    uint64_t *key;    /* key[i] for the port in the map's value i */
    nf__u64map port;  /* port GUID -> index in key[] */
    uint32_t n;
    size_t cap;
} nf__smd_keys;

/* Reads path into k (zeroed first). The file must be a regular file that neither group nor others
 * may read or write (it holds secrets), owned by the effective user; every port must be an
 * endpoint port of f, listed once; exactly one manager line; keys are not 0. NF_EIO (cannot read),
 * NF_EINVAL (permissions), NF_EPARSE (file:line in diag), NF_ENOMEM. */
int nf__smd_keys_load(const char *path, const nf_fabric *f, nf__smd_keys *k, nf_diag *diag);
void nf__smd_keys_fini(nf__smd_keys *k);

/* The key of a port; false when it has none. */
bool nf__smd_keys_port(const nf__smd_keys *k, uint64_t guid, uint64_t *key);

#endif
