/* SPDX-License-Identifier: MIT */
/* The group manager's keys file (keys.h). One entry a line, '#' starts a comment:
 *   manager KEY
 *   port GUID KEY
 * numbers in C notation (0x... hex, or decimal). */
#include "smd/keys.h"

#include "util/diag.h"
#include "util/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINE_MAX_LEN 512

/* A file:line error naming the bad token (tok may be NULL). */
static int at(nf_diag *d, const char *path, unsigned line, const char *msg, const char *tok) {
    return nf__fail_at(d, NF_EPARSE, path, (int)line, "%s%s%s%s", msg, tok ? " '" : "",
                       tok ? tok : "", tok ? "'" : "");
}

static bool number(const char *s, uint64_t *out) {
    if (!s || !*s || *s == '-' || *s == '+') return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (*end || errno) return false;
    *out = v;
    return true;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The endpoint port GUIDs of f, ascending, in a new array of *n; NULL when out of memory. */
static uint64_t *endpoint_ports(const nf_fabric *f, size_t *n) {
    *n = 0;
    for (nf_node c = f->n_switches; c < f->n_nodes; c++)
        *n += f->nports[c];
    uint64_t *g = nf__malloc((*n + 1) * sizeof *g);
    if (!g) return NULL;
    size_t k = 0;
    for (nf_node c = f->n_switches; c < f->n_nodes; c++)
        for (unsigned p = 1; p <= f->nports[c]; p++)
            g[k++] = f->port_guid[nf_port_index(f, c, p)];
    qsort(g, k, sizeof *g, cmp_u64);
    return g;
}

static bool is_port(const uint64_t *ports, size_t n, uint64_t guid) {
    return bsearch(&guid, ports, n, sizeof *ports, cmp_u64) != NULL;
}

void nf__smd_keys_fini(nf__smd_keys *k) {
    if (!k) return;
    nf__free(k->key);
    nf__u64map_fini(&k->port);
    memset(k, 0, sizeof *k);
}

bool nf__smd_keys_port(const nf__smd_keys *k, uint64_t guid, uint64_t *key) {
    uint32_t i;
    if (!nf__u64map_get(&k->port, guid, &i)) return false;
    *key = k->key[i];
    return true;
}

int nf__smd_keys_load(const char *path, const nf_fabric *f, nf__smd_keys *k, nf_diag *diag) {
    memset(k, 0, sizeof *k);
    nf__u64map_init(&k->port);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return nf__fail(diag, NF_EIO, "keys file %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return nf__fail(diag, NF_EINVAL, "keys file %s is not a regular file", path);
    }
    if ((st.st_mode & 077) || st.st_uid != geteuid()) {
        close(fd);
        return nf__fail(
            diag, NF_EINVAL,
            "keys file %s: mode %04o, owner uid %u: it holds secrets, so it must belong "
            "to this user (uid %u) and be readable by nobody else (chmod 600)",
            path, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid, (unsigned)geteuid());
    }
    size_t n_ports;
    uint64_t *ports = endpoint_ports(f, &n_ports);
    FILE *fp = ports ? fdopen(fd, "r") : NULL;
    if (!fp) {
        nf__free(ports);
        close(fd);
        return NF_ENOMEM;
    }
    char buf[LINE_MAX_LEN + 2];
    unsigned line = 0;
    int rc = NF_OK;
    while (!rc && fgets(buf, sizeof buf, fp)) {
        line++;
        size_t len = strlen(buf);
        if (len == sizeof buf - 1 && buf[len - 1] != '\n') {
            rc = at(diag, path, line, "line longer than 512 bytes", NULL);
            break;
        }
        char *hash = strchr(buf, '#');
        if (hash) *hash = '\0';
        char *save = NULL, *w[3] = {NULL, NULL, NULL};
        int nw = 0; /* words on the line; the first three kept */
        for (char *t = strtok_r(buf, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
            if (nw < 3) w[nw] = t;
            nw++;
        }
        if (nw == 0) continue;
        uint64_t guid = 0, key = 0;
        if (strcmp(w[0], "manager") == 0) {
            if (nw != 2) {
                rc = at(diag, path, line, "want 'manager KEY'", NULL);
            } else if (!number(w[1], &key) || key == 0) {
                rc = at(diag, path, line, "a key is a non-zero 64-bit number, not", w[1]);
            } else if (k->manager) {
                rc = at(diag, path, line, "a second manager key", NULL);
            } else {
                k->manager = key;
            }
        } else if (strcmp(w[0], "port") == 0) {
            uint32_t dup;
            if (nw != 3) {
                rc = at(diag, path, line, "want 'port GUID KEY'", NULL);
            } else if (!number(w[1], &guid)) {
                rc = at(diag, path, line, "a port GUID is a 64-bit number, not", w[1]);
            } else if (!number(w[2], &key) || key == 0) {
                rc = at(diag, path, line, "a key is a non-zero 64-bit number, not", w[2]);
            } else if (!is_port(ports, n_ports, guid)) {
                rc = at(diag, path, line, "no endpoint port of the fabric has GUID", w[1]);
            } else if (nf__u64map_get(&k->port, guid, &dup)) {
                rc = at(diag, path, line, "a second key for port", w[1]);
            } else if (NF_GROW(k->key, k->cap, (size_t)k->n + 1) ||
                       nf__u64map_put(&k->port, guid, k->n)) {
                rc = NF_ENOMEM;
            } else {
                k->key[k->n++] = key;
            }
        } else {
            rc = at(diag, path, line, "want 'manager KEY' or 'port GUID KEY', not", w[0]);
        }
    }
    if (!rc && ferror(fp)) rc = nf__fail(diag, NF_EIO, "keys file %s: read error", path);
    if (!rc && !k->manager)
        rc = nf__fail(diag, NF_EPARSE, "keys file %s has no 'manager KEY' line", path);
    fclose(fp);
    nf__free(ports);
    if (rc) nf__smd_keys_fini(k);
    return rc;
}
