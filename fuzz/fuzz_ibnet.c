/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the ibnetdiscover reader (and, on success, its writer) on arbitrary bytes. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_one(data, size, NF_FMT_IBNET);
}
