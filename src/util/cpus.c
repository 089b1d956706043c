/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* sched_getaffinity */
#include "util/cpus.h"

#include "util/mem.h"

#include <dirent.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int nf__cpus_idle_parse(const char *text, const unsigned char *use, size_t n_use,
                        unsigned long long *ticks) {
    int found = 0;
    unsigned long long sum = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        unsigned cpu;
        unsigned long long user, nice, sys, idle, iowait;
        int at = 0;
        /* "cpuN user nice system idle iowait ...": the aggregate "cpu " line has no N */
        if (strncmp(l, "cpu", 3) != 0 || l[3] < '0' || l[3] > '9') continue;
        if (sscanf(l, "cpu%u %llu %llu %llu %llu%n", &cpu, &user, &nice, &sys, &idle, &at) != 5)
            continue;
        if (use && (cpu >= n_use || !use[cpu])) continue;
        iowait = 0; /* absent before Linux 2.5.41 */
        (void)sscanf(l + at, " %llu", &iowait);
        sum += idle + iowait;
        found = 1;
    }
    if (found) *ticks = sum;
    return found;
}

int nf__cpus_idle_seconds(double *seconds) {
    cpu_set_t set;
    unsigned char use[CPU_SETSIZE];
    int have = sched_getaffinity(0, sizeof set, &set) == 0;
    for (size_t i = 0; i < CPU_SETSIZE; i++)
        use[i] = have && CPU_ISSET(i, &set);
    long hz = sysconf(_SC_CLK_TCK);
    FILE *f = fopen("/proc/stat", "r");
    if (!f || hz <= 0) {
        if (f) fclose(f);
        return 0;
    }
    /* the cpuN lines come first; a machine of CPU_SETSIZE (1,024) processors writes ~100 KiB */
    size_t cap = 256 * 1024, len;
    char *text = nf__malloc(cap);
    if (!text) {
        fclose(f);
        return 0;
    }
    len = fread(text, 1, cap - 1, f);
    fclose(f);
    text[len] = '\0';
    unsigned long long ticks = 0;
    int ok = nf__cpus_idle_parse(text, have ? use : NULL, CPU_SETSIZE, &ticks);
    nf__free(text);
    if (ok) *seconds = (double)ticks / (double)hz;
    return ok;
}

int nf__cpus_running_parse(const char *text, unsigned *running) {
    double a, b, c;
    unsigned r, total;
    if (!text || sscanf(text, "%lf %lf %lf %u/%u", &a, &b, &c, &r, &total) != 5) return 0;
    *running = r;
    return 1;
}

int nf__cpus_free_now(void) {
    char text[256];
    unsigned running;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return -1;
    int ok = fgets(text, sizeof text, f) != NULL;
    fclose(f);
    if (!ok || online < 1 || !nf__cpus_running_parse(text, &running)) return -1;
    long own = 0; /* this process's threads running: the caller, OpenMP's spinning ones */
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char p[300], st[512];
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "/proc/self/task/%s/stat", e->d_name);
        FILE *t = fopen(p, "r");
        if (!t) continue;
        size_t len = fread(st, 1, sizeof st - 1, t);
        fclose(t);
        st[len] = '\0';
        const char *rp = strrchr(st, ')'); /* "TID (COMM) STATE ...": COMM may hold anything */
        if (rp && rp[1] == ' ' && rp[2] == 'R') own++;
    }
    closedir(d);
    long others = (long)running - (own ? own : 1);
    long n = online - (others > 0 ? others : 0);
    return n < 0 ? 0 : (int)n;
}
