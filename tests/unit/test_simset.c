/* SPDX-License-Identifier: MIT */
/* The settings table (simset.h): every row sound, every field of the three structs named by a
 * row of its own name (a list written here, apart from the table), the checks and texts. */
#include "netfab/simset.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* The fields of the structs, listed by hand: a row per field, its key the field's name. */
#define F(st, in, f)                                                                               \
    { #f, in, offsetof(st, f), sizeof(((st *)0)->f) }
static const struct {
    const char *key;
    nf_simset_in in;
    size_t offset, size;
} fields[] = {
    F(nf_sim_config, NF_SIMSET_CONFIG, vcs),
    F(nf_sim_config, NF_SIMSET_CONFIG, buf_flits),
    F(nf_sim_config, NF_SIMSET_CONFIG, shared_flits),
    F(nf_sim_config, NF_SIMSET_CONFIG, pkt_flits),
    F(nf_sim_config, NF_SIMSET_CONFIG, router_delay),
    F(nf_sim_config, NF_SIMSET_CONFIG, credit_delay),
    F(nf_sim_config, NF_SIMSET_CONFIG, lat_host),
    F(nf_sim_config, NF_SIMSET_CONFIG, lat_local),
    F(nf_sim_config, NF_SIMSET_CONFIG, lat_global),
    F(nf_sim_config, NF_SIMSET_CONFIG, speedup),
    F(nf_sim_config, NF_SIMSET_CONFIG, out_buf),
    F(nf_sim_config, NF_SIMSET_CONFIG, alloc_iters),
    F(nf_sim_config, NF_SIMSET_CONFIG, adaptive),
    F(nf_sim_config, NF_SIMSET_CONFIG, bias),
    F(nf_sim_config, NF_SIMSET_CONFIG, w_hop),
    F(nf_sim_config, NF_SIMSET_CONFIG, threshold),
    F(nf_sim_config, NF_SIMSET_CONFIG, proxy),
    F(nf_sim_config, NF_SIMSET_CONFIG, q_alpha),
    F(nf_sim_config, NF_SIMSET_CONFIG, q_alpha2),
    F(nf_sim_config, NF_SIMSET_CONFIG, q_explore),
    F(nf_sim_config, NF_SIMSET_CONFIG, q_threshold1),
    F(nf_sim_config, NF_SIMSET_CONFIG, q_threshold2),
    F(nf_sim_config, NF_SIMSET_CONFIG, q_row),
    F(nf_sim_config, NF_SIMSET_CONFIG, q_src_global),
    F(nf_sim_config, NF_SIMSET_CONFIG, q_threshold),
    F(nf_sim_config, NF_SIMSET_CONFIG, q_sample),
    F(nf_sim_config, NF_SIMSET_CONFIG, q_bias),
    F(nf_sim_config, NF_SIMSET_CONFIG, q_local),
    F(nf_sim_config, NF_SIMSET_CONFIG, threads),
    F(nf_sim_config, NF_SIMSET_CONFIG, flit_bytes),
    F(nf_sim_config, NF_SIMSET_CONFIG, nic_msg_cycles),
    F(nf_sim_config, NF_SIMSET_CONFIG, nic_short_cycles),
    F(nf_sim_config, NF_SIMSET_CONFIG, seed),
    F(nf_sim_config, NF_SIMSET_CONFIG, exclude_unroutable),
    F(nf_sim_config, NF_SIMSET_CONFIG, ber),
    F(nf_sim_config, NF_SIMSET_CONFIG, switching),
    F(nf_sim_config, NF_SIMSET_CONFIG, saf_errors),
    F(nf_sim_config, NF_SIMSET_CONFIG, saf_window),
    F(nf_sim_config, NF_SIMSET_CONFIG, queue_entries),
    F(nf_sim_config, NF_SIMSET_CONFIG, queue_host_cycles),
    F(nf_sim_config, NF_SIMSET_CONFIG, queue_backoff),
    F(nf_sim_config, NF_SIMSET_CONFIG, preaware_cycles),
    F(nf_sim_config, NF_SIMSET_CONFIG, preaware_throttle),
    F(nf_sim_config, NF_SIMSET_CONFIG, host_msg_cycles),
    F(nf_sim_config, NF_SIMSET_CONFIG, host_recv_cycles),
    F(nf_sim_config, NF_SIMSET_CONFIG, host_copy_bytes),
    F(nf_sim_config, NF_SIMSET_CONFIG, host_jitter_cycles),
    F(nf_sim_config, NF_SIMSET_CONFIG, vc_alloc),
    F(nf_sim_config, NF_SIMSET_CONFIG, inject_vc),
    F(nf_sim_config, NF_SIMSET_CONFIG, eject_vc),
    F(nf_sim_config, NF_SIMSET_CONFIG, nic_delay),
    F(nf_sim_phase, NF_SIMSET_PHASE, warmup),
    F(nf_sim_phase, NF_SIMSET_PHASE, window),
    F(nf_sim_phase, NF_SIMSET_PHASE, drain_max),
    F(nf_sim_injection, NF_SIMSET_INJECTION, bursty),
    F(nf_sim_injection, NF_SIMSET_INJECTION, burst_pkts),
    F(nf_sim_injection, NF_SIMSET_INJECTION, msg_pkts),
    F(nf_sim_config, NF_SIMSET_CONFIG, sw_input),
    F(nf_sim_config, NF_SIMSET_CONFIG, pass_clock),
    F(nf_sim_config, NF_SIMSET_CONFIG, xbar_pass),
    F(nf_sim_config, NF_SIMSET_CONFIG, nic_prompt_credits),
    F(nf_sim_config, NF_SIMSET_CONFIG, port_order),
    F(nf_sim_config, NF_SIMSET_CONFIG, body_delay),
    F(nf_sim_config, NF_SIMSET_CONFIG, nic_engines),
    F(nf_sim_config, NF_SIMSET_CONFIG, nic_share_ports),
    F(nf_sim_config, NF_SIMSET_CONFIG, nic_inflight),
    F(nf_sim_config, NF_SIMSET_CONFIG, nic_engine_flits),
    F(nf_sim_config, NF_SIMSET_CONFIG, mcast_port_entries),
    F(nf_sim_config, NF_SIMSET_CONFIG, nic_pcie_cycles),
    F(nf_sim_config, NF_SIMSET_CONFIG, nic_pio_bytes),
};
#undef F

/* Every field has its row (and the load, set per run by --load, none); every row a field. */
static void test_fields(void **state) {
    (void)state;
    size_t n;
    const nf_simset *t = nf_simset_table(&n);
    size_t nf = sizeof fields / sizeof fields[0];
    assert_int_equal(n, nf);
    for (size_t i = 0; i < nf; i++) {
        const nf_simset *s = nf_simset_find(fields[i].key);
        if (!s) fail_msg("no row for %s", fields[i].key);
        if (s->in != fields[i].in || s->offset != fields[i].offset || s->size != fields[i].size)
            fail_msg("%s: row at %zu (%zu bytes), field at %zu (%zu)", fields[i].key, s->offset,
                     s->size, fields[i].offset, fields[i].size);
    }
    assert_null(nf_simset_find("load"));
    assert_null(nf_simset_find("no-such"));
    assert_null(nf_simset_find(NULL));
    /* names and keys are unique; find takes either */
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(nf_simset_find(t[i].name), &t[i]);
        assert_ptr_equal(nf_simset_find(t[i].key), &t[i]);
    }
    assert_ptr_equal(nf_simset_find("router-delay"), nf_simset_find("router_delay"));
    /* an option is named as its field, with '-' for '_', but for these */
    static const char *const other[][2] = {
        {"cycles", "window"},          {"drain", "drain_max"},
        {"buf", "buf_flits"},          {"pkt", "pkt_flits"},
        {"msg", "msg_pkts"},           {"shared", "shared_flits"},
        {"preaware", "preaware_cycles"},
        {"q-src", "q_src_global"}};
    for (size_t i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s", t[i].name);
        for (char *p = name; *p; p++)
            if (*p == '-') *p = '_';
        bool ok = !strcmp(name, t[i].key);
        for (size_t j = 0; !ok && j < sizeof other / sizeof other[0]; j++)
            ok = !strcmp(t[i].name, other[j][0]) && !strcmp(t[i].key, other[j][1]);
        if (!ok) fail_msg("option --%s sets %s", t[i].name, t[i].key);
    }
}

/* Every row is sound: its default and BookSim2's value in its range, its type's parts there,
 * the AUTO reals' 0 in range (the command line takes it as a number), a help. */
static void test_rows(void **state) {
    (void)state;
    size_t n;
    const nf_simset *t = nf_simset_table(&n);
    for (size_t i = 0; i < n; i++) {
        const nf_simset *s = &t[i];
        nf_diag d = {{0}, 0, {0}};
        if (nf_simset_check(s, s->def, &d)) fail_msg("%s: default: %s", s->key, d.msg);
        if (s->flags & NF_SIMSET_BOOKSIM && nf_simset_check(s, s->booksim, &d))
            fail_msg("%s: BookSim2's: %s", s->key, d.msg);
        assert_non_null(s->help);
        if (s->type == NF_SIMSET_CHOICE || s->type == NF_SIMSET_BOOL) assert_non_null(s->choices);
        if (s->type == NF_SIMSET_UINT) assert_true(s->lo <= s->hi);
        if (s->type == NF_SIMSET_REAL) {
            assert_true(s->rlo < s->rhi);
            if (s->flags & NF_SIMSET_AUTO && !(s->flags & NF_SIMSET_LIBRARY))
                assert_true(s->rlo == 0);
        }
        if ((s->flags & NF_SIMSET_AUTO) && s->def == 0) assert_non_null(s->def_text);
    }
    /* BookSim2's router: the thirteen settings of the preset */
    const char *bs[] = {"router_delay", "credit_delay", "nic_delay",          "alloc_iters",
                        "vc_alloc",     "inject_vc",    "eject_vc",           "sw_input",
                        "pass_clock",   "xbar_pass",    "nic_prompt_credits", "port_order",
                        "body_delay"};
    size_t n_bs = 0;
    for (size_t i = 0; i < n; i++)
        n_bs += (t[i].flags & NF_SIMSET_BOOKSIM) != 0;
    assert_int_equal(n_bs, sizeof bs / sizeof bs[0]);
    assert_true(nf_simset_find("router_delay")->booksim == 1);
    assert_true(nf_simset_find("nic_delay")->booksim == 1);
    assert_true(nf_simset_find("vc_alloc")->booksim == NF_SIM_VA_SEPARATE);
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++)
        assert_true(nf_simset_find(bs[i])->flags & NF_SIMSET_BOOKSIM);
}

/* The checks at the ends of the ranges, with the reason named. */
static void test_check(void **state) {
    (void)state;
    const struct {
        const char *key;
        double v;
        const char *why; /* NULL: taken */
    } k[] = {
        {"vcs", 16, NULL},
        {"vcs", 17, "vcs 17: a whole number from 1 to 16"},
        {"vcs", 0, "vcs 0: a whole number from 1 to 16"},
        {"vcs", 2.5, "vcs 2.5: a whole number"},
        {"buf_flits", 60000, NULL},
        {"buf_flits", 60001, "buf_flits 60001: a whole number from 1 to 60000"},
        {"router_delay", 0, NULL},
        {"credit_delay", 0, NULL},
        {"out_buf", 0, NULL},  /* auto */
        {"msg_pkts", 0, NULL}, /* auto, below its range */
        {"speedup", 0.05, "speedup 0.05: a number from 0.1 to 64"},
        {"speedup", NAN, "speedup nan"},
        {"speedup", INFINITY, "speedup inf"},
        {"q_alpha", 1e-6, NULL},
        {"q_alpha", 0, "q_alpha 0: a number from 1e-06 to 1"},
        {"bias", 0, NULL},
        {"bias", -1, "bias -1: a number from 0 to 1e+12"},
        {"switching", 2, NULL},
        {"switching", 3, "switching 3: one of vct, saf, dynamic"},
        {"proxy", 1, NULL},
        {"proxy", 7, "proxy 7: one of all, restricted, qvl, qvr, qvd, qvp, qvq"},
        {"window", 0, "window 0: a whole number from 1 to 1000000000"},
        {"seed", 18446744073709551615.0, NULL},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        nf_diag d = {{0}, 0, {0}};
        const nf_simset *s = nf_simset_find(k[i].key);
        assert_non_null(s);
        int rc = nf_simset_check(s, k[i].v, &d);
        if (!k[i].why && rc) fail_msg("%s %g refused: %s", k[i].key, k[i].v, d.msg);
        if (k[i].why && (rc != NF_EINVAL || !strstr(d.msg, k[i].why)))
            fail_msg("%s %g: rc %d \"%s\", want \"%s\"", k[i].key, k[i].v, rc, d.msg, k[i].why);
    }
}

/* put writes what get reads, for every kind of field, and refuses out of range untouched. */
static void test_put_get(void **state) {
    (void)state;
    nf_sim_config c;
    memset(&c, 0x5A, sizeof c);
    nf_simset_defaults(NF_SIMSET_CONFIG, &c);
    assert_int_equal(c.vcs, 4);
    assert_int_equal(c.router_delay, 3);
    assert_true(c.q_alpha == 0.2 && !c.proxy && c.switching == NF_SIM_VCT);
    assert_int_equal(nf_simset_check_all(NF_SIMSET_CONFIG, &c, NULL), 0);
    const struct {
        const char *key;
        double v;
    } k[] = {{"vcs", 7},      {"q_alpha", 0.5}, {"proxy", 1}, {"switching", 2},
             {"adaptive", 1}, {"inject_vc", 3}, {"seed", 12345}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        const nf_simset *s = nf_simset_find(k[i].key);
        assert_int_equal(nf_simset_put(s, &c, k[i].v, NULL), 0);
        assert_true(nf_simset_get(s, &c) == k[i].v);
    }
    assert_true(c.vcs == 7 && c.q_alpha == 0.5 && c.proxy == NF_SIM_PROXY_RESTRICTED && c.adaptive);
    assert_true(c.switching == NF_SIM_SWITCH_DYNAMIC && c.inject_vc == NF_SIM_INJ_ROUTING);
    assert_true(c.seed == 12345);
    assert_int_equal(nf_simset_put(nf_simset_find("vcs"), &c, 99, NULL), NF_EINVAL);
    assert_int_equal(c.vcs, 7);
    /* whole numbers exactly: a seed past 2^53, a range, a setting that is not one */
    const nf_simset *seed = nf_simset_find("seed");
    assert_int_equal(nf_simset_put_uint(seed, &c, UINT64_MAX - 1, NULL), 0);
    assert_true(c.seed == UINT64_MAX - 1 && nf_simset_get_uint(seed, &c) == UINT64_MAX - 1);
    assert_int_equal(nf_simset_put_uint(nf_simset_find("vcs"), &c, 17, NULL), NF_EINVAL);
    assert_int_equal(nf_simset_put_uint(nf_simset_find("out_buf"), &c, 0, NULL), 0); /* auto */
    assert_int_equal(nf_simset_put_uint(nf_simset_find("q_alpha"), &c, 1, NULL), NF_EINVAL);
    assert_int_equal(nf_simset_get_uint(nf_simset_find("vcs"), &c), 7);
    /* check_all finds a bad field, an enum no choice names included */
    c.eject_vc = (nf_sim_eject_vc)9;
    nf_diag d = {{0}, 0, {0}};
    assert_int_equal(nf_simset_check_all(NF_SIMSET_CONFIG, &c, &d), NF_EINVAL);
    assert_non_null(strstr(d.msg, "eject_vc 9"));
    nf_sim_phase ph;
    nf_simset_defaults(NF_SIMSET_PHASE, &ph);
    assert_true(ph.warmup == NF_SIM_DEFAULT_WARMUP && ph.window == NF_SIM_DEFAULT_WINDOW &&
                ph.drain_max == NF_SIM_DEFAULT_DRAIN);
    nf_sim_injection inj;
    nf_simset_defaults(NF_SIMSET_INJECTION, &inj);
    assert_true(inj.msg_pkts == 1 && inj.burst_pkts == 8 && !inj.bursty && inj.load == 0);
}

/* The texts netfab prints. */
static void test_texts(void **state) {
    (void)state;
    char b[128];
    assert_string_equal(nf_simset_range_text(nf_simset_find("vcs"), b, sizeof b),
                        "a whole number from 1 to 16");
    assert_string_equal(nf_simset_range_text(nf_simset_find("q_alpha"), b, sizeof b),
                        "a number from 1e-06 to 1");
    assert_string_equal(nf_simset_range_text(nf_simset_find("eject_vc"), b, sizeof b),
                        "one of any, arrival, routing");
    assert_string_equal(nf_simset_value_text(nf_simset_find("vc_alloc"), 1, b, sizeof b),
                        "separate");
    assert_string_equal(nf_simset_value_text(nf_simset_find("adaptive"), 1, b, sizeof b), "yes");
    assert_string_equal(nf_simset_value_text(nf_simset_find("buf_flits"), 60000, b, sizeof b),
                        "60000");
    assert_string_equal(nf_simset_value_text(nf_simset_find("q_explore"), 0.001, b, sizeof b),
                        "0.001");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),  cmocka_unit_test(test_rows),  cmocka_unit_test(test_check),
        cmocka_unit_test(test_put_get), cmocka_unit_test(test_texts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
