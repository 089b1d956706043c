/* SPDX-License-Identifier: MIT */
/* CRC-32C (Castagnoli; reflected polynomial 0x82F63B78, initial value and final xor all ones), the
 * checksum of iSCSI, SCTP and ext4, used here for the journal's frames. */
#ifndef NF_UTIL_CRC32C_H
#define NF_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Extends crc, the CRC-32C of some bytes (0 for no bytes), over p[0..n) and returns the CRC of the
 * whole: nf__crc32c(nf__crc32c(0, a, na), b, nb) is the CRC of a followed by b. */
uint32_t nf__crc32c(uint32_t crc, const void *p, size_t n);

#endif
