/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the --topo spec parser and the generators on arbitrary strings. file: specs
 * are skipped (they would read arbitrary paths); a successful build must pass nf_fabric_check. */
#include "netfab/gen.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 256) return 0;
    char spec[257];
    memcpy(spec, data, size);
    spec[size] = '\0';
    if (strstr(spec, "file:")) return 0;
    nf_fabric *f = NULL;
    nf_diag d;
    if (nf_topo_build(spec, NULL, &f, &d) != NF_OK) {
        if (f) abort();
        return 0;
    }
    if (nf_fabric_check(f, &d) != NF_OK) abort();
    nf_fabric_free(f);
    return 0;
}
