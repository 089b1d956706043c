/* SPDX-License-Identifier: MIT */
/* netfab's data files (share/ in the source tree, installed as share/netfab): the report page's
 * template, style and text. Found at run time: $NETFAB_DATADIR when set; else the installed
 * directory relative to the executable (../share/netfab for bin/netfab); else, for the netfab of
 * the build tree, the source tree's share/. */
#ifndef NETFAB_APP_DATADIR_H
#define NETFAB_APP_DATADIR_H

#include <stddef.h>

/* The data directory as above, in buf (PATH_MAX bytes) or a static string; not checked to
 * hold anything. */
const char *nf_app_datadir(char *buf);

/* Reads the data file rel (a path under the data directory, e.g. "report/page.css") whole: a
 * NUL-terminated string the caller frees, its length in *len (when len is not NULL). NULL after
 * "<who>: cannot read data file <path>: <why>" and where the data directory comes from. */
char *nf_app_data_read(const char *who, const char *rel, size_t *len);

#endif
