/* SPDX-License-Identifier: MIT */
/* netfab: the command-line front end. Dispatches to one cmd_<name>.c per subcommand. */
#include "cmd.h"
#include "opts.h"
#include "netfab/gen.h"
#include "netfab/hops.h"
#include "netfab/mcast.h"
#include "netfab/sim.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static const struct {
    const char *name, *help;
    int (*run)(int, char **);
} commands[] = {
#define NF_X_ROW(id, name, help) {name, help, nf_cmd_##id},
    NF_COMMANDS(NF_X_ROW)
#undef NF_X_ROW
};

static void usage(FILE *out) {
    fprintf(out, "usage: netfab <command> [options]\n"
                 "       netfab <command> --help\n"
                 "       netfab --version\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].help);
    fprintf(out, "\nexample:\n  netfab topo --topo dragonfly:a=18,p=9,h=9 --stats\n");
}

/* "netfab COMMAND", the prefix of every message (main() sets it before running the command) */
static char app_who[48] = "netfab";

int nf_app_report(int rc, const nf_diag *d) {
    if (d && d->file[0] && d->line > 0)
        fprintf(stderr, "%s: %s:%d: %s\n", app_who, d->file, d->line, d->msg);
    else if (d && d->file[0])
        fprintf(stderr, "%s: %s: %s\n", app_who, d->file, d->msg[0] ? d->msg : nf_strerror(rc));
    else if (d && d->msg[0])
        fprintf(stderr, "%s: %s\n", app_who, d->msg);
    else
        fprintf(stderr, "%s: %s\n", app_who, nf_strerror(rc));
    return rc == NF_EPARSE || rc == NF_EINVAL || rc == NF_ERANGE || rc == NF_EUNSUPPORTED
               ? NF_EXIT_USAGE
               : NF_EXIT_FAIL;
}

enum { WARN_LIMIT = 20 };
static unsigned warn_count;

void nf_app_warn(void *ud, const char *file, int line, const char *msg) {
    (void)ud;
    if (warn_count++ >= WARN_LIMIT) return;
    if (line > 0)
        fprintf(stderr, "%s: warning: %s:%d: %s\n", app_who, file, line, msg);
    else
        fprintf(stderr, "%s: warning: %s: %s\n", app_who, file, msg);
}

void nf_app_warn_summary(void) {
    if (warn_count > WARN_LIMIT)
        fprintf(stderr, "%s: warning: %u more warnings not shown\n", app_who,
                warn_count - WARN_LIMIT);
    warn_count = 0;
}

int nf_app_fabric(const char *topo, int threads, nf_fabric **f, nf_hops **h) {
    nf_diag d = {{0}, 0, {0}};
    nf_topo_opts to = {.warn = nf_app_warn};
    int rc = nf_topo_build(topo, &to, f, &d);
    nf_app_warn_summary();
    if (rc) return nf_app_report(rc, &d);
    if (h && (rc = nf_hops_compute(*f, threads, h))) {
        snprintf(d.msg, sizeof d.msg, "%s: distances: %s", topo, nf_strerror(rc));
        nf_fabric_free(*f);
        *f = NULL;
        return nf_app_report(rc, &d);
    }
    return NF_EXIT_OK;
}

int nf_app_require(const char *cmd, size_t n, const char *const *names, const bool *given) {
    char msg[512];
    size_t at = 0, missing = 0, left = 0;
    for (size_t i = 0; i < n; i++)
        left += !given[i];
    for (size_t i = 0; i < n && at < sizeof msg; i++) {
        if (given[i]) continue;
        missing++;
        const char *sep = missing == 1 ? "" : missing == left ? " and " : ", ";
        int w = snprintf(msg + at, sizeof msg - at, "%s%s", sep, names[i]);
        if (w < 0) break;
        at += (size_t)w;
    }
    if (!missing) return NF_EXIT_OK;
    return nf_opt_usage(cmd, "%s %s required", msg, missing == 1 ? "is" : "are");
}

const char *nf_app_known(nf_app_names what, char *buf, size_t n) {
    size_t count = what == NF_APP_ROUTINGS   ? nf_sim_routing_count()
                   : what == NF_APP_TRAFFICS ? nf_sim_traffic_count()
                                             : nf_mcast_engine_count();
    size_t at = (size_t)snprintf(buf, n, "known:");
    for (size_t i = 0; i < count && at < n; i++) {
        const char *name = what == NF_APP_ROUTINGS   ? nf_sim_routing_name(nf_sim_routing_at(i))
                           : what == NF_APP_TRAFFICS ? nf_sim_traffic_name(nf_sim_traffic_at(i))
                                                     : nf_mcast_engine_name(nf_mcast_engine_at(i));
        int w = snprintf(buf + at, n - at, "%s %s", i ? "," : "", name);
        if (w < 0 || (size_t)w >= n - at) {
            if (n >= 5) memcpy(buf + n - 5, " ...", 5);
            break;
        }
        at += (size_t)w;
    }
    return buf;
}

double nf_app_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

long nf_app_peak_rss_kib(void) {
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

int main(int argc, char **argv) {
    nf_app_catch_signals();
    if (argc < 2) {
        usage(stderr);
        return NF_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return NF_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("netfab %s\n", NF_VERSION_STRING);
        return NF_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) {
            snprintf(app_who, sizeof app_who, "netfab %s", commands[i].name);
            return commands[i].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "netfab: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return NF_EXIT_USAGE;
}
