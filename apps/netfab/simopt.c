/* SPDX-License-Identifier: MIT */
/* The simulator's knobs as options (simopt.h). */
#include "simopt.h"

#include "cmd.h"

#include "netfab/simset.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nf_app_sim_knobs_init(nf_app_sim_knobs *k, const char *cmd) {
    memset(k, 0, sizeof *k);
    nf_simset_defaults(NF_SIMSET_CONFIG, &k->c);
    nf_simset_defaults(NF_SIMSET_PHASE, &k->ph);
    nf_simset_defaults(NF_SIMSET_INJECTION, &k->inj);
    k->command = cmd;
}

/* The struct in k that s is a field of. */
static void *base_of(nf_app_sim_knobs *k, const nf_simset *s) {
    return s->in == NF_SIMSET_CONFIG  ? (void *)&k->c
           : s->in == NF_SIMSET_PHASE ? (void *)&k->ph
                                      : (void *)&k->inj;
}
static const void *cbase_of(const nf_app_sim_knobs *k, const nf_simset *s) {
    return base_of((nf_app_sim_knobs *)k, s); /* (read only) */
}

/* Reads a load-point number from lo to hi for lab into *out: 0, or NF_EXIT_USAGE after saying
 * why. */
static int load_number(const char *cmd, const char *lab, const char *s, double lo, double hi,
                       double *out) {
    char want[96];
    if (nf_app_real(s, false, out) == 0 && *out >= lo && *out <= hi) return 0;
    nf_opt_real_want(lo, hi, 0, want, sizeof want);
    return nf_opt_bad(cmd, lab, want, s);
}

int nf_app_load_points(const char *cmd, const char *opt, const char *item, bool range,
                       double **loads, size_t *n) {
    double a, b, step = 1;
    const char *c1 = strchr(item, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    char buf[3][64];
    if (c1 || range) {
        size_t l0 = c1 ? (size_t)(c1 - item) : 0, l1 = c2 ? (size_t)(c2 - c1 - 1) : 0;
        if (!c1 || !c2 || strchr(c2 + 1, ':') || l0 >= sizeof buf[0] || l1 >= sizeof buf[1] ||
            strlen(c2 + 1) >= sizeof buf[2]) {
            fprintf(stderr, "netfab %s: %s wants A:B:STEP, not '%s'\n", cmd, opt, item);
            return NF_EXIT_USAGE;
        }
        memcpy(buf[0], item, l0);
        buf[0][l0] = '\0';
        memcpy(buf[1], c1 + 1, l1);
        buf[1][l1] = '\0';
        strcpy(buf[2], c2 + 1);
        char lab[3][80];
        snprintf(lab[0], sizeof lab[0], "%s (range start)", opt);
        snprintf(lab[1], sizeof lab[1], "%s (range end)", opt);
        snprintf(lab[2], sizeof lab[2], "%s (range step)", opt);
        if (load_number(cmd, lab[0], buf[0], 0, 1, &a) ||
            load_number(cmd, lab[1], buf[1], a, 1, &b) ||
            load_number(cmd, lab[2], buf[2], 0, 1, &step))
            return NF_EXIT_USAGE;
        if (step <= 0) {
            fprintf(stderr, "netfab %s: %s wants A:B:STEP with STEP > 0, not '%s'\n", cmd, opt,
                    item);
            return NF_EXIT_USAGE;
        }
    } else {
        if (load_number(cmd, opt, item, 0, 1, &a)) return NF_EXIT_USAGE;
        b = a;
    }
    double n_points = floor((b - a) / step + 1e-9) + 1;
    if (n_points + (double)*n > NF_APP_MAX_LOAD_POINTS) {
        fprintf(stderr, "netfab %s: %s %s is %.0f load points, more than %d\n", cmd, opt, item,
                n_points + (double)*n, NF_APP_MAX_LOAD_POINTS);
        return NF_EXIT_USAGE;
    }
    for (size_t j = 0; j < (size_t)n_points; j++) {
        double *v = realloc(*loads, (*n + 1) * sizeof *v);
        if (!v) {
            fprintf(stderr, "netfab %s: out of memory\n", cmd);
            return NF_EXIT_FAIL;
        }
        *loads = v;
        char text[32];
        snprintf(text, sizeof text, "%.12g", a + (double)j * step);
        double x = strtod(text, NULL);
        (*loads)[(*n)++] = x > b ? b : x; /* never past B, whatever the rounding did */
    }
    return NF_EXIT_OK;
}

static const char *const router_models[] = {"netfab", "booksim", NULL};

/* The options BookSim2's router model stands for, from the table ("--router-delay 2 ..."). */
static const char *booksim_model_text(void) {
    static char text[256];
    if (text[0]) return text;
    size_t n, len = 0;
    const nf_simset *t = nf_simset_table(&n);
    for (size_t i = 0; i < n; i++) {
        char v[32];
        if (t[i].flags & NF_SIMSET_BOOKSIM && len < sizeof text)
            len +=
                (size_t)snprintf(text + len, sizeof text - len, "%s--%s %s", len ? " " : "",
                                 t[i].name, nf_simset_value_text(&t[i], t[i].booksim, v, sizeof v));
    }
    return text;
}

void nf_app_sim_knobs_finish(nf_app_sim_knobs *k) {
    size_t n;
    const nf_simset *t = nf_simset_table(&n);
    for (size_t i = 0; i < n; i++)
        k->given |= k->set_given[i];
    if (k->model != NF_APP_MODEL_BOOKSIM) return;
    /* BookSim2's input-queued router without speculation, at routing_delay 0 (lookahead),
     * vc_alloc_delay 1, sw_alloc_delay 1, st_final_delay 1, credit_delay 2; its injected flits
     * reach the router a cycle later than a link's (nic-delay 1) */
    for (size_t i = 0; i < n; i++)
        if (t[i].flags & NF_SIMSET_BOOKSIM && !k->set_given[i])
            (void)nf_simset_put(&t[i], base_of(k, &t[i]), t[i].booksim, NULL);
}

const nf_sim_traffic *nf_app_sim_traffic(const nf_app_sim_knobs *k, const char *name) {
    if (k->model == NF_APP_MODEL_BOOKSIM && name && strncmp(name, "bs-", 3) != 0) {
        char bs[64];
        snprintf(bs, sizeof bs, "bs-%s", strcmp(name, "permutation") == 0 ? "randperm" : name);
        const nf_sim_traffic *t = nf_sim_traffic_find(bs);
        if (t) return t;
    }
    return nf_sim_traffic_find(name);
}

/* Sets s from the JSON value v: 0, or -1 with what it wants in want. */
static int put_json(const nf_simset *s, void *base, const json_t *v, char *want, size_t cap) {
    nf_simset_range_text(s, want, cap);
    switch (s->type) {
    case NF_SIMSET_UINT:
        if (json_is_integer(v) && json_integer_value(v) >= 0)
            return nf_simset_put_uint(s, base, (uint64_t)json_integer_value(v), NULL);
        if (json_is_string(v) && s->size == sizeof(uint64_t)) { /* a seed past 2^63 - 1 */
            const char *text = json_string_value(v);
            char *end;
            errno = 0;
            unsigned long long u = strtoull(text, &end, 10);
            if (text[0] >= '0' && text[0] <= '9' && !*end && !errno)
                return nf_simset_put_uint(s, base, u, NULL);
        }
        return -1;
    case NF_SIMSET_REAL:
        return json_is_number(v) ? nf_simset_put(s, base, json_number_value(v), NULL) : -1;
    case NF_SIMSET_BOOL:
        snprintf(want, cap, "true or false");
        return json_is_boolean(v) ? nf_simset_put(s, base, json_is_true(v), NULL) : -1;
    default:
        for (size_t i = 0; json_is_string(v) && s->choices[i]; i++)
            if (!strcmp(s->choices[i], json_string_value(v)))
                return nf_simset_put(s, base, (double)i, NULL);
        return -1;
    }
}

static bool owned(const nf_app_sim_knobs *k, const nf_simset *s) {
    for (size_t i = 0; k->own_keys && k->own_keys[i]; i++)
        if (!strcmp(k->own_keys[i], s->key)) return true;
    return false;
}

/* --settings FILE: a JSON object of settings by key (or option name), as --show-settings --json
 * prints them, applied where the option stands (options after it win). */
static int parse_settings(const char *cmd, const nf_opt *o, const char *path) {
    nf_app_sim_knobs *k = o->dst;
    json_error_t err;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    if (!doc && err.line > 0)
        return nf_opt_usage(cmd, "--settings wants a JSON file of settings, not '%s' (%s:%d: %s)",
                            path, path, err.line, err.text);
    if (!doc)
        return nf_opt_usage(cmd, "--settings wants a JSON file of settings, not '%s' (%s)", path,
                            err.text);
    int ex = NF_EXIT_OK;
    if (!json_is_object(doc))
        ex = nf_opt_usage(cmd, "--settings wants a JSON object of settings by key, not '%s'", path);
    const char *key;
    json_t *v;
    size_t n;
    const nf_simset *t = nf_simset_table(&n);
    json_object_foreach(doc, key, v) {
        if (ex) break;
        const nf_simset *s = nf_simset_find(key);
        char want[192];
        if (!s)
            ex = nf_opt_usage(cmd,
                              "--settings %s: no setting '%s' (netfab %s --show-settings "
                              "lists them)",
                              path, key, cmd);
        else if (owned(k, s))
            ex = nf_opt_usage(cmd, "--settings %s: %s is set by netfab %s's own options here", path,
                              s->key, cmd);
        else if (put_json(s, base_of(k, s), v, want, sizeof want)) {
            char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
            ex = nf_opt_usage(cmd, "--settings %s: %s wants %s, not %s", path, s->key, want,
                              text ? text : "?");
            free(text);
        } else
            k->set_given[s - t] = true;
    }
    json_decref(doc);
    return ex;
}

/* The help of row s: its text and its default (with BookSim2's value), made once. */
static const char *row_help(const nf_simset *s, size_t i) {
    static char help[NF_APP_MAX_SETTINGS][768];
    char *h = help[i];
    if (h[0]) return h;
    char def[160], bs[32];
    if (s->type == NF_SIMSET_BOOL) {
        snprintf(h, sizeof help[i], "%s", s->help);
        return h;
    }
    snprintf(def, sizeof def, "%s", s->def_text ? s->def_text : "");
    if (!s->def_text) nf_simset_value_text(s, s->def, def, sizeof def);
    if (s->flags & NF_SIMSET_BOOKSIM && s->booksim == s->def)
        snprintf(h, sizeof help[i], "%s (default %s, as with --router-model booksim)", s->help,
                 def);
    else if (s->flags & NF_SIMSET_BOOKSIM)
        snprintf(h, sizeof help[i], "%s (default %s; %s with --router-model booksim)", s->help, def,
                 nf_simset_value_text(s, s->booksim, bs, sizeof bs));
    else
        snprintf(h, sizeof help[i], "%s (default %s)", s->help, def);
    return h;
}

size_t nf_app_sim_knob_opts(nf_app_sim_knobs *k, nf_opt *rows) {
    static char model_help[512];
    snprintf(model_help, sizeof model_help,
             "netfab (the default router) or booksim: BookSim2's iq_router without speculation, "
             "which sets what is not given of %s (and --routing dor-bs is its torus routing)",
             booksim_model_text());
    size_t n, m = 0;
    const nf_simset *t = nf_simset_table(&n);
    _Static_assert(NF_APP_MAX_SETTINGS <= 128, "help texts");
    if (n > NF_APP_MAX_SETTINGS) { /* a build whose table outgrew the knobs: a bug, said at once */
        fprintf(stderr, "netfab: %zu simulator settings, the options keep %d\n", n,
                NF_APP_MAX_SETTINGS);
        abort();
    }
    rows[m++] = (nf_opt){.name = "router-model",
                         .kind = NF_OPT_CHOICE,
                         NF_OPT_TO(k->model),
                         .choices = router_models,
                         .given = &k->given,
                         .help = model_help};
    for (size_t i = 0; i < n && i < NF_APP_MAX_SETTINGS; i++) {
        const nf_simset *s = &t[i];
        if (s->flags & NF_SIMSET_LIBRARY) continue;
        if (m + 2 >= NF_APP_SIM_KNOBS) { /* the table has an option more than the count: a bug */
            fprintf(stderr, "netfab: more simulator options than NF_APP_SIM_KNOBS (%d)\n",
                    NF_APP_SIM_KNOBS);
            abort();
        }
        nf_opt o = {.name = s->name,
                    .arg = s->arg,
                    .dst = (char *)base_of(k, s) + s->offset,
                    .size = s->size,
                    .given = &k->set_given[i],
                    .help = row_help(s, i)};
        switch (s->type) {
        case NF_SIMSET_UINT:
            o.kind = NF_OPT_UINT, o.lo = s->flags & NF_SIMSET_AUTO ? 0 : s->lo, o.hi = s->hi;
            break;
        case NF_SIMSET_REAL:
            o.kind = NF_OPT_REAL, o.rlo = s->rlo, o.rhi = s->rhi;
            o.open = (s->flags & NF_SIMSET_OPEN_LO ? NF_OPT_OPEN_LO : 0) |
                     (s->flags & NF_SIMSET_OPEN_HI ? NF_OPT_OPEN_HI : 0);
            break;
        case NF_SIMSET_BOOL: o.kind = NF_OPT_FLAG, o.arg = NULL; break;
        default: o.kind = NF_OPT_CHOICE, o.arg = NULL, o.choices = s->choices;
        }
        rows[m++] = o;
    }
    rows[m++] = (nf_opt){.name = "settings",
                         .arg = "FILE",
                         .kind = NF_OPT_CUSTOM,
                         .dst = k,
                         .parse = parse_settings,
                         .help = "the settings in FILE, a JSON object of settings by key as "
                                 "--show-settings --json prints them, where the option stands: "
                                 "the options after it win"};
    rows[m++] = (nf_opt){.name = "show-settings",
                         .kind = NF_OPT_FLAG,
                         NF_OPT_TO(k->show),
                         .help = "print every setting of the simulator (the library's own "
                                 "too) with its value after the options, its default and "
                                 "range, and exit; with --json one object by key"};
    if (m != NF_APP_SIM_KNOBS) { /* an option fewer than the count: a bug, said at once */
        fprintf(stderr, "netfab: %zu simulator options, NF_APP_SIM_KNOBS says %d\n", m,
                NF_APP_SIM_KNOBS);
        abort();
    }
    return m;
}

int nf_app_sim_settings_print(const nf_app_sim_knobs *k, bool json) {
    size_t n;
    const nf_simset *t = nf_simset_table(&n);
    json_t *o = json ? json_object() : NULL;
    if (json && !o) return nf_app_report(NF_ENOMEM, NULL);
    if (!json) printf("%-20s %-20s %-12s %-12s %s\n", "option", "key", "value", "default", "range");
    for (size_t i = 0; i < n; i++) {
        const nf_simset *s = &t[i];
        const void *b = cbase_of(k, s);
        double v = nf_simset_get(s, b);
        char val[32];
        if (s->type == NF_SIMSET_UINT) /* exact, seeds too */
            snprintf(val, sizeof val, "%llu", (unsigned long long)nf_simset_get_uint(s, b));
        else
            nf_simset_value_text(s, v, val, sizeof val);
        if (json) {
            uint64_t u = s->type == NF_SIMSET_UINT ? nf_simset_get_uint(s, b) : 0;
            json_t *x = s->type == NF_SIMSET_UINT
                            ? (u <= (uint64_t)INT64_MAX ? json_integer((json_int_t)u)
                                                        : json_string(val)) /* past JSON's ints */
                        : s->type == NF_SIMSET_REAL ? json_real(v)
                        : s->type == NF_SIMSET_BOOL ? json_boolean(v != 0)
                                                    : json_string(val);
            if (json_object_set_new(o, s->key, x)) {
                json_decref(o);
                return nf_app_report(NF_ENOMEM, NULL);
            }
            continue;
        }
        char opt[32], def[32], range[192];
        snprintf(opt, sizeof opt, s->flags & NF_SIMSET_LIBRARY ? "-" : "--%s", s->name);
        if (s->flags & NF_SIMSET_AUTO && v == 0) snprintf(val, sizeof val, "auto");
        nf_simset_value_text(s, s->def, def, sizeof def);
        if (s->flags & NF_SIMSET_AUTO && s->def == 0) snprintf(def, sizeof def, "auto");
        printf("%-20s %-20s %-12s %-12s %s%s\n", opt, s->key, val, def,
               nf_simset_range_text(s, range, sizeof range),
               s->flags & NF_SIMSET_AUTO ? " (0: auto)" : "");
    }
    if (json) {
        json_dumpf(o, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(o);
    } else {
        printf("# -: a setting of the library with no option of the simulator's (the commands "
               "set seed and threads by their own --seed, --seeds and --threads)\n");
    }
    return fflush(stdout) || ferror(stdout) ? NF_EXIT_FAIL : NF_EXIT_OK;
}

int nf_app_sim_unroutable(const nf_fabric *f, const nf_sim *s, bool exclude, bool failed,
                          uint64_t *pairs, char *msg, size_t cap) {
    nf_node src, dst;
    int rc = nf_sim_unroutable_pairs(s, pairs, &src, &dst);
    if (rc) {
        snprintf(msg, cap, "%s", nf_strerror(rc));
        return NF_EXIT_FAIL;
    }
    if (!*pairs || exclude) return NF_EXIT_OK;
    snprintf(msg, cap,
             "%llu source/destination pairs have no path between them (the fabric is not "
             "connected%s), e.g. \"%s\" -> \"%s\"; --exclude-unroutable skips them",
             (unsigned long long)*pairs, failed ? " once the failed links are down" : "",
             nf_node_name(f, src), nf_node_name(f, dst));
    return NF_EXIT_USAGE;
}

json_t *nf_app_sim_result_json(double load, const nf_sim_result *res, unsigned failed_links,
                               bool exclude, bool errors, bool classes) {
    json_t *o = json_pack(
        "{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:b, s:I, "
        "s:I, s:I, s:f}",
        "load", load, "offered", res->offered, "accepted", res->accepted, "lat_mean", res->lat_mean,
        "lat_p99", res->lat_p99, "msg_lat_mean", res->msg_lat_mean, "net_lat_mean",
        res->net_lat_mean, "hops_mean", res->hops_mean, "minimal_frac", res->minimal_frac,
        "link_util_mean", res->link_util_mean, "link_util_max", res->link_util_max, "saturated",
        res->saturated, "deadlock", res->deadlock, "packets", (json_int_t)res->packets, "cycles",
        (json_int_t)res->cycles, "flit_hops", (json_int_t)res->flit_hops, "wall_s", res->wall_s);
    if (!o) return NULL;
    json_object_set_new(o, "unroutable", json_integer((json_int_t)res->unroutable));
    json_object_set_new(o, "failed_links", json_integer((json_int_t)failed_links));
    json_object_set_new(o, "lost_frac", json_real(res->lost_frac));
    json_object_set_new(o, "dropped_pkts", json_integer((json_int_t)res->dropped_pkts));
    /* only with the option: netfab sweep's CSV columns are these keys */
    if (exclude)
        json_object_set_new(o, "excluded_msgs", json_integer((json_int_t)res->excluded_msgs));
    if (errors) { /* link errors or store-and-forward */
        json_object_set_new(o, "corrupt_pkts", json_integer((json_int_t)res->corrupt_pkts));
        json_object_set_new(o, "wasted_flits", json_integer((json_int_t)res->wasted_flits));
        json_object_set_new(o, "saf_frac", json_real(res->saf_frac));
    }
    if (classes) { /* traffic with a hot endpoint: the background and the hot endpoint apart */
        json_object_set_new(o, "bg_lat_mean", json_real(res->bg_lat_mean));
        json_object_set_new(o, "bg_lat_p99", json_real(res->bg_lat_p99));
        json_object_set_new(o, "hot_accepted", json_real(res->hot_accepted));
    }
    if (res->deadlock) json_object_set_new(o, "stuck", json_string(res->stuck));
    if (res->state_bytes) { /* a learning routing's tables */
        json_object_set_new(o, "state_bytes", json_integer((json_int_t)res->state_bytes));
        json_object_set_new(o, "state_bytes_flat", json_integer((json_int_t)res->state_bytes_flat));
    }
    return o;
}

int nf_app_routing_parse(const char *cmd, const char *name, nf_app_routing *out) {
    *out = (nf_app_routing){0};
    size_t n = strlen(NF_APP_LFT_PREFIX);
    if (strncmp(name, NF_APP_LFT_PREFIX, n) == 0) {
        if (!name[n]) return nf_opt_usage(cmd, "--routing lft:FILE wants a file name");
        out->lft_path = name + n;
        return NF_EXIT_OK;
    }
    if (!(out->r = nf_sim_routing_find(name))) {
        char known[512];
        return nf_opt_usage(cmd, "unknown routing '%s' (%s; or lft:FILE)", name,
                            nf_app_known(NF_APP_ROUTINGS, known, sizeof known));
    }
    return NF_EXIT_OK;
}

int nf_app_routing_resolve(nf_app_routing *ar, const nf_fabric *f) {
    if (!ar->lft_path) return NF_EXIT_OK;
    nf_diag d = {{0}, 0, {0}};
    int rc = nf_uft_load(f, ar->lft_path, nf_app_warn, NULL, &ar->t, &d);
    nf_app_warn_summary();
    if (!rc) rc = nf_sim_routing_from_uft(ar->t, &ar->own, &d);
    if (rc) {
        if (rc == NF_EINVAL || rc == NF_EPARSE || rc == NF_EIO) {
            if (!d.file[0]) snprintf(d.file, sizeof d.file, "%s", ar->lft_path);
            int ex = nf_app_report(rc == NF_EIO ? NF_EINVAL : rc, &d);
            nf_app_routing_fini(ar);
            return ex;
        }
        nf_app_routing_fini(ar);
        return nf_app_report(rc, &d);
    }
    ar->r = ar->own;
    return NF_EXIT_OK;
}

void nf_app_routing_fini(nf_app_routing *ar) {
    nf_sim_routing_free(ar->own);
    nf_uft_free(ar->t);
    ar->own = NULL;
    ar->t = NULL;
    if (ar->lft_path) ar->r = NULL;
}
