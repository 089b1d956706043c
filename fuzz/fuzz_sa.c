/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the SA MAD codec (netfab/sa.h) on arbitrary bytes. A datagram that decodes
 * must survive encode and decode unchanged, and re-encode to its own bytes except the bits the
 * codec does not keep; the same bytes read as an MCMemberRecord, an MCGStateRecord, a struct of
 * raw field values and a GID string must round-trip too. Any mismatch aborts. */
#include "netfab/sa.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void check(bool ok) {
    if (!ok) abort();
}

static bool mad_equal(const nf_mad *a, const nf_mad *b) {
    return a->base_version == b->base_version && a->mgmt_class == b->mgmt_class &&
           a->class_version == b->class_version && a->method == b->method &&
           a->status == b->status && a->class_specific == b->class_specific && a->tid == b->tid &&
           a->attr_id == b->attr_id && a->attr_mod == b->attr_mod &&
           a->rmpp_version == b->rmpp_version && a->rmpp_type == b->rmpp_type &&
           a->rmpp_flags == b->rmpp_flags && a->rmpp_status == b->rmpp_status &&
           a->rmpp_data1 == b->rmpp_data1 && a->rmpp_data2 == b->rmpp_data2 &&
           a->sm_key == b->sm_key && a->attr_offset == b->attr_offset &&
           a->comp_mask == b->comp_mask && memcmp(a->data, b->data, sizeof a->data) == 0;
}

static bool mcmember_equal(const nf_mcmember_rec *a, const nf_mcmember_rec *b) {
    return memcmp(a->mgid.raw, b->mgid.raw, 16) == 0 &&
           memcmp(a->port_gid.raw, b->port_gid.raw, 16) == 0 && a->qkey == b->qkey &&
           a->mlid == b->mlid && a->mtu_selector == b->mtu_selector && a->mtu == b->mtu &&
           a->tclass == b->tclass && a->pkey == b->pkey && a->rate_selector == b->rate_selector &&
           a->rate == b->rate && a->packet_life_selector == b->packet_life_selector &&
           a->packet_life == b->packet_life && a->sl == b->sl && a->flow_label == b->flow_label &&
           a->hop_limit == b->hop_limit && a->scope == b->scope && a->join_state == b->join_state &&
           a->proxy_join == b->proxy_join && a->member_count == b->member_count;
}

static bool mcgstate_equal(const nf_mcgstate_rec *a, const nf_mcgstate_rec *b) {
    return memcmp(a->mgid.raw, b->mgid.raw, 16) == 0 && a->mlid == b->mlid &&
           a->state == b->state && a->member_count == b->member_count && a->joined == b->joined &&
           a->left == b->left;
}

/* The datagram. Bytes 18-19 and 46-47 (reserved) and the top 5 bits of byte 26 (RRespTime) are
 * dropped by decode and written as zero by encode. */
static void fuzz_mad(const uint8_t *data, size_t size) {
    nf_mad m, again;
    int rc = nf_mad_decode(data, size, &m);
    check(rc == (size < NF_MAD_HDR_SIZE ? NF_EPARSE : size == NF_MAD_SIZE ? NF_OK : NF_ERANGE));
    if (rc != NF_OK) return;
    uint8_t out[NF_MAD_SIZE], want[NF_MAD_SIZE];
    nf_mad_encode(&m, out);
    memcpy(want, data, sizeof want);
    want[18] = want[19] = want[46] = want[47] = 0;
    want[26] &= 0x7;
    check(memcmp(out, want, sizeof out) == 0);
    check(nf_mad_decode(out, sizeof out, &again) == NF_OK);
    check(mad_equal(&m, &again));
}

/* The records, read from the first bytes (zero-padded when the input is shorter). Every bit of an
 * MCMemberRecord belongs to a field; byte 19 of an MCGStateRecord is reserved. */
static void fuzz_records(const uint8_t *data, size_t size) {
    uint8_t in[NF_MCMEMBER_SIZE] = {0}, out[NF_MCMEMBER_SIZE];
    memcpy(in, data, size < sizeof in ? size : sizeof in);

    nf_mcmember_rec r, r2;
    nf_mcmember_decode(in, &r);
    nf_mcmember_encode(&r, out);
    check(memcmp(in, out, NF_MCMEMBER_SIZE) == 0);
    nf_mcmember_decode(out, &r2);
    check(mcmember_equal(&r, &r2));

    nf_mcgstate_rec g, g2;
    nf_mcgstate_decode(in, &g);
    nf_mcgstate_encode(&g, out);
    in[19] = 0;
    check(memcmp(in, out, NF_MCGSTATE_SIZE) == 0);
    nf_mcgstate_decode(out, &g2);
    check(mcgstate_equal(&g, &g2));
}

static uint32_t take32(const uint8_t **p) {
    uint32_t v;
    memcpy(&v, *p, sizeof v);
    *p += sizeof v;
    return v;
}

/* A record filled with raw, possibly too wide, field values: encode must cut each to its width
 * and decode must give exactly the cut values. */
static void fuzz_wide_fields(const uint8_t *data, size_t size) {
    uint8_t raw[64] = {0};
    memcpy(raw, data, size < sizeof raw ? size : sizeof raw);
    const uint8_t *p = raw + 32;
    nf_mcmember_rec r, want, got;
    memset(&r, 0, sizeof r);
    memcpy(r.mgid.raw, raw, 16);
    memcpy(r.port_gid.raw, raw + 16, 16);
    uint32_t a = take32(&p), b = take32(&p), c = take32(&p), d = take32(&p);
    r.qkey = a;
    r.mlid = (uint16_t)b;
    r.pkey = (uint16_t)(b >> 16);
    r.mtu_selector = (uint8_t)c;
    r.mtu = (uint8_t)(c >> 8);
    r.tclass = (uint8_t)(c >> 16);
    r.rate_selector = (uint8_t)(c >> 24);
    r.rate = (uint8_t)d;
    r.packet_life_selector = (uint8_t)(d >> 8);
    r.packet_life = (uint8_t)(d >> 16);
    r.sl = (uint8_t)(d >> 24);
    r.flow_label = take32(&p);
    uint32_t e = take32(&p);
    r.hop_limit = (uint8_t)e;
    r.scope = (uint8_t)(e >> 8);
    r.join_state = (uint8_t)(e >> 16);
    r.proxy_join = e >> 24 & 1;
    r.member_count = take32(&p);

    want = r;
    want.mtu_selector &= 3;
    want.mtu &= 63;
    want.rate_selector &= 3;
    want.rate &= 63;
    want.packet_life_selector &= 3;
    want.packet_life &= 63;
    want.sl &= 15;
    want.flow_label &= 0xFFFFF;
    want.scope &= 15;
    want.join_state &= 15;
    want.member_count &= NF_MEMBER_COUNT_MAX;

    uint8_t out[NF_MCMEMBER_SIZE];
    nf_mcmember_encode(&r, out);
    nf_mcmember_decode(out, &got);
    check(mcmember_equal(&got, &want));
}

/* The input as GID text: a GID that parses formats to text that parses to the same GID. */
static void fuzz_gid_text(const uint8_t *data, size_t size) {
    char text[64];
    size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, n);
    text[n] = '\0';
    nf_gid g, back;
    if (nf_gid_parse(text, &g) != NF_OK) return;
    char formatted[40];
    nf_gid_format(&g, formatted);
    check(strlen(formatted) == 39);
    check(nf_gid_parse(formatted, &back) == NF_OK);
    check(memcmp(g.raw, back.raw, 16) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_mad(data, size);
    fuzz_records(data, size);
    fuzz_wide_fields(data, size);
    fuzz_gid_text(data, size);
    return 0;
}
