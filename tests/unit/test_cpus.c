/* SPDX-License-Identifier: MIT */
/* The processors to use: cgroup v2 cpu.max lines read by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

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

static void test_usable(void **state) {
    (void)state;
    unsigned n = nf__cpus_usable();
    assert_true(n >= 1);
    assert_true(n <= (unsigned)omp_get_num_procs());
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quota),
        cmocka_unit_test(test_usable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
