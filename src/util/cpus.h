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

/* Idle time of processors in /proc/stat's text: the idle and iowait fields (in clock ticks) of
 * each "cpuN" line whose N is below n_use with use[N] set, or of every one when use is NULL,
 * summed into *ticks. 1, or 0 when no such line could be read. */
int nf__cpus_idle_parse(const char *text, const unsigned char *use, size_t n_use,
                        unsigned long long *ticks);

/* The idle time of the processors this thread may run on (its affinity), as seconds since
 * boot summed over them, from /proc/stat: 1, or 0 when it cannot be read. The difference of two
 * readings over the wall time between them is how many of those processors stood idle. */
int nf__cpus_idle_seconds(double *seconds);

/* The tasks running or ready to run now, over the whole machine, from /proc/loadavg's text
 * (its fourth field, "RUNNING/TOTAL"): 1, or 0 when the text has no such field. */
int nf__cpus_running_parse(const char *text, unsigned *running);

/* Processors of the machine that other processes leave free at this instant: online
 * processors minus the tasks running or ready to run (/proc/loadavg) that are not this
 * process's threads (/proc/self/task), at least 0; or -1 when it cannot be read. A snapshot:
 * a guess to start from, not a measurement. */
int nf__cpus_free_now(void);

#endif
