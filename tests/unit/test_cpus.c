/* SPDX-License-Identifier: MIT */
/* The processors to use: cgroup quota lines, /proc/self/cgroup and cgroup trees read by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cpus.h"

#include <omp.h>

static void test_quota(void **state) {
    (void)state;
    assert_int_equal(nf__cpus_quota("max 100000\n"), 0);
    assert_int_equal(nf__cpus_quota("200000 100000\n"), 2);
    assert_int_equal(nf__cpus_quota("150000 100000"), 2); /* 1.5 processors: 2 threads */
    assert_int_equal(nf__cpus_quota("50000 100000\n"), 1);
    assert_int_equal(nf__cpus_quota("100000 100000"), 1);
    assert_int_equal(nf__cpus_quota(""), 0);
    assert_int_equal(nf__cpus_quota("junk"), 0);
    assert_int_equal(nf__cpus_quota("100000 0"), 0);
    assert_int_equal(nf__cpus_quota("100000 100000 7"), 0);
    assert_int_equal(nf__cpus_quota(NULL), 0);
}

/* /proc/self/cgroup's lines: v2's "0::", v1's by its cpu controller. */
static void test_cgroup_path(void **state) {
    (void)state;
    char p[64];
    const char *hybrid = "12:memory:/m\n4:cpuacct,cpu:/slice/job\n1:name=systemd:/s\n0::/v2/job\n";
    assert_int_equal(nf__cpus_cgroup_path(hybrid, 0, p, sizeof p), 1);
    assert_string_equal(p, "/v2/job");
    assert_int_equal(nf__cpus_cgroup_path(hybrid, 1, p, sizeof p), 1);
    assert_string_equal(p, "/slice/job");
    assert_int_equal(nf__cpus_cgroup_path("3:cpuset:/x\n2:cpuacct:/y\n", 1, p, sizeof p), 0);
    assert_int_equal(nf__cpus_cgroup_path("0::/a", 0, p, sizeof p), 1); /* no newline at end */
    assert_string_equal(p, "/a");
    assert_int_equal(nf__cpus_cgroup_path("", 0, p, sizeof p), 0);
    assert_int_equal(nf__cpus_cgroup_path("0::/much/too/long/for/four", 0, p, 4), 0);
}

static void put(const char *dir, const char *name, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The smallest quota of the cgroup and its parents; a missing directory counts none. */
static void test_cgroup_quota(void **state) {
    (void)state;
    char root[] = "/tmp/nf_cgXXXXXX", d[256];
    assert_non_null(mkdtemp(root));
    snprintf(d, sizeof d, "%s/a", root);
    assert_int_equal(mkdir(d, 0700), 0);
    snprintf(d, sizeof d, "%s/a/b", root);
    assert_int_equal(mkdir(d, 0700), 0);
    assert_int_equal(nf__cpus_cgroup_quota(root, "/a/b", 0), 0); /* no file: no limit */
    put(d, "cpu.max", "max 100000\n");
    snprintf(d, sizeof d, "%s/a", root);
    put(d, "cpu.max", "300000 100000\n");
    assert_int_equal(nf__cpus_cgroup_quota(root, "/a/b", 0), 3); /* the parent's */
    put(root, "cpu.max", "150000 100000\n");
    assert_int_equal(nf__cpus_cgroup_quota(root, "/a/b", 0), 2); /* the mount's, smaller */
    assert_int_equal(nf__cpus_cgroup_quota(root, "/a/b/gone/deeper", 0), 2);
    assert_int_equal(nf__cpus_cgroup_quota(root, "/", 0), 2);
    assert_int_equal(nf__cpus_cgroup_quota(root, "relative", 0), 0);
    /* v1: cfs_quota_us -1 is no limit */
    put(d, "cpu.cfs_quota_us", "-1\n");
    put(d, "cpu.cfs_period_us", "100000\n");
    assert_int_equal(nf__cpus_cgroup_quota(root, "/a", 1), 0);
    put(d, "cpu.cfs_quota_us", "50000\n");
    assert_int_equal(nf__cpus_cgroup_quota(root, "/a", 1), 1);
    put(d, "cpu.cfs_quota_us", "250000\n");
    assert_int_equal(nf__cpus_cgroup_quota(root, "/a/b", 1), 3);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    assert_int_equal(system(cmd), 0);
}

static void test_usable(void **state) {
    (void)state;
    unsigned n = nf__cpus_usable();
    assert_true(n >= 1);
    assert_true(n <= (unsigned)omp_get_num_procs());
}

/* /proc/stat's cpuN lines: idle and iowait summed over the chosen processors. */
static void test_idle_parse(void **state) {
    (void)state;
    const char *stat = "cpu  100 2 30 4000 50 0 1 0 0 0\n"
                       "cpu0 40 1 10 1000 20 0 0 0 0 0\n"
                       "cpu1 60 1 20 3000 30 0 1 0 0 0\n"
                       "cpu12 1 1 1 7 1\n"
                       "intr 12345 0 0\n"
                       "ctxt 999\n";
    unsigned long long t = 0;
    assert_int_equal(nf__cpus_idle_parse(stat, NULL, 0, &t), 1);
    assert_int_equal(t, 1020 + 3030 + 8); /* every cpuN line, not the aggregate */
    unsigned char use[16] = {0};
    use[1] = 1;
    assert_int_equal(nf__cpus_idle_parse(stat, use, 16, &t), 1);
    assert_int_equal(t, 3030);
    use[12] = 1;
    assert_int_equal(nf__cpus_idle_parse(stat, use, 16, &t), 1);
    assert_int_equal(t, 3038);
    assert_int_equal(nf__cpus_idle_parse(stat, use, 2, &t), 1); /* cpu12 beyond the mask */
    assert_int_equal(t, 3030);
    t = 77;
    memset(use, 0, sizeof use);
    use[5] = 1; /* a processor with no line: none read, *ticks untouched */
    assert_int_equal(nf__cpus_idle_parse(stat, use, 16, &t), 0);
    assert_int_equal(t, 77);
    assert_int_equal(nf__cpus_idle_parse("cpu  1 2 3 4\nintr 1\n", NULL, 0, &t), 0);
    assert_int_equal(nf__cpus_idle_parse("cpu0 1 2 x 4\n", NULL, 0, &t), 0);
    assert_int_equal(nf__cpus_idle_parse("", NULL, 0, &t), 0);
    assert_int_equal(t, 77);
}

/* /proc/loadavg's fourth field. */
static void test_running_parse(void **state) {
    (void)state;
    unsigned r = 5;
    assert_int_equal(nf__cpus_running_parse("1.41 2.05 1.89 2/68 5997\n", &r), 1);
    assert_int_equal(r, 2);
    assert_int_equal(nf__cpus_running_parse("0.00 0.01 0.05 13/1024 1", &r), 1);
    assert_int_equal(r, 13);
    r = 5;
    assert_int_equal(nf__cpus_running_parse("1.41 2.05 1.89 x/68 5997\n", &r), 0);
    assert_int_equal(nf__cpus_running_parse("1.41 2.05\n", &r), 0);
    assert_int_equal(nf__cpus_running_parse(NULL, &r), 0);
    assert_int_equal(r, 5);
}

/* The live readings: idle time never runs backwards; the free processors are no more than
 * the machine has. */
static void test_live(void **state) {
    (void)state;
    double a = -1, b = -1;
    if (nf__cpus_idle_seconds(&a)) {
        assert_true(a >= 0);
        assert_int_equal(nf__cpus_idle_seconds(&b), 1);
        assert_true(b >= a);
    }
    int f = nf__cpus_free_now();
    assert_true(f >= -1);
    assert_true(f <= (int)sysconf(_SC_NPROCESSORS_ONLN));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quota),        cmocka_unit_test(test_cgroup_path),
        cmocka_unit_test(test_cgroup_quota), cmocka_unit_test(test_usable),
        cmocka_unit_test(test_idle_parse),   cmocka_unit_test(test_running_parse),
        cmocka_unit_test(test_live),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
