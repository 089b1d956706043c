/* SPDX-License-Identifier: MIT */
/* Format detection and the load/parse dispatch: which reader a text goes to, and the errors of
 * files that cannot be read or are not fabrics at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "netfab/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static nf_format detect(const char *s) { return nf_io_detect(s, strlen(s)); }

static void test_detect(void **state) {
    (void)state;
    /* ibnetdiscover: key lines and GUID ids */
    assert_int_equal(detect("vendid=0x2c9\nswitchguid=0x10\nSwitch 8 \"S-0000000000000010\"\n"),
                     NF_FMT_IBNET);
    assert_int_equal(detect("caguid=0x11\nCa 2 \"H-0000000000000011\" # \"h\"\n"), NF_FMT_IBNET);
    /* ibsim: bare ids, Hca, or GUID-like ids without key lines */
    assert_int_equal(detect("Switch 8 \"Switch1\"\n[1] \"Hca1\"[1]\n"), NF_FMT_IBSIM);
    assert_int_equal(detect("Switch 8 \"S-0000000000000010\"\n"), NF_FMT_IBSIM);
    assert_int_equal(detect("switchguid=0x10\nSwitch 8 \"sw1\"\n"), NF_FMT_IBSIM);
    assert_int_equal(detect("caguid=0x11\nHca 2 \"H-0000000000000011\"\n"), NF_FMT_IBSIM);
    /* an id one hex digit short is free-form */
    assert_int_equal(detect("vendid=0x1\nSwitch 8 \"S-000000000000010\"\n"), NF_FMT_IBSIM);
    /* neither */
    assert_int_equal(detect(""), NF_FMT_AUTO);
    assert_int_equal(detect("hello\nworld\n"), NF_FMT_AUTO);
    assert_int_equal(detect("# Switch 8 \"x\" in a comment only\n"), NF_FMT_AUTO);
    assert_int_equal(detect("Switch without a quote\n"), NF_FMT_AUTO);
}

static void test_detect_fixtures(void **state) {
    (void)state;
    nf_fabric *f;
    nf_diag d;
    assert_int_equal(nf_io_load(NF_TEST_DATA "/small.net", NF_FMT_AUTO, NULL, &f, &d), 0);
    nf_fabric_free(f);
    assert_int_equal(nf_io_load(NF_TEST_DATA "/small.ibnet", NF_FMT_AUTO, NULL, &f, &d), 0);
    nf_fabric_free(f);
    assert_int_equal(
        nf_io_load("/usr/share/doc/ibsim-utils/net-examples/net", NF_FMT_AUTO, NULL, &f, &d), 0);
    assert_int_equal(f->n_switches, 2);
    nf_fabric_free(f);
}

static void test_load_errors(void **state) {
    (void)state;
    nf_fabric *f = (nf_fabric *)&f;
    nf_diag d;
    assert_int_equal(nf_io_load(NF_TEST_DATA "/no-such-file", NF_FMT_AUTO, NULL, &f, &d), NF_EIO);
    assert_null(f);
    assert_non_null(strstr(d.file, "no-such-file"));
    assert_non_null(strstr(d.msg, "No such file"));
    assert_int_equal(nf_io_load(NF_TEST_DATA, NF_FMT_AUTO, NULL, &f, &d), NF_EIO); /* a directory */
    assert_int_equal(nf_io_parse("junk\n", 5, NF_FMT_AUTO, "j.txt", NULL, &f, &d), NF_EPARSE);
    assert_string_equal(d.file, "j.txt");
    assert_non_null(strstr(d.msg, "not a fabric file"));
    assert_int_equal(nf_io_parse("{}", 2, NF_FMT_JSON, "x.json", NULL, &f, &d), NF_EUNSUPPORTED);
    assert_null(f);
}

/* Binary and endless input is refused after one chunk, whatever the size of the file. */
static void test_load_limits(void **state) {
    (void)state;
    nf_fabric *f = (nf_fabric *)&f;
    nf_diag d;
    assert_int_equal(nf_io_load("/dev/zero", NF_FMT_AUTO, NULL, &f, &d), NF_EPARSE);
    assert_null(f);
    assert_string_equal(d.file, "/dev/zero");
    assert_int_equal(d.line, 1);
    assert_string_equal(d.msg, "NUL byte at column 1: binary data, not a fabric file");
    assert_int_equal(nf_io_load("/dev/urandom", NF_FMT_AUTO, NULL, &f, &d), NF_EPARSE);
    assert_non_null(strstr(d.msg, "NUL byte"));
    char path[] = "/tmp/test_io_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    fputs("# a comment\n", fp);
    for (int i = 0; i < 70000; i++)
        putc('x', fp);
    fclose(fp);
    assert_int_equal(nf_io_load(path, NF_FMT_AUTO, NULL, &f, &d), NF_EPARSE);
    assert_int_equal(d.line, 2);
    assert_string_equal(d.msg, "line longer than 65536 bytes: not a fabric file");
    assert_int_equal(truncate(path, (off_t)NF_IO_MAX_BYTES + 1), 0);
    assert_int_equal(nf_io_load(path, NF_FMT_AUTO, NULL, &f, &d), NF_EPARSE);
    assert_string_equal(d.msg, "larger than 1024 MiB: not a fabric file");
    unlink(path);
}

static void test_format_names(void **state) {
    (void)state;
    assert_int_equal(nf_format_from_name("ibnet"), NF_FMT_IBNET);
    assert_int_equal(nf_format_from_name("ibnetdiscover"), NF_FMT_IBNET);
    assert_int_equal(nf_format_from_name("ibsim"), NF_FMT_IBSIM);
    assert_int_equal(nf_format_from_name("dot"), NF_FMT_DOT);
    assert_int_equal(nf_format_from_name("json"), NF_FMT_JSON);
    assert_int_equal(nf_format_from_name("xml"), NF_FMT_AUTO);
    assert_string_equal(nf_format_name(NF_FMT_IBSIM), "ibsim");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detect),       cmocka_unit_test(test_detect_fixtures),
        cmocka_unit_test(test_load_errors),  cmocka_unit_test(test_load_limits),
        cmocka_unit_test(test_format_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
