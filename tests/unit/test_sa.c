/* SPDX-License-Identifier: MIT */
/* The SA MAD codec (netfab/sa.h) against answers written out by hand from docs/protocol.md: a
 * datagram typed byte by byte, encodes compared with expected bytes (bit packing of the selectors,
 * SL/FlowLabel/HopLimit, Scope/JoinState, ProxyJoin/MemberCount), random round trips, every
 * truncation length, GID text and the MCGStateRecord. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "netfab/sa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------------- */

static void assert_bytes(const uint8_t *got, const uint8_t *want, size_t n, const char *what) {
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("%s: byte %zu is 0x%02x, want 0x%02x", what, i, got[i], want[i]);
}

static void assert_gid(const nf_gid *got, const nf_gid *want, const char *what) {
    assert_bytes(got->raw, want->raw, 16, what);
}

static void assert_mad_equal(const nf_mad *a, const nf_mad *b) {
    assert_int_equal(a->base_version, b->base_version);
    assert_int_equal(a->mgmt_class, b->mgmt_class);
    assert_int_equal(a->class_version, b->class_version);
    assert_int_equal(a->method, b->method);
    assert_int_equal(a->status, b->status);
    assert_int_equal(a->class_specific, b->class_specific);
    assert_int_equal(a->tid, b->tid);
    assert_int_equal(a->attr_id, b->attr_id);
    assert_int_equal(a->attr_mod, b->attr_mod);
    assert_int_equal(a->rmpp_version, b->rmpp_version);
    assert_int_equal(a->rmpp_type, b->rmpp_type);
    assert_int_equal(a->rmpp_flags, b->rmpp_flags);
    assert_int_equal(a->rmpp_status, b->rmpp_status);
    assert_int_equal(a->rmpp_data1, b->rmpp_data1);
    assert_int_equal(a->rmpp_data2, b->rmpp_data2);
    assert_int_equal(a->sm_key, b->sm_key);
    assert_int_equal(a->attr_offset, b->attr_offset);
    assert_int_equal(a->comp_mask, b->comp_mask);
    assert_bytes(a->data, b->data, NF_SA_DATA_SIZE, "data");
}

static void assert_mcmember_equal(const nf_mcmember_rec *a, const nf_mcmember_rec *b) {
    assert_gid(&a->mgid, &b->mgid, "mgid");
    assert_gid(&a->port_gid, &b->port_gid, "port_gid");
    assert_int_equal(a->qkey, b->qkey);
    assert_int_equal(a->mlid, b->mlid);
    assert_int_equal(a->mtu_selector, b->mtu_selector);
    assert_int_equal(a->mtu, b->mtu);
    assert_int_equal(a->tclass, b->tclass);
    assert_int_equal(a->pkey, b->pkey);
    assert_int_equal(a->rate_selector, b->rate_selector);
    assert_int_equal(a->rate, b->rate);
    assert_int_equal(a->packet_life_selector, b->packet_life_selector);
    assert_int_equal(a->packet_life, b->packet_life);
    assert_int_equal(a->sl, b->sl);
    assert_int_equal(a->flow_label, b->flow_label);
    assert_int_equal(a->hop_limit, b->hop_limit);
    assert_int_equal(a->scope, b->scope);
    assert_int_equal(a->join_state, b->join_state);
    assert_int_equal(a->proxy_join, b->proxy_join);
    assert_int_equal(a->member_count, b->member_count);
}

static void assert_mcgstate_equal(const nf_mcgstate_rec *a, const nf_mcgstate_rec *b) {
    assert_gid(&a->mgid, &b->mgid, "mgid");
    assert_int_equal(a->mlid, b->mlid);
    assert_int_equal(a->state, b->state);
    assert_int_equal(a->member_count, b->member_count);
    assert_int_equal(a->joined, b->joined);
    assert_int_equal(a->left, b->left);
}

/* splitmix64: a test-local generator, so the library's RNG is not what checks the library. */
static uint64_t rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static void rnd_bytes(uint64_t *s, uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd(s);
}

/* ---- the hand-written datagram ------------------------------------------------------------- */

/* A Set(MCMemberRecord) with every header field distinct, the reserved fields and RRespTime set
 * to garbage (they must be ignored), and a record whose packed bytes are spelled out. */
static const uint8_t JOIN[NF_MAD_SIZE] = {
    /* common header */
    0x01, 0x03, 0x02, 0x02,                         /* base 1, class SA, version 2, Set */
    0x00, 0x1c, 0xbe, 0xef,                         /* status 0x001c, class specific 0xbeef */
    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, /* transaction id */
    0x00, 0x38, 0xaa, 0xbb,                         /* MCMemberRecord, reserved */
    0x12, 0x34, 0x56, 0x78,                         /* attribute modifier */
    /* RMPP header */
    0x01, 0x01, 0xfb, 0x05, /* version 1, DATA, RRespTime 31 | flags 3, status 5 */
    0xde, 0xad, 0xbe, 0xef, /* data1 */
    0x00, 0x00, 0x00, 0xc0, /* data2 = 192 */
    /* SA header */
    0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, /* SM_Key */
    0x00, 0x07, 0xcc, 0xdd,                         /* AttributeOffset 7, reserved */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x03, /* ComponentMask */
    /* MCMemberRecord at offset 56 */
    0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0x00, 0x00, /* MGID ff12:401b:ffff::ffff:ffff */
    0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, /* */
    0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* PortGID fe80::2:c903:0:a01 */
    0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0a, 0x01, /* */
    0x80, 0x01, 0x00, 0x00,                         /* Q_Key */
    0xc0, 0x01,                                     /* MLID */
    0x84,                                           /* MTUSelector 2, MTU 4 */
    0x5a,                                           /* TClass */
    0xff, 0xff,                                     /* P_Key */
    0xc7,                                           /* RateSelector 3, Rate 7 */
    0x52,                                           /* PacketLifeTimeSelector 1, value 0x12 */
    0xa1, 0x23, 0x45, 0x40,                         /* SL 0xa, FlowLabel 0x12345, HopLimit 0x40 */
    0x21,                                           /* Scope 2, JoinState 1 */
    0x92, 0x34, 0x56,                               /* ProxyJoin 1, MemberCount 0x123456 */
    [255] = 0x5a};

static void check_join_header(const nf_mad *m) {
    assert_int_equal(m->base_version, 1);
    assert_int_equal(m->mgmt_class, NF_MAD_CLASS_SA);
    assert_int_equal(m->class_version, 2);
    assert_int_equal(m->method, NF_MAD_SET);
    assert_int_equal(m->status, 0x001c);
    assert_int_equal(m->class_specific, 0xbeef);
    assert_int_equal(m->tid, 0x0123456789abcdefu);
    assert_int_equal(m->attr_id, NF_SA_ATTR_MCMEMBER);
    assert_int_equal(m->attr_mod, 0x12345678u);
}

static void test_decode_handwritten(void **state) {
    (void)state;
    nf_mad m;
    assert_int_equal(nf_mad_decode(JOIN, sizeof JOIN, &m), NF_OK);
    check_join_header(&m);
    assert_int_equal(m.rmpp_version, 1);
    assert_int_equal(m.rmpp_type, NF_RMPP_TYPE_DATA);
    assert_int_equal(m.rmpp_flags, NF_RMPP_FLAG_ACTIVE | NF_RMPP_FLAG_FIRST);
    assert_int_equal(m.rmpp_status, 5);
    assert_int_equal(m.rmpp_data1, 0xdeadbeefu);
    assert_int_equal(m.rmpp_data2, 192);
    assert_int_equal(m.sm_key, 0x1020304050607080u);
    assert_int_equal(m.attr_offset, 7);
    assert_int_equal(m.comp_mask, 0x30003u);
    assert_bytes(m.data, JOIN + 56, NF_SA_DATA_SIZE, "data");
    assert_int_equal(m.data[199], 0x5a);

    nf_mcmember_rec r;
    nf_mcmember_decode(m.data, &r);
    static const nf_gid mgid = {
        {0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}};
    assert_gid(&r.mgid, &mgid, "mgid");
    assert_int_equal(nf_gid_prefix(&r.port_gid), NF_GID_DEFAULT_PREFIX);
    assert_int_equal(nf_gid_guid(&r.port_gid), 0x0002c90300000a01u);
    assert_int_equal(r.qkey, 0x80010000u);
    assert_int_equal(r.mlid, 0xc001);
    assert_int_equal(r.mtu_selector, 2);
    assert_int_equal(r.mtu, 4);
    assert_int_equal(r.tclass, 0x5a);
    assert_int_equal(r.pkey, 0xffff);
    assert_int_equal(r.rate_selector, 3);
    assert_int_equal(r.rate, 7);
    assert_int_equal(r.packet_life_selector, 1);
    assert_int_equal(r.packet_life, 0x12);
    assert_int_equal(r.sl, 0xa);
    assert_int_equal(r.flow_label, 0x12345);
    assert_int_equal(r.hop_limit, 0x40);
    assert_int_equal(r.scope, 2);
    assert_int_equal(r.join_state, NF_JOIN_FULL);
    assert_true(r.proxy_join);
    assert_int_equal(r.member_count, 0x123456);

    /* every bit of the 52 bytes belongs to a field, so the record comes back unchanged */
    uint8_t again[NF_MCMEMBER_SIZE];
    nf_mcmember_encode(&r, again);
    assert_bytes(again, JOIN + 56, NF_MCMEMBER_SIZE, "re-encoded record");
}

/* Re-encoding the datagram changes exactly the ignored bits: the two reserved fields and
 * RRespTime. */
static void test_reencode_handwritten(void **state) {
    (void)state;
    nf_mad m;
    assert_int_equal(nf_mad_decode(JOIN, sizeof JOIN, &m), NF_OK);
    uint8_t out[NF_MAD_SIZE], want[NF_MAD_SIZE];
    memcpy(want, JOIN, sizeof want);
    want[18] = want[19] = 0;
    want[26] = 0x03;
    want[46] = want[47] = 0;
    nf_mad_encode(&m, out);
    assert_bytes(out, want, NF_MAD_SIZE, "re-encoded datagram");
}

/* ---- encode against expected bytes --------------------------------------------------------- */

static void test_encode_header(void **state) {
    (void)state;
    nf_mad m;
    memset(&m, 0, sizeof m);
    m.base_version = 1;
    m.mgmt_class = 3;
    m.class_version = 2;
    m.method = NF_MAD_GETTABLE_RESP;
    m.status = NF_SA_STATUS_NO_RECORDS;
    m.class_specific = 0;
    m.tid = 0x0102030405060708u;
    m.attr_id = NF_SA_ATTR_MCGSTATE;
    m.attr_mod = 0x80000001u;
    m.rmpp_version = 1;
    m.rmpp_type = 1;
    m.rmpp_flags = 0xfd; /* only the low 3 bits go out */
    m.rmpp_status = 0;
    m.rmpp_data1 = 2;
    m.rmpp_data2 = 0x40;
    m.sm_key = 0xffeeddccbbaa9988u;
    m.attr_offset = 4;
    m.comp_mask = 0x8000000000000001u;
    m.data[0] = 0x11;
    m.data[199] = 0x22;
    static const uint8_t want[NF_MAD_SIZE] = {
        0x01,        0x03,        0x02, 0x92, 0x03, 0x00, 0x00, 0x00, /* */
        0x01,        0x02,        0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* */
        0xff,        0x38,        0x00, 0x00, 0x80, 0x00, 0x00, 0x01, /* */
        0x01,        0x01,        0x05, 0x00, 0x00, 0x00, 0x00, 0x02, /* */
        0x00,        0x00,        0x00, 0x40,                         /* */
        0xff,        0xee,        0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88, /* */
        0x00,        0x04,        0x00, 0x00,                         /* */
        0x80,        0x00,        0x00, 0x00, 0x00, 0x00, 0x00, 0x01, /* */
        [56] = 0x11, [255] = 0x22};
    uint8_t out[NF_MAD_SIZE];
    memset(out, 0xa5, sizeof out);
    nf_mad_encode(&m, out);
    assert_bytes(out, want, NF_MAD_SIZE, "encoded header");
}

static nf_mcmember_rec sample_member(void) {
    nf_mcmember_rec r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < 16; i++) {
        r.mgid.raw[i] = (uint8_t)(0xf0 + i);
        r.port_gid.raw[i] = (uint8_t)(0x10 * i + 1);
    }
    r.qkey = 0x0b1b2b3bu;
    r.mlid = 0xc123;
    r.mtu_selector = 1;
    r.mtu = 5;
    r.tclass = 0x00;
    r.pkey = 0x8001;
    r.rate_selector = 2;
    r.rate = 0x10;
    r.packet_life_selector = 3;
    r.packet_life = 0x3f;
    r.sl = 0x3;
    r.flow_label = 0xabcde;
    r.hop_limit = 0x01;
    r.scope = 0xe;
    r.join_state = NF_JOIN_SEND_ONLY;
    r.proxy_join = false;
    r.member_count = NF_MEMBER_COUNT_MAX;
    return r;
}

static const uint8_t SAMPLE_MEMBER[NF_MCMEMBER_SIZE] = {
    0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb,
    0xfc, 0xfd, 0xfe, 0xff, 0x01, 0x11, 0x21, 0x31, 0x41, 0x51, 0x61, 0x71,
    0x81, 0x91, 0xa1, 0xb1, 0xc1, 0xd1, 0xe1, 0xf1, 0x0b, 0x1b, 0x2b, 0x3b, /* Q_Key */
    0xc1, 0x23,                                                             /* MLID */
    0x45,                   /* MTUSelector 1, MTU 5 */
    0x00,                   /* TClass */
    0x80, 0x01,             /* P_Key */
    0x90,                   /* RateSelector 2, Rate 0x10 */
    0xff,                   /* PacketLifeTimeSelector 3, value 0x3f */
    0x3a, 0xbc, 0xde, 0x01, /* SL 3, FlowLabel 0xabcde, HopLimit 1 */
    0xe4,                   /* Scope 0xe, JoinState SendOnly */
    0x7f, 0xff, 0xff        /* ProxyJoin 0, MemberCount 0x7fffff */
};

static void encode_member(const nf_mcmember_rec *r, uint8_t out[NF_MCMEMBER_SIZE]) {
    memset(out, 0xa5, NF_MCMEMBER_SIZE);
    nf_mcmember_encode(r, out);
}

static void test_encode_mcmember(void **state) {
    (void)state;
    nf_mcmember_rec r = sample_member();
    uint8_t out[NF_MCMEMBER_SIZE], want[NF_MCMEMBER_SIZE];
    encode_member(&r, out);
    assert_bytes(out, SAMPLE_MEMBER, NF_MCMEMBER_SIZE, "record");

    /* ProxyJoin is the top bit above MemberCount, in all four combinations */
    static const struct {
        bool proxy;
        uint32_t count;
        uint8_t b49, b50, b51;
    } tail[] = {{true, 0x7fffff, 0xff, 0xff, 0xff},
                {false, 0x7fffff, 0x7f, 0xff, 0xff},
                {true, 0x123456, 0x92, 0x34, 0x56},
                {false, 0x123456, 0x12, 0x34, 0x56},
                {true, 0, 0x80, 0x00, 0x00}};
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++) {
        r.proxy_join = tail[i].proxy;
        r.member_count = tail[i].count;
        encode_member(&r, out);
        memcpy(want, SAMPLE_MEMBER, sizeof want);
        want[49] = tail[i].b49;
        want[50] = tail[i].b50;
        want[51] = tail[i].b51;
        assert_bytes(out, want, NF_MCMEMBER_SIZE, "ProxyJoin/MemberCount");
        nf_mcmember_rec back;
        nf_mcmember_decode(out, &back);
        assert_mcmember_equal(&back, &r);
    }
}

/* Values wider than their field are cut to it and never spill into a neighbour. */
static void test_encode_mcmember_truncates(void **state) {
    (void)state;
    nf_mcmember_rec r = sample_member();
    r.mtu_selector = 0xfe; /* -> 2 */
    r.mtu = 0xc1;          /* -> 1 */
    r.rate_selector = 0x04;
    r.rate = 0x40;
    r.packet_life_selector = 0xff;
    r.packet_life = 0xff;
    r.sl = 0x1f;
    r.flow_label = 0xfff00001u;
    r.scope = 0x1f;
    r.join_state = 0xf0;
    r.proxy_join = false;
    r.member_count = 0xff800000u;
    uint8_t out[NF_MCMEMBER_SIZE], want[NF_MCMEMBER_SIZE];
    encode_member(&r, out);
    memcpy(want, SAMPLE_MEMBER, sizeof want);
    want[38] = 0x81;
    want[42] = 0x00;
    want[43] = 0xff;
    want[44] = 0xf0;
    want[45] = 0x00;
    want[46] = 0x01;
    want[47] = 0x01;
    want[48] = 0xf0;
    want[49] = want[50] = want[51] = 0x00;
    assert_bytes(out, want, NF_MCMEMBER_SIZE, "truncated fields");
}

/* ---- round trips --------------------------------------------------------------------------- */

static void test_roundtrip_random(void **state) {
    (void)state;
    uint64_t s = 42;
    for (int it = 0; it < 2000; it++) {
        nf_mad m;
        memset(&m, 0, sizeof m);
        m.base_version = (uint8_t)rnd(&s);
        m.mgmt_class = (uint8_t)rnd(&s);
        m.class_version = (uint8_t)rnd(&s);
        m.method = (uint8_t)rnd(&s);
        m.status = (uint16_t)rnd(&s);
        m.class_specific = (uint16_t)rnd(&s);
        m.tid = rnd(&s);
        m.attr_id = (uint16_t)rnd(&s);
        m.attr_mod = (uint32_t)rnd(&s);
        m.rmpp_version = (uint8_t)rnd(&s);
        m.rmpp_type = (uint8_t)rnd(&s);
        m.rmpp_flags = (uint8_t)(rnd(&s) & 7);
        m.rmpp_status = (uint8_t)rnd(&s);
        m.rmpp_data1 = (uint32_t)rnd(&s);
        m.rmpp_data2 = (uint32_t)rnd(&s);
        m.sm_key = rnd(&s);
        m.attr_offset = (uint16_t)rnd(&s);
        m.comp_mask = rnd(&s);
        rnd_bytes(&s, m.data, sizeof m.data);
        uint8_t buf[NF_MAD_SIZE];
        nf_mad_encode(&m, buf);
        nf_mad back;
        assert_int_equal(nf_mad_decode(buf, sizeof buf, &back), NF_OK);
        assert_mad_equal(&back, &m);

        nf_mcmember_rec r;
        memset(&r, 0, sizeof r);
        rnd_bytes(&s, r.mgid.raw, 16);
        rnd_bytes(&s, r.port_gid.raw, 16);
        r.qkey = (uint32_t)rnd(&s);
        r.mlid = (uint16_t)rnd(&s);
        r.mtu_selector = rnd(&s) & 3;
        r.mtu = rnd(&s) & 63;
        r.tclass = (uint8_t)rnd(&s);
        r.pkey = (uint16_t)rnd(&s);
        r.rate_selector = rnd(&s) & 3;
        r.rate = rnd(&s) & 63;
        r.packet_life_selector = rnd(&s) & 3;
        r.packet_life = rnd(&s) & 63;
        r.sl = rnd(&s) & 15;
        r.flow_label = rnd(&s) & 0xfffff;
        r.hop_limit = (uint8_t)rnd(&s);
        r.scope = rnd(&s) & 15;
        r.join_state = rnd(&s) & 15;
        r.proxy_join = rnd(&s) & 1;
        r.member_count = rnd(&s) & NF_MEMBER_COUNT_MAX;
        uint8_t rec[NF_MCMEMBER_SIZE];
        nf_mcmember_encode(&r, rec);
        nf_mcmember_rec rback;
        nf_mcmember_decode(rec, &rback);
        assert_mcmember_equal(&rback, &r);

        nf_mcgstate_rec g;
        memset(&g, 0, sizeof g);
        rnd_bytes(&s, g.mgid.raw, 16);
        g.mlid = (uint16_t)rnd(&s);
        g.state = (uint8_t)rnd(&s);
        g.member_count = (uint32_t)rnd(&s);
        g.joined = (uint32_t)rnd(&s);
        g.left = (uint32_t)rnd(&s);
        uint8_t grec[NF_MCGSTATE_SIZE];
        nf_mcgstate_encode(&g, grec);
        nf_mcgstate_rec gback;
        nf_mcgstate_decode(grec, &gback);
        assert_mcgstate_equal(&gback, &g);
    }
}

/* ---- truncation ---------------------------------------------------------------------------- */

/* Each prefix is copied into a buffer of exactly its length, so AddressSanitizer catches a read
 * past len. */
static void test_truncation(void **state) {
    (void)state;
    static const uint8_t zero[NF_SA_DATA_SIZE];
    for (size_t len = 0; len <= NF_MAD_SIZE + 1; len++) {
        if (len == NF_MAD_SIZE) continue;
        uint8_t *buf = malloc(len ? len : 1);
        assert_non_null(buf);
        memcpy(buf, JOIN, len < NF_MAD_SIZE ? len : NF_MAD_SIZE);
        if (len > NF_MAD_SIZE) buf[NF_MAD_SIZE] = 0x77;
        nf_mad m;
        memset(&m, 0xa5, sizeof m);
        int rc = nf_mad_decode(buf, len, &m);
        free(buf);
        if (len < NF_MAD_HDR_SIZE) {
            if (rc != NF_EPARSE) fail_msg("length %zu: got %d, want NF_EPARSE", len, rc);
            continue;
        }
        if (rc != NF_ERANGE) fail_msg("length %zu: got %d, want NF_ERANGE", len, rc);
        check_join_header(&m);
        /* the rest is zero, not half-read */
        assert_int_equal(m.rmpp_flags, 0);
        assert_int_equal(m.rmpp_data1, 0);
        assert_int_equal(m.sm_key, 0);
        assert_int_equal(m.comp_mask, 0);
        assert_bytes(m.data, zero, sizeof zero, "data of a truncated datagram");
    }
}

/* ---- GIDs ---------------------------------------------------------------------------------- */

static void test_gid_format(void **state) {
    (void)state;
    nf_gid g = nf_gid_make(0xff12401bffff0000u, 0x00000000ffffffffu);
    static const uint8_t raw[16] = {0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0,    0,
                                    0,    0,    0,    0,    0xff, 0xff, 0xff, 0xff};
    assert_bytes(g.raw, raw, 16, "nf_gid_make");
    assert_int_equal(nf_gid_prefix(&g), 0xff12401bffff0000u);
    assert_int_equal(nf_gid_guid(&g), 0xffffffffu);
    char text[40];
    memset(text, 'x', sizeof text);
    nf_gid_format(&g, text);
    assert_string_equal(text, "ff12:401b:ffff:0000:0000:0000:ffff:ffff");
    assert_int_equal(strlen(text), 39);

    g = nf_gid_make(NF_GID_DEFAULT_PREFIX, 0x0002c90300000a01u);
    nf_gid_format(&g, text);
    assert_string_equal(text, "fe80:0000:0000:0000:0002:c903:0000:0a01");
}

static void expect_gid(const char *s, uint64_t prefix, uint64_t guid) {
    nf_gid g;
    int rc = nf_gid_parse(s, &g);
    if (rc != NF_OK) fail_msg("\"%s\": got %d, want NF_OK", s, rc);
    if (nf_gid_prefix(&g) != prefix || nf_gid_guid(&g) != guid)
        fail_msg("\"%s\": got %016llx:%016llx, want %016llx:%016llx", s,
                 (unsigned long long)nf_gid_prefix(&g), (unsigned long long)nf_gid_guid(&g),
                 (unsigned long long)prefix, (unsigned long long)guid);
}

static void test_gid_parse(void **state) {
    (void)state;
    expect_gid("ff12:401b:ffff:0000:0000:0000:ffff:ffff", 0xff12401bffff0000u, 0xffffffffu);
    expect_gid("FF12:401B:FFFF:0000:0000:0000:FFFF:FFFF", 0xff12401bffff0000u, 0xffffffffu);
    expect_gid("ff12:401b:ffff::ffff:ffff", 0xff12401bffff0000u, 0xffffffffu);
    expect_gid("fe80::2:c903:0:a01", 0xfe80000000000000u, 0x0002c90300000a01u);
    expect_gid("fe80:0:0:0:2:c903:0:a01", 0xfe80000000000000u, 0x0002c90300000a01u);
    expect_gid("::", 0, 0);
    expect_gid("::1", 0, 1);
    expect_gid("1::", 0x0001000000000000u, 0);
    expect_gid("1:2:3:4:5:6:7::", 0x0001000200030004u, 0x0005000600070000u);
    expect_gid("::2:3:4:5:6:7:8", 0x0000000200030004u, 0x0005000600070008u);
    expect_gid("1:2:3::6:7:8", 0x0001000200030000u, 0x0000000600070008u);

    static const char *const bad[] = {
        "",
        ":",
        ":::",
        "::::",
        "1:2:3:4:5:6:7:8:9", /* too many groups */
        "1:2:3:4:5:6:7:8::", /* too many groups with a gap */
        "::1:2:3:4:5:6:7:8", /* the same, gap first */
        "1:2:3:4::5:6:7:8",  /* a gap that stands for no group */
        "1:2:3:4:5:6:7",     /* too few */
        "ff12:401g::1",      /* not hex */
        "12345::1",          /* a 5-digit group */
        "fe80::00001",       /* a 5-digit group after the gap */
        "1::2::3",           /* two gaps */
        "1:::2",
        ":1::",
        "1:",
        ":1:2:3:4:5:6:7:8",
        "1:2:3:4:5:6:7:8:",
        " ::1",
        "::1 ",
        "0x1::",
        "1:2:3:4:5:6:7:-8",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nf_gid g;
        memset(&g, 0x5a, sizeof g);
        int rc = nf_gid_parse(bad[i], &g);
        if (rc != NF_EPARSE) fail_msg("\"%s\": got %d, want NF_EPARSE", bad[i], rc);
        for (int k = 0; k < 16; k++)
            if (g.raw[k] != 0x5a) fail_msg("\"%s\": out was written", bad[i]);
    }
}

static void test_gid_text_roundtrip(void **state) {
    (void)state;
    uint64_t s = 7;
    for (int it = 0; it < 1000; it++) {
        nf_gid g, back;
        rnd_bytes(&s, g.raw, 16);
        if (it % 3 == 0) memset(g.raw + 4, 0, 6); /* runs of zero groups */
        char text[40];
        nf_gid_format(&g, text);
        assert_int_equal(nf_gid_parse(text, &back), NF_OK);
        assert_gid(&back, &g, text);
    }
}

/* ---- MCGStateRecord ------------------------------------------------------------------------ */

static void test_mcgstate(void **state) {
    (void)state;
    static const uint8_t rec[NF_MCGSTATE_SIZE] = {
        0xff, 0x15, 0x40, 0x1b, 0x80, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34, /* MGID */
        0xc0, 0x05,                                                             /* MLID */
        0x03, 0xee,             /* Ready, reserved (ignored) */
        0x00, 0x00, 0x01, 0x00, /* MemberCount 256 */
        0x00, 0x00, 0x00, 0xff, /* joined 255 */
        0x00, 0x00, 0x00, 0x01  /* left 1 */
    };
    nf_mcgstate_rec r;
    nf_mcgstate_decode(rec, &r);
    assert_int_equal(nf_gid_prefix(&r.mgid), 0xff15401b80010000u);
    assert_int_equal(nf_gid_guid(&r.mgid), 0x1234u);
    assert_int_equal(r.mlid, 0xc005);
    assert_int_equal(r.state, NF_MCG_READY);
    assert_int_equal(r.member_count, 256);
    assert_int_equal(r.joined, 255);
    assert_int_equal(r.left, 1);

    uint8_t out[NF_MCGSTATE_SIZE], want[NF_MCGSTATE_SIZE];
    memset(out, 0xa5, sizeof out);
    nf_mcgstate_encode(&r, out);
    memcpy(want, rec, sizeof want);
    want[19] = 0;
    assert_bytes(out, want, NF_MCGSTATE_SIZE, "re-encoded state record");
    assert_true(NF_MCGSTATE_PER_SEGMENT * NF_MCGSTATE_SIZE <= NF_SA_DATA_SIZE);
}

static void test_state_names(void **state) {
    (void)state;
    assert_string_equal(nf_mcg_state_name(NF_MCG_RECEIVING_JOIN), "ReceivingJoinReq");
    assert_string_equal(nf_mcg_state_name(NF_MCG_COMPUTING_ROUTES), "ComputingRoutes");
    assert_string_equal(nf_mcg_state_name(NF_MCG_READY), "Ready");
    assert_string_equal(nf_mcg_state_name(NF_MCG_RECEIVING_LEAVE), "ReceivingLeaveReq");
    assert_string_equal(nf_mcg_state_name(NF_MCG_DESTROYING), "Destroying");
    assert_string_equal(nf_mcg_state_name(0), "?");
    assert_string_equal(nf_mcg_state_name(6), "?");
    assert_string_equal(nf_mcg_state_name(-1), "?");
    assert_string_equal(nf_mcg_state_name(0x103), "?");
}

/* The layout constants the rest of the daemon relies on. */
static void test_sizes(void **state) {
    (void)state;
    assert_int_equal(NF_SA_HDR_SIZE, NF_MAD_HDR_SIZE + 12 + 20);
    assert_int_equal(NF_SA_HDR_SIZE + NF_SA_DATA_SIZE, NF_MAD_SIZE);
    assert_true(NF_MCMEMBER_SIZE <= NF_SA_DATA_SIZE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_decode_handwritten),
        cmocka_unit_test(test_reencode_handwritten),
        cmocka_unit_test(test_encode_header),
        cmocka_unit_test(test_encode_mcmember),
        cmocka_unit_test(test_encode_mcmember_truncates),
        cmocka_unit_test(test_roundtrip_random),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_gid_format),
        cmocka_unit_test(test_gid_parse),
        cmocka_unit_test(test_gid_text_roundtrip),
        cmocka_unit_test(test_mcgstate),
        cmocka_unit_test(test_state_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
