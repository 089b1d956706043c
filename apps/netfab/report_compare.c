/* SPDX-License-Identifier: MIT */
/* netfab report's comparisons: each finds in a step's rows the numbers the paper's text gives
 * for the same experiment and writes them as a sentence (or a table) of HTML. */
#include "report_compare.h"
#include "exp.h"
#include "report_page.h"
#include "rows.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* A number of a row: NAN when it is missing or not a number. */
static double num(json_t *v) {
    double d = NAN;
    nf_app_json_number(v, &d);
    return d;
}

/* The number under key in the first row whose keys k1 (and k2) read v1 (and v2) as text. */
static double find(json_t *rows, const char *key, const char *k1, const char *v1, const char *k2,
                   const char *v2) {
    size_t i;
    json_t *r;
    char b1[64], b2[64];
    json_array_foreach(rows, i, r) {
        if (k1 && strcmp(exp_cell_text(json_object_get(r, k1), b1), v1)) continue;
        if (k2 && strcmp(exp_cell_text(json_object_get(r, k2), b2), v2)) continue;
        return num(json_object_get(r, key));
    }
    return NAN;
}

static void pct(FILE *h, double a, double b) {
    if (isfinite(a) && isfinite(b) && b > 0)
        fprintf(h, "%+.1f%%", 100 * (a / b - 1));
    else
        fputs("(not measured at this scale)", h);
}

void report_cmp_height(FILE *h, json_t *rows) {
    static const char *const sizes[] = {"8", "2048"};
    fputs("Height 2 against height 1, mean (p99) latency: ", h);
    for (int i = 0; i < 2; i++) {
        fprintf(h, "%s%s B ", i ? "; " : "", sizes[i]);
        pct(h, find(rows, "lat_mean", "height", "2", "msg_bytes", sizes[i]),
            find(rows, "lat_mean", "height", "1", "msg_bytes", sizes[i]));
        fputs(" (", h);
        pct(h, find(rows, "lat_p99", "height", "2", "msg_bytes", sizes[i]),
            find(rows, "lat_p99", "height", "1", "msg_bytes", sizes[i]));
        fputs(")", h);
    }
    fputs(", with hosts and routers fitted to the paper's Tables 1 and 2 (bench/fit_mcast_host.sh; "
          "the paper: about +20% and +15%).",
          h);
}

void report_cmp_efi(FILE *h, json_t *rows) {
    double base = find(rows, "lat_mean", "efi", "1", "msg_bytes", "2048");
    fputs("2 KB messages, mean latency against EFI 1: EFI 16 ", h);
    pct(h, find(rows, "lat_mean", "efi", "16", "msg_bytes", "2048"), base);
    fputs(" (fitted to the paper's +38%); EFI 128 ", h);
    pct(h, find(rows, "lat_mean", "efi", "128", "msg_bytes", "2048"), base);
    fputs(" (predicted; the paper: +1,066%); 8 B at EFI 16 ", h);
    pct(h, find(rows, "lat_mean", "efi", "16", "msg_bytes", "8"),
        find(rows, "lat_mean", "efi", "1", "msg_bytes", "8"));
    fputs(". Each group sends its next multicast once its last is done, through hosts fitted to "
          "the paper's Tables 1 and 2.",
          h);
}

/* The fitted runs (issue 19): the fitted value as the rows carry it, the figure it was fitted
 * to, and the other one as a prediction. */
void report_cmp_height_fit(FILE *h, json_t *rows) {
    double r = find(rows, "router_delay", NULL, NULL, NULL, NULL);
    fprintf(h, "Router delay %.0f cycles (fitted to the paper's +20%% at 8 B): 8 B ", r);
    pct(h, find(rows, "lat_mean", "height", "2", "msg_bytes", "8"),
        find(rows, "lat_mean", "height", "1", "msg_bytes", "8"));
    fputs("; predicted 2 KB ", h);
    pct(h, find(rows, "lat_mean", "height", "2", "msg_bytes", "2048"),
        find(rows, "lat_mean", "height", "1", "msg_bytes", "2048"));
    fputs(" (the paper: about +15%). Height 2 adds two hops of router delay and link latency to a "
          "latency that is mostly the NIC's overhead and the message's flits, so no hop constant "
          "gives both figures: they need a fixed part three times the 56 flits between the two "
          "sizes.",
          h);
}

void report_cmp_efi_fit(FILE *h, json_t *rows) {
    double base = find(rows, "lat_mean", "efi", "1", "msg_bytes", "2048");
    fprintf(h, "Period %.0f cycles (the fit to +38%% at EFI 16, 2 KB): EFI 16 ",
            find(rows, "period", NULL, NULL, NULL, NULL));
    pct(h, find(rows, "lat_mean", "efi", "16", "msg_bytes", "2048"), base);
    fputs("; predicted EFI 128 ", h);
    pct(h, find(rows, "lat_mean", "efi", "128", "msg_bytes", "2048"), base);
    fputs(" (the paper: +1,066%). No period reaches +38%: the groups all send in the same cycle, "
          "and 16 messages of 64 flits queue on every link of the shared tree whatever the period; "
          "the fit is the shortest period at that floor.",
          h);
}

void report_cmp_workload(FILE *h, json_t *rows) {
    static const char *const e[] = {"minihop", "sssp", "fulb"};
    fputs("Max EFI of the trees / mean latency: ", h);
    for (int i = 0; i < 3; i++)
        fprintf(h, "%s%s %.0f / %.1f cycles", i ? "; " : "", e[i],
                find(rows, "max_efi", "engine", e[i], NULL, NULL),
                find(rows, "lat_mean", "engine", e[i], NULL, NULL));
    fputs(".", h);
}

void report_cmp_faults(FILE *h, json_t *rows) {
    fprintf(h,
            "All up links of leaf 0 failed: endpoint pairs still reachable, fat tree %.4f, "
            "gft with sibling links (1 rail) %.4f.",
            find(rows, "reachability", "fabric", "fat tree", "case", "leaf 0 up links"),
            find(rows, "reachability", "fabric", "gft, 1 rail", "case", "leaf 0 up links"));
}

void report_cmp_tables(FILE *h, json_t *rows) {
    double s = find(rows, "saved", "endpoints", "262144", NULL, NULL);
    fprintf(h, "Two-level tables at 262,144 endpoints save %.2f%% of the flat tables' memory.",
            100 * s);
}

void report_cmp_coll(FILE *h, json_t *rows) {
    double hw = NAN, sw = NAN;
    const char *n = NULL;
    size_t i;
    json_t *r;
    char b[64];
    json_array_foreach(rows, i, r) { /* the largest job measured */
        if (strcmp(exp_cell_text(json_object_get(r, "op"), b), "allreduce")) continue;
        const char *impl = json_string_value(json_object_get(r, "impl"));
        const char *alg = json_string_value(json_object_get(r, "algorithm"));
        if (impl && !strcmp(impl, "hw")) hw = num(json_object_get(r, "lat_mean"));
        if (alg && !strcmp(alg, "recursive doubling")) sw = num(json_object_get(r, "lat_mean"));
        n = exp_cell_text(json_object_get(r, "nodes"), b);
    }
    fprintf(h, "Allreduce on %s ranks: hardware %.0f cycles, recursive doubling %.0f (%.1fx).",
            n ? n : "?", hw, sw, sw / hw);
    /* with a host's time per software message (issue 19) */
    double swh = NAN, hwh = NAN, host = NAN, recv = NAN;
    json_array_foreach(rows, i, r) {
        const char *alg = json_string_value(json_object_get(r, "algorithm"));
        if (strcmp(exp_cell_text(json_object_get(r, "op"), b), "allreduce") || !alg) continue;
        if (!strcmp(alg, "tree + multicast + host")) hwh = num(json_object_get(r, "lat_mean"));
        if (strcmp(alg, "recursive doubling + host")) continue;
        swh = num(json_object_get(r, "lat_mean"));
        host = num(json_object_get(r, "host_cycles"));
        recv = json_object_get(r, "host_recv") ? num(json_object_get(r, "host_recv")) : 0;
    }
    if (isfinite(swh) && isfinite(hwh))
        fprintf(h,
                " With hosts that spend %.0f cycles issuing and %.0f receiving a message (the "
                "multicast paper's fit, with copies and jitter), recursive doubling takes %.0f "
                "and the hardware %.0f (%.1fx).",
                host, recv, swh, hwh, swh / hwh);
    else if (isfinite(swh))
        fprintf(h,
                " With a host's %.0f cycles per message, recursive doubling takes %.0f (%.1fx "
                "the hardware's).",
                host, swh, swh / hw);
}

void report_cmp_dual(FILE *h, json_t *rows) {
    double one = NAN, two = NAN, b = 0;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) { /* the largest message */
        const char *m = json_string_value(json_object_get(r, "measure"));
        const char *mode = json_string_value(json_object_get(r, "mode"));
        double mb = num(json_object_get(r, "msg_bytes"));
        if (!m || strcmp(m, "bandwidth") || !mode || mb < b) continue;
        b = mb;
        if (!strcmp(mode, "rail 0")) one = num(json_object_get(r, "bandwidth"));
        if (!strcmp(mode, "dynamic")) two = num(json_object_get(r, "bandwidth"));
    }
    fprintf(h,
            "A %.0f-byte message: %.2f bytes/cycle on one rail, %.2f on two with the rail chosen "
            "per packet (%.2fx).",
            b, one, two, two / one);
}

/* The saturation throughput of each routing: its largest accepted load. */
void report_cmp_dragonfly(FILE *h, json_t *rows) {
    static const char *const rs[] = {"dfmin", "val", "ugal-l", "ugal-g", "par", "qadapt"};
    fputs("Largest accepted load (flits per endpoint per cycle): ", h);
    for (int k = 0; k < 6; k++) {
        double best = 0;
        size_t i;
        json_t *r;
        json_array_foreach(rows, i, r) {
            const char *rn = json_string_value(json_object_get(r, "routing"));
            double a = num(json_object_get(r, "accepted"));
            if (rn && !strcmp(rn, rs[k]) && a > best) best = a;
        }
        fprintf(h, "%s%s %.3f", k ? "; " : "", rs[k], best);
    }
    fputs(".", h);
}

/* Max EFI and routing time per fabric and workload (rows) and engine (columns), as the paper's
 * Tables 3-12 lay them out. */
void report_cmp_engines(FILE *h, json_t *rows) {
    json_t *engines = json_array(), *cases = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        json_t *e = json_object_get(r, "engine");
        json_t *c =
            json_pack("[O, O]", json_object_get(r, "topo"), json_object_get(r, "groups_spec"));
        bool seen_e = false, seen_c = false;
        for (size_t j = 0; j < json_array_size(engines); j++)
            seen_e |= json_equal(json_array_get(engines, j), e);
        for (size_t j = 0; j < json_array_size(cases); j++)
            seen_c |= json_equal(json_array_get(cases, j), c);
        if (!seen_e && json_is_string(e)) json_array_append(engines, e);
        if (!seen_c && c) json_array_append(cases, c);
        json_decref(c);
    }
    fputs("max EFI, and routing time in ms, per engine:</p>\n<div class=\"scroll\"><table>\n"
          "<tr><th>fabric</th><th>groups</th>",
          h);
    for (int pass = 0; pass < 2; pass++)
        for (size_t j = 0; j < json_array_size(engines); j++) {
            fprintf(h, "<th>%s ", pass ? "ms" : "EFI");
            report_html_text(h, json_string_value(json_array_get(engines, j)));
            fputs("</th>", h);
        }
    fputs("</tr>\n", h);
    for (size_t k = 0; k < json_array_size(cases); k++) {
        const char *t = json_string_value(json_array_get(json_array_get(cases, k), 0));
        const char *g = json_string_value(json_array_get(json_array_get(cases, k), 1));
        fputs("<tr><td>", h);
        report_html_text(h, t);
        fputs("</td><td>", h);
        report_html_text(h, g);
        fputs("</td>", h);
        for (int pass = 0; pass < 2; pass++)
            for (size_t j = 0; j < json_array_size(engines); j++) {
                const char *e = json_string_value(json_array_get(engines, j));
                double v = NAN;
                json_array_foreach(rows, i, r) {
                    const char *e2 = json_string_value(json_object_get(r, "engine"));
                    const char *t2 = json_string_value(json_object_get(r, "topo"));
                    const char *g2 = json_string_value(json_object_get(r, "groups_spec"));
                    if (e2 && t2 && g2 && !strcmp(e2, e) && !strcmp(t2, t) && !strcmp(g2, g))
                        v = num(json_object_get(r, pass ? "route_s" : "max_efi"));
                }
                fprintf(h, pass ? "<td class=\"n\">%.2f</td>" : "<td class=\"n\">%.0f</td>",
                        pass ? 1e3 * v : v);
            }
        fputs("</tr>\n", h);
    }
    fputs("</table></div><p>", h);
    json_decref(engines);
    json_decref(cases);
}

/* congestion pre-awareness (issue 19): at the highest load measured, the background's latency
 * and the hot endpoint's throughput with pre-awareness (routing, rails and throttle) against
 * without */
void report_cmp_congestion(FILE *h, json_t *rows) {
    double top = NAN;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        double l = num(json_object_get(r, "load"));
        if (isfinite(l) && !(l <= top)) top = l;
    }
    char load[64];
    snprintf(load, sizeof load, "%.4g", top);
    fprintf(h, "Load %s, the background's mean latency with pre-awareness against without: ", load);
    pct(h, find(rows, "bg_lat_mean", "load", load, "preaware", "+throttle"),
        find(rows, "bg_lat_mean", "load", load, "preaware", "off"));
    fputs(", p99 ", h);
    pct(h, find(rows, "bg_lat_p99", "load", load, "preaware", "+throttle"),
        find(rows, "bg_lat_p99", "load", load, "preaware", "off"));
    fprintf(h, "; the hot endpoint takes %.3g against %.3g flits a cycle.",
            find(rows, "hot_accepted", "load", load, "preaware", "+throttle"),
            find(rows, "hot_accepted", "load", load, "preaware", "off"));
}

/* The most accepted load of routing rt under traffic tr on fabric fab (the "curve" rows). */
static double most_accepted(json_t *rows, const char *fab, const char *tr, const char *rt) {
    double best = NAN;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        const char *f = json_string_value(json_object_get(r, "fabric"));
        const char *t = json_string_value(json_object_get(r, "traffic"));
        const char *w = json_string_value(json_object_get(r, "routing"));
        if (!f || !t || !w || strcmp(f, fab) || strcmp(t, tr) || strcmp(w, rt)) continue;
        double a = num(json_object_get(r, "accepted"));
        if (!(best >= a)) best = a;
    }
    return best;
}

/* The fabric of the first row: the experiment's first (largest-scale first at full). */
static const char *first_fabric(json_t *rows) {
    return json_array_size(rows)
               ? json_string_value(json_object_get(json_array_get(rows, 0), "fabric"))
               : NULL;
}

static void most_accepted_line(FILE *h, json_t *rows, const char *tr, const char *const *ways) {
    const char *fab = first_fabric(rows);
    fprintf(h, "%s, %s, most accepted load: ", fab ? fab : "?", tr);
    for (int k = 0; ways[k]; k++) {
        double a = fab ? most_accepted(rows, fab, tr, ways[k]) : NAN;
        fprintf(h, "%s%s %.3f", k ? "; " : "", ways[k], a);
    }
    fputs(". ", h);
}

void report_cmp_q_adaptive(FILE *h, json_t *rows) {
    static const char *const ways[] = {
        "dfmin", "val", "ugal-g", "par", "qadapt", "qadapt --q-src global", NULL};
    most_accepted_line(h, rows, "worstcase", ways);
    most_accepted_line(h, rows, "uniform", ways);
    fputs("The paper: under ADV+1 (worstcase) Q-adaptive at or above VALn's throughput, up to 3% "
          "more; up to 10.5% more than adaptive routing.",
          h);
}

void report_cmp_proxies(FILE *h, json_t *rows) {
    static const char *const ways[] = {"val", "val qvl", "val qvr", "val qvp", "val qvq", NULL};
    most_accepted_line(h, rows, "worstcase", ways);
    most_accepted_line(h, rows, "uniform", ways);
    fputs("The paper: up to 26% more throughput and 76% lower latency than Valiant; source-side "
          "proxies better than destination-side; the most restrictive best.",
          h);
}

void report_cmp_taihulight(FILE *h, json_t *rows) {
    double bare = find(rows, "ratio", "measure", "geometric mean", "hosts", "none");
    double host = find(rows, "ratio", "measure", "geometric mean", "hosts", "model");
    fputs("The prototype against TaihuLight, the geometric mean of the ratios: ", h);
    if (isfinite(bare) && isfinite(host))
        fprintf(h, "%.3gx for the networks and NICs alone, %.3gx with the hosts' time", bare, host);
    else
        fputs("(not measured at this scale)", h);
    fputs("; the paper: 4x.", h);
}
