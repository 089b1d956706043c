/* SPDX-License-Identifier: MIT */
/* Graphviz DOT strings: the one quoting every DOT writer uses. */
#include "fabric/dot.h"

#include <stdbool.h>

/* Whether s is valid UTF-8: no stray continuation byte, no overlong two-byte form, every
 * sequence complete. */
static bool utf8_ok(const unsigned char *s) {
    while (*s) {
        int n = *s < 0x80             ? 0
                : (*s & 0xe0) == 0xc0 ? 1
                : (*s & 0xf0) == 0xe0 ? 2
                : (*s & 0xf8) == 0xf0 ? 3
                                      : -1;
        if (n < 0 || (n == 1 && *s < 0xc2)) return false;
        for (s++; n > 0; n--, s++)
            if ((*s & 0xc0) != 0x80) return false;
    }
    return true;
}

void nf__dot_string(FILE *out, const char *s) {
    bool utf8 = utf8_ok((const unsigned char *)s);
    putc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f) continue;
        if (c == '"' || c == '\\') putc('\\', out);
        putc(c >= 0x80 && !utf8 ? '?' : c, out);
    }
    putc('"', out);
}
