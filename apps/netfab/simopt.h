/* The simulator's knobs as command-line options, shared by `netfab sim` and `netfab sweep` so
 * that the two accept the same flags with the same limits and print the same result keys. */
#ifndef NETFAB_APP_SIMOPT_H
#define NETFAB_APP_SIMOPT_H

#include "netfab/sim.h"

#include <getopt.h>
#include <jansson.h>

typedef struct nf_app_sim_knobs {
    nf_sim_config c;
    nf_sim_phase ph;
    nf_sim_injection inj;
} nf_app_sim_knobs;

/* The knob options' codes start here, above every command's own codes. */
enum { NF_SIMOPT_BASE = 1000 };

/* The defaults of netfab sim (--warmup 1000, --cycles 5000, --drain 20000, the rest the
 * library's). */
void nf_app_sim_knobs_init(nf_app_sim_knobs *k);

/* Options base[0..n) followed by every knob option and a zero entry, in a new array (free it);
 * NULL when out of memory. */
struct option *nf_app_sim_options(const struct option *base, size_t n);

/* Handles option code (>= NF_SIMOPT_BASE) with argument arg: 0, or NF_EXIT_USAGE after saying
 * why on stderr. A code that is not a knob's is a usage error too. */
int nf_app_sim_knob(int code, const char *arg, nf_app_sim_knobs *k);

/* Reads a number from lo to hi for option opt: 0, or -1 after saying why on stderr. */
/* The most load points one --sweep (netfab sim) or --loads (netfab sweep) may ask for. */
#define NF_APP_MAX_LOAD_POINTS 1000

int nf_app_number(const char *opt, const char *s, double lo, double hi, double *out);

/* One load point's result as netfab sim --json prints it (load is the point asked for). */
json_t *nf_app_sim_result_json(double load, const nf_sim_result *res, unsigned failed_links);

#endif
