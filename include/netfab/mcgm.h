/* SPDX-License-Identifier: MIT */
/* The multicast group manager (the multicast paper, section 3.2): groups that collect all their
 * joins before their routes are computed, once; leaves that never recompute; timeouts for joins or
 * leaves that never come. Pure state machine over a fabric: the caller brings the clock
 * (milliseconds, any origin, never going back), the datagrams and the journal. Every event is
 * handed to a log callback as a record before the call returns, and replaying those records
 * rebuilds the same state (same MLIDs, same trees). Link loads stay exact as groups come and go. */
#ifndef NETFAB_MCGM_H
#define NETFAB_MCGM_H

#include "core.h"
#include "fabric.h"
#include "groups.h"
#include "hops.h"
#include "mcast.h"
#include "sa.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct nf_mcgm nf_mcgm;

typedef struct nf_mcgm_opts {
    const nf_mcast_engine *engine; /* NULL: fulb */
    uint32_t join_timeout_ms;      /* from a group's first join to Ready; 0: 10000 */
    uint32_t leave_timeout_ms;     /* from a group's first leave to its last; 0: 10000 */
    uint32_t linger_ms;            /* a destroyed group answers Destroying this long; 0: 5000 */
    bool recompute_each_join;      /* the old InfiniBand way: route again on every join/leave */
    /* Limits per owner (the requester a group was created for, see nf_mcgm_join_as): groups it
     * created that still hold an MLID (lingering destroyed ones included), and those of them not
     * yet Ready. A join that would create one more is answered NO_RESOURCES. 0: the defaults. */
    uint32_t max_groups_per_owner;  /* 0: NF_MCGM_DEFAULT_GROUPS_PER_OWNER */
    uint32_t max_pending_per_owner; /* 0: NF_MCGM_DEFAULT_PENDING_PER_OWNER */
    /* Memberships of all groups together (ports that have left a group still count until it is
     * forgotten); a join that would add one more is NO_RESOURCES. The bound on the manager's
     * memory and journal whoever floods it. 0: 64 per endpoint, at least NF_MCGM_DEFAULT_MEMBERS.
     * Replay is not held to it. */
    uint32_t max_members;
} nf_mcgm_opts;

#define NF_MCGM_DEFAULT_GROUPS_PER_OWNER 1024u
#define NF_MCGM_DEFAULT_PENDING_PER_OWNER 256u
#define NF_MCGM_DEFAULT_MEMBERS (1u << 20)

/* Receives every event as a record (borrowed for the call) to append to a journal. */
typedef void (*nf_mcgm_log_fn)(void *ud, const uint8_t *rec, uint32_t len);

/* A manager for fabric f (f and h must outlive it). log may be NULL. NF_EINVAL for an engine that
 * cannot route live (fulb+), NF_ENOMEM. */
NF_API int nf_mcgm_new(const nf_fabric *f, const nf_hops *h, const nf_mcgm_opts *opts,
                       nf_mcgm_log_fn log, void *log_ud, nf_mcgm **out);
NF_API void nf_mcgm_free(nf_mcgm *m); /* NULL is a no-op */

/* The requests. Each returns the SA status to answer with (NF_MAD_STATUS_OK or an NF_SA_STATUS_*
 * code, see docs/protocol.md) and the group's state after the request in *out (the MGID only when
 * there is no such group). Repeating a join or a leave of the same port is harmless. An MGID that
 * is not a multicast GID (nf_mcgm_mgid_valid) is INVALID_GID.
 *   join: creates the group on its first join; member_count must be 1..the fabric's endpoints
 *         and switches, and equal on every join; the member_count-th distinct port routes the
 *         group (Ready). The port is a CA port by its GUID, or a switch by its own GUID (its
 *         port 0, as InfiniBand allows a switch to join: the tables then set that port).
 *         join_as names the owner a new group is counted against (its creator: the daemon uses
 *         the joining port's GUID); owner 0 is the manager itself, never limited. join is
 *         join_as with owner 0.
 *   leave: a member of a Ready group leaving starts ReceivingLeaveReq; the last one destroys it.
 *         Before Ready, a leave takes the port back out of the joins.
 *   query: the group's state. */
NF_API uint16_t nf_mcgm_join(nf_mcgm *m, const nf_gid *mgid, uint64_t port_guid,
                             uint32_t member_count, uint64_t now_ms, nf_mcgstate_rec *out);
NF_API uint16_t nf_mcgm_join_as(nf_mcgm *m, uint64_t owner, const nf_gid *mgid, uint64_t port_guid,
                                uint32_t member_count, uint64_t now_ms, nf_mcgstate_rec *out);
/* A multicast GID (IBA 4.1.1): first byte 0xFF, the three reserved flag bits zero. */
NF_API bool nf_mcgm_mgid_valid(const nf_gid *mgid);
NF_API uint16_t nf_mcgm_leave(nf_mcgm *m, const nf_gid *mgid, uint64_t port_guid, uint64_t now_ms,
                              nf_mcgstate_rec *out);
NF_API uint16_t nf_mcgm_query(const nf_mcgm *m, const nf_gid *mgid, nf_mcgstate_rec *out);

/* Every group the manager knows (destroyed ones while they linger), in MLID order: up to cap
 * records into out; returns how many there are. */
NF_API size_t nf_mcgm_list(const nf_mcgm *m, nf_mcgstate_rec *out, size_t cap);

/* Timers: the earliest deadline (UINT64_MAX when none), and the expiry of every deadline up to
 * now: joins not all in -> Destroying, leaves not all in -> Destroying, lingering groups gone.
 * Returns the number of groups that went to Destroying. */
NF_API uint64_t nf_mcgm_next_deadline(nf_mcgm *m); /* drops stale timer entries */
NF_API uint32_t nf_mcgm_tick(nf_mcgm *m, uint64_t now_ms);

/* Journal replay: apply one record written by the log callback of an earlier manager on the same
 * fabric. NF_EPARSE for a record that is not one, NF_EINVAL for one that does not fit the fabric or
 * the state (a journal of another fabric). Then nf_mcgm_replay_done once: groups caught mid-join
 * collect again under a fresh join timeout from now (mid-leave: a fresh leave timeout); a group
 * whose last join was logged but not its routes is routed now. Replay logs nothing. */
NF_API int nf_mcgm_replay(nf_mcgm *m, const uint8_t *rec, uint32_t len);
NF_API int nf_mcgm_replay_done(nf_mcgm *m, uint64_t now_ms);

/* A snapshot of the live state as records (for compaction): emit(ud, rec, len) for each; stops
 * at and returns emit's first non-zero value. */
NF_API int nf_mcgm_snapshot(const nf_mcgm *m,
                            int (*emit)(void *ud, const uint8_t *rec, uint32_t len), void *ud);

/* The routed groups (Ready, ReceivingLeaveReq, and in recompute mode those still joining) as
 * batch structures, for nf_mcast_verify and the exports: groups, trees (efi is a copy of the live
 * loads) and each group's MLID. The caller frees them with nf_groups_free, nf_mcast_free and
 * nf_free. NF_ENOMEM. */
NF_API int nf_mcgm_export(const nf_mcgm *m, nf_groups **groups, nf_mcast **trees, uint16_t **mlid);

/* The live MFTs in OpenSM's mcfdbs layout to mft, and one line per group to table:
 * MLID, MGID, state, MemberCount, joined, left, root switch GUID (or -). NF_EIO, NF_ENOMEM. */
NF_API int nf_mcgm_write_dump(const nf_mcgm *m, FILE *mft, FILE *table);

/* Live link loads (borrowed). */
NF_API const uint32_t *nf_mcgm_efi(const nf_mcgm *m);

typedef struct nf_mcgm_counters {
    uint64_t joins, leaves;    /* requests handled */
    uint64_t routes;           /* trees computed */
    uint64_t ready, destroyed; /* groups that reached Ready / Destroying */
    uint32_t groups;           /* groups known now (lingering ones included) */
    uint64_t refused_limit;    /* joins refused by a per-owner limit or the members limit */
    double route_s;            /* time spent computing trees */
} nf_mcgm_counters;
NF_API void nf_mcgm_get_counters(const nf_mcgm *m, nf_mcgm_counters *out);

#endif
