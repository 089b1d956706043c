/* SPDX-License-Identifier: MIT */
#include "util/cpus.h"

#include <omp.h>
#include <stdio.h>
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

unsigned nf__cpus_usable(void) {
    int procs = omp_get_num_procs();
    unsigned n = procs > 0 ? (unsigned)procs : 1;
    FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
    if (f) {
        char line[128];
        if (fgets(line, sizeof line, f)) {
            unsigned q = nf__cpus_quota(line);
            if (q && q < n) n = q;
        }
        fclose(f);
    }
    return n;
}
