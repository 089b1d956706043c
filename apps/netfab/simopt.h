/* SPDX-License-Identifier: MIT */
/* The simulator's knobs as command-line options, shared by `netfab sim` and `netfab sweep` so
 * that the two accept the same flags with the same limits and print the same result keys. */
#ifndef NETFAB_APP_SIMOPT_H
#define NETFAB_APP_SIMOPT_H

#include "netfab/sim.h"

#include "opts.h"

#include <jansson.h>

enum { NF_APP_MODEL_NETFAB, NF_APP_MODEL_BOOKSIM }; /* --router-model's choices, in order */

/* The most rows of the settings table (netfab/simset.h) the knobs keep track of. */
enum { NF_APP_MAX_SETTINGS = 128 };

typedef struct nf_app_sim_knobs {
    nf_sim_config c;
    nf_sim_phase ph;
    nf_sim_injection inj;
    bool given;     /* one of the knob options (or --settings) was on the command line */
    unsigned model; /* --router-model: NF_APP_MODEL_NETFAB or NF_APP_MODEL_BOOKSIM */
    /* each setting given on the command line or in a --settings file, which --router-model
     * leaves as given (indexed as nf_simset_table) */
    bool set_given[NF_APP_MAX_SETTINGS];
    bool show;           /* --show-settings */
    const char *command; /* "sim", "sweep": the messages of --settings FILE */
    /* the keys the command sets by options of its own for each run (netfab sweep: seed and
     * threads), which --settings FILE may not set (NULL-terminated, or NULL) */
    const char *const *own_keys;
} nf_app_sim_knobs;

/* The defaults of netfab CMD: the settings table's. */
void nf_app_sim_knobs_init(nf_app_sim_knobs *k, const char *cmd);

/* The knob options as rows of the option layer (opts.h) writing into k, in rows (room for
 * NF_APP_SIM_KNOBS): one per setting of the table (netfab/simset.h) that is an option, with
 * --router-model, --settings FILE and --show-settings; returns their count. */
enum { NF_APP_SIM_KNOBS = 53 };
size_t nf_app_sim_knob_opts(nf_app_sim_knobs *k, nf_opt *rows);

/* After the options are read: --router-model booksim sets the settings of BookSim2's iq_router
 * (NF_SIMSET_BOOKSIM in the table) that were not given. */
void nf_app_sim_knobs_finish(nf_app_sim_knobs *k);

/* --show-settings: every setting of the table with its value in k, its default and range, as a
 * table on stdout, or with json one object of key: value (which --settings FILE reads back).
 * NF_EXIT_OK, or NF_EXIT_FAIL when stdout fails. */
int nf_app_sim_settings_print(const nf_app_sim_knobs *k, bool json);

/* The traffic pattern NAME names under k's router model: with booksim, BookSim2's own of that
 * name when the library has one (bs-NAME; permutation is bs-randperm), else NAME's; NULL when
 * there is none. */
const nf_sim_traffic *nf_app_sim_traffic(const nf_app_sim_knobs *k, const char *name);

/* The most load points one --sweep (netfab sim) or --loads (netfab sweep) may ask for. */
#define NF_APP_MAX_LOAD_POINTS 1000

/* Appends to the n loads of *loads (realloc'd; free it) the points of item: a load from 0 to 1,
 * or, with range, A:B:STEP (0 <= A <= B <= 1, 0 < STEP <= 1): A + j STEP for j = 0, 1, ...
 * while at most B (within 1e-9), each rounded to 12 significant digits (0.05 + 19 x 0.05 is the
 * 1 one would type, not 1.0000000000000002). The same points in netfab sim and sweep; at most
 * NF_APP_MAX_LOAD_POINTS in all. 0, or NF_EXIT_USAGE / NF_EXIT_FAIL after saying why. */
int nf_app_load_points(const char *cmd, const char *opt, const char *item, bool range,
                       double **loads, size_t *n);

/* One load point's result as netfab sim --json prints it (load is the point asked for);
 * excluded_msgs only with exclude (--exclude-unroutable); corrupt_pkts, wasted_flits and
 * saf_frac only with errors (--ber above 0 or --switching other than vct); bg_lat_mean,
 * bg_lat_p99 and hot_accepted only with classes; so that the keys of other runs, and netfab
 * sweep's CSV header, stay as they were. */
json_t *nf_app_sim_result_json(double load, const nf_sim_result *res, unsigned failed_links,
                               bool exclude, bool errors, bool classes);

/* The unroutable check of netfab sim and sweep, before s runs: the source/destination pairs no
 * path joins, with the links failed now or set to fail during the run (nf_sim_unroutable_pairs),
 * in *pairs. NF_EXIT_OK when there are none or exclude (--exclude-unroutable: the run skips
 * them); else NF_EXIT_USAGE, or NF_EXIT_FAIL when out of memory, with the reason in msg (cap
 * bytes, no command name in front; failed: links were failed, which the message says). */
int nf_app_sim_unroutable(const nf_fabric *f, const nf_sim *s, bool exclude, bool failed,
                          uint64_t *pairs, char *msg, size_t cap);

/* A --routing argument: a routing of the registry by name, or "lft:FILE", forwarding tables
 * (OpenSM's opensm-lfts.dump, dump_fts or ibroute output) read against the fabric once it is
 * built. */
typedef struct nf_app_routing {
    const nf_sim_routing *r; /* the routing (after nf_app_routing_resolve for lft:FILE) */
    const char *lft_path;    /* FILE of lft:FILE (borrowed from argv), else NULL */
    nf_uft *t;               /* its tables, owned */
    nf_sim_routing *own;     /* the routing over them, owned */
} nf_app_routing;

/* The prefix of a --routing argument that names a tables file. */
#define NF_APP_LFT_PREFIX "lft:"

/* The one line of help for --routing that says what lft:FILE is. */
#define NF_APP_LFT_HELP                                                                            \
    "; or lft:FILE, the forwarding tables in FILE (OpenSM's opensm-lfts.dump, dump_fts or "        \
    "ibroute output), read against the --topo fabric by switch GUID and LID: an ibnetdiscover "    \
    "or ibsim file with the LIDs the tables were made for (a generated fabric's LIDs are "         \
    "netfab's own)"

/* Checks name before any fabric is built: a known routing, or lft:FILE with a FILE. 0, or
 * NF_EXIT_USAGE after saying why ("netfab CMD: ..."). */
int nf_app_routing_parse(const char *cmd, const char *name, nf_app_routing *out);

/* For lft:FILE, reads the tables against f (warnings to stderr with their counts) and makes the
 * routing over them; nothing for a routing of the registry. 0, or the exit status after saying
 * why (NF_EXIT_USAGE for a fabric without LIDs or a bad table, NF_EXIT_FAIL otherwise). */
int nf_app_routing_resolve(nf_app_routing *ar, const nf_fabric *f);

/* Frees what resolve made (the fabric may be freed before or after). */
void nf_app_routing_fini(nf_app_routing *ar);

#endif
