/* SPDX-License-Identifier: MIT */
/* The SA MAD codec of the multicast group manager: bytes <-> structs for the 256-byte MAD, the
 * MCMemberRecord (with MemberCount) and the MCGStateRecord, plus GID text. Pure functions over
 * caller buffers; every offset below is a row of the tables in docs/protocol.md. */
#include "netfab/sa.h"

#include <stdbool.h>
#include <string.h>

/* ---- big-endian fields --------------------------------------------------------------------- */

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) << 32 | get32(p + 4); }

static void put16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v) {
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}

static void put64(uint8_t *p, uint64_t v) {
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

/* ---- the MAD ------------------------------------------------------------------------------- */

/* Offsets in the datagram. The two reserved 16-bit fields (18 and 46) and RRespTime (the top five
 * bits of byte 26) are not kept: decode skips them and encode writes zeros. */
enum {
    MAD_BASE_VERSION = 0,
    MAD_CLASS = 1,
    MAD_CLASS_VERSION = 2,
    MAD_METHOD = 3,
    MAD_STATUS = 4,
    MAD_CLASS_SPECIFIC = 6,
    MAD_TID = 8,
    MAD_ATTR_ID = 16,
    MAD_ATTR_MOD = 20,
    RMPP_VERSION = 24,
    RMPP_TYPE = 25,
    RMPP_FLAGS = 26,
    RMPP_STATUS = 27,
    RMPP_DATA1 = 28,
    RMPP_DATA2 = 32,
    SA_SM_KEY = 36,
    SA_ATTR_OFFSET = 44,
    SA_COMP_MASK = 48
};
#define RMPP_FLAGS_MASK 0x7u /* RMPPFlags is the low 3 bits of its byte, under RRespTime */

static void decode_common(const uint8_t *p, nf_mad *m) {
    m->base_version = p[MAD_BASE_VERSION];
    m->mgmt_class = p[MAD_CLASS];
    m->class_version = p[MAD_CLASS_VERSION];
    m->method = p[MAD_METHOD];
    m->status = get16(p + MAD_STATUS);
    m->class_specific = get16(p + MAD_CLASS_SPECIFIC);
    m->tid = get64(p + MAD_TID);
    m->attr_id = get16(p + MAD_ATTR_ID);
    m->attr_mod = get32(p + MAD_ATTR_MOD);
}

static void decode_rmpp_sa(const uint8_t *p, nf_mad *m) {
    m->rmpp_version = p[RMPP_VERSION];
    m->rmpp_type = p[RMPP_TYPE];
    m->rmpp_flags = p[RMPP_FLAGS] & RMPP_FLAGS_MASK;
    m->rmpp_status = p[RMPP_STATUS];
    m->rmpp_data1 = get32(p + RMPP_DATA1);
    m->rmpp_data2 = get32(p + RMPP_DATA2);
    m->sm_key = get64(p + SA_SM_KEY);
    m->attr_offset = get16(p + SA_ATTR_OFFSET);
    m->comp_mask = get64(p + SA_COMP_MASK);
    memcpy(m->data, p + NF_SA_HDR_SIZE, NF_SA_DATA_SIZE);
}

/* The length is checked before any byte is read, so a short buffer is never overrun; a datagram of
 * the wrong size still yields its common header, which is all a manager needs to answer it. */
int nf_mad_decode(const void *buf, size_t len, nf_mad *out) {
    const uint8_t *p = buf;
    memset(out, 0, sizeof *out);
    if (len < NF_MAD_HDR_SIZE) return NF_EPARSE;
    decode_common(p, out);
    if (len != NF_MAD_SIZE) return NF_ERANGE;
    decode_rmpp_sa(p, out);
    return NF_OK;
}

void nf_mad_encode(const nf_mad *m, uint8_t out[NF_MAD_SIZE]) {
    memset(out, 0, NF_MAD_SIZE);
    out[MAD_BASE_VERSION] = m->base_version;
    out[MAD_CLASS] = m->mgmt_class;
    out[MAD_CLASS_VERSION] = m->class_version;
    out[MAD_METHOD] = m->method;
    put16(out + MAD_STATUS, m->status);
    put16(out + MAD_CLASS_SPECIFIC, m->class_specific);
    put64(out + MAD_TID, m->tid);
    put16(out + MAD_ATTR_ID, m->attr_id);
    put32(out + MAD_ATTR_MOD, m->attr_mod);
    out[RMPP_VERSION] = m->rmpp_version;
    out[RMPP_TYPE] = m->rmpp_type;
    out[RMPP_FLAGS] = m->rmpp_flags & RMPP_FLAGS_MASK;
    out[RMPP_STATUS] = m->rmpp_status;
    put32(out + RMPP_DATA1, m->rmpp_data1);
    put32(out + RMPP_DATA2, m->rmpp_data2);
    put64(out + SA_SM_KEY, m->sm_key);
    put16(out + SA_ATTR_OFFSET, m->attr_offset);
    put64(out + SA_COMP_MASK, m->comp_mask);
    memcpy(out + NF_SA_HDR_SIZE, m->data, NF_SA_DATA_SIZE);
}

/* ---- GIDs ---------------------------------------------------------------------------------- */

uint64_t nf_gid_prefix(const nf_gid *g) { return get64(g->raw); }
uint64_t nf_gid_guid(const nf_gid *g) { return get64(g->raw + 8); }

nf_gid nf_gid_make(uint64_t prefix, uint64_t guid) {
    nf_gid g;
    put64(g.raw, prefix);
    put64(g.raw + 8, guid);
    return g;
}

void nf_gid_format(const nf_gid *g, char out[40]) {
    static const char hex[] = "0123456789abcdef";
    char *o = out;
    for (int i = 0; i < 16; i++) {
        if (i > 0 && i % 2 == 0) *o++ = ':';
        *o++ = hex[g->raw[i] >> 4];
        *o++ = hex[g->raw[i] & 0xf];
    }
    *o = '\0';
}

/* Not isxdigit: the C locale must not matter. */
static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* One group of 1 to 4 hex digits at *s; advances *s past it. */
static int parse_group(const char **s, uint16_t *out) {
    unsigned v = 0, n = 0;
    int d;
    while ((d = hex_value((*s)[n])) >= 0) {
        if (++n > 4) return NF_EPARSE;
        v = v << 4 | (unsigned)d;
    }
    if (n == 0) return NF_EPARSE;
    *s += n;
    *out = (uint16_t)v;
    return NF_OK;
}

/* Groups before "::" go to head, groups after it to tail; the gap, when there is one, stands for
 * at least one zero group, so head and tail together hold at most 7 groups then and exactly 8
 * without it. Every ':' must be followed by a group, except the second ':' of "::" which may end
 * the string. */
int nf_gid_parse(const char *s, nf_gid *out) {
    uint16_t head[8], tail[8];
    unsigned nh = 0, nt = 0;
    bool gap = false;
    if (s[0] == ':') {
        if (s[1] != ':') return NF_EPARSE;
        gap = true;
        s += 2;
    }
    for (;;) {
        if (gap && nt == 0 && *s == '\0') break; /* the text ends with "::" */
        uint16_t v;
        if (nh + nt == 8 || parse_group(&s, &v)) return NF_EPARSE;
        if (gap)
            tail[nt++] = v;
        else
            head[nh++] = v;
        if (*s == '\0') break;
        if (*s++ != ':') return NF_EPARSE;
        if (*s == ':') {
            if (gap) return NF_EPARSE;
            gap = true;
            s++;
        }
    }
    if (gap ? nh + nt > 7 : nh + nt != 8) return NF_EPARSE;
    memset(out->raw, 0, sizeof out->raw);
    for (unsigned i = 0; i < nh; i++)
        put16(out->raw + 2 * i, head[i]);
    for (unsigned i = 0; i < nt; i++)
        put16(out->raw + 2 * (8 - nt + i), tail[i]);
    return NF_OK;
}

/* ---- MCMemberRecord ------------------------------------------------------------------------ */

enum {
    MCM_MGID = 0,
    MCM_PORT_GID = 16,
    MCM_QKEY = 32,
    MCM_MLID = 36,
    MCM_MTU = 38,
    MCM_TCLASS = 39,
    MCM_PKEY = 40,
    MCM_RATE = 42,
    MCM_LIFE = 43,
    MCM_SL_FLOW_HOP = 44,
    MCM_SCOPE_STATE = 48,
    MCM_PROXY_COUNT = 49 /* ProxyJoin (top bit), then MemberCount (23 bits) */
};

/* A selector takes the top 2 bits of its byte, the value the low 6. */
static uint8_t pack_sel(uint8_t sel, uint8_t val) {
    return (uint8_t)((sel & 3u) << 6 | (val & 63u));
}

void nf_mcmember_decode(const uint8_t *p, nf_mcmember_rec *r) {
    memcpy(r->mgid.raw, p + MCM_MGID, 16);
    memcpy(r->port_gid.raw, p + MCM_PORT_GID, 16);
    r->qkey = get32(p + MCM_QKEY);
    r->mlid = get16(p + MCM_MLID);
    r->mtu_selector = p[MCM_MTU] >> 6;
    r->mtu = p[MCM_MTU] & 63u;
    r->tclass = p[MCM_TCLASS];
    r->pkey = get16(p + MCM_PKEY);
    r->rate_selector = p[MCM_RATE] >> 6;
    r->rate = p[MCM_RATE] & 63u;
    r->packet_life_selector = p[MCM_LIFE] >> 6;
    r->packet_life = p[MCM_LIFE] & 63u;
    uint32_t sfh = get32(p + MCM_SL_FLOW_HOP);
    r->sl = (uint8_t)(sfh >> 28);
    r->flow_label = sfh >> 8 & 0xFFFFFu;
    r->hop_limit = (uint8_t)sfh;
    r->scope = p[MCM_SCOPE_STATE] >> 4;
    r->join_state = p[MCM_SCOPE_STATE] & 15u;
    /* The last three bytes: ProxyJoin, then MemberCount in the 23 bits IBA leaves reserved. */
    const uint8_t *pc = p + MCM_PROXY_COUNT;
    r->proxy_join = pc[0] >> 7;
    r->member_count = (uint32_t)(pc[0] & 0x7Fu) << 16 | (uint32_t)pc[1] << 8 | pc[2];
}

void nf_mcmember_encode(const nf_mcmember_rec *r, uint8_t *p) {
    memcpy(p + MCM_MGID, r->mgid.raw, 16);
    memcpy(p + MCM_PORT_GID, r->port_gid.raw, 16);
    put32(p + MCM_QKEY, r->qkey);
    put16(p + MCM_MLID, r->mlid);
    p[MCM_MTU] = pack_sel(r->mtu_selector, r->mtu);
    p[MCM_TCLASS] = r->tclass;
    put16(p + MCM_PKEY, r->pkey);
    p[MCM_RATE] = pack_sel(r->rate_selector, r->rate);
    p[MCM_LIFE] = pack_sel(r->packet_life_selector, r->packet_life);
    put32(p + MCM_SL_FLOW_HOP,
          (uint32_t)(r->sl & 15u) << 28 | (r->flow_label & 0xFFFFFu) << 8 | r->hop_limit);
    p[MCM_SCOPE_STATE] = (uint8_t)((r->scope & 15u) << 4 | (r->join_state & 15u));
    uint32_t count = r->member_count & NF_MEMBER_COUNT_MAX;
    uint8_t *pc = p + MCM_PROXY_COUNT;
    pc[0] = (uint8_t)((r->proxy_join ? 0x80u : 0u) | count >> 16);
    pc[1] = (uint8_t)(count >> 8);
    pc[2] = (uint8_t)count;
}

/* ---- MCGStateRecord ------------------------------------------------------------------------ */

enum {
    MCG_MGID = 0,
    MCG_MLID = 16,
    MCG_STATE = 18, /* byte 19 is reserved */
    MCG_MEMBER_COUNT = 20,
    MCG_JOINED = 24,
    MCG_LEFT = 28
};

void nf_mcgstate_decode(const uint8_t *p, nf_mcgstate_rec *r) {
    memcpy(r->mgid.raw, p + MCG_MGID, 16);
    r->mlid = get16(p + MCG_MLID);
    r->state = p[MCG_STATE];
    r->member_count = get32(p + MCG_MEMBER_COUNT);
    r->joined = get32(p + MCG_JOINED);
    r->left = get32(p + MCG_LEFT);
}

void nf_mcgstate_encode(const nf_mcgstate_rec *r, uint8_t *p) {
    memcpy(p + MCG_MGID, r->mgid.raw, 16);
    put16(p + MCG_MLID, r->mlid);
    p[MCG_STATE] = r->state;
    p[MCG_STATE + 1] = 0;
    put32(p + MCG_MEMBER_COUNT, r->member_count);
    put32(p + MCG_JOINED, r->joined);
    put32(p + MCG_LEFT, r->left);
}

const char *nf_mcg_state_name(int state) {
    switch (state) {
    case NF_MCG_RECEIVING_JOIN: return "ReceivingJoinReq";
    case NF_MCG_COMPUTING_ROUTES: return "ComputingRoutes";
    case NF_MCG_READY: return "Ready";
    case NF_MCG_RECEIVING_LEAVE: return "ReceivingLeaveReq";
    case NF_MCG_DESTROYING: return "Destroying";
    default: return "?";
    }
}
