/* SPDX-License-Identifier: MIT */
/* util/afile: a committed file replaces the target whole, an aborted or failed one leaves it as
 * it was, and no temporary file stays behind either way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "netfab/core.h"
#include "testutil.h"
#include "util/afile.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/nf_afile_XXXXXX";

static int setup(void **state) {
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

static int entries(void) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
    closedir(d);
    return n;
}

static void slurp(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
}

static void test_commit_abort(void **state) {
    (void)state;
    char path[128], buf[64];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    nf__afile a;
    assert_int_equal(nf__afile_open(&a, path), 0);
    assert_non_null(a.tmp);
    fputs("first\n", a.fp);
    assert_int_equal(access(path, F_OK), -1); /* not there before the commit */
    assert_int_equal(entries(), 1);
    assert_int_equal(nf__afile_commit(&a), 0);
    slurp(path, buf, sizeof buf);
    assert_string_equal(buf, "first\n");
    assert_int_equal(entries(), 1);

    /* the mode a new file gets: 0666 & ~umask */
    mode_t um = umask(022);
    umask(um);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0666 & ~um);

    assert_int_equal(nf__afile_open(&a, path), 0);
    fputs("second, aborted\n", a.fp);
    nf__afile_abort(&a);
    nf__afile_abort(&a); /* finished: a no-op */
    slurp(path, buf, sizeof buf);
    assert_string_equal(buf, "first\n");
    assert_int_equal(entries(), 1);

    /* the pending registry removes temporaries not yet committed */
    assert_int_equal(nf__afile_open(&a, path), 0);
    fputs("third\n", a.fp);
    assert_int_equal(entries(), 2);
    nf__afile_unlink_pending();
    assert_int_equal(entries(), 1);
    nf__afile_abort(&a);
    slurp(path, buf, sizeof buf);
    assert_string_equal(buf, "first\n");
}

static void test_errors(void **state) {
    (void)state;
    char path[128];
    nf__afile a;
    snprintf(path, sizeof path, "%s/no/such/dir/out.txt", dir);
    assert_int_equal(nf__afile_open(&a, path), NF_EIO);
    assert_int_equal(errno, ENOENT);
    assert_null(a.fp);
    snprintf(path, sizeof path, "%s/", dir);
    assert_int_equal(nf__afile_open(&a, path), NF_EIO);
    /* a write error (here: the file is read-only underneath stdio) fails the commit */
    snprintf(path, sizeof path, "%s/ro.txt", dir);
    assert_int_equal(nf__afile_open(&a, path), 0);
    FILE *ro = freopen(a.tmp, "r", a.fp);
    assert_non_null(ro);
    a.fp = ro;
    fputs("x", a.fp);
    assert_int_equal(nf__afile_commit(&a), NF_EIO);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(entries(), 1); /* only out.txt of the test before */
    /* stdout */
    assert_int_equal(nf__afile_open(&a, "-"), 0);
    assert_ptr_equal(a.fp, stdout);
    assert_int_equal(nf__afile_commit(&a), 0);
}

/* Many temporary files open at once, more than a block of the pending registry holds (64): every
 * one is registered, so nf__afile_unlink_pending removes them all. When the registry must grow
 * and the allocation fails, the open fails with NF_ENOMEM and leaves no file: no temporary file
 * ever exists that a signal would not remove. */
static void test_many_pending(void **state) {
    (void)state;
    enum { N = 150 };
    static nf__afile a[N];
    char path[128];
    int base = entries();
    for (int i = 0; i < 64; i++) { /* the first block, full (the tests before released theirs) */
        snprintf(path, sizeof path, "%s/many%d.txt", dir, i);
        assert_int_equal(nf__afile_open(&a[i], path), 0);
    }
    assert_int_equal(entries(), base + 64);
    /* the 65th with the k-th allocation failing: the target's path, the temporary name, then
     * the registry's second block */
    snprintf(path, sizeof path, "%s/many64.txt", dir);
    nf_allocator failing = {sweep_malloc, sweep_realloc, sweep_free, NULL};
    long k;
    for (k = 0;; k++) {
        sweep_budget = k;
        nf_set_allocator(&failing);
        int rc = nf__afile_open(&a[64], path);
        nf_set_allocator(NULL);
        if (rc == 0) break;
        assert_int_equal(rc, NF_ENOMEM);
        assert_null(a[64].fp);
        assert_int_equal(entries(), base + 64); /* no file made */
        assert_true(k < 10);
    }
    assert_int_equal(k, 3);
    for (int i = 65; i < N; i++) {
        snprintf(path, sizeof path, "%s/many%d.txt", dir, i);
        assert_int_equal(nf__afile_open(&a[i], path), 0);
    }
    assert_int_equal(entries(), base + N);
    nf__afile_unlink_pending(); /* what a SIGINT handler does: every one of them goes */
    assert_int_equal(entries(), base);
    for (int i = 0; i < N; i++)
        nf__afile_abort(&a[i]);
    /* the slots are free again: as many again, committed this time */
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof path, "%s/many%d.txt", dir, i);
        assert_int_equal(nf__afile_open(&a[i], path), 0);
        fprintf(a[i].fp, "%d\n", i);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(nf__afile_commit(&a[i]), 0);
    assert_int_equal(entries(), base + N);
    nf__afile_unlink_pending(); /* nothing pending: the committed files stay */
    assert_int_equal(entries(), base + N);
    char buf[16];
    snprintf(path, sizeof path, "%s/many149.txt", dir);
    slurp(path, buf, sizeof buf);
    assert_string_equal(buf, "149\n");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commit_abort),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_many_pending),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
