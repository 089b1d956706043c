/* SPDX-License-Identifier: MIT */
/* The multicast group manager as a service: a UDP server speaking the SA MADs of
 * docs/protocol.md over an nf_mcgm, with a journal in a state directory (every event made durable
 * before the reply that acknowledges it), retransmission-safe replies, keys that bind a requester
 * to its own ports, per-requester limits, GetTable answers sent window by window as the client
 * acknowledges them (RMPP), and dumps of the live forwarding tables written by a child process
 * while service goes on. One thread, a poll loop; the caller owns signals and hands the loop a
 * wake-up descriptor. And the client side: requests with retries and a timeout. */
#ifndef NETFAB_SMD_H
#define NETFAB_SMD_H

#include "core.h"
#include "fabric.h"
#include "hops.h"
#include "mcgm.h"
#include "sa.h"

#include <stddef.h>

/* ---- server --------------------------------------------------------------------------------- */

typedef struct nf_smd nf_smd;

typedef struct nf_smd_opts {
    const char *listen;      /* "ADDR:PORT", ADDR an IPv4 address; port 0 picks a free one. Without
                              * keys_file only a loopback address (127.0.0.0/8) is accepted. */
    const char *keys_file;   /* the manager key and per-port keys (docs/protocol.md, "Keys"), or
                              * NULL: every client is trusted (loopback only) */
    const char *state_dir;   /* journal directory, or NULL for none */
    bool repair_journal;     /* a journal damaged before its tail is salvaged (what can be read
                              * is kept, the damaged file is kept beside it, the losses are
                              * logged) instead of refused */
    const char *dump_prefix; /* dumps go to PREFIX.mcfdbs and PREFIX.groups; NULL: STATE/smd or
                              * ./netfab-smd without a state directory */
    nf_mcgm_opts mcgm;
    int wake_fd; /* readable end of a pipe: byte 'T' stops the loop, 'H' dumps; -1 for none */
    /* progress and problems, one line each, no newline (may be NULL) */
    void (*log)(void *ud, const char *line);
    void *log_ud;
} nf_smd_opts;

typedef struct nf_smd_stats {
    uint64_t datagrams, dropped, answered, retransmits; /* retransmits answered from the cache */
    uint64_t errors;                                    /* answers with a non-zero status */
    uint64_t journal_records, journal_syncs, compactions;
    uint64_t replayed, torn_bytes; /* at start */
    uint64_t denied;               /* requests refused: not the requester's port, or privileged */
    uint64_t tid_reused;           /* a change whose transaction id names an earlier other one */
    uint64_t transfers, transfers_expired, segments, busy; /* GetTable under RMPP; refusals */
    uint64_t dumps, dump_failures;
    uint64_t no_space_events,
        refused_no_space; /* failed syncs for want of space; changes refused */
} nf_smd_stats;

/* Reads the keys, binds the socket, opens and replays the journal, compacts it (when there is room
 * for the copy; without, it starts on the journal as it is). f and h must outlive the server.
 * NF_EINVAL (bad listen address, a non-loopback address without keys, engine, a keys file or
 * state directory others can read or write), NF_EIO (socket, bind, journal; the reason in diag),
 * NF_ELOCKED (another daemon holds the state directory), NF_EPARSE (a keys file or a journal that
 * is damaged before its tail: the file is left untouched), NF_EINVAL (a journal written for
 * another fabric), NF_ENOMEM. */
NF_API int nf_smd_new(const nf_fabric *f, const nf_hops *h, const nf_smd_opts *opts, nf_smd **out,
                      nf_diag *diag);

/* Serves until 'T' arrives on wake_fd ('H' starts a dump). Returns NF_OK, or the error when the
 * journal cannot be written for another reason than space (the loop stops at once: nothing
 * unlogged is ever acknowledged). Out of space, it refuses changes and goes on (see flush). */
NF_API int nf_smd_run(nf_smd *s, nf_diag *diag);

/* The bound UDP port. */
NF_API unsigned nf_smd_port(const nf_smd *s);
NF_API const nf_mcgm *nf_smd_manager(const nf_smd *s);
NF_API void nf_smd_get_stats(const nf_smd *s, nf_smd_stats *out);
/* Writes the dump files now, in this process (a dump request or 'H' runs it in a child). */
NF_API int nf_smd_dump(nf_smd *s, nf_diag *diag);
NF_API void nf_smd_free(nf_smd *s); /* syncs and closes the journal; NULL is a no-op */

/* ---- client --------------------------------------------------------------------------------- */

typedef struct nf_smc nf_smc;

/* A client socket talking to server "ADDR:PORT". NF_EINVAL, NF_EIO. */
NF_API int nf_smc_open(const char *server, nf_smc **out, nf_diag *diag);
NF_API void nf_smc_close(nf_smc *c);
NF_API int nf_smc_fd(const nf_smc *c);

/* Retries: a request is sent, and sent again with the same transaction id after timeout_ms
 * without its answer, up to retries more times. 0, 0: 200 ms, 10 retries. sm_key: carried in
 * every request's SA header: the port's key or the manager's when the server has keys, else 0. */
typedef struct nf_smc_opts {
    uint32_t timeout_ms, retries;
    uint64_t sm_key;
    uint32_t window; /* GetTable: segments asked for at a time (RMPP window); 0: 32 */
} nf_smc_opts;

/* One request and its answer. The return value is NF_OK when an answer came (its MAD status is
 * in *status), NF_ETIMEDOUT when none did, NF_EREFUSED when none did and the server's host
 * refused the requests (no process listens on that port; every retry is still made), NF_EIO on
 * a socket error, NF_EPARSE when the answer is malformed. */
NF_API int nf_smc_join(nf_smc *c, const nf_smc_opts *o, const nf_gid *mgid, const nf_gid *port_gid,
                       uint32_t member_count, uint16_t *status, nf_mcmember_rec *answer);
NF_API int nf_smc_leave(nf_smc *c, const nf_smc_opts *o, const nf_gid *mgid, const nf_gid *port_gid,
                        uint16_t *status, nf_mcmember_rec *answer);
NF_API int nf_smc_state(nf_smc *c, const nf_smc_opts *o, const nf_gid *mgid, uint16_t *status,
                        nf_mcgstate_rec *answer);
NF_API int nf_smc_dump(nf_smc *c, const nf_smc_opts *o, uint16_t *status);
/* Every group (GetTable): the records in a new array *out (nf_free), their number in *n. The
 * answer comes under RMPP: segment 1, then the client acknowledges what it has and asks for the
 * next window (window segments; 0: 32); a window that does not arrive whole is asked for again. */
NF_API int nf_smc_table(nf_smc *c, const nf_smc_opts *o, uint16_t *status, nf_mcgstate_rec **out,
                        size_t *n);

/* The building blocks of the above, for a client with many requests in flight (the load
 * generator): a fresh transaction id, one datagram out, one in (timeout_ms; NF_ETIMEDOUT, also
 * when the host refused it). */
NF_API uint64_t nf_smc_next_tid(nf_smc *c);
NF_API int nf_smc_send(nf_smc *c, const nf_mad *m);
NF_API int nf_smc_recv(nf_smc *c, int timeout_ms, nf_mad *out);

/* Fills a request MAD: SA class, versions, method, attribute, the transaction id. */
NF_API void nf_smc_request(nf_mad *m, uint8_t method, uint16_t attr, uint64_t tid);

#endif
