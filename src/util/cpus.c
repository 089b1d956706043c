/* SPDX-License-Identifier: MIT */
#include "util/cpus.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned nf__cpus_quota(const char *cpu_max) {
    unsigned long long quota = 0, period = 0;
    char extra;
    if (!cpu_max || strncmp(cpu_max, "max", 3) == 0) return 0;
    if (sscanf(cpu_max, "%llu %llu %c", &quota, &period, &extra) != 2 || !period || !quota)
        return 0;
    unsigned long long n = (quota + period - 1) / period;
    return n > 4096 ? 4096 : (unsigned)n;
}

/* The first line of file dir/name into buf (cap bytes): 1, or 0 when there is none. */
static int first_line(const char *dir, const char *name, char *buf, size_t cap) {
    char p[4096];
    if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, name) >= sizeof p) return 0;
    FILE *f = fopen(p, "r");
    if (!f) return 0;
    int ok = fgets(buf, (int)cap, f) != NULL;
    fclose(f);
    return ok;
}

/* The quota of one cgroup directory: v2's cpu.max, or v1's cfs_quota_us over cfs_period_us. */
static unsigned dir_quota(const char *dir, int v1) {
    char a[128], b[128], line[260];
    if (!v1) return first_line(dir, "cpu.max", a, sizeof a) ? nf__cpus_quota(a) : 0;
    if (!first_line(dir, "cpu.cfs_quota_us", a, sizeof a) ||
        !first_line(dir, "cpu.cfs_period_us", b, sizeof b) || a[0] == '-')
        return 0;
    a[strcspn(a, "\n")] = b[strcspn(b, "\n")] = '\0';
    snprintf(line, sizeof line, "%s %s", a, b);
    return nf__cpus_quota(line);
}

unsigned nf__cpus_cgroup_quota(const char *root, const char *path, int v1) {
    char dir[4096];
    if (!path || path[0] != '/' ||
        (size_t)snprintf(dir, sizeof dir, "%s%s", root, path) >= sizeof dir)
        return 0;
    size_t base = strlen(root);
    unsigned best = 0;
    for (;;) { /* the cgroup, then each parent up to the mount (a missing directory counts 0) */
        unsigned q = dir_quota(dir, v1);
        if (q && (!best || q < best)) best = q;
        char *slash = strlen(dir) > base ? strrchr(dir + base, '/') : NULL;
        if (!slash) break;
        *slash = '\0'; /* the parent; at dir + base, the mount itself */
    }
    return best;
}

int nf__cpus_cgroup_path(const char *text, int v1, char *path, size_t cap) {
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        const char *end = strchr(l, '\n');
        if (!c2 || (end && c2 > end)) continue;
        size_t nlen = (size_t)(c2 - c1 - 1);
        int match = 0;
        if (!v1) {
            match = nlen == 0 && strncmp(l, "0:", 2) == 0;
        } else { /* a controller list naming cpu: "cpu", "cpu,cpuacct", "cpuacct,cpu" */
            for (const char *t = c1 + 1; t < c2;) {
                const char *comma = memchr(t, ',', (size_t)(c2 - t));
                size_t tl = comma ? (size_t)(comma - t) : (size_t)(c2 - t);
                if (tl == 3 && strncmp(t, "cpu", 3) == 0) match = 1;
                t += tl + 1;
            }
        }
        if (!match) continue;
        size_t plen = end ? (size_t)(end - c2 - 1) : strlen(c2 + 1);
        if (plen + 1 > cap) return 0;
        memcpy(path, c2 + 1, plen);
        path[plen] = '\0';
        return 1;
    }
    return 0;
}

unsigned nf__cpus_usable(void) {
    int procs = omp_get_num_procs();
    unsigned n = procs > 0 ? (unsigned)procs : 1;
    char text[8192] = "", path[4096];
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (f) {
        size_t len = fread(text, 1, sizeof text - 1, f);
        text[len] = '\0';
        fclose(f);
    }
    /* v2 at /sys/fs/cgroup; v1's cpu controller at /sys/fs/cgroup/cpu (or cpu,cpuacct) */
    static const char *const v1_roots[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"};
    unsigned q[3] = {0};
    q[0] = nf__cpus_cgroup_quota("/sys/fs/cgroup",
                                 nf__cpus_cgroup_path(text, 0, path, sizeof path) ? path : "/", 0);
    int has_v1 = nf__cpus_cgroup_path(text, 1, path, sizeof path);
    for (int i = 0; i < 2; i++)
        q[1 + i] = nf__cpus_cgroup_quota(v1_roots[i], has_v1 ? path : "/", 1);
    for (int i = 0; i < 3; i++)
        if (q[i] && q[i] < n) n = q[i];
    return n;
}
