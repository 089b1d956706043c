/* SPDX-License-Identifier: MIT */
/* The reader shared by ibnetdiscover output and ibsim net files: blocks of key lines
 * (vendid=, switchguid=, ...), a node header (Switch/Ca/Hca/Rt N "id") and port lines
 * ([p](guid) "peer"[pp](guid) # comment). The two dialects differ only in what a node id is and in
 * a few extra line kinds, so one reader serves both. */
#include "fabric/ibtext.h"
#include "util/mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE32 UINT32_MAX

/* GUIDs given to ibsim nodes whose id is a plain name: the locally administered bit set, then
 * a counter, skipping any GUID the file spells out. */
#define IBSIM_AUTO_GUID_BASE 0x0200000000000000ULL

/* A node header and what the key lines above it said. Strings point into the input text. */
typedef struct pnode {
    const char *id, *desc; /* desc is NULL when the header has no quoted description */
    size_t id_len, desc_len;
    uint64_t guid;     /* 0 until assigned (ibsim ids that do not spell a GUID) */
    uint64_t key_guid; /* switchguid=/caguid= above the header, 0 when absent */
    uint64_t sysimgguid;
    uint32_t vendid, devid;
    uint32_t port_base; /* first entry of this node in the per-port tables */
    int32_t lid;        /* switch LID from the header comment, -1 when absent */
    int lid_line;       /* where lid came from: the header, or the first peer line that said it */
    int line;
    uint16_t nports;
    uint8_t kind, lmc;
    nf_node bid; /* id in the builder */
} pnode;

/* One port line. */
typedef struct pline {
    const char *peer_id;
    size_t peer_len;
    uint64_t peer_guid;    /* ibnet: the GUID the peer id spells */
    uint64_t lguid, pguid; /* port GUIDs in parentheses (local, peer), 0 when absent */
    uint32_t node, peer;   /* node records; peer is NONE32 when the peer has no block */
    int32_t llid, plid;    /* local and peer LID from the comment, -1 when absent */
    int line;
    uint8_t port, peer_port, llmc, width, speed;
} pline;

typedef struct parser {
    nf__ibtext_dialect dialect;
    const char *file;
    const nf_load_opts *opts;
    nf_diag *diag;

    pnode *nodes;
    size_t n_nodes, cap_nodes;
    pline *lines;
    size_t n_lines, cap_lines;
    uint32_t cur; /* node whose port lines may follow, NONE32 outside a block */

    /* key lines waiting for their header */
    uint64_t key_guid, key_sysimg;
    uint32_t key_vendid, key_devid;
    int key_line; /* the first of them, 0 when none is waiting */

    /* per port of every node (pnode.port_base + port - 1) */
    size_t n_ports, cap_ports;
    uint32_t *port_line; /* the line listing this port, NONE32 when not listed */
    uint64_t *port_guid;
    int32_t *port_lid;
    int *port_gline; /* the line that gave port_guid */
    uint8_t *port_lmc;

    /* links that show the file is incomplete: listed by one end only, or to a node with no block;
     * the index in lines of the first of each, NONE32 when there is none */
    size_t n_one_sided, n_no_block;
    uint32_t first_one_sided, first_no_block;

    char *scratch;
    size_t scratch_cap;
} parser;

/* ---- messages ------------------------------------------------------------------------------ */

#if defined(__GNUC__)
#define NF_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define NF_PRINTF(a, b)
#endif

static int perr(parser *ps, int line, const char *fmt, ...) NF_PRINTF(3, 4);
static int perr(parser *ps, int line, const char *fmt, ...) {
    if (ps->diag) {
        snprintf(ps->diag->file, sizeof ps->diag->file, "%s", ps->file);
        ps->diag->line = line;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->diag->msg, sizeof ps->diag->msg, fmt, ap);
        va_end(ap);
    }
    return NF_EPARSE;
}

static void pwarn(parser *ps, int line, const char *fmt, ...) NF_PRINTF(3, 4);
static void pwarn(parser *ps, int line, const char *fmt, ...) {
    if (!ps->opts || !ps->opts->warn) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ps->opts->warn(ps->opts->warn_ud, ps->file, line, msg);
}

/* Ids and snippets quoted in messages: at most 64 bytes, control characters shown as '?'. */
static const char *shown(char *buf, size_t size, const char *s, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n && k + 4 < size && i < 64; i++)
        buf[k++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
    if (n > 64 && k + 4 < size) buf[k++] = '.', buf[k++] = '.', buf[k++] = '.';
    buf[k] = '\0';
    return buf;
}

/* ---- lexing -------------------------------------------------------------------------------- */

typedef struct cursor {
    const char *p, *e;
} cursor;

static bool is_blank(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }
static bool is_alpha(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }
static int hex_val(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

static void skip_ws(cursor *c) {
    while (c->p < c->e && is_blank(*c->p))
        c->p++;
}

static bool at_end(const cursor *c) { return c->p >= c->e; }
static bool at(const cursor *c, char ch) { return c->p < c->e && *c->p == ch; }
static bool eat(cursor *c, char ch) {
    if (!at(c, ch)) return false;
    c->p++;
    return true;
}

/* Decimal digits (at least one) with a value up to max. */
static bool read_dec(cursor *c, uint64_t max, uint64_t *v) {
    uint64_t x = 0;
    const char *s = c->p;
    while (c->p < c->e && is_digit(*c->p)) {
        x = x * 10 + (uint64_t)(*c->p++ - '0');
        if (x > max) return false;
    }
    *v = x;
    return c->p > s;
}

/* 1 to 16 hex digits. */
static bool read_hex(cursor *c, uint64_t *v) {
    uint64_t x = 0;
    int n = 0, d;
    while (c->p < c->e && (d = hex_val(*c->p)) >= 0) {
        if (++n > 16) return false;
        x = x << 4 | (uint64_t)d;
        c->p++;
    }
    *v = x;
    return n > 0;
}

/* The whole of [s, s+n) as a number: "0x" hex, else decimal, up to max. */
static bool word_num(const char *s, size_t n, uint64_t max, uint64_t *v) {
    cursor c = {s, s + n};
    bool ok;
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        c.p += 2;
        ok = read_hex(&c, v) && *v <= max;
    } else {
        ok = read_dec(&c, max, v);
    }
    return ok && at_end(&c);
}

/* At a '"': the text up to the closing quote. False when the quote is not closed. */
static bool read_quoted(cursor *c, const char **s, size_t *n) {
    const char *q = memchr(c->p + 1, '"', (size_t)(c->e - c->p - 1));
    if (!q) return false;
    *s = c->p + 1;
    *n = (size_t)(q - c->p - 1);
    c->p = q + 1;
    return true;
}

/* A run of non-blank characters. */
static void read_word(cursor *c, const char **s, size_t *n) {
    *s = c->p;
    while (c->p < c->e && !is_blank(*c->p))
        c->p++;
    *n = (size_t)(c->p - *s);
}

static bool word_is(const char *s, size_t n, const char *w) {
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* "S-", "H-" or "R-" followed by 1 to 16 hex digits and nothing else. */
static bool guid_id(const char *s, size_t n, uint64_t *guid) {
    if (n < 3 || (s[0] != 'S' && s[0] != 'H' && s[0] != 'R') || s[1] != '-') return false;
    cursor c = {s + 2, s + n};
    return read_hex(&c, guid) && at_end(&c);
}

/* "[ext N]" after a port number in chassis-grouped output: skipped. */
static void skip_ext(cursor *c) {
    if (c->e - c->p >= 5 && memcmp(c->p, "[ext", 4) == 0) {
        const char *q = memchr(c->p, ']', (size_t)(c->e - c->p));
        if (q) c->p = q + 1;
    }
}

/* ---- pass 1: lines into records ------------------------------------------------------------ */

/* Reads "lid N" / "lmc N" values: the word after the keyword must be a number. */
static int comment_num(parser *ps, cursor *c, int line, const char *what, uint64_t max,
                       uint64_t *v) {
    const char *s;
    size_t n;
    char buf[80];
    skip_ws(c);
    read_word(c, &s, &n);
    if (!word_num(s, n, max, v))
        return perr(ps, line, "bad %s '%s' (expected a number up to %llu)", what,
                    shown(buf, sizeof buf, s, n), (unsigned long long)max);
    return NF_OK;
}

static int parse_header(parser *ps, cursor *c, int line, nf_node_kind kind, const char *kw) {
    char buf[80];
    uint64_t nports;
    skip_ws(c);
    if (!read_dec(c, 100000, &nports) || !(at_end(c) || is_blank(*c->p)))
        return perr(ps, line, "bad port count in %s header", kw);
    if (nports < 1 || nports > NF_MAX_PORTS)
        return perr(ps, line, "a node has 1 to %d ports, not %llu", NF_MAX_PORTS,
                    (unsigned long long)nports);
    skip_ws(c);
    if (!at(c, '"')) return perr(ps, line, "expected the quoted node id after the port count");
    pnode nd = {.lid = -1, .line = line, .nports = (uint16_t)nports, .kind = (uint8_t)kind};
    if (!read_quoted(c, &nd.id, &nd.id_len)) return perr(ps, line, "unterminated quote in node id");
    bool spelled = guid_id(nd.id, nd.id_len, &nd.guid);
    if (ps->dialect == NF__IBTEXT_IBNET) {
        if (!spelled)
            return perr(ps, line, "node id \"%s\" is not S-, H- or R- followed by a hex GUID",
                        shown(buf, sizeof buf, nd.id, nd.id_len));
        if (nd.guid == 0) return perr(ps, line, "node GUID 0 is not valid");
    } else {
        if (nd.id_len == 0) return perr(ps, line, "empty node id");
        if (!spelled) nd.guid = 0;
    }
    skip_ws(c);
    if (eat(c, '#')) {
        skip_ws(c);
        if (at(c, '"') && !read_quoted(c, &nd.desc, &nd.desc_len))
            return perr(ps, line, "unterminated quote in node description");
        while (skip_ws(c), !at_end(c)) {
            const char *s;
            size_t n;
            uint64_t v;
            int rc;
            if (at(c, '"')) {
                if (!read_quoted(c, &s, &n))
                    return perr(ps, line, "unterminated quote in header comment");
                continue;
            }
            read_word(c, &s, &n);
            if (word_is(s, n, "lid")) {
                if ((rc = comment_num(ps, c, line, "LID", 0xffff, &v))) return rc;
                nd.lid = (int32_t)v;
                nd.lid_line = line;
            } else if (word_is(s, n, "lmc")) {
                if ((rc = comment_num(ps, c, line, "LMC", 7, &v))) return rc;
                nd.lmc = (uint8_t)v;
            }
        }
    } else if (!at_end(c)) {
        return perr(ps, line, "unexpected text after the node header");
    }
    if (kind == NF_NODE_CA && strcmp(kw, "Rt") == 0)
        pwarn(ps, line, "router \"%s\" is read as a CA", shown(buf, sizeof buf, nd.id, nd.id_len));

    /* the key lines above belong to this header */
    nd.key_guid = ps->key_guid;
    nd.sysimgguid = ps->key_sysimg;
    nd.vendid = ps->key_vendid;
    nd.devid = ps->key_devid;
    ps->key_guid = ps->key_sysimg = 0;
    ps->key_vendid = ps->key_devid = 0;
    ps->key_line = 0;
    if (ps->dialect == NF__IBTEXT_IBNET && nd.key_guid && nd.key_guid != nd.guid)
        pwarn(ps, line,
              "the node GUID key line says 0x%llx but the header says \"%s\"; using the header",
              (unsigned long long)nd.key_guid, shown(buf, sizeof buf, nd.id, nd.id_len));

    if (ps->n_ports + nports >= NONE32) return perr(ps, line, "too many ports in one fabric");
    int rc;
    if ((rc = NF_GROW(ps->nodes, ps->cap_nodes, ps->n_nodes + 1)) ||
        (rc = NF_GROW(ps->port_line, ps->cap_ports, ps->n_ports + nports)))
        return rc;
    nd.port_base = (uint32_t)ps->n_ports;
    for (size_t i = 0; i < nports; i++)
        ps->port_line[ps->n_ports + i] = NONE32;
    ps->n_ports += nports;
    ps->cur = (uint32_t)ps->n_nodes;
    ps->nodes[ps->n_nodes++] = nd;
    return NF_OK;
}

/* Digits, 'x', then a letter: what a width-and-speed token such as 4xEDR looks like. */
static bool speed_like(const char *s, size_t n) {
    size_t i = 0;
    while (i < n && is_digit(s[i]))
        i++;
    return i > 0 && i + 1 < n && s[i] == 'x' && is_alpha(s[i + 1]);
}

/* The comment of a port line: for CA lines "lid N lmc M" of the local port first, then
 * "peer desc", "lid N" of the peer and a speed token such as 4xEDR. Any part may be missing. */
static int parse_port_comment(parser *ps, cursor *c, int line, pline *pl) {
    bool after_desc = false;
    char buf[80];
    while (skip_ws(c), !at_end(c)) {
        const char *s;
        size_t n;
        uint64_t v;
        int rc;
        if (at(c, '"')) {
            if (!read_quoted(c, &s, &n))
                return perr(ps, line, "unterminated quote in port comment");
            after_desc = true;
            continue;
        }
        read_word(c, &s, &n);
        if (word_is(s, n, "lid")) {
            if ((rc = comment_num(ps, c, line, "LID", 0xffff, &v))) return rc;
            if (after_desc)
                pl->plid = (int32_t)v;
            else
                pl->llid = (int32_t)v;
        } else if (word_is(s, n, "lmc")) {
            if ((rc = comment_num(ps, c, line, "LMC", 7, &v))) return rc;
            if (!after_desc) pl->llmc = (uint8_t)v;
        } else if (speed_like(s, n)) {
            uint8_t w;
            nf_speed sp;
            if (nf_speed_parse(s, n, &w, &sp) == NF_OK) {
                pl->width = w;
                pl->speed = (uint8_t)sp;
            } else {
                pwarn(ps, line, "unknown link speed '%s' ignored", shown(buf, sizeof buf, s, n));
            }
        }
    }
    return NF_OK;
}

/* ibsim's per-port options, read the way ibsim reads them: w=N is a LinkWidthEnabled mask
 * (1 1x, 2 4x, 4 8x, 8 12x, 16 2x; its docs say "w=(1|4|12)", and 1 and 12 mean 1x and 12x either
 * way) and s=N a LinkSpeedEnabled mask (1 SDR, 2 DDR, 4 QDR). The widest or fastest enabled wins,
 * as when ibsim brings the link up. */
static int parse_port_option(parser *ps, const char *s, size_t n, int line, pline *pl) {
    char buf[80];
    uint64_t v;
    if (n > 2 && s[0] == 'w' && s[1] == '=') {
        if (!word_num(s + 2, n - 2, 31, &v) || v == 0)
            return perr(ps, line, "bad link width option '%s' (a mask from 1 to 31)",
                        shown(buf, sizeof buf, s, n));
        pl->width = (uint8_t)(v & 8 ? 12 : v & 4 ? 8 : v & 2 ? 4 : v & 16 ? 2 : 1);
        return NF_OK;
    }
    if (n > 2 && s[0] == 's' && s[1] == '=') {
        if (!word_num(s + 2, n - 2, 7, &v) || v == 0)
            return perr(ps, line, "bad link speed option '%s' (a mask from 1 to 7)",
                        shown(buf, sizeof buf, s, n));
        pl->speed = (uint8_t)(v & 4 ? NF_SPEED_QDR : v & 2 ? NF_SPEED_DDR : NF_SPEED_SDR);
        return NF_OK;
    }
    return perr(ps, line, "unexpected text '%s' after the port line", shown(buf, sizeof buf, s, n));
}

static int parse_port_line(parser *ps, cursor *c, int line) {
    char buf[80];
    uint64_t v;
    if (ps->cur == NONE32)
        return perr(ps, line, "port line outside a node block (no Switch/Ca header above it)");
    pnode *nd = &ps->nodes[ps->cur];
    pline pl = {.node = ps->cur, .peer = NONE32, .llid = -1, .plid = -1, .line = line};
    c->p++; /* '[' */
    if (!read_dec(c, 99999, &v)) return perr(ps, line, "bad port number");
    if (v > NF_MAX_PORTS)
        return perr(ps, line, "port %llu is beyond the limit of %d ports a node has",
                    (unsigned long long)v, NF_MAX_PORTS);
    if (!eat(c, ']')) return perr(ps, line, "expected ']' after the port number");
    if (v == 0) return perr(ps, line, "port 0 in a port line (ports are numbered from 1)");
    if (v > nd->nports)
        return perr(ps, line, "port %u is out of range: \"%s\" has %u ports", (unsigned)v,
                    shown(buf, sizeof buf, nd->id, nd->id_len), nd->nports);
    pl.port = (uint8_t)v;
    skip_ext(c);
    if (eat(c, '(') && !(read_hex(c, &pl.lguid) && eat(c, ')')))
        return perr(ps, line, "bad port GUID in parentheses");
    skip_ws(c);
    if (!at(c, '"')) return perr(ps, line, "expected the quoted peer id after the port number");
    if (!read_quoted(c, &pl.peer_id, &pl.peer_len))
        return perr(ps, line, "unterminated quote in peer id");
    if (ps->dialect == NF__IBTEXT_IBNET && !guid_id(pl.peer_id, pl.peer_len, &pl.peer_guid))
        return perr(ps, line, "peer id \"%s\" is not S-, H- or R- followed by a hex GUID",
                    shown(buf, sizeof buf, pl.peer_id, pl.peer_len));
    skip_ws(c);
    if (!eat(c, '[')) return perr(ps, line, "expected '[' and the peer port after the peer id");
    if (!read_dec(c, 99999, &v) || !eat(c, ']')) return perr(ps, line, "bad peer port number");
    if (v > NF_MAX_PORTS)
        return perr(ps, line, "peer port %llu is beyond the limit of %d ports a node has",
                    (unsigned long long)v, NF_MAX_PORTS);
    if (v == 0) return perr(ps, line, "peer port 0 in a port line (ports are numbered from 1)");
    pl.peer_port = (uint8_t)v;
    skip_ext(c);
    if (eat(c, '(') && !(read_hex(c, &pl.pguid) && eat(c, ')')))
        return perr(ps, line, "bad peer port GUID in parentheses");
    int rc;
    while (skip_ws(c), !at_end(c)) {
        if (eat(c, '#')) {
            if ((rc = parse_port_comment(ps, c, line, &pl))) return rc;
            break;
        }
        const char *s;
        size_t n;
        read_word(c, &s, &n);
        if ((rc = parse_port_option(ps, s, n, line, &pl))) return rc;
    }

    size_t slot = nd->port_base + pl.port - 1u;
    if (ps->port_line[slot] != NONE32)
        return perr(ps, line, "port %u of \"%s\" is listed twice (first on line %d)", pl.port,
                    shown(buf, sizeof buf, nd->id, nd->id_len),
                    ps->lines[ps->port_line[slot]].line);
    if (ps->n_lines + 1 >= NONE32) return perr(ps, line, "too many port lines");
    if ((rc = NF_GROW(ps->lines, ps->cap_lines, ps->n_lines + 1))) return rc;
    ps->port_line[slot] = (uint32_t)ps->n_lines;
    ps->lines[ps->n_lines++] = pl;
    return NF_OK;
}

/* key=value lines. The GUID keys take an optional "(port GUID)" suffix, which is not needed. */
static int parse_key(parser *ps, cursor *c, const char *key, size_t klen, int line) {
    char buf[80];
    ps->cur = NONE32; /* a key line starts the next block */
    static const char *const ignored[] = {"width",  "speed",    "module",
                                          "pdebug", "hcaguids", "rtguid"};
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
        if (word_is(key, klen, ignored[i])) {
            pwarn(ps, line, "ibsim setting '%s' ignored", ignored[i]);
            return NF_OK;
        }
    enum { K_VENDID, K_DEVID, K_SYSIMG, K_GUID, K_NKEYS } k;
    if (word_is(key, klen, "vendid"))
        k = K_VENDID;
    else if (word_is(key, klen, "devid"))
        k = K_DEVID;
    else if (word_is(key, klen, "sysimgguid"))
        k = K_SYSIMG;
    else if (word_is(key, klen, "switchguid") || word_is(key, klen, "caguid") ||
             word_is(key, klen, "routerguid"))
        k = K_GUID;
    else {
        pwarn(ps, line, "unknown key '%s' ignored", shown(buf, sizeof buf, key, klen));
        return NF_OK;
    }
    skip_ws(c);
    const char *s = c->p;
    while (c->p < c->e && !is_blank(*c->p) && *c->p != '(')
        c->p++;
    uint64_t v;
    uint64_t max = k == K_VENDID || k == K_DEVID ? UINT32_MAX : UINT64_MAX;
    if (!word_num(s, (size_t)(c->p - s), max, &v))
        return perr(ps, line, "bad value for %s", shown(buf, sizeof buf, key, klen));
    uint64_t pg;
    if (eat(c, '(') && !(read_hex(c, &pg) && eat(c, ')')))
        return perr(ps, line, "bad port GUID in parentheses after %s",
                    shown(buf, sizeof buf, key, klen));
    skip_ws(c);
    if (!at_end(c))
        return perr(ps, line, "unexpected text after the %s value",
                    shown(buf, sizeof buf, key, klen));
    if (!ps->key_line) ps->key_line = line;
    switch (k) {
    case K_VENDID: ps->key_vendid = (uint32_t)v; break;
    case K_DEVID: ps->key_devid = (uint32_t)v; break;
    case K_SYSIMG: ps->key_sysimg = v; break;
    default: ps->key_guid = v; break;
    }
    return NF_OK;
}

/* Does the line look like "<Word> <number> "..." (a node header with an unknown keyword)? */
static bool looks_like_header(cursor c) {
    while (c.p < c.e && is_alpha(*c.p))
        c.p++;
    skip_ws(&c);
    uint64_t v;
    if (!read_dec(&c, UINT64_MAX / 10, &v)) return false;
    skip_ws(&c);
    return at(&c, '"');
}

static int parse_line(parser *ps, cursor *c, int line) {
    char buf[80];
    skip_ws(c);
    if (at_end(c) || *c->p == '#') return NF_OK;
    if (*c->p == '[') return parse_port_line(ps, c, line);

    const char *w = c->p;
    while (c->p < c->e && (is_alpha(*c->p) || is_digit(*c->p) || *c->p == '_'))
        c->p++;
    size_t wl = (size_t)(c->p - w);
    if (wl && is_alpha(w[0])) {
        cursor k = *c;
        skip_ws(&k);
        if (eat(&k, '=')) return parse_key(ps, &k, w, wl, line);
    }
    /* node headers: the keyword, then blanks or the port count */
    c->p = w;
    while (c->p < c->e && is_alpha(*c->p))
        c->p++;
    wl = (size_t)(c->p - w);
    bool sep = at_end(c) || is_blank(*c->p) || is_digit(*c->p);
    if (sep && word_is(w, wl, "Switch")) return parse_header(ps, c, line, NF_NODE_SWITCH, "Switch");
    if (sep && word_is(w, wl, "Ca")) return parse_header(ps, c, line, NF_NODE_CA, "Ca");
    if (sep && word_is(w, wl, "Hca")) return parse_header(ps, c, line, NF_NODE_CA, "Hca");
    if (sep && word_is(w, wl, "Rt")) return parse_header(ps, c, line, NF_NODE_CA, "Rt");
    bool word_end = at_end(c) || is_blank(*c->p);
    if (ps->dialect == NF__IBTEXT_IBSIM) {
        if (word_end && word_is(w, wl, "include"))
            return perr(ps, line,
                        "'include' is not supported: merge the included file into this one");
        if (word_end && word_is(w, wl, "do")) {
            pwarn(ps, line, "ibsim console command skipped");
            return NF_OK;
        }
        if (*w == '@') return perr(ps, line, "ibsim port aliases ('@' lines) are not supported");
    }
    /* ibnetdiscover's grouping lines carry no topology */
    if (wl &&
        (word_is(w, wl, "Chassis") || (c->e - w >= 17 && memcmp(w, "Non-Chassis Nodes", 17) == 0)))
        return NF_OK;
    c->p = w;
    if (wl && looks_like_header(*c))
        return perr(ps, line, "unknown node type '%s' (expected Switch, Ca, Hca or Rt)",
                    shown(buf, sizeof buf, w, wl));
    pwarn(ps, line, "skipped a line that is not part of the format: '%s'",
          shown(buf, sizeof buf, w, (size_t)(c->e - w)));
    return NF_OK;
}

/* Refuses what no fabric dump holds, before anything is built from it: more than NF_IO_MAX_BYTES,
 * a NUL byte (binary data), a line longer than NF_IO_MAX_LINE. */
static int read_lines(parser *ps, const char *text, size_t len) {
    const char *p = text, *end = text + len;
    int line = 0;
    if (len > NF_IO_MAX_BYTES)
        return perr(ps, 0, "larger than %llu MiB: not a fabric file",
                    (unsigned long long)(NF_IO_MAX_BYTES >> 20));
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) e = end;
        if (line == INT32_MAX) return perr(ps, line, "too many lines");
        line++;
        const char *nul = memchr(p, '\0', (size_t)(e - p));
        if (nul)
            return perr(ps, line, "NUL byte at column %zu: binary data, not a fabric file",
                        (size_t)(nul - p) + 1);
        if ((size_t)(e - p) > NF_IO_MAX_LINE)
            return perr(ps, line, "line longer than %u bytes: not a fabric file", NF_IO_MAX_LINE);
        cursor c = {p, e};
        int rc = parse_line(ps, &c, line);
        if (rc) return rc;
        if (e == end) break;
        p = e + 1;
    }
    return NF_OK;
}

/* ---- pass 2: resolve, check, build ----------------------------------------------------------- */

typedef struct guid_key {
    uint64_t guid;
    uint32_t node;
} guid_key;
static int cmp_guid_key(const void *x, const void *y) {
    const guid_key *a = x, *b = y;
    if (a->guid != b->guid) return a->guid < b->guid ? -1 : 1;
    return a->node < b->node ? -1 : a->node > b->node;
}

typedef struct id_key {
    const char *id;
    size_t len;
    uint32_t node;
} id_key;
static int cmp_ids(const char *a, size_t na, const char *b, size_t nb) {
    int r = memcmp(a, b, na < nb ? na : nb);
    return r ? r : (na > nb) - (na < nb);
}

static int cmp_id_key(const void *x, const void *y) {
    const id_key *a = x, *b = y;
    int r = cmp_ids(a->id, a->len, b->id, b->len);
    return r ? r : (a->node > b->node) - (a->node < b->node);
}

static uint32_t find_guid(const guid_key *keys, size_t n, uint64_t guid) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid].guid < guid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && keys[lo].guid == guid ? keys[lo].node : NONE32;
}

static uint32_t find_id(const id_key *keys, size_t n, const char *id, size_t len) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_ids(keys[mid].id, keys[mid].len, id, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && cmp_ids(keys[lo].id, keys[lo].len, id, len) == 0 ? keys[lo].node : NONE32;
}

/* Gives every node its GUID (ibsim: the id's, else the key line's, else a fresh one), sorts the
 * GUIDs into keys (n_nodes entries) and rejects a GUID used twice. */
static int assign_guids(parser *ps, guid_key *keys) {
    char buf[80];
    size_t n = ps->n_nodes, m = 0;
    for (size_t i = 0; i < n; i++) {
        pnode *nd = &ps->nodes[i];
        if (!nd->guid && nd->key_guid) nd->guid = nd->key_guid;
        if (nd->guid) keys[m++] = (guid_key){nd->guid, (uint32_t)i};
    }
    qsort(keys, m, sizeof *keys, cmp_guid_key);
    for (size_t i = 1; i < m; i++)
        if (keys[i].guid == keys[i - 1].guid) {
            const pnode *a = &ps->nodes[keys[i - 1].node], *b = &ps->nodes[keys[i].node];
            return perr(
                ps, b->line, "node GUID 0x%016llx of \"%s\" is defined twice (first on line %d)",
                (unsigned long long)b->guid, shown(buf, sizeof buf, b->id, b->id_len), a->line);
        }
    if (m < n) {
        /* fresh GUIDs in order of appearance, stepping over the ones the file spells out. A CA's
         * ports get its GUID + 0, 1, ... (nf_builder_freeze), so a CA takes one GUID per port,
         * or its port 2 would share the next node's GUID. */
        uint64_t next = IBSIM_AUTO_GUID_BASE;
        size_t explicit_n = m;
        for (size_t i = 0; i < n; i++) {
            pnode *nd = &ps->nodes[i];
            if (nd->guid) continue;
            unsigned span = nd->kind == NF_NODE_CA ? nd->nports : 1;
            for (unsigned k = 0; k < span; k++)
                if (find_guid(keys, explicit_n, next + k) != NONE32) {
                    next += k + 1;
                    k = UINT32_MAX; /* start over from the GUID after the taken one */
                }
            nd->guid = next;
            next += span;
            keys[m++] = (guid_key){nd->guid, (uint32_t)i};
        }
        qsort(keys, m, sizeof *keys, cmp_guid_key);
    }
    return NF_OK;
}

/* Finds each line's peer node. A peer without a block of its own is counted (check_complete) and
 * its link skipped. */
static int resolve_peers(parser *ps, const guid_key *gkeys, id_key *ikeys) {
    char b1[80];
    size_t n = ps->n_nodes;
    if (ikeys) {
        for (size_t i = 0; i < n; i++)
            ikeys[i] = (id_key){ps->nodes[i].id, ps->nodes[i].id_len, (uint32_t)i};
        qsort(ikeys, n, sizeof *ikeys, cmp_id_key);
        for (size_t i = 1; i < n; i++)
            if (cmp_ids(ikeys[i].id, ikeys[i].len, ikeys[i - 1].id, ikeys[i - 1].len) == 0) {
                const pnode *a = &ps->nodes[ikeys[i - 1].node], *b = &ps->nodes[ikeys[i].node];
                return perr(ps, b->line, "node id \"%s\" is defined twice (first on line %d)",
                            shown(b1, sizeof b1, b->id, b->id_len), a->line);
            }
    }
    for (size_t i = 0; i < ps->n_lines; i++) {
        pline *pl = &ps->lines[i];
        pl->peer = ikeys ? find_id(ikeys, n, pl->peer_id, pl->peer_len)
                         : find_guid(gkeys, n, pl->peer_guid);
        const pnode *nd = &ps->nodes[pl->node];
        if (pl->peer == NONE32) {
            if (!ps->n_no_block++) ps->first_no_block = (uint32_t)i;
            continue;
        }
        const pnode *q = &ps->nodes[pl->peer];
        if (pl->peer_port > q->nports)
            return perr(ps, pl->line, "peer port %u is out of range: \"%s\" has %u ports",
                        pl->peer_port, shown(b1, sizeof b1, q->id, q->id_len), q->nports);
        if (pl->peer == pl->node && pl->peer_port == pl->port)
            return perr(ps, pl->line, "port %u is linked to itself", pl->port);
        if (nd->kind == NF_NODE_CA && q->kind == NF_NODE_CA)
            return perr(ps, pl->line, "a CA cabled straight to a CA (\"%s\") is not supported",
                        shown(b1, sizeof b1, q->id, q->id_len));
    }
    return NF_OK;
}

/* Every link is listed twice, once from each end. Line i says (n,p) -> (q,pp); the line that
 * lists (q,pp), if any, must say (q,pp) -> (n,p). A disagreement is an error; a missing mirror
 * line is counted (check_complete) and the link is kept. CA port GUIDs and LIDs are gathered from
 * both sides, and the LID a line gives its peer must be the one the peer gives itself (a line cut
 * short in a number would otherwise pass unnoticed). */
static int check_sides(parser *ps) {
    char b1[80], b2[80];
    for (size_t i = 0; i < ps->n_lines; i++) {
        const pline *pl = &ps->lines[i];
        const pnode *nd = &ps->nodes[pl->node];
        size_t slot = nd->port_base + pl->port - 1u;
        ps->port_guid[slot] = pl->lguid;
        ps->port_gline[slot] = pl->line;
        ps->port_lid[slot] = pl->llid;
        ps->port_lmc[slot] = pl->llmc;
    }
    for (size_t i = 0; i < ps->n_lines; i++) {
        const pline *pl = &ps->lines[i];
        if (pl->peer == NONE32) continue;
        const pnode *q = &ps->nodes[pl->peer];
        size_t qslot = q->port_base + pl->peer_port - 1u;
        uint32_t j = ps->port_line[qslot];
        if (j == NONE32) {
            if (!ps->n_one_sided++) ps->first_one_sided = (uint32_t)i;
        } else {
            const pline *ml = &ps->lines[j];
            if (ml->peer != pl->node || ml->peer_port != pl->port) {
                char b3[80], b4[80];
                const pline *later = ml->line > pl->line ? ml : pl,
                            *earlier = later == ml ? pl : ml;
                const pnode *ln = &ps->nodes[later->node], *en = &ps->nodes[earlier->node];
                return perr(
                    ps, later->line,
                    "link \"%s\"[%u] - \"%s\"[%u] contradicts line %d: \"%s\"[%u] - \"%s\"[%u]",
                    shown(b1, sizeof b1, ln->id, ln->id_len), later->port,
                    shown(b2, sizeof b2, later->peer_id, later->peer_len), later->peer_port,
                    earlier->line, shown(b3, sizeof b3, en->id, en->id_len), earlier->port,
                    shown(b4, sizeof b4, earlier->peer_id, earlier->peer_len), earlier->peer_port);
            }
        }
        if (q->kind == NF_NODE_CA) {
            if (pl->pguid) {
                if (ps->port_guid[qslot] && ps->port_guid[qslot] != pl->pguid)
                    return perr(ps, pl->line,
                                "port GUID %llx of \"%s\"[%u] disagrees with its own line (%llx)",
                                (unsigned long long)pl->pguid,
                                shown(b1, sizeof b1, q->id, q->id_len), pl->peer_port,
                                (unsigned long long)ps->port_guid[qslot]);
                if (!ps->port_guid[qslot]) ps->port_gline[qslot] = pl->line;
                ps->port_guid[qslot] = pl->pguid;
            }
            if (ps->port_lid[qslot] < 0)
                ps->port_lid[qslot] = pl->plid;
            else if (pl->plid >= 0 && pl->plid != ps->port_lid[qslot] && j != NONE32)
                return perr(ps, pl->line,
                            "LID %d of \"%s\"[%u] disagrees with its own line %d (%d)", pl->plid,
                            shown(b1, sizeof b1, q->id, q->id_len), pl->peer_port,
                            ps->lines[j].line, ps->port_lid[qslot]);
        } else if (q->lid < 0 && pl->plid >= 0) {
            ps->nodes[pl->peer].lid = pl->plid; /* header without a LID: trust the peers */
            ps->nodes[pl->peer].lid_line = pl->line;
        } else if (pl->plid >= 0 && pl->plid != q->lid) {
            return perr(ps, pl->line, "LID %d of \"%s\" disagrees with line %d (%d)", pl->plid,
                        shown(b1, sizeof b1, q->id, q->id_len), q->lid_line, q->lid);
        }
    }
    return NF_OK;
}

/* ibnetdiscover lists every link from both ends, so a link listed by one end only, or one whose
 * peer has no block, shows the file was cut short or is an excerpt. ibsim needs both ends too: it
 * refuses to start on such a net file ("remote port ... is not connected to ...", "can't find
 * remote node"). Either is an error naming the first such line and the counts, unless the caller
 * asked for a partial read, which keeps the one-sided links, drops the others and says how many
 * there were, each count once with the line of its first. */
static int check_complete(parser *ps) {
    char b1[80], b2[80];
    bool ibsim = ps->dialect == NF__IBTEXT_IBSIM;
    bool partial = ps->opts && ps->opts->partial;
    if (ps->n_one_sided || ps->n_no_block) {
        if (partial) {
            if (ps->n_one_sided)
                pwarn(ps, ps->lines[ps->first_one_sided].line,
                      "partial file: %zu link%s listed by one end only, kept (the first here)",
                      ps->n_one_sided, ps->n_one_sided == 1 ? "" : "s");
            if (ps->n_no_block)
                pwarn(ps, ps->lines[ps->first_no_block].line,
                      "partial file: %zu link%s to nodes with no block, skipped (the first here)",
                      ps->n_no_block, ps->n_no_block == 1 ? "" : "s");
        } else {
            uint32_t first = ps->first_one_sided;
            if (ps->n_no_block && (!ps->n_one_sided || ps->first_no_block < first))
                first = ps->first_no_block;
            const pline *pl = &ps->lines[first];
            const pnode *nd = &ps->nodes[pl->node];
            char what[256];
            if (pl->peer == NONE32)
                snprintf(what, sizeof what, "the peer of \"%s\"[%u], \"%s\", has no node block",
                         shown(b1, sizeof b1, nd->id, nd->id_len), pl->port,
                         shown(b2, sizeof b2, pl->peer_id, pl->peer_len));
            else
                snprintf(what, sizeof what,
                         "link \"%s\"[%u] - \"%s\"[%u] is not listed by its other end",
                         shown(b1, sizeof b1, nd->id, nd->id_len), pl->port,
                         shown(b2, sizeof b2, pl->peer_id, pl->peer_len), pl->peer_port);
            return perr(
                ps, pl->line,
                "%s; %zu link%s listed by one end only and %zu to nodes with no block: %s "
                "(the partial option reads it anyway)",
                what, ps->n_one_sided, ps->n_one_sided == 1 ? " is" : "s are", ps->n_no_block,
                ibsim ? "ibsim would refuse this net file" : "the file is truncated or incomplete");
        }
    }
    /* ibnetdiscover finds every node but the first over a link, and lists that link in the
     * node's block: a block without port lines is one cut short after its header (when the other
     * end is in the file too, the link is one-sided and was reported above). An ibsim node may
     * have no links at all. */
    if (ibsim) return NF_OK;
    for (size_t i = 0; i < ps->n_nodes; i++) {
        const pnode *nd = &ps->nodes[i];
        bool any = false;
        for (unsigned p = 0; p < nd->nports && !any; p++)
            any = ps->port_line[nd->port_base + p] != NONE32;
        if (any) continue;
        if (!partial)
            return perr(ps, nd->line,
                        "node \"%s\" lists no ports: the file is truncated (the partial option "
                        "reads it anyway)",
                        shown(b1, sizeof b1, nd->id, nd->id_len));
        pwarn(ps, nd->line, "partial file: node \"%s\" lists no ports",
              shown(b1, sizeof b1, nd->id, nd->id_len));
    }
    return NF_OK;
}

/* Port GUIDs are unique in a subnet: a CA port's GUID may be its own node's GUID (mlx5 cards give
 * port 1 the node GUID) but no other port's and no other node's. A switch's ports share its node
 * GUID. Node GUIDs were checked by assign_guids. */
typedef struct gport_key {
    uint64_t guid;
    int line;
    uint32_t node;
    uint16_t port; /* 0: the node GUID itself */
} gport_key;
static int cmp_gport_key(const void *x, const void *y) {
    const gport_key *a = x, *b = y;
    if (a->guid != b->guid) return a->guid < b->guid ? -1 : 1;
    return (a->line > b->line) - (a->line < b->line);
}

static int check_port_guids(parser *ps) {
    size_t m = ps->n_nodes;
    for (size_t i = 0; i < ps->n_ports; i++)
        m += ps->port_guid[i] != 0;
    gport_key *keys = nf__malloc(m * sizeof *keys);
    if (!keys) return NF_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < ps->n_nodes; i++) {
        const pnode *nd = &ps->nodes[i];
        keys[k++] = (gport_key){nd->guid, nd->line, (uint32_t)i, 0};
        for (unsigned p = 1; p <= nd->nports; p++) {
            size_t slot = nd->port_base + p - 1;
            if (ps->port_guid[slot])
                keys[k++] = (gport_key){ps->port_guid[slot], ps->port_gline[slot], (uint32_t)i,
                                        (uint16_t)p};
        }
    }
    qsort(keys, k, sizeof *keys, cmp_gport_key);
    /* In a run of equal GUIDs, the only pairs allowed are a node and one of its own ports, so any
     * three entries hold a conflict and the inner loop stops within two steps. */
    int rc = NF_OK;
    for (size_t j = 1; j < k && !rc; j++) {
        const gport_key *a = NULL, *b = &keys[j];
        for (size_t i = j; i-- > 0 && keys[i].guid == b->guid && !a;)
            if (keys[i].node != b->node || (keys[i].port && b->port)) a = &keys[i];
        if (!a) continue;
        /* b is on the later line; name the earlier one by node and port */
        char b1[80], b2[80], pa[16] = "", pb[16] = "";
        const pnode *na = &ps->nodes[a->node], *nb = &ps->nodes[b->node];
        if (a->port) snprintf(pa, sizeof pa, "[%u]", a->port);
        if (b->port) snprintf(pb, sizeof pb, "[%u]", b->port);
        rc = perr(ps, b->line, "GUID 0x%016llx of \"%s\"%s is also the GUID of \"%s\"%s (line %d)",
                  (unsigned long long)b->guid, shown(b1, sizeof b1, nb->id, nb->id_len), pb,
                  shown(b2, sizeof b2, na->id, na->id_len), pa, a->line);
    }
    nf__free(keys);
    return rc;
}

static const char *node_name(parser *ps, const pnode *nd, int *rc) {
    const char *s = nd->desc;
    size_t n = nd->desc_len;
    if (!s && ps->dialect == NF__IBTEXT_IBSIM && !guid_id(nd->id, nd->id_len, &(uint64_t){0})) {
        s = nd->id;
        n = nd->id_len;
    }
    if (!s) return "";
    if ((*rc = NF_GROW(ps->scratch, ps->scratch_cap, n + 1))) return NULL;
    memcpy(ps->scratch, s, n);
    ps->scratch[n] = '\0';
    return ps->scratch;
}

static int build(parser *ps, nf_fabric **out) {
    nf_builder *b = nf_builder_new(ps->n_nodes, ps->n_lines / 2);
    if (!b) return NF_ENOMEM;
    int rc = NF_OK;
    char b1[80], b2[80];
    for (size_t i = 0; i < ps->n_nodes && !rc; i++) {
        pnode *nd = &ps->nodes[i];
        const char *name = node_name(ps, nd, &rc);
        if (!name) break;
        bool sw = nd->kind == NF_NODE_SWITCH;
        nf_node_attr attr = {.guid = nd->guid,
                             .name = name,
                             .lid = sw && nd->lid > 0 ? (uint16_t)nd->lid : 0,
                             .lmc = sw ? nd->lmc : 0,
                             .vendid = nd->vendid,
                             .devid = nd->devid,
                             .sysimgguid = nd->sysimgguid,
                             .supernode = -1};
        rc = nf_builder_add_node(b, (nf_node_kind)nd->kind, nd->nports, &attr, &nd->bid);
    }
    /* links in the order their first side appears */
    for (size_t i = 0; i < ps->n_lines && !rc; i++) {
        const pline *pl = &ps->lines[i];
        if (pl->peer == NONE32) continue;
        const pnode *nd = &ps->nodes[pl->node], *q = &ps->nodes[pl->peer];
        uint32_t j = ps->port_line[q->port_base + pl->peer_port - 1u];
        if (j != NONE32 && j < i) continue; /* added from the mirror line */
        const pline *ml = j != NONE32 ? &ps->lines[j] : NULL;
        nf_link_attr la = {.cls = nd->kind == NF_NODE_CA || q->kind == NF_NODE_CA ? NF_LINK_HOST
                                                                                  : NF_LINK_LOCAL,
                           .width = pl->width,
                           .speed = (nf_speed)pl->speed};
        if (ml) {
            /* Both ends of a link run at one width and speed, yet old dumps sometimes print a
             * degraded width on one side only; the slower report is the one to believe. */
            bool differ = (ml->width && pl->width && ml->width != pl->width) ||
                          (ml->speed && pl->speed && ml->speed != pl->speed);
            if (!la.width || (ml->width && ml->width < la.width)) la.width = ml->width;
            if (!la.speed || (ml->speed && ml->speed < la.speed)) la.speed = (nf_speed)ml->speed;
            if (differ)
                pwarn(ps, ml->line,
                      "the two sides of link \"%s\"[%u] - \"%s\"[%u] disagree on its speed "
                      "(%ux%s on line %d, %ux%s here); using the slower",
                      shown(b1, sizeof b1, nd->id, nd->id_len), pl->port,
                      shown(b2, sizeof b2, q->id, q->id_len), pl->peer_port, pl->width,
                      nf_speed_name((nf_speed)pl->speed), pl->line, ml->width,
                      nf_speed_name((nf_speed)ml->speed));
        }
        rc = nf_builder_connect(b, nd->bid, pl->port, q->bid, pl->peer_port, &la);
        if (rc == NF_EBUSY || rc == NF_EINVAL || rc == NF_ERANGE)
            rc = perr(ps, pl->line, "cannot connect this link (%s)", nf_strerror(rc));
    }
    /* GUID, LID and LMC of cabled CA ports only: a port whose link was skipped is not written
     * back, so what the file said about it would not survive a round trip */
    for (size_t i = 0; i < ps->n_nodes && !rc; i++) {
        const pnode *nd = &ps->nodes[i];
        if (nd->kind == NF_NODE_SWITCH) continue;
        for (unsigned p = 1; p <= nd->nports && !rc; p++) {
            size_t slot = nd->port_base + p - 1;
            if (nf_builder_peer(b, nd->bid, p, NULL) == NF_NONE) continue;
            uint16_t lid = ps->port_lid[slot] > 0 ? (uint16_t)ps->port_lid[slot] : 0;
            rc = nf_builder_set_port(b, nd->bid, p, ps->port_guid[slot], lid, ps->port_lmc[slot]);
        }
    }
    if (!rc) rc = nf_builder_freeze(b, false, out);
    nf_builder_free(b);
    return rc;
}

int nf__ibtext_parse(const char *text, size_t len, nf__ibtext_dialect dialect, const char *filename,
                     const nf_load_opts *opts, nf_fabric **out, nf_diag *diag) {
    *out = NULL;
    parser ps = {.dialect = dialect,
                 .file = filename ? filename : "",
                 .opts = opts,
                 .diag = diag,
                 .cur = NONE32,
                 .first_one_sided = NONE32,
                 .first_no_block = NONE32};
    guid_key *gkeys = NULL;
    id_key *ikeys = NULL;
    int rc = read_lines(&ps, text, len);
    if (rc) goto done;
    /* ibnetdiscover prints key lines only before a header: key lines at the end are a cut block */
    if (dialect == NF__IBTEXT_IBNET && ps.key_line) {
        if (!opts || !opts->partial) {
            rc = perr(&ps, ps.key_line,
                      "key lines with no node header after them: the file is truncated (the "
                      "partial option reads it anyway)");
            goto done;
        }
        pwarn(&ps, ps.key_line, "partial file: key lines with no node header after them, ignored");
    }
    if (ps.n_nodes == 0) {
        rc = perr(&ps, 0, "no node headers (Switch/Ca lines) found");
        goto done;
    }
    size_t np = ps.n_ports ? ps.n_ports : 1;
    if (!(gkeys = nf__malloc(ps.n_nodes * sizeof *gkeys)) ||
        (dialect == NF__IBTEXT_IBSIM && !(ikeys = nf__malloc(ps.n_nodes * sizeof *ikeys))) ||
        !(ps.port_guid = nf__calloc(np, sizeof *ps.port_guid)) ||
        !(ps.port_lid = nf__malloc(np * sizeof *ps.port_lid)) ||
        !(ps.port_gline = nf__calloc(np, sizeof *ps.port_gline)) ||
        !(ps.port_lmc = nf__calloc(np, sizeof *ps.port_lmc))) {
        rc = NF_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < ps.n_ports; i++)
        ps.port_lid[i] = -1;
    if ((rc = assign_guids(&ps, gkeys)) || (rc = resolve_peers(&ps, gkeys, ikeys)) ||
        (rc = check_sides(&ps)) || (rc = check_port_guids(&ps)) || (rc = check_complete(&ps)))
        goto done;
    rc = build(&ps, out);
done:
    nf__free(gkeys);
    nf__free(ikeys);
    nf__free(ps.nodes);
    nf__free(ps.lines);
    nf__free(ps.port_line);
    nf__free(ps.port_guid);
    nf__free(ps.port_lid);
    nf__free(ps.port_gline);
    nf__free(ps.port_lmc);
    nf__free(ps.scratch);
    return rc;
}

/* ---- writer ------------------------------------------------------------------------------- */

/* A quoted name: at most max bytes, quotes as apostrophes, control characters (and for ibsim,
 * which would read "x=" as a port option, equal signs) as spaces. */
static void put_quoted(FILE *out, const char *name, size_t max, bool for_ibsim) {
    putc('"', out);
    for (size_t i = 0; name[i] && i < max; i++) {
        char ch = name[i];
        if (ch == '"')
            ch = '\'';
        else if ((unsigned char)ch < 0x20 || ch == 0x7f || (for_ibsim && ch == '='))
            ch = ' ';
        putc(ch, out);
    }
    putc('"', out);
}

static char id_prefix(const nf_fabric *f, nf_node n) { return nf_is_switch(f, n) ? 'S' : 'H'; }

/* One port line as ibnetdiscover prints it. A switch line names the peer, its description, its
 * LID and the speed; a CA line starts with the local port GUID and puts the local LID and LMC
 * first in the comment. */
static void put_port(const nf_fabric *f, nf_node n, unsigned p, bool for_ibsim, FILE *out) {
    nf_gport g = nf_port_index(f, n, p);
    nf_node q = f->peer[g];
    unsigned qp = f->peer_port[g];
    nf_gport h = nf_port_index(f, q, qp);
    nf_link l = f->port_link[g];
    if (nf_is_switch(f, n)) {
        fprintf(out, "[%u]\t\"%c-%016llx\"[%u]", p, id_prefix(f, q), (unsigned long long)f->guid[q],
                qp);
        if (!nf_is_switch(f, q)) fprintf(out, "(%llx) ", (unsigned long long)f->port_guid[h]);
    } else {
        fprintf(out, "[%u](%llx) \t\"%c-%016llx\"[%u]", p, (unsigned long long)f->port_guid[g],
                id_prefix(f, q), (unsigned long long)f->guid[q], qp);
    }
    nf_speed sp = (nf_speed)f->link_speed[l];
    unsigned width = f->link_width[l];
    bool both = width && sp != NF_SPEED_UNKNOWN && sp < NF_SPEED_COUNT;
    if (for_ibsim && !both) {
        /* ibsim reads width and speed from the comment when both are known; else use its options */
        static const unsigned mask[13] = {[1] = 1, [2] = 16, [4] = 2, [8] = 4, [12] = 8};
        if (width && width <= 12 && mask[width]) fprintf(out, " w=%u", mask[width]);
        if (!width && (sp == NF_SPEED_SDR || sp == NF_SPEED_DDR || sp == NF_SPEED_QDR))
            fprintf(out, " s=%u", sp == NF_SPEED_SDR ? 1u : sp == NF_SPEED_DDR ? 2u : 4u);
    }
    fputs("\t\t# ", out);
    if (!nf_is_switch(f, n)) fprintf(out, "lid %u lmc %u ", f->port_lid[g], f->port_lmc[g]);
    /* The reader takes names from the headers only, so the peer's name here may be trimmed for
     * ibsim, which cuts lines at 255 bytes and reads any "x=" after a port as an option. */
    put_quoted(out, nf_node_name(f, q), for_ibsim ? 64 : SIZE_MAX, for_ibsim);
    fprintf(out, " lid %u", f->port_lid[h]);
    if (both) fprintf(out, " %ux%s", width, nf_speed_name(sp));
    putc('\n', out);
}

void nf__ibtext_put_block(const nf_fabric *f, nf_node n, nf__ibtext_dialect dialect, FILE *out) {
    bool sw = nf_is_switch(f, n);
    unsigned long long guid = f->guid[n];
    putc('\n', out);
    if (dialect == NF__IBTEXT_IBNET) {
        fprintf(out, "vendid=0x%x\ndevid=0x%x\n", (unsigned)f->vendid[n], (unsigned)f->devid[n]);
        if (f->sysimgguid[n])
            fprintf(out, "sysimgguid=0x%llx\n", (unsigned long long)f->sysimgguid[n]);
        if (sw)
            fprintf(out, "switchguid=0x%llx(%llx)\n", guid, guid);
        else
            fprintf(out, "caguid=0x%llx\n", guid);
    } else { /* ibsim gives the next node of the kind this GUID, else numbers it itself */
        fprintf(out, "%s=0x%016llx\n", sw ? "switchguid" : "caguid", guid);
    }
    const char *kw = sw ? "Switch" : dialect == NF__IBTEXT_IBNET ? "Ca" : "Hca";
    fprintf(out, "%s\t%u \"%c-%016llx\"\t\t# ", kw, f->nports[n], id_prefix(f, n), guid);
    /* ibsim cuts lines at 255 bytes, and the rest of a cut header would end the block */
    put_quoted(out, nf_node_name(f, n), dialect == NF__IBTEXT_IBSIM ? 190 : SIZE_MAX, false);
    if (sw) fprintf(out, " base port 0 lid %u lmc %u", f->lid[n], f->lmc[n]);
    putc('\n', out);
    for (unsigned p = 1; p <= f->nports[n]; p++)
        if (f->peer[nf_port_index(f, n, p)] != NF_NONE)
            put_port(f, n, p, dialect == NF__IBTEXT_IBSIM, out);
}
