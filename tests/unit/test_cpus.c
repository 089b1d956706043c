/* SPDX-License-Identifier: MIT */
/* The processors to use: cgroup quota lines, /proc/self/cgroup and cgroup trees read by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quota),
        cmocka_unit_test(test_cgroup_path),
        cmocka_unit_test(test_cgroup_quota),
        cmocka_unit_test(test_usable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
