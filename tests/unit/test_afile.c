/* SPDX-License-Identifier: MIT */
/* util/afile: a committed file replaces the target whole, an aborted or failed one leaves it as
 * it was, and no temporary file stays behind either way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "netfab/core.h"
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commit_abort),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
