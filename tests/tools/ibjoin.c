/* SPDX-License-Identifier: MIT */
/* Joins (or leaves) InfiniBand multicast groups through a real subnet manager's SA, the way a
 * host's IPoIB or MPI library would: one MCMemberRecord Set (Delete to leave) per member, sent
 * with libibmad from the local port. Used by the e2e tests against OpenSM on ibsim (run with
 * the umad2sim preload); works on a real port too.
 *   nf_ibjoin [--leave] [--state S] [--qkey Q] [--pkey P] MGID[/PORTGUID] ...
 *   nf_ibjoin [--leave] [--state S] -            (the same words, one or more a line, on stdin)
 * Without /PORTGUID the member is the local port; with it, a proxy join for that port (OpenSM
 * accepts them). The join state S is 1 full (default), 2 non-member, 4 send-only. Prints
 * "MGID PORTGUID MLID" for each answered request; exit 0 when every one was answered, 1 when
 * some were refused or not answered, 2 on bad arguments. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MCMemberRecord component mask bits (IBA 15.2.5.17) */
enum {
    MCM_MGID = 0,
    MCM_PORTGID = 1,
    MCM_QKEY = 2,
    MCM_TCLASS = 6,
    MCM_PKEY = 7,
    MCM_SL = 12,
    MCM_FLOWLABEL = 13,
    MCM_JOINSTATE = 16,
};
#define BIT(b) (UINT64_C(1) << (b))

struct ctx {
    struct ibmad_port *mad;
    ib_portid_t sa;
    uint64_t prefix_be, guid_be; /* the local port's GID, network order */
    unsigned state, qkey, pkey;
    int leave;
};

/* one request for WORD ("MGID" or "MGID/PORTGUID"); 0 answered, 1 refused, 2 bad word */
static int request(struct ctx *c, const char *word) {
    char mg[64];
    const char *slash = strchr(word, '/');
    size_t n = slash ? (size_t)(slash - word) : strlen(word);
    uint8_t mgid[16], pgid[16];
    if (n >= sizeof mg) return 2;
    memcpy(mg, word, n);
    mg[n] = 0;
    if (inet_pton(AF_INET6, mg, mgid) != 1 || mgid[0] != 0xff) {
        fprintf(stderr, "nf_ibjoin: '%s' is no multicast GID\n", mg);
        return 2;
    }
    uint64_t guid_be = c->guid_be;
    if (slash) {
        char *end;
        uint64_t g = strtoull(slash + 1, &end, 16);
        if (*end || end == slash + 1) {
            fprintf(stderr, "nf_ibjoin: bad port GUID in '%s'\n", word);
            return 2;
        }
        guid_be = htobe64(g);
    }
    memcpy(pgid, &c->prefix_be, 8);
    memcpy(pgid + 8, &guid_be, 8);

    uint8_t data[IB_SA_DATA_SIZE] = {0};
    mad_encode_field(data, IB_SA_MCM_MGID_F, mgid);
    mad_encode_field(data, IB_SA_MCM_PORTGID_F, pgid);
    mad_set_field(data, 0, IB_SA_MCM_QKEY_F, c->qkey);
    mad_set_field(data, 0, IB_SA_MCM_PKEY_F, c->pkey);
    mad_set_field(data, 0, IB_SA_MCM_JOIN_STATE_F, c->state);
    /* a join that may create the group gives every field the SA needs for a new one (SL, flow
     * label and traffic class 0); a leave names the member and the states it leaves */
    ib_sa_call_t call = {.attrid = IB_SA_ATTR_MCRECORD};
    if (c->leave) {
        call.method = IB_MAD_METHOD_DELETE;
        call.mask = BIT(MCM_MGID) | BIT(MCM_PORTGID) | BIT(MCM_JOINSTATE);
    } else {
        call.method = IB_MAD_METHOD_SET;
        call.mask = BIT(MCM_MGID) | BIT(MCM_PORTGID) | BIT(MCM_QKEY) | BIT(MCM_TCLASS) |
                    BIT(MCM_PKEY) | BIT(MCM_SL) | BIT(MCM_FLOWLABEL) | BIT(MCM_JOINSTATE);
    }
    c->sa.qkey = 0; /* sa_rpc_call puts in the well-known QP1 Q_Key */
    if (!sa_rpc_call(c->mad, data, &c->sa, &call, 2000)) {
        fprintf(stderr, "nf_ibjoin: %s %s: refused or no answer\n", c->leave ? "leave" : "join",
                word);
        return 1;
    }
    printf("%s %016" PRIx64 " 0x%04x\n", mg, be64toh(guid_be),
           mad_get_field(data, 0, IB_SA_MCM_MLID_F));
    return 0;
}

static int usage(void) {
    fprintf(stderr, "usage: nf_ibjoin [--leave] [--state S] [--qkey Q] [--pkey P] "
                    "MGID[/PORTGUID]... | -\n");
    return 2;
}

int main(int argc, char **argv) {
    struct ctx c = {.state = 1, .qkey = 0x0b1b, .pkey = 0xffff};
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--leave") == 0) {
            c.leave = 1;
        } else if (i + 1 < argc &&
                   (strcmp(argv[i], "--state") == 0 || strcmp(argv[i], "--qkey") == 0 ||
                    strcmp(argv[i], "--pkey") == 0)) {
            char *end;
            unsigned long v = strtoul(argv[i + 1], &end, 0);
            if (*end || v > 0xffffffffUL) return usage();
            if (argv[i][2] == 's')
                c.state = (unsigned)v;
            else if (argv[i][2] == 'q')
                c.qkey = (unsigned)v;
            else
                c.pkey = (unsigned)v;
            i++;
        } else {
            return usage();
        }
    }
    if (i >= argc || c.state == 0 || c.state > 7 || c.pkey > 0xffff) return usage();

    umad_port_t port;
    if (umad_get_port(NULL, 0, &port) < 0) {
        fprintf(stderr, "nf_ibjoin: no InfiniBand port (with ibsim: LD_PRELOAD=libumad2sim.so)\n");
        return 1;
    }
    int classes[] = {IB_SA_CLASS};
    c.mad = mad_rpc_open_port(NULL, 0, classes, 1);
    if (!c.mad) {
        fprintf(stderr, "nf_ibjoin: cannot open the port for SA requests\n");
        umad_release_port(&port);
        return 1;
    }
    c.sa.lid = (int)port.sm_lid;
    c.prefix_be = port.gid_prefix;
    c.guid_be = port.port_guid;

    int worst = 0;
    if (strcmp(argv[i], "-") == 0 && i + 1 == argc) {
        char line[256];
        while (fgets(line, sizeof line, stdin)) {
            for (char *w = strtok(line, " \t\r\n"); w; w = strtok(NULL, " \t\r\n")) {
                int r = request(&c, w);
                if (r > worst) worst = r;
            }
        }
    } else {
        for (; i < argc; i++) {
            int r = request(&c, argv[i]);
            if (r > worst) worst = r;
        }
    }
    mad_rpc_close_port(c.mad);
    umad_release_port(&port);
    return worst;
}
