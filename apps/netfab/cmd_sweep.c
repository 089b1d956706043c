/* SPDX-License-Identifier: MIT */
/* `netfab sweep`: a grid of simulations (fabrics x routings x traffics x seeds x loads) or of
 * multicast routings (fabrics x group patterns x seeds x engines), spread over the ranks of an
 * MPI job and, inside a rank, over OpenMP threads. A cell's result depends on its parameters
 * alone (the simulator is bit-identical for any thread count, and a run starts from its seed),
 * so the output is the same whatever the number of ranks and threads; only the timings differ. */
#define _GNU_SOURCE
#include "cmd.h"
#include "opts.h"
#include "progress.h"
#include "rows.h"
#include "simopt.h"
#include "netfab/groups.h"
#include "netfab/hops.h"
#include "netfab/mcast.h"
#include "netfab/sim.h"
#include "util/cpus.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <omp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef NF_HAVE_MPI
#include <mpi.h>
#endif

/* ---- the grid ---------------------------------------------------------------------------- */

typedef struct strs {
    char **v;
    size_t n;
} strs;

typedef struct grid {
    bool mcast;      /* multicast grid (else simulation) */
    strs topo, a, b; /* simulation: a routings, b traffics; multicast: a patterns, b engines */
    uint64_t *seed;
    size_t n_seed;
    double *load; /* simulation only */
    size_t n_load;
    nf_app_sim_knobs k;
    nf_workload_opts w;
    bool verify, no_times;
} grid;

/* The cell's coordinates. Simulation: topo, routing (a), traffic (b), seed, load, the load
 * innermost so that one simulator serves consecutive cells; multicast: topo, pattern (a), seed,
 * engine (b), the engine innermost so that one workload serves consecutive cells. */
typedef struct cell {
    size_t t, a, b, s, l;
} cell;

static size_t grid_cells(const grid *g) {
    return g->topo.n * g->a.n * g->b.n * g->n_seed * g->n_load;
}

static cell cell_at(const grid *g, size_t i) {
    cell c = {0};
    if (g->mcast) {
        c.b = i % g->b.n, i /= g->b.n;
        c.s = i % g->n_seed, i /= g->n_seed;
    } else {
        c.l = i % g->n_load, i /= g->n_load;
        c.s = i % g->n_seed, i /= g->n_seed;
        c.b = i % g->b.n, i /= g->b.n;
    }
    c.a = i % g->a.n, i /= g->a.n;
    c.t = i;
    return c;
}

/* The key of what consecutive cells can share: all coordinates but the innermost one. */
static size_t shared_key(const grid *g, size_t i) { return i / (g->mcast ? g->b.n : g->n_load); }

static int push(strs *l, const char *s, size_t len) {
    char **v = realloc(l->v, (l->n + 1) * sizeof *v);
    if (!v) return -1;
    l->v = v;
    if (!(v[l->n] = strndup(s, len))) return -1;
    l->n++;
    return 0;
}

/* Appends the comma-separated items of arg (empty items are an error). */
static int split(const char *opt, const char *arg, strs *l) {
    for (const char *p = arg;;) {
        size_t n = strcspn(p, ",");
        if (n == 0) return nf_opt_bad("sweep", opt, "a comma-separated list, no item empty", arg);
        if (push(l, p, n)) return nf_app_report(NF_ENOMEM, NULL);
        if (!p[n]) return 0;
        p += n + 1;
    }
}

static void strs_free(strs *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    *l = (strs){0};
}

/* The option layer's parsers of sweep's lists: --topo and --groups (o->dst a strs, one item
 * each time), --routing and --traffic (comma-separated items), --engine (the same, or all),
 * --loads (o->dst the grid: numbers from 0 to 1 and ranges A:B:STEP). */
static int one_arg(const char *cmd, const nf_opt *o, const char *arg) {
    (void)cmd;
    return push(o->dst, arg, strlen(arg)) ? nf_app_report(NF_ENOMEM, NULL) : NF_EXIT_OK;
}

static int list_arg(const char *cmd, const nf_opt *o, const char *arg) {
    (void)cmd;
    char opt[32];
    snprintf(opt, sizeof opt, "--%s", o->name);
    return split(opt, arg, o->dst);
}

static int engine_arg(const char *cmd, const nf_opt *o, const char *arg) {
    if (strcmp(arg, "all")) return list_arg(cmd, o, arg);
    for (size_t i = 0; i < nf_mcast_engine_count(); i++) {
        const char *n = nf_mcast_engine_name(nf_mcast_engine_at(i));
        if (push(o->dst, n, strlen(n))) return nf_app_report(NF_ENOMEM, NULL);
    }
    return NF_EXIT_OK;
}

static int loads_arg(const char *cmd, const nf_opt *o, const char *arg) {
    grid *g = o->dst;
    strs items = {0};
    int rc = split("--loads", arg, &items);
    for (size_t i = 0; i < items.n && !rc; i++)
        rc = nf_app_load_points(cmd, "--loads", items.v[i], false, &g->load, &g->n_load);
    strs_free(&items);
    return rc;
}

static int parse_seeds(const char *arg, grid *g) {
    strs items = {0};
    int rc = split("--seeds", arg, &items);
    for (size_t i = 0; i < items.n && !rc; i++) {
        uint64_t v;
        if (nf_app_u64(items.v[i], 0, UINT64_MAX, &v)) {
            rc = nf_opt_bad("sweep", "--seeds", "a whole number from 0 to 18446744073709551615",
                            items.v[i]);
            break;
        }
        uint64_t *s = realloc(g->seed, (g->n_seed + 1) * sizeof *s);
        if (!s) {
            rc = nf_app_report(NF_ENOMEM, NULL);
            break;
        }
        g->seed = s;
        g->seed[g->n_seed++] = v;
    }
    strs_free(&items);
    return rc;
}

static void grid_free(grid *g) {
    strs_free(&g->topo);
    strs_free(&g->a);
    strs_free(&g->b);
    free(g->seed);
    free(g->load);
}

/* ---- running cells ------------------------------------------------------------------------ */

typedef struct fab {
    nf_fabric *f;
    nf_hops *h;
    nf_app_routing *rt; /* simulation: per routing item, resolved against f (lft:FILE) */
} fab;

/* What one thread keeps between consecutive cells that share everything but the innermost
 * coordinate. */
typedef struct worker {
    size_t key; /* shared_key of the cell the state below was made for; SIZE_MAX: none */
    nf_sim *sim;
    nf_groups *groups;
    uint32_t lb;
} worker;

static void worker_reset(worker *w) {
    nf_sim_free(w->sim);
    nf_groups_free(w->groups);
    *w = (worker){.key = SIZE_MAX};
}

static const char *const timing_keys[] = {"wall_s", "route_s",  "root_s",
                                          "tree_s", "refine_s", "peak_rss_kib"};

/* Progress of this rank's cells: whole cells done plus the running cell's fraction when the
 * rank runs one cell at a time. */
typedef struct tally {
    nf_progress bar;
    size_t total, done;
} tally;

static void cell_progress(void *ud, double f) {
    tally *t = ud;
    nf_progress_set(&t->bar, ((double)t->done + f) / (double)t->total);
}

/* A seed as a JSON value: an integer, or above 2^63 - 1 (beyond jansson's integers) the string
 * of its decimal digits, so that every bit shows. NULL when out of memory. */
static json_t *seed_json(uint64_t seed) {
    char digits[24];
    if (seed <= INT64_MAX) return json_integer((json_int_t)seed);
    snprintf(digits, sizeof digits, "%llu", (unsigned long long)seed);
    return json_string(digits);
}

/* Runs cell i; the result object, or NULL with *err set (a malloc'd message) and *code the exit
 * status the failure calls for: NF_EXIT_USAGE when the fabric leaves pairs of the cell's traffic
 * with no path (netfab sim's check), else NF_EXIT_FAIL. */
static json_t *run_cell(const grid *g, const fab *fabs, worker *w, size_t i, unsigned threads,
                        tally *progress, char **err, int *code) {
    cell c = cell_at(g, i);
    const fab *fb = &fabs[c.t];
    nf_diag d = {{0}, 0, {0}};
    int rc = 0, refused = NF_EXIT_OK;
    size_t key = shared_key(g, i);
    if (w->key != key) {
        worker_reset(w);
        if (g->mcast) {
            nf_workload_opts wo = g->w;
            wo.seed = g->seed[c.s];
            rc = nf_groups_build(fb->f, g->a.v[c.a], &wo, &w->groups, &d);
            if (!rc) w->lb = nf_mcast_lower_bound(fb->f, fb->h, w->groups);
        } else {
            nf_sim_config sc = g->k.c;
            sc.seed = g->seed[c.s];
            sc.threads = threads;
            rc = nf_sim_new(fb->f, fb->h, &sc, fb->rt[c.a].r,
                            nf_app_sim_traffic(&g->k, g->b.v[c.b]), &w->sim, &d);
            /* as in netfab sim, pairs no path joins would wait for ever; a refused simulator is
             * not kept, so the next cell of the same key is refused too */
            uint64_t pairs;
            if (!rc && (refused = nf_app_sim_unroutable(fb->f, w->sim, sc.exclude_unroutable, false,
                                                        &pairs, d.msg, sizeof d.msg))) {
                rc = refused == NF_EXIT_USAGE ? NF_EINVAL : NF_ENOMEM;
                worker_reset(w);
            }
        }
        if (!rc) w->key = key;
    }
    json_t *o = NULL;
    if (!rc && g->mcast) {
        const nf_mcast_engine *e = nf_mcast_engine_find(g->b.v[c.b]);
        nf_mcast *m = NULL;
        bool verified = false;
        if (!(rc = nf_mcast_route(fb->f, fb->h, w->groups, e, &m, &d)) && g->verify) {
            if ((rc = nf_mcast_verify(fb->f, fb->h, w->groups, m, &d)) == 0) verified = true;
        }
        if (!rc)
            o = nf_app_mcast_json(fb->f, g->topo.v[c.t], g->a.v[c.a], w->groups, m, e, w->lb,
                                  verified);
        nf_mcast_free(m);
        if (o) json_object_set_new(o, "seed", seed_json(g->seed[c.s]));
    } else if (!rc) {
        nf_sim_injection inj = g->k.inj;
        inj.load = g->load[c.l];
        nf_sim_result res;
        rc = nf_sim_run(w->sim, &inj, &g->k.ph, progress ? cell_progress : NULL, progress, &res);
        if (!rc) {
            /* the pattern that ran: under --router-model booksim, BookSim2's (bs-X) */
            o = json_pack("{s:s, s:s, s:s, s:o}", "topo", g->topo.v[c.t], "routing", g->a.v[c.a],
                          "traffic", nf_sim_traffic_name(nf_app_sim_traffic(&g->k, g->b.v[c.b])),
                          "seed", seed_json(g->seed[c.s]));
            json_t *r =
                nf_app_sim_result_json(g->load[c.l], &res, 0, g->k.c.exclude_unroutable,
                                       g->k.c.ber > 0 || g->k.c.switching != NF_SIM_VCT, false);
            if (!o || !r || json_object_update(o, r)) json_decref(o), o = NULL;
            json_decref(r);
        }
    }
    if (o && g->no_times)
        for (size_t k = 0; k < sizeof timing_keys / sizeof timing_keys[0]; k++)
            json_object_del(o, timing_keys[k]);
    if (!o) {
        if (!rc) rc = NF_ENOMEM;
        *code = refused ? refused : NF_EXIT_FAIL;
        char where[48] = "";
        if (!g->mcast) snprintf(where, sizeof where, ", load %g", g->load[c.l]);
        if (asprintf(err, "cell %zu (topo %s, %s %s, %s %s, seed %llu%s): %s", i, g->topo.v[c.t],
                     g->mcast ? "groups" : "routing", g->a.v[c.a], g->mcast ? "engine" : "traffic",
                     g->b.v[c.b], (unsigned long long)g->seed[c.s], where,
                     d.msg[0] ? d.msg : nf_strerror(rc)) < 0)
            *err = NULL;
    }
    return o;
}

/* Runs the cells rank, rank + size, ... into rows (in that order). Returns NF_EXIT_OK, or the
 * first failed cell's status (NF_EXIT_FAIL, NF_EXIT_USAGE) after printing its message. */
static int run_mine(const grid *g, const fab *fabs, int rank, int size, unsigned threads,
                    json_t *rows) {
    size_t n = grid_cells(g),
           mine = n > (size_t)rank ? (n - (size_t)rank - 1) / (size_t)size + 1 : 0;
    json_t **out = calloc(mine + 1, sizeof *out);
    char **err = calloc(mine + 1, sizeof *err);
    int *code = calloc(mine + 1, sizeof *code);
    if (!out || !err || !code) {
        free(out);
        free(err);
        free(code);
        return nf_app_report(NF_ENOMEM, NULL);
    }
    tally t = {.total = mine};
    nf_progress_begin(&t.bar, g->mcast ? "netfab sweep: multicast cells" : "netfab sweep: cells");
    /* one cell per thread, or every thread on one cell at a time when cells are few */
    bool per_thread = mine >= threads && threads > 1;
    if (per_thread) {
        json_object_seed(0); /* jansson's hash seed, set once before threads make objects */
#pragma omp parallel num_threads(threads)
        {
            worker w = {.key = SIZE_MAX};
#pragma omp for schedule(dynamic, 1)
            for (size_t j = 0; j < mine; j++) {
                out[j] = run_cell(g, fabs, &w, (size_t)rank + j * (size_t)size, 1, NULL, &err[j],
                                  &code[j]);
#pragma omp critical(sweep_progress)
                {
                    t.done++;
                    nf_progress_set(&t.bar, (double)t.done / (double)t.total);
                }
            }
            worker_reset(&w);
        }
    } else {
        worker w = {.key = SIZE_MAX};
        for (size_t j = 0; j < mine; j++) {
            out[j] = run_cell(g, fabs, &w, (size_t)rank + j * (size_t)size, threads, &t, &err[j],
                              &code[j]);
            t.done++;
        }
        worker_reset(&w);
    }
    nf_progress_end(&t.bar);
    int ex = NF_EXIT_OK;
    for (size_t j = 0; j < mine; j++) {
        if (!out[j] && ex == NF_EXIT_OK) {
            fprintf(stderr, "netfab sweep: %s\n", err[j] ? err[j] : "out of memory");
            ex = code[j];
        }
        if (out[j]) json_array_append_new(rows, out[j]);
        free(err[j]);
    }
    free(out);
    free(err);
    free(code);
    return ex;
}

/* ---- writing ------------------------------------------------------------------------------- */

/* The shortest of %.15g and %.17g that reads back as the same double. */
static void write_real(FILE *o, double v) {
    char b[40];
    snprintf(b, sizeof b, "%.15g", v);
    if (strtod(b, NULL) != v) snprintf(b, sizeof b, "%.17g", v);
    fputs(b, o);
}

/* The columns are the keys of all rows in first-seen order; a row without a key leaves its
 * field empty. */
static void write_csv(FILE *o, json_t *rows) {
    json_t *cols = json_object();
    size_t i, nc = 0;
    json_t *row;
    const char *k;
    json_t *v;
    json_array_foreach(rows, i, row) {
        json_object_foreach(row, k, v) {
            if (!json_object_get(cols, k)) {
                fputs(nc ? "," : "", o);
                nf_app_csv_field(o, k);
                json_object_set_new(cols, k, json_integer((json_int_t)nc++));
            }
        }
    }
    fputc('\n', o);
    json_array_foreach(rows, i, row) {
        size_t j = 0;
        json_object_foreach(cols, k, v) {
            json_t *x = json_object_get(row, k);
            fputs(j++ ? "," : "", o);
            if (json_is_string(x))
                nf_app_csv_field(o, json_string_value(x));
            else if (json_is_integer(x))
                fprintf(o, "%lld", (long long)json_integer_value(x));
            else if (json_is_real(x))
                write_real(o, json_real_value(x));
            else if (json_is_boolean(x))
                fputs(json_is_true(x) ? "true" : "false", o);
        }
        fputc('\n', o);
    }
    json_decref(cols);
}

/* ---- MPI --------------------------------------------------------------------------------- */

/* The rank and size the launcher gave this process, from its environment (Open MPI, PMIx,
 * MPICH/Hydra), before MPI is started: -1 when not launched by one. */
static int launcher_env(const char *const *names) {
    for (; *names; names++) {
        const char *v = getenv(*names);
        uint64_t x;
        if (v && nf_app_u64(v, 0, INT32_MAX, &x) == 0) return (int)x;
    }
    return -1;
}
static int launched_rank(void) {
    static const char *const n[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", NULL};
    return launcher_env(n);
}
static int launched_size(void) {
    static const char *const n[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};
    return launcher_env(n);
}

#ifdef NF_HAVE_MPI
/* Rank 0 gets every rank's rows interleaved back into grid order (cell i is row i / size of
 * rank i % size); the others get nothing. Every rank calls it. */
static int gather_rows(json_t **rows, int rank, int size, size_t n_cells, bool ok) {
    char *mine = ok ? json_dumps(*rows, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    int len = mine ? (int)strlen(mine) + 1 : 0;
    int *lens = rank == 0 ? calloc((size_t)size, sizeof *lens) : NULL;
    int *offs = rank == 0 ? calloc((size_t)size, sizeof *offs) : NULL;
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char *all = NULL;
    long total = 0;
    if (rank == 0) {
        for (int r = 0; r < size; r++)
            offs[r] = (int)total, total += lens[r];
        all = malloc((size_t)total + 1);
    }
    MPI_Gatherv(mine, len, MPI_CHAR, all, lens, offs, MPI_CHAR, 0, MPI_COMM_WORLD);
    free(mine);
    int ex = NF_EXIT_OK;
    if (rank == 0) {
        json_t **part = calloc((size_t)size, sizeof *part);
        json_t *merged = json_array();
        for (int r = 0; r < size && part; r++)
            if (lens[r] > 0) part[r] = json_loads(all + offs[r], 0, NULL);
        for (size_t i = 0; i < n_cells && part && merged; i++) {
            json_t *x = part[i % (size_t)size]
                            ? json_array_get(part[i % (size_t)size], i / (size_t)size)
                            : NULL;
            if (!x) {
                ex = NF_EXIT_FAIL;
                break;
            }
            json_array_append(merged, x);
        }
        if (!part || !merged) ex = nf_app_report(NF_ENOMEM, NULL);
        for (int r = 0; r < size && part; r++)
            json_decref(part[r]);
        free(part);
        json_decref(*rows);
        *rows = merged;
    }
    free(all);
    free(lens);
    free(offs);
    return ex;
}
#endif

/* ---- the command --------------------------------------------------------------------------- */

static int sweep_main(int argc, char **argv, int rank, int size);

/* Sends stderr to /dev/null (returns the saved descriptor, or -1) or back (quiet(saved)). The
 * ranks after the first keep quiet while they parse the arguments and build the fabrics: their
 * errors there are the first rank's. */
static int quiet(int saved) {
    fflush(stderr);
    if (saved >= 0) {
        dup2(saved, STDERR_FILENO);
        close(saved);
        return -1;
    }
    int null = open("/dev/null", O_WRONLY);
    if (null < 0) return -1;
    saved = dup(STDERR_FILENO);
    dup2(null, STDERR_FILENO);
    close(null);
    return saved;
}

int nf_cmd_sweep(int argc, char **argv) {
    int lrank = launched_rank(), lsize = launched_size();
    int ex;
#ifdef NF_HAVE_MPI
    if (lsize > 1 || lrank >= 0) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
        int rank, size;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        ex = sweep_main(argc, argv, rank, size);
        MPI_Finalize();
    } else {
        ex = sweep_main(argc, argv, 0, 1);
    }
#else
    if (lsize > 1) {
        if (lrank <= 0)
            fprintf(stderr,
                    "netfab sweep: launched as one of %d MPI ranks, but this netfab was built "
                    "without MPI (install libopenmpi-dev and rebuild, or run it alone)\n",
                    lsize);
        ex = NF_EXIT_USAGE;
    } else {
        ex = sweep_main(argc, argv, 0, 1);
    }
#endif
    return ex;
}

/* The worst status of all ranks, NF_EXIT_OK when every one is fine (a collective: every rank
 * must call it as often). */
static int worst_exit(int ex, int size) {
#ifdef NF_HAVE_MPI
    if (size > 1) {
        int worst;
        MPI_Allreduce(&ex, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        return worst;
    }
#endif
    (void)size;
    return ex;
}

#ifdef NF_HAVE_MPI
#define SWEEP_BUILD "with Open MPI"
#else
#define SWEEP_BUILD "without MPI (OpenMP threads on one machine only)"
#endif

/* Parses and checks the options into g and the rest: NF_EXIT_OK, NF_OPT_HELP, or the exit
 * status after saying why. */
static int parse(int argc, char **argv, grid *g, unsigned *threads, bool *json, const char **out) {
    strs routing = {0}, traffic = {0}, groups = {0}, engine = {0};
    const char *seeds = NULL;
    bool ppn_given = false, map_given = false;
    static const char *const mappings[] = {"aware", "random", NULL};
    nf_opt knobs[NF_APP_SIM_KNOBS];
    size_t n_knobs = nf_app_sim_knob_opts(&g->k, knobs);
    const nf_opt rows[] = {
        {.name = "topo",
         .arg = "SPEC",
         .kind = NF_OPT_CUSTOM,
         NF_OPT_TO(g->topo),
         .parse = one_arg,
         .help = "a fabric (netfab topo --help); repeat it for several"},
        {.name = "routing",
         .arg = "A,B",
         .kind = NF_OPT_CUSTOM,
         NF_OPT_TO(routing),
         .parse = list_arg,
         .help = "simulation: the routings (netfab sim --help)" NF_APP_LFT_HELP},
        {.name = "traffic",
         .arg = "X,Y",
         .kind = NF_OPT_CUSTOM,
         NF_OPT_TO(traffic),
         .parse = list_arg,
         .help = "simulation: the traffic patterns"},
        {.name = "loads",
         .arg = "L1,L2|A:B:STEP",
         .kind = NF_OPT_CUSTOM,
         .dst = g,
         .parse = loads_arg,
         .help = "simulation: the load points, each from 0 to 1, or ranges"},
        {.name = "groups",
         .arg = "PATTERN",
         .kind = NF_OPT_CUSTOM,
         NF_OPT_TO(groups),
         .parse = one_arg,
         .help = "multicast: a group pattern (netfab mcast --help); repeat it for several"},
        {.name = "engine",
         .arg = "E1,E2|all",
         .kind = NF_OPT_CUSTOM,
         NF_OPT_TO(engine),
         .parse = engine_arg,
         .help = "multicast: the engines"},
        {.name = "procs-per-node",
         .arg = "N",
         .kind = NF_OPT_UINT,
         NF_OPT_TO(g->w.procs_per_node),
         .lo = 1,
         .hi = 1 << 20,
         .given = &ppn_given,
         .help = "multicast: ranks per endpoint (default 1)"},
        {.name = "mapping",
         .kind = NF_OPT_CHOICE,
         NF_OPT_TO(g->w.mapping),
         .choices = mappings,
         .given = &map_given,
         .help = "multicast: ranks laid on endpoints in order (aware, the "
                 "default) or shuffled (random)"},
        {.name = "verify",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(g->verify),
         .help = "multicast: recount every tree and every load from the forwarding tables"},
        {.name = "seeds",
         .arg = "S1,S2",
         .kind = NF_OPT_STR,
         NF_OPT_TO(seeds),
         .help = "the seeds (default 0 for simulations, as netfab sim; 1 for multicast, as "
                 "netfab mcast); a seed above 2^63 - 1 shows in the JSON as the string of its "
                 "digits"},
        {NF_OPT_THREADS(*threads, "OpenMP threads in a rank (default: the processors the rank "
                                  "may use)")},
        {.name = "json",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(*json),
         .help = "a JSON array of the results instead of CSV"},
        {.name = "out",
         .arg = "FILE",
         .kind = NF_OPT_STR,
         NF_OPT_TO(*out),
         .help = "write the results there instead of stdout"},
        {.name = "no-times",
         .kind = NF_OPT_FLAG,
         NF_OPT_TO(g->no_times),
         .help = "leave out the timing keys (wall_s, route_s, root_s, tree_s, refine_s, "
                 "peak_rss_kib)"},
    };
    const nf_cmd_spec spec = {
        .name = "sweep",
        .synopsis = "netfab sweep --topo SPEC [--topo SPEC ...] --routing A,B --traffic X,Y\n"
                    "                    --loads L1,L2|A:B:STEP [--seeds S1,S2] [simulator "
                    "options]\n"
                    "       netfab sweep --topo SPEC [--topo SPEC ...] --groups PATTERN "
                    "[--groups ...]\n"
                    "                    --engine E1,E2|all [--seeds S1,S2] [--procs-per-node "
                    "N]\n"
                    "                    [--mapping aware|random] [--verify]\n"
                    "       common: [--threads N] [--json] [--out FILE] [--no-times]\n",
        .description =
            "Runs every cell of a grid and prints one result per cell, in grid order: a CSV\n"
            "table (a header line, then one line per cell), or a JSON array with --json.\n"
            "Simulation grid: every fabric x routing x traffic x seed x load; each result holds\n"
            "topo, routing, traffic, seed and the keys of netfab sim --json. Multicast grid:\n"
            "every fabric x pattern x seed x engine; each result holds the keys of netfab mcast\n"
            "--json plus seed. --topo and --groups repeat (their specs contain commas); the\n"
            "other lists are comma-separated, and a --loads item may be a range A:B:STEP.\n"
            "Defaults: --seeds 0 for simulations (as netfab sim), 1 for multicast (as netfab\n"
            "mcast). The simulator options are those of netfab sim (--cycles, --warmup, --vcs,\n"
            "--pkt, --bias, --exclude-unroutable, ...; see netfab sim --help): a cell whose\n"
            "fabric leaves source/destination pairs with no path fails the sweep (exit 2)\n"
            "unless --exclude-unroutable, which skips them and adds excluded_msgs to the rows.\n"
            "\n"
            "Under mpirun the cells are dealt to the ranks in turn and rank 0 writes the\n"
            "results; inside a rank they run on --threads OpenMP threads (default: the\n"
            "processors the rank may use), one cell per thread, or all threads on one cell\n"
            "when there are fewer cells than threads. Results do not depend on either number;\n"
            "the timing keys (wall_s, route_s, root_s, tree_s, refine_s, peak_rss_kib) do, and\n"
            "--no-times leaves them out. --out FILE writes the results there instead of stdout.\n"
            "This build: " SWEEP_BUILD ".\n",
        .group = {{"options", rows, sizeof rows / sizeof rows[0]},
                  {"simulator options", knobs, n_knobs}},
        .examples = "  netfab sweep --topo dragonfly:a=4,p=2,h=2 --routing dfmin,ugal-l --traffic "
                    "uniform,worst\n"
                    "               --loads 0.1:0.9:0.1 --seeds 1,2 --json\n"
                    "  mpirun -np 4 netfab sweep --topo fattree:k=16 --groups grid2d:32x32 "
                    "--groups random:n=500,size=16\n"
                    "               --engine all --seeds 1,2,3 --out mcast.csv\n"};
    int argi, ex = nf_opt_parse(&spec, argc, argv, &argi);
    nf_app_sim_knobs_finish(&g->k);
    if (!ex && g->k.show) /* printed, then out as after --help */
        return (ex = nf_app_sim_settings_print(&g->k, *json)) ? ex : NF_OPT_HELP;
    bool knobs_given = g->k.given;
    bool sim = routing.n || traffic.n || g->n_load, mc = groups.n || engine.n;
    const char *why = NULL;
    if (ex) {
    } else if (!g->topo.n) {
        why = "--topo is required";
    } else if (sim && mc) {
        why = "a grid is of simulations (--routing, --traffic, --loads) or of multicast routings "
              "(--groups, --engine), not both";
    } else if (sim && (!routing.n || !traffic.n || !g->n_load)) {
        why = "a simulation grid needs --routing, --traffic and --loads";
    } else if (mc && (!groups.n || !engine.n)) {
        why = "a multicast grid needs --groups and --engine";
    } else if (!sim && !mc) {
        why = "say what to sweep: --routing/--traffic/--loads, or --groups/--engine";
    } else if (mc && knobs_given) {
        why = "simulator options belong to a simulation grid";
    } else if (sim && (ppn_given || map_given || g->verify)) {
        why = "--procs-per-node, --mapping and --verify belong to a multicast grid";
    }
    if (why) ex = nf_opt_usage("sweep", "%s", why);
    for (size_t i = 0; !ex && i < routing.n; i++) {
        nf_app_routing ar;
        ex = nf_app_routing_parse("sweep", routing.v[i], &ar);
    }
    char known[512];
    for (size_t i = 0; !ex && i < traffic.n; i++)
        if (!nf_app_sim_traffic(&g->k, traffic.v[i]))
            ex = nf_opt_usage("sweep", "unknown traffic '%s' (%s)", traffic.v[i],
                              nf_app_known(NF_APP_TRAFFICS, known, sizeof known));
    for (size_t i = 0; !ex && i < engine.n; i++)
        if (!nf_mcast_engine_find(engine.v[i]))
            ex = nf_opt_usage("sweep", "unknown engine '%s' (%s)", engine.v[i],
                              nf_app_known(NF_APP_ENGINES, known, sizeof known));
    g->mcast = mc;
    if (!ex) ex = parse_seeds(seeds ? seeds : mc ? "1" : "0", g);
    if (!ex) {
        g->a = mc ? groups : routing;
        g->b = mc ? engine : traffic;
        strs_free(mc ? &routing : &groups);
        strs_free(mc ? &traffic : &engine);
    } else {
        strs_free(&routing);
        strs_free(&traffic);
        strs_free(&groups);
        strs_free(&engine);
    }
    if (g->mcast) g->n_load = 1; /* one "load" per cell: grid_cells and cell_at stay uniform */
    return ex;
}

static int sweep_main(int argc, char **argv, int rank, int size) {
    grid g = {0};
    nf_app_sim_knobs_init(&g.k, "sweep");
    static const char *const own_keys[] = {"seed", "threads", NULL}; /* --seeds, --threads */
    g.k.own_keys = own_keys;
    int hush = rank > 0 ? quiet(-1) : -1;
    unsigned threads = 0;
    bool json = false;
    const char *out_path = NULL;
    int ex = parse(argc, argv, &g, &threads, &json, &out_path);
    if (ex == NF_OPT_HELP) {
        if (hush >= 0) quiet(hush);
        grid_free(&g);
        return NF_EXIT_OK;
    }
    if (!threads) threads = nf__cpus_usable();
    /* --out is opened before the work (a file that cannot be written is known at once), as a
     * temporary file that replaces it only when every row is written */
    FILE *out = stdout;
    nf__afile out_af = {.fp = NULL};
    bool to_file = !ex && rank == 0 && out_path;
    if (to_file && !(out = nf_app_out_open(&out_af, "netfab sweep", out_path))) {
        out = stdout;
        to_file = false;
        ex = NF_EXIT_FAIL;
    }
    /* every rank builds every fabric (deterministic, and cheap beside the cells) */
    fab *fabs = ex ? NULL : calloc(g.topo.n, sizeof *fabs);
    if (!ex && !fabs) ex = nf_app_report(NF_ENOMEM, NULL);
    for (size_t t = 0; !ex && t < g.topo.n; t++) {
        ex = nf_app_fabric(g.topo.v[t], (int)threads, &fabs[t].f, &fabs[t].h);
        /* lft:FILE items: their tables read against this fabric */
        if (!ex && !g.mcast && !(fabs[t].rt = calloc(g.a.n + 1, sizeof *fabs[t].rt)))
            ex = nf_app_report(NF_ENOMEM, NULL);
        for (size_t i = 0; !ex && !g.mcast && i < g.a.n; i++)
            if (!(ex = nf_app_routing_parse("sweep", g.a.v[i], &fabs[t].rt[i])))
                ex = nf_app_routing_resolve(&fabs[t].rt[i], fabs[t].f);
    }
    if (hush >= 0) quiet(hush);
    json_t *rows = json_array();
    if (worst_exit(ex, size) == NF_EXIT_OK) {
        if (!rows) ex = nf_app_report(NF_ENOMEM, NULL);
        if (!ex) ex = run_mine(&g, fabs, rank, size, threads, rows);
        int worst = worst_exit(ex, size);
        bool ok = worst == NF_EXIT_OK;
#ifdef NF_HAVE_MPI
        if (size > 1) {
            int gx = gather_rows(&rows, rank, size, grid_cells(&g), ok);
            if (ok) ex = gx;
        }
#endif
        if (ok && ex == NF_EXIT_OK && rank == 0) {
            if (json) {
                json_dumpf(rows, out, JSON_INDENT(2));
                fputc('\n', out);
            } else {
                write_csv(out, rows);
            }
        } else if (!ok && ex == NF_EXIT_OK) {
            ex = worst; /* another rank failed and said why */
        }
    } else if (ex == NF_EXIT_OK) {
        ex = NF_EXIT_FAIL; /* another rank could not start (its --out, a fabric) */
    }
    if (to_file && ex != NF_EXIT_OK) { /* a failed run leaves the previous file */
        nf__afile_abort(&out_af);
    } else if (to_file) {
        ex = nf_app_out_close(&out_af, "netfab sweep", out_path, 0);
    } else if (fflush(stdout) && ex == NF_EXIT_OK) {
        ex = NF_EXIT_FAIL;
    }
    json_decref(rows);
    for (size_t t = 0; fabs && t < g.topo.n; t++) {
        for (size_t i = 0; fabs[t].rt && i < g.a.n; i++)
            nf_app_routing_fini(&fabs[t].rt[i]);
        free(fabs[t].rt);
        nf_hops_free(fabs[t].h);
        nf_fabric_free(fabs[t].f);
    }
    free(fabs);
    grid_free(&g);
    return ex;
}
