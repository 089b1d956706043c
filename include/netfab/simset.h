/* SPDX-License-Identifier: MIT */
/* The simulator's settings, each defined once: one table row per field of nf_sim_config,
 * nf_sim_phase and nf_sim_injection a user may set, with its name on the command line, its key
 * in JSON (the field's own name), its type, range, default, the value BookSim2's router model
 * gives it, and its help. The defaults (nf_sim_config_defaults), the checks of nf_sim_new and
 * nf_sim_run, netfab's options, their --help and man page, and the settings netfab prints and
 * reads as JSON all come from this table. */
#ifndef NETFAB_SIMSET_H
#define NETFAB_SIMSET_H

#include "core.h"
#include "sim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The struct a setting is a field of. */
typedef enum nf_simset_in {
    NF_SIMSET_CONFIG,    /* nf_sim_config */
    NF_SIMSET_PHASE,     /* nf_sim_phase */
    NF_SIMSET_INJECTION, /* nf_sim_injection */
    NF_SIMSET_N_IN
} nf_simset_in;

typedef enum nf_simset_type {
    NF_SIMSET_UINT,   /* a whole number in [lo, hi]: an unsigned or a uint64_t field (size) */
    NF_SIMSET_REAL,   /* a double in [rlo, rhi], finite; `open` may exclude either end */
    NF_SIMSET_BOOL,   /* a bool, off by default; on the command line a flag */
    NF_SIMSET_CHOICE, /* the index of one of choices[], in an enum field or a bool */
} nf_simset_type;

/* nf_simset.flags */
enum {
    NF_SIMSET_AUTO = 1,     /* 0, in range or not, means "chosen by the simulator", as
                             * def_text says */
    NF_SIMSET_OPEN_LO = 2,  /* REAL: rlo itself is out of range */
    NF_SIMSET_OPEN_HI = 4,  /* REAL: rhi itself is out of range */
    NF_SIMSET_BOOKSIM = 8,  /* the BookSim2 router model sets it to `booksim` */
    NF_SIMSET_LIBRARY = 16, /* no netfab sim option: set by the library's callers and by the
                             * commands that script messages (netfab exp), or, as the seed and
                             * the thread count, by options of each command's own */
};

typedef struct nf_simset {
    const char *name; /* the option, without "--" ("router-delay") */
    const char *key;  /* the JSON key: the field's name ("router_delay") */
    nf_simset_in in;
    size_t offset, size; /* of the field in its struct */
    nf_simset_type type;
    uint64_t lo, hi;            /* UINT */
    double rlo, rhi;            /* REAL */
    unsigned flags;             /* NF_SIMSET_* */
    double def;                 /* the default (CHOICE: the index; BOOL: 0) */
    double booksim;             /* with NF_SIMSET_BOOKSIM: BookSim2's iq_router's value */
    const char *const *choices; /* CHOICE: NULL-terminated, in the order of the values */
    const char *arg;            /* the value's name in the help ("FLITS"); NULL for BOOL, CHOICE */
    const char *help;           /* what it does, one paragraph, without the default */
    const char *def_text;       /* the default in words when the number alone says too little
                                 * (AUTO settings: what 0 chooses), else NULL */
} nf_simset;

/* Every setting, in the order the options are listed; *n receives their count. The table is
 * static: borrowed for ever. */
NF_API const nf_simset *nf_simset_table(size_t *n);

/* The setting whose option name or key is name, or NULL. */
NF_API const nf_simset *nf_simset_find(const char *name);

/* The value of s in base (a struct of type s->in) as a double: exact for every value but seeds
 * above 2^53 (read those through s->offset). */
NF_API double nf_simset_get(const nf_simset *s, const void *base);

/* Whether v is in s's range (an index of choices[], 0 or 1 for BOOL; an AUTO setting also
 * takes 0); when not, NF_EINVAL with the reason in diag ("vcs 0: a whole number from 1 to 16"). */
NF_API int nf_simset_check(const nf_simset *s, double v, nf_diag *diag);

/* Checks v (nf_simset_check) and writes it into base. 0, or NF_EINVAL with diag. */
NF_API int nf_simset_put(const nf_simset *s, void *base, double v, nf_diag *diag);

/* The whole-number setting s (NF_SIMSET_UINT) of base read, or checked and written, as the
 * 64-bit value itself, with no double between: a seed takes every value of 64 bits. put: 0, or
 * NF_EINVAL with diag (s not UINT, or v out of range). */
NF_API uint64_t nf_simset_get_uint(const nf_simset *s, const void *base);
NF_API int nf_simset_put_uint(const nf_simset *s, void *base, uint64_t v, nf_diag *diag);

/* Every setting of struct `in` in base set to its default, every other byte of the struct 0. */
NF_API void nf_simset_defaults(nf_simset_in in, void *base);

/* Every setting of struct `in` in base checked against its row: 0, or NF_EINVAL with the first
 * bad one in diag. (nf_sim_new and nf_sim_run check what depends on several settings, or on
 * the fabric and routing, themselves.) */
NF_API int nf_simset_check_all(nf_simset_in in, const void *base, nf_diag *diag);

/* The range of s in words ("a whole number from 1 to 16", "a number from 0.1 to 64",
 * "one of vct, saf, dynamic"), into buf (cap bytes); returns buf. */
NF_API const char *nf_simset_range_text(const nf_simset *s, char *buf, size_t cap);

/* The value v of s as netfab prints it ("4", "0.2", "separate", "yes"), into buf. */
NF_API const char *nf_simset_value_text(const nf_simset *s, double v, char *buf, size_t cap);

#endif
