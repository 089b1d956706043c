/* SPDX-License-Identifier: MIT */
/* The wire codec of the multicast group manager (netfab smd): InfiniBand subnet administration
 * MADs carried one per UDP datagram, 256 bytes, big-endian, with MCMemberRecord extended by
 * MemberCount and a new MCGStateRecord attribute. The exact layout is docs/protocol.md. Pure
 * functions, no allocation: safe on hostile input. */
#ifndef NETFAB_SA_H
#define NETFAB_SA_H

#include "core.h"

#include <stdbool.h>

#define NF_MAD_SIZE 256
#define NF_MAD_HDR_SIZE 24 /* common MAD header */
#define NF_SA_HDR_SIZE 56  /* common header + RMPP header (12) + SA header (20) */
#define NF_SA_DATA_SIZE 200

#define NF_MAD_BASE_VERSION 1
#define NF_MAD_CLASS_SA 0x03
#define NF_SA_CLASS_VERSION 2

/* Methods. */
enum {
    NF_MAD_GET = 0x01,
    NF_MAD_SET = 0x02,
    NF_MAD_GET_RESP = 0x81,
    NF_MAD_GETTABLE = 0x12,
    NF_MAD_GETTABLE_RESP = 0x92,
    NF_MAD_DELETE = 0x15,
    NF_MAD_DELETE_RESP = 0x95
};

/* Attributes. MCGStateRecord and the dump request are ours, in the vendor range. */
enum { NF_SA_ATTR_MCMEMBER = 0x0038, NF_SA_ATTR_MCGSTATE = 0xFF38, NF_SA_ATTR_DUMP = 0xFF39 };

/* The MAD status field (host order): the common invalid-field codes in bits 2..4, SA's own in
 * bits 8..15 (IBA 13.4.7 and 15.2.1.1); what the manager answers with each is docs/protocol.md. */
enum {
    NF_MAD_STATUS_OK = 0x0000,
    NF_MAD_STATUS_BAD_VERSION = 0x0004,   /* base version, class or class version not served */
    NF_MAD_STATUS_BAD_METHOD = 0x0008,    /* method not supported */
    NF_MAD_STATUS_BAD_ATTR = 0x000C,      /* method/attribute combination not supported */
    NF_MAD_STATUS_INVALID_FIELD = 0x001C, /* invalid field value (a truncated datagram too) */
    NF_SA_STATUS_NO_RESOURCES = 0x0100,   /* no multicast LID left */
    NF_SA_STATUS_REQ_INVALID = 0x0200,    /* e.g. MemberCount differs from the group's */
    NF_SA_STATUS_NO_RECORDS = 0x0300,     /* no such group */
    NF_SA_STATUS_INVALID_GID = 0x0500,    /* PortGID is no endpoint port of the fabric */
    NF_SA_STATUS_DENIED = 0x0700          /* the group is being destroyed */
};

/* RMPP (used by GetTable responses that span several datagrams). */
#define NF_RMPP_TYPE_DATA 1
#define NF_RMPP_TYPE_ACK 2
#define NF_RMPP_TYPE_STOP 3
#define NF_RMPP_TYPE_ABORT 4
#define NF_RMPP_FLAG_ACTIVE 0x1
#define NF_RMPP_FLAG_FIRST 0x2
#define NF_RMPP_FLAG_LAST 0x4

/* A decoded SA MAD, fields in host order. */
typedef struct nf_mad {
    uint8_t base_version, mgmt_class, class_version, method;
    uint16_t status, class_specific;
    uint64_t tid;
    uint16_t attr_id;
    uint32_t attr_mod;
    /* rmpp_flags: the low 3 bits of their byte; RRespTime, its top 5 bits, is not kept (encode
     * writes 0). */
    uint8_t rmpp_version, rmpp_type, rmpp_flags, rmpp_status;
    uint32_t rmpp_data1, rmpp_data2;
    uint64_t sm_key;
    uint16_t attr_offset; /* record size in 8-byte words (GetTable responses) */
    uint64_t comp_mask;
    uint8_t data[NF_SA_DATA_SIZE];
} nf_mad;

/* Decodes a datagram of len bytes. Returns NF_OK for exactly NF_MAD_SIZE bytes; NF_ERANGE when
 * the common header (NF_MAD_HDR_SIZE bytes) is there but the length is not NF_MAD_SIZE (the header
 * fields are filled, so the caller can answer with the transaction id; the rest is zero); NF_EPARSE
 * when even the common header is missing (nothing to answer: drop it). Never reads past len. */
NF_API int nf_mad_decode(const void *buf, size_t len, nf_mad *out);

/* Encodes m into exactly NF_MAD_SIZE bytes. */
NF_API void nf_mad_encode(const nf_mad *m, uint8_t out[NF_MAD_SIZE]);

/* A 128-bit GID (MGID, PortGID) in wire order (byte 0 is the most significant). */
typedef struct nf_gid {
    uint8_t raw[16];
} nf_gid;

/* The GID's interface identifier (its low 64 bits: a port GUID) and subnet prefix. */
NF_API uint64_t nf_gid_guid(const nf_gid *g);
NF_API uint64_t nf_gid_prefix(const nf_gid *g);
NF_API nf_gid nf_gid_make(uint64_t prefix, uint64_t guid);
/* "ff12:401b:...": 8 groups of 4 lowercase hex digits. parse also accepts upper case, groups of
 * 1 to 4 digits and one "::" standing for one or more zero groups, as in IPv6 text; anything else
 * is NF_EPARSE (out untouched). format needs 40 bytes. */
NF_API void nf_gid_format(const nf_gid *g, char out[40]);
NF_API int nf_gid_parse(const char *s, nf_gid *out);

#define NF_GID_DEFAULT_PREFIX 0xfe80000000000000ULL

/* MCMemberRecord (IBA 15.2.5.17), 52 bytes on the wire at data[0], plus MemberCount: the group's
 * size, in the 23 bits the standard leaves reserved after ProxyJoin. */
#define NF_MCMEMBER_SIZE 52
#define NF_MEMBER_COUNT_MAX 0x7FFFFFu
typedef struct nf_mcmember_rec {
    nf_gid mgid, port_gid;
    uint32_t qkey;
    uint16_t mlid;
    uint8_t mtu_selector, mtu; /* 2 and 6 bits */
    uint8_t tclass;
    uint16_t pkey;
    uint8_t rate_selector, rate;               /* 2 and 6 bits */
    uint8_t packet_life_selector, packet_life; /* 2 and 6 bits */
    uint8_t sl;                                /* 4 bits */
    uint32_t flow_label;                       /* 20 bits */
    uint8_t hop_limit;
    uint8_t scope, join_state; /* 4 bits each */
    bool proxy_join;
    uint32_t member_count; /* 23 bits */
} nf_mcmember_rec;

/* Join states (bits of join_state). */
#define NF_JOIN_FULL 0x1
#define NF_JOIN_NON 0x2
#define NF_JOIN_SEND_ONLY 0x4

/* Decodes / encodes the record at p (NF_MCMEMBER_SIZE bytes). Fields wider than their wire width
 * are truncated to it by encode. */
NF_API void nf_mcmember_decode(const uint8_t *p, nf_mcmember_rec *r);
NF_API void nf_mcmember_encode(const nf_mcmember_rec *r, uint8_t *p);

/* MCGStateRecord (ours), 32 bytes: MGID, MLID, state, MemberCount, joined, left. */
#define NF_MCGSTATE_SIZE 32
enum {
    NF_MCG_RECEIVING_JOIN = 1,
    NF_MCG_COMPUTING_ROUTES = 2,
    NF_MCG_READY = 3,
    NF_MCG_RECEIVING_LEAVE = 4,
    NF_MCG_DESTROYING = 5
};
typedef struct nf_mcgstate_rec {
    nf_gid mgid;
    uint16_t mlid;
    uint8_t state; /* NF_MCG_* */
    uint32_t member_count, joined, left;
} nf_mcgstate_rec;
NF_API void nf_mcgstate_decode(const uint8_t *p, nf_mcgstate_rec *r);
NF_API void nf_mcgstate_encode(const nf_mcgstate_rec *r, uint8_t *p);

/* "ReceivingJoinReq", "ComputingRoutes", "Ready", "ReceivingLeaveReq", "Destroying", or "?". */
NF_API const char *nf_mcg_state_name(int state);

/* GetTable responses: records of MCGSTATE_SIZE bytes, 6 per datagram (192 of the 200 data bytes),
 * each datagram a complete MAD (headers repeated) with an RMPP DATA header: data1 = segment number
 * from 1, data2 = total payload bytes in the first segment and this segment's payload bytes in the
 * others, flags ACTIVE, plus FIRST and LAST. A table with no record is one segment (FIRST|LAST)
 * with data2 = 0. */
#define NF_MCGSTATE_PER_SEGMENT 6

#endif
