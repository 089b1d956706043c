/* SPDX-License-Identifier: MIT */
/* The processors this process may use: its affinity mask (as OpenMP counts it) and, under a
 * cgroup v2 CPU quota, the quota's share of a processor rounded up. */
#ifndef NF_UTIL_CPUS_H
#define NF_UTIL_CPUS_H

/* Processors a cgroup v2 cpu.max line allows ("QUOTA PERIOD" in microseconds, or "max
 * PERIOD"): ceil(QUOTA / PERIOD), at least 1; 0 for no limit or a line that is neither. */
unsigned nf__cpus_quota(const char *cpu_max);

/* The processors to use: omp_get_num_procs() (the affinity mask), capped by the quota of
 * /sys/fs/cgroup/cpu.max when there is one; at least 1. */
unsigned nf__cpus_usable(void);

#endif
