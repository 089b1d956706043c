/* SPDX-License-Identifier: MIT */
/* The processors this process may use: its affinity mask (as OpenMP counts it) and, under a
 * cgroup CPU quota (v2's cpu.max, v1's cpu.cfs_quota_us) of its own cgroup or of any cgroup
 * above it, the smallest quota's share of a processor rounded up. */
#ifndef NF_UTIL_CPUS_H
#define NF_UTIL_CPUS_H

#include <stddef.h>

/* Processors a cgroup v2 cpu.max line allows ("QUOTA PERIOD" in microseconds, or "max
 * PERIOD"): ceil(QUOTA / PERIOD), at least 1; 0 for no limit or a line that is neither. */
unsigned nf__cpus_quota(const char *cpu_max);

/* The cgroup path of /proc/self/cgroup's text: v2's line ("0::/path"), or with v1 the line
 * whose controllers include cpu ("4:cpu,cpuacct:/path"), into path (cap bytes): 1, or 0 when
 * there is no such line. */
int nf__cpus_cgroup_path(const char *text, int v1, char *path, size_t cap);

/* The smallest quota (nf__cpus_quota) of cgroup root + path and of each directory above it up
 * to root (a missing one counts as none: under a cgroup namespace the path may not be there);
 * v1: its cpu.cfs_quota_us and cpu.cfs_period_us, else cpu.max. 0 for no limit. */
unsigned nf__cpus_cgroup_quota(const char *root, const char *path, int v1);

/* The processors to use: omp_get_num_procs() (the affinity mask), capped by the quotas of this
 * process's cgroups (v2 under /sys/fs/cgroup, v1 under /sys/fs/cgroup/cpu); at least 1. */
unsigned nf__cpus_usable(void);

#endif
