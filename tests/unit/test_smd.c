/* SPDX-License-Identifier: MIT */
/* The group manager smd_proc, black box: `netfab smd` started from the test on a free port, driven
 * over UDP with the client API and with raw datagrams, stopped by its pid (SIGTERM, and kill -9 in
 * the middle of a burst of joins, then restarted from its journal). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "netfab/gen.h"
#include "netfab/smd.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TOPO "torus:4x4x2,c=2"

static char dir[64];
static nf_fabric *fab;

static void sleep_ms(int ms) {
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

typedef struct smd_proc {
    pid_t pid;
    unsigned port;
    char server[32];
} smd_proc;

/* Starts netfab smd with the given extra arguments (NULL-terminated), state in dir/state; waits
 * for its port file. port 0 picks a free port. */
static smd_proc start(unsigned port, const char *const *extra) {
    char portfile[128], listen[32], state[96], logf[128];
    snprintf(portfile, sizeof portfile, "%s/port", dir);
    snprintf(listen, sizeof listen, "127.0.0.1:%u", port);
    snprintf(state, sizeof state, "%s/state", dir);
    snprintf(logf, sizeof logf, "%s/smd.log", dir);
    unlink(portfile);
    const char *argv[32] = {NF_NETFAB_BIN, "smd",        "--topo", TOPO,  "--listen",
                            listen,        "--port-file", portfile, "--state", state};
    int n = 10;
    for (; extra && *extra && n < 30; extra++)
        argv[n++] = *extra;
    argv[n] = NULL;
    smd_proc d = {0};
    d.pid = fork();
    assert_true(d.pid >= 0);
    if (d.pid == 0) {
        int fd = open(logf, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) dup2(fd, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    for (int i = 0; i < 1000; i++) { /* up to 10 s */
        FILE *f = fopen(portfile, "r");
        if (f) {
            int ok = fscanf(f, "%u", &d.port) == 1;
            fclose(f);
            if (ok) break;
        }
        int st;
        if (waitpid(d.pid, &st, WNOHANG) == d.pid) fail_msg("netfab smd exited early (%s)", logf);
        sleep_ms(10);
    }
    assert_true(d.port > 0);
    snprintf(d.server, sizeof d.server, "127.0.0.1:%u", d.port);
    return d;
}

static int stop(smd_proc *d, int sig) {
    kill(d->pid, sig);
    int st = 0;
    assert_int_equal(waitpid(d->pid, &st, 0), d->pid);
    return st;
}

static nf_gid mgid_of(uint32_t k) { return nf_gid_make(0xff12401bffff0000ULL, 0x9000 + k); }

static nf_gid mgid(uint32_t k) { return nf_gid_make(0xff12401bffff0000ULL, 0x5000 + k); }

static nf_gid pgid(uint32_t endpoint) {
    return nf_gid_make(NF_GID_DEFAULT_PREFIX,
                       fab->port_guid[nf_port_index(fab, fab->n_switches + endpoint, 1)]);
}

static const nf_smc_opts quick = {.timeout_ms = 100, .retries = 20};

static uint16_t join_one(nf_smc *c, uint32_t k, uint32_t ep, uint32_t count) {
    uint16_t st = 0xFFFF;
    nf_gid g = mgid(k), p = pgid(ep);
    nf_mcmember_rec r;
    assert_int_equal(nf_smc_join(c, &quick, &g, &p, count, &st, &r), 0);
    return st;
}

static nf_mcgstate_rec query(nf_smc *c, uint32_t k, uint16_t *st) {
    nf_gid g = mgid(k);
    nf_mcgstate_rec r;
    assert_int_equal(nf_smc_state(c, &quick, &g, st, &r), 0);
    return r;
}

/* A raw datagram to the smd_proc; the answer (if one comes within ms) in *a. */
static int raw(const smd_proc *d, const void *buf, size_t len, int ms, nf_mad *a) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)d->port)};
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    assert_true(sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof to) == (ssize_t)len);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int got = poll(&p, 1, ms);
    uint8_t b[300];
    int rc = NF_ETIMEDOUT;
    if (got == 1) {
        ssize_t n = recv(fd, b, sizeof b, 0);
        rc = n == NF_MAD_SIZE && nf_mad_decode(b, (size_t)n, a) == NF_OK ? NF_OK : NF_EPARSE;
    }
    close(fd);
    return rc;
}

static int setup(void **state) {
    (void)state;
    strcpy(dir, "/tmp/netfab-smd-XXXXXX");
    assert_non_null(mkdtemp(dir));
    nf_diag d;
    assert_int_equal(nf_topo_build(TOPO, NULL, &fab, &d), 0);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    nf_fabric_free(fab);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- tests ---------------------------------------------------------------------------------- */

/* Joins in order, shuffled, duplicated, retransmitted (same transaction id); a lost join times
 * out; leaves; SIGHUP dumps; SIGTERM stops cleanly. */
static void test_service(void **state) {
    (void)state;
    static const char *const extra[] = {"--join-timeout", "300", NULL};
    smd_proc d = start(0, extra);
    nf_smc *c;
    nf_diag dg;
    assert_int_equal(nf_smc_open(d.server, &c, &dg), 0);
    uint16_t st;
    /* group 0 in order */
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(join_one(c, 0, 3 * i, 4), 0);
    nf_mcgstate_rec r = query(c, 0, &st);
    assert_int_equal(st, 0);
    assert_int_equal(r.state, NF_MCG_READY);
    assert_int_equal(r.joined, 4);
    /* group 1: shuffled, every join twice */
    static const uint32_t ep[] = {40, 2, 63, 17, 9};
    for (uint32_t i = 0; i < 5; i++) {
        assert_int_equal(join_one(c, 1, ep[i], 5), 0);
        assert_int_equal(join_one(c, 1, ep[i], 5), 0);
        r = query(c, 1, &st);
        assert_int_equal(r.joined, i + 1);
    }
    assert_int_equal(r.state, NF_MCG_READY);
    /* a retransmitted request (same tid) is answered the same without a second application:
     * a join then a leave of one port, the join retransmitted after the leave */
    nf_mad q, a1, a2;
    nf_smc_request(&q, NF_MAD_SET, NF_SA_ATTR_MCMEMBER, 0x77777);
    nf_mcmember_rec mr = {
        .mgid = mgid(2), .port_gid = pgid(5), .join_state = NF_JOIN_FULL, .member_count = 2};
    nf_mcmember_encode(&mr, q.data);
    uint8_t buf[NF_MAD_SIZE];
    nf_mad_encode(&q, buf);
    int fd = nf_smc_fd(c);
    assert_int_equal(send(fd, buf, sizeof buf, 0), NF_MAD_SIZE);
    assert_int_equal(nf_smc_recv(c, 2000, &a1), 0);
    nf_gid g2 = mgid(2), p5 = pgid(5);
    assert_int_equal(nf_smc_leave(c, &quick, &g2, &p5, &st, NULL), 0);
    assert_int_equal(st, 0);
    assert_int_equal(send(fd, buf, sizeof buf, 0), NF_MAD_SIZE);
    assert_int_equal(nf_smc_recv(c, 2000, &a2), 0);
    uint8_t b1[NF_MAD_SIZE], b2[NF_MAD_SIZE];
    nf_mad_encode(&a1, b1);
    nf_mad_encode(&a2, b2);
    assert_memory_equal(b1, b2, NF_MAD_SIZE);
    r = query(c, 2, &st); /* still out: the retransmission was not applied again */
    assert_int_equal(st, 0);
    assert_int_equal(r.joined, 0);
    assert_int_equal(r.state, NF_MCG_DESTROYING); /* its only member left before Ready */
    /* errors: MemberCount mismatch, unknown port */
    assert_int_equal(join_one(c, 0, 50, 3), NF_SA_STATUS_REQ_INVALID);
    nf_gid g9 = mgid(9), nobody = nf_gid_make(NF_GID_DEFAULT_PREFIX, 0x1234);
    assert_int_equal(nf_smc_join(c, &quick, &g9, &nobody, 2, &st, NULL), 0);
    assert_int_equal(st, NF_SA_STATUS_INVALID_GID);
    /* a lost join: 2 of 3, then the 300 ms timeout */
    assert_int_equal(join_one(c, 3, 1, 3), 0);
    assert_int_equal(join_one(c, 3, 4, 3), 0);
    sleep_ms(500);
    r = query(c, 3, &st);
    assert_int_equal(r.state, NF_MCG_DESTROYING);
    assert_int_equal(join_one(c, 3, 7, 3), NF_SA_STATUS_DENIED);
    /* leaves of group 0: ReceivingLeaveReq, then destroyed */
    nf_gid g0 = mgid(0);
    for (uint32_t i = 0; i < 4; i++) {
        nf_gid p = pgid(3 * i);
        assert_int_equal(nf_smc_leave(c, &quick, &g0, &p, &st, NULL), 0);
        assert_int_equal(st, 0);
        r = query(c, 0, &st);
        assert_int_equal(r.state, i < 3 ? NF_MCG_RECEIVING_LEAVE : NF_MCG_DESTROYING);
    }
    /* the table lists every group known */
    nf_mcgstate_rec *all;
    size_t n;
    assert_int_equal(nf_smc_table(c, &quick, &st, &all, &n), 0);
    assert_int_equal(st, 0);
    assert_int_equal(n, 4);
    nf_free(all);
    /* SIGHUP: the dump files appear with group 1 (Ready) in them */
    char path[128];
    snprintf(path, sizeof path, "%s/state/smd.groups", dir);
    kill(d.pid, SIGHUP);
    FILE *f = NULL;
    for (int i = 0; i < 200 && !f; i++, sleep_ms(10))
        f = fopen(path, "r");
    assert_non_null(f);
    char line[256];
    int ready_lines = 0;
    while (fgets(line, sizeof line, f))
        ready_lines += strstr(line, " Ready 5 5 0 0x") != NULL;
    fclose(f);
    assert_int_equal(ready_lines, 1);
    nf_smc_close(c);
    int ex = stop(&d, SIGTERM);
    assert_true(WIFEXITED(ex));
    assert_int_equal(WEXITSTATUS(ex), 0);
}

/* Malformed datagrams: the seed corpus, every truncation of a valid join, and random bytes. The
 * smd_proc answers or drops each, and keeps serving. */
static void test_malformed(void **state) {
    (void)state;
    smd_proc d = start(0, NULL);
    nf_mad a;
    /* hand-checked answers */
    uint8_t jbuf[NF_MAD_SIZE];
    nf_mad q;
    nf_smc_request(&q, NF_MAD_SET, NF_SA_ATTR_MCMEMBER, 42);
    nf_mcmember_rec mr = {
        .mgid = mgid(1), .port_gid = pgid(1), .join_state = NF_JOIN_FULL, .member_count = 2};
    nf_mcmember_encode(&mr, q.data);
    nf_mad_encode(&q, jbuf);
    assert_int_equal(raw(&d, jbuf, 23, 200, &a), NF_ETIMEDOUT); /* no header: dropped */
    assert_int_equal(raw(&d, jbuf, 100, 2000, &a), 0);
    assert_int_equal(a.status, NF_MAD_STATUS_INVALID_FIELD);
    assert_int_equal(a.tid, 42);
    uint8_t bad[NF_MAD_SIZE];
    memcpy(bad, jbuf, sizeof bad);
    bad[1] = 0x81; /* another class */
    assert_int_equal(raw(&d, bad, sizeof bad, 2000, &a), 0);
    assert_int_equal(a.status, NF_MAD_STATUS_BAD_VERSION);
    memcpy(bad, jbuf, sizeof bad);
    bad[3] = 0x07; /* unknown method */
    assert_int_equal(raw(&d, bad, sizeof bad, 2000, &a), 0);
    assert_int_equal(a.status, NF_MAD_STATUS_BAD_METHOD);
    assert_int_equal(a.method, 0x87);
    memcpy(bad, jbuf, sizeof bad);
    bad[16] = 0x12; /* unknown attribute */
    assert_int_equal(raw(&d, bad, sizeof bad, 2000, &a), 0);
    assert_int_equal(a.status, NF_MAD_STATUS_BAD_ATTR);
    memcpy(bad, jbuf, sizeof bad);
    bad[3] = 0x81; /* a response: never answered */
    assert_int_equal(raw(&d, bad, sizeof bad, 200, &a), NF_ETIMEDOUT);
    /* the corpus */
    DIR *dd = opendir(NF_TEST_DATA "/sa");
    assert_non_null(dd);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(dd))) {
        if (e->d_name[0] == '.') continue;
        char p[512];
        snprintf(p, sizeof p, "%s/sa/%s", NF_TEST_DATA, e->d_name);
        FILE *f = fopen(p, "rb");
        uint8_t b[512];
        size_t n = fread(b, 1, sizeof b, f);
        fclose(f);
        raw(&d, b, n, 20, &a);
        files++;
    }
    closedir(dd);
    assert_true(files >= 8);
    /* every truncation, and random garbage */
    for (size_t len = 0; len <= NF_MAD_SIZE + 40; len += 7) {
        uint8_t b[NF_MAD_SIZE + 40] = {0};
        memcpy(b, jbuf, NF_MAD_SIZE);
        raw(&d, b, len, 5, &a);
    }
    srand(5);
    for (int i = 0; i < 500; i++) {
        uint8_t b[300];
        size_t len = (size_t)rand() % sizeof b;
        for (size_t k = 0; k < len; k++)
            b[k] = (uint8_t)rand();
        if (i % 2 && len >= 24) { /* half of them look like SA MADs up front */
            b[0] = 1, b[1] = 3, b[2] = 2, b[3] &= 0x7F;
        }
        raw(&d, b, len, 0, &a);
    }
    /* still serving, and right */
    nf_smc *c;
    nf_diag dg;
    assert_int_equal(nf_smc_open(d.server, &c, &dg), 0);
    assert_int_equal(join_one(c, 100, 0, 1), 0);
    uint16_t st;
    nf_mcgstate_rec r = query(c, 100, &st);
    assert_int_equal(r.state, NF_MCG_READY);
    nf_smc_close(c);
    int ex = stop(&d, SIGTERM);
    assert_true(WIFEXITED(ex) && WEXITSTATUS(ex) == 0);
}

/* kill -9 in the middle of a burst of joins, restart from the journal: every group that was Ready
 * is Ready again with the same MLID and the same tree (the dumps agree line for line), the
 * groups caught mid-join complete when their joins are sent again. */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *s = calloc(1, 1 << 20);
    size_t n = fread(s, 1, (1 << 20) - 1, f);
    s[n] = '\0';
    fclose(f);
    return s;
}

static void dump_now(const smd_proc *d, char **groups, char **mft) {
    nf_smc *c;
    nf_diag dg;
    assert_int_equal(nf_smc_open(d->server, &c, &dg), 0);
    uint16_t st;
    assert_int_equal(nf_smc_dump(c, &quick, &st), 0);
    assert_int_equal(st, 0);
    nf_smc_close(c);
    char p[128];
    snprintf(p, sizeof p, "%s/state/smd.groups", dir);
    *groups = slurp(p);
    snprintf(p, sizeof p, "%s/state/smd.mcfdbs", dir);
    *mft = slurp(p);
}

static void test_crash_restart(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/state", dir);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", path);
    assert_int_equal(system(cmd), 0);
    smd_proc d = start(0, NULL);
    nf_smc *c;
    nf_diag dg;
    assert_int_equal(nf_smc_open(d.server, &c, &dg), 0);
    /* 20 Ready groups of 6 */
    for (uint32_t k = 0; k < 20; k++)
        for (uint32_t i = 0; i < 6; i++)
            assert_int_equal(join_one(c, 200 + k, (k * 7 + i * 11) % 64, 6), 0);
    char *g_before, *m_before;
    dump_now(&d, &g_before, &m_before);
    /* a burst: 60 groups of 5, all joins at once; the smd_proc dies after some answers */
    uint32_t sent = 0, answered = 0;
    for (uint32_t k = 0; k < 60; k++)
        for (uint32_t i = 0; i < 5; i++) {
            nf_mad q;
            nf_smc_request(&q, NF_MAD_SET, NF_SA_ATTR_MCMEMBER, nf_smc_next_tid(c));
            nf_mcmember_rec mr = {.mgid = mgid(300 + k),
                                  .port_gid = pgid((k * 5 + i * 13) % 64),
                                  .join_state = NF_JOIN_FULL,
                                  .member_count = 5};
            nf_mcmember_encode(&mr, q.data);
            assert_int_equal(nf_smc_send(c, &q), 0);
            sent++;
        }
    nf_mad a;
    while (answered < 100 && nf_smc_recv(c, 2000, &a) == NF_OK)
        answered++;
    assert_true(answered >= 100);
    int ex = stop(&d, SIGKILL);
    assert_true(WIFSIGNALED(ex));
    nf_smc_close(c);
    (void)sent;
    /* and a torn last record, as a crash in the middle of a write leaves it */
    char jpath[160];
    snprintf(jpath, sizeof jpath, "%s/journal", path);
    FILE *jf = fopen(jpath, "ab");
    assert_non_null(jf);
    static const uint8_t torn[] = {40, 0, 0, 0, 0x12, 0x34, 0x56, 0x78, 2, 0xff, 0x12};
    assert_int_equal(fwrite(torn, 1, sizeof torn, jf), sizeof torn);
    fclose(jf);
    /* restart on the same port from the journal */
    d = start(d.port, NULL);
    char logf[128];
    snprintf(logf, sizeof logf, "%s/smd.log", dir);
    char *log = slurp(logf);
    assert_non_null(strstr(log, "11 torn bytes dropped"));
    free(log);
    char *g_after, *m_after;
    dump_now(&d, &g_after, &m_after);
    /* every line of the groups Ready before the burst is there unchanged */
    char *save = NULL;
    int lines = 0;
    for (char *ln = strtok_r(g_before, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
        if (ln[0] == '#') continue;
        assert_non_null(strstr(g_after, ln));
        lines++;
    }
    assert_int_equal(lines, 20);
    /* and their forwarding entries: every MFT line of the first dump appears in the second */
    for (char *ln = strtok_r(m_before, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save))
        if (strncmp(ln, "0xC0", 4) == 0 && strncmp(ln, "0xC01", 5) < 0)
            assert_non_null(strstr(m_after, ln));
    /* the burst's groups: send all joins again; every group ends Ready */
    assert_int_equal(nf_smc_open(d.server, &c, &dg), 0);
    for (uint32_t k = 0; k < 60; k++)
        for (uint32_t i = 0; i < 5; i++)
            assert_int_equal(join_one(c, 300 + k, (k * 5 + i * 13) % 64, 5), 0);
    nf_mcgstate_rec *all;
    size_t n;
    uint16_t st;
    assert_int_equal(nf_smc_table(c, &quick, &st, &all, &n), 0);
    assert_int_equal(n, 80);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(all[i].state, NF_MCG_READY);
    nf_free(all);
    nf_smc_close(c);
    ex = stop(&d, SIGTERM);
    assert_true(WIFEXITED(ex) && WEXITSTATUS(ex) == 0);
    /* a second smd_proc on the same state directory is refused while one runs */
    d = start(0, NULL);
    char listen[32];
    snprintf(listen, sizeof listen, "127.0.0.1:0");
    pid_t p = fork();
    if (p == 0) {
        int nul = open("/dev/null", O_WRONLY);
        dup2(nul, 2);
        execl(NF_NETFAB_BIN, NF_NETFAB_BIN, "smd", "--topo", TOPO, "--listen", listen, "--state",
              path, (char *)NULL);
        _exit(127);
    }
    int st2;
    assert_int_equal(waitpid(p, &st2, 0), p);
    assert_true(WIFEXITED(st2) && WEXITSTATUS(st2) == 1);
    stop(&d, SIGTERM);
    free(g_before);
    free(m_before);
    free(g_after);
    free(m_after);
}


/* ---- the GetTable client under RMPP, against a scripted server ------------------------------- */

/* A fake manager in a child process: answers GetTable with segment 1 of a 14-record table (3
 * segments), then answers the client's first ACK with segment 3 only (segment 2 "lost"), and
 * the repeated ACK with both. Exits 0 when the client acknowledged everything as RMPP wants:
 * ACK(1, 3), the same ACK again after its timeout, then ACK(3, 3); its exit status says which
 * step went wrong otherwise. */
static int fake_server(int fd) {
    uint8_t b[NF_MAD_SIZE + 1];
    struct sockaddr_in from;
    socklen_t fl = sizeof from;
    nf_mad q, a;
    static const uint32_t want[3][2] = {{1, 3}, {1, 3}, {3, 3}};
    for (int step = 0; step < 4; step++) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 5000) != 1) return 10 + step;
        fl = sizeof from;
        ssize_t n = recvfrom(fd, b, sizeof b, 0, (struct sockaddr *)&from, &fl);
        if (n != NF_MAD_SIZE || nf_mad_decode(b, (size_t)n, &q)) return 20 + step;
        if (step == 0 && (q.method != NF_MAD_GETTABLE || q.sm_key != 0x77)) return 30;
        if (step > 0 && (q.method != NF_MAD_GETTABLE_RESP || q.rmpp_type != NF_RMPP_TYPE_ACK ||
                         q.rmpp_data1 != want[step - 1][0] || q.rmpp_data2 != want[step - 1][1]))
            return 30 + step;
        if (step == 3) return 0;
        static const uint32_t segs[3][3] = {{1}, {3}, {2, 3}}; /* what each step sends */
        for (int j = 0; j < 3 && segs[step][j]; j++) {
            uint32_t k = segs[step][j], here = k == 3 ? 2 : 6;
            nf_smc_request(&a, NF_MAD_GETTABLE_RESP, NF_SA_ATTR_MCGSTATE, q.tid);
            a.rmpp_version = 1;
            a.rmpp_type = NF_RMPP_TYPE_DATA;
            a.rmpp_flags = NF_RMPP_FLAG_ACTIVE | (k == 1 ? NF_RMPP_FLAG_FIRST : 0) |
                           (k == 3 ? NF_RMPP_FLAG_LAST : 0);
            a.rmpp_data1 = k;
            a.rmpp_data2 = (k == 1 ? 14 : here) * NF_MCGSTATE_SIZE;
            for (uint32_t i = 0; i < here; i++) {
                uint32_t r_i = 6 * (k - 1) + i;
                nf_mcgstate_rec r = {.mgid = mgid_of(r_i),
                                     .mlid = (uint16_t)(0xC000 + r_i),
                                     .state = NF_MCG_READY,
                                     .member_count = 1,
                                     .joined = 1};
                nf_mcgstate_encode(&r, a.data + i * NF_MCGSTATE_SIZE);
            }
            nf_mad_encode(&a, b);
            sendto(fd, b, NF_MAD_SIZE, 0, (struct sockaddr *)&from, sizeof from);
        }
    }
    return 40;
}

static void test_table_client_rmpp(void **state) {
    (void)state;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof addr;
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    getsockname(fd, (struct sockaddr *)&addr, &al);
    pid_t pid = fork();
    if (pid == 0) _exit(fake_server(fd));
    close(fd);
    char server[32];
    snprintf(server, sizeof server, "127.0.0.1:%u", ntohs(addr.sin_port));
    nf_smc *c;
    assert_int_equal(nf_smc_open(server, &c, NULL), 0);
    nf_smc_opts o = {.timeout_ms = 150, .retries = 3, .sm_key = 0x77};
    uint16_t st = 1;
    nf_mcgstate_rec *recs = NULL;
    size_t n = 0;
    assert_int_equal(nf_smc_table(c, &o, &st, &recs, &n), 0);
    assert_int_equal(st, 0);
    assert_int_equal(n, 14);
    for (size_t i = 0; i < n; i++) {
        nf_gid g = mgid_of((uint32_t)i);
        assert_memory_equal(recs[i].mgid.raw, g.raw, 16);
        assert_int_equal(recs[i].mlid, 0xC000 + i);
    }
    nf_free(recs);
    nf_smc_close(c);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* A port nobody listens on (bound, then closed): every call says the host refused it; a bound
 * socket that never answers: a timeout. */
static void test_refused(void **state) {
    (void)state;
    char server[32];
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof addr;
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    getsockname(fd, (struct sockaddr *)&addr, &al);
    snprintf(server, sizeof server, "127.0.0.1:%u", ntohs(addr.sin_port));
    nf_smc *c;
    nf_smc_opts o = {.timeout_ms = 20, .retries = 2};
    uint16_t st;
    nf_mcgstate_rec one, *recs = NULL;
    size_t n = 9;
    nf_gid g = mgid_of(1);
    assert_int_equal(nf_smc_open(server, &c, NULL), 0);
    assert_int_equal(nf_smc_state(c, &o, &g, &st, &one), NF_ETIMEDOUT); /* bound, silent */
    close(fd);
    assert_int_equal(nf_smc_state(c, &o, &g, &st, &one), NF_EREFUSED);
    assert_int_equal(nf_smc_dump(c, &o, &st), NF_EREFUSED);
    assert_int_equal(nf_smc_table(c, &o, &st, &recs, &n), NF_EREFUSED);
    assert_null(recs);
    assert_int_equal(n, 0);
    assert_string_equal(nf_strerror(NF_EREFUSED), "connection refused");
    nf_smc_close(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_service),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_crash_restart),
        cmocka_unit_test(test_table_client_rmpp),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
