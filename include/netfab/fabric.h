/* SPDX-License-Identifier: MIT */
/* The fabric model: switches and endpoints (CAs), their ports and links.
 * A fabric is assembled with a builder (nf_builder), then frozen into an immutable nf_fabric whose
 * columns are dense arrays: switches are renumbered 0..n_switches-1 and CAs follow them, ports of
 * node n live at global port index nf_port_index(f, n, p) = port_off[n] + p - 1, and the peer of
 * every port is found in O(1). Link state is the one mutable column (for faults). */
#ifndef NETFAB_FABRIC_H
#define NETFAB_FABRIC_H

#include "core.h"

#include <stdbool.h>
#include <stdint.h>

typedef uint32_t nf_node;  /* node id; in a frozen fabric switches come first */
typedef uint32_t nf_link;  /* link id */
typedef uint32_t nf_gport; /* global port index: port_off[node] + port - 1 */

#define NF_NONE UINT32_MAX
/* The most ports a node has: InfiniBand port numbers are 8 bits. Real switches stop at 254 (a
 * forwarding table's 255 is "no port", NF_UFT_NONE); the model, its readers, generators and the
 * simulator take 255. */
#define NF_MAX_PORTS 255
#define NF_FABRIC_TORUS_MAX_D 8 /* dimensions nf_fabric's torus geometry holds (gen.h's limit) */

typedef enum nf_node_kind { NF_NODE_SWITCH = 0, NF_NODE_CA = 1 } nf_node_kind;

/* What a link is for, so routing can tell them apart. HOST joins a CA to a switch; LOCAL joins two
 * switches in the ordinary way (tree up/down links, torus links, Dragonfly intra-group links);
 * GLOBAL is a Dragonfly inter-group link; SIBLING joins the two routers of a generalized-fat-tree
 * sibling pair. The plane (rail) a link belongs to is a separate column. */
typedef enum nf_link_class {
    NF_LINK_HOST = 0,
    NF_LINK_LOCAL = 1,
    NF_LINK_GLOBAL = 2,
    NF_LINK_SIBLING = 3,
    NF_LINK_NCLASSES = 4
} nf_link_class;
NF_API const char *nf_link_class_name(nf_link_class c);

typedef enum nf_link_state { NF_LINK_UP = 0, NF_LINK_DOWN = 1 } nf_link_state;

/* InfiniBand link speeds as ibnetdiscover prints them (with a width: 1x, 4x, 8x, 12x). */
#define NF_SPEED_MAP(X)                                                                            \
    X(SDR, "SDR", 2500)                                                                            \
    X(DDR, "DDR", 5000)                                                                            \
    X(QDR, "QDR", 10000)                                                                           \
    X(FDR10, "FDR10", 10313)                                                                       \
    X(FDR, "FDR", 14063)                                                                           \
    X(EDR, "EDR", 25781) X(HDR, "HDR", 53125) X(NDR, "NDR", 106250) X(XDR, "XDR", 212500)
typedef enum nf_speed {
    NF_SPEED_UNKNOWN = 0,
#define NF_X_SPEED(id, str, mbps) NF_SPEED_##id,
    NF_SPEED_MAP(NF_X_SPEED)
#undef NF_X_SPEED
        NF_SPEED_COUNT
} nf_speed;
NF_API const char *nf_speed_name(nf_speed s); /* "EDR", or "?" for unknown */
/* Parses "4xEDR" into width 4 and NF_SPEED_EDR. Returns 0 or NF_EPARSE. */
NF_API int nf_speed_parse(const char *s, size_t len, uint8_t *width, nf_speed *speed);

/* ---- builder ------------------------------------------------------------------------------- */

typedef struct nf_builder nf_builder;

/* Attributes of a node; zero-initialise and fill what is known. */
typedef struct nf_node_attr {
    uint64_t guid;    /* node GUID; 0 = let the builder assign one */
    const char *name; /* node description (copied); NULL = empty */
    uint16_t lid;     /* switch LID (port 0); for CAs see nf_builder_set_port */
    uint8_t lmc;
    uint32_t vendid, devid;
    uint64_t sysimgguid;
    int32_t supernode; /* pod, group, supernode or -1 */
    uint8_t level;     /* tree level (1 = leaf), 0 when not a tree */
    uint8_t plane;     /* rail / plane number, 0 for single-plane fabrics */
} nf_node_attr;

/* Attributes of a link. */
typedef struct nf_link_attr {
    nf_link_class cls;
    uint8_t width; /* lanes: 1, 4, 8, 12; 0 = unknown */
    nf_speed speed;
    uint8_t plane;
} nf_link_attr;

/* Creates an empty builder; expected sizes are hints (0 is fine). NULL on allocation failure. */
NF_API nf_builder *nf_builder_new(size_t nodes_hint, size_t links_hint);
NF_API void nf_builder_free(nf_builder *b);

/* Adds a node with nports ports (1..NF_MAX_PORTS). Returns 0 and the id in *out. */
NF_API int nf_builder_add_node(nf_builder *b, nf_node_kind kind, unsigned nports,
                               const nf_node_attr *attr, nf_node *out);
/* Connects (a, pa) to (z, pz). NF_ERANGE for a port out of range, NF_EBUSY if either port is
 * already connected, NF_EINVAL for a port joined to itself. A loop-back cable between two
 * different ports of one switch is allowed. */
NF_API int nf_builder_connect(nf_builder *b, nf_node a, unsigned pa, nf_node z, unsigned pz,
                              const nf_link_attr *attr);
/* Per-port GUID and LID of a CA port (switch ports share the node's LID and GUID). */
NF_API int nf_builder_set_port(nf_builder *b, nf_node n, unsigned port, uint64_t guid, uint16_t lid,
                               uint8_t lmc);
NF_API size_t nf_builder_node_count(const nf_builder *b);
/* The peer of (n, p) so far, or NF_NONE. */
NF_API nf_node nf_builder_peer(const nf_builder *b, nf_node n, unsigned p, unsigned *peer_port);

typedef struct nf_fabric nf_fabric;

/* Freezes the builder into a fabric (the builder is left empty and may be freed). Nodes are
 * renumbered, switches first, each kind in insertion order. GUIDs left 0 are assigned; when
 * assign_lids is true every LID is reassigned: switches 1..S, then CA ports in order, or every
 * LID 0 when they would not fit the unicast LID space (0x0001..0xBFFF). */
NF_API int nf_builder_freeze(nf_builder *b, bool assign_lids, nf_fabric **out);

/* ---- frozen fabric ------------------------------------------------------------------------- */

/* The columns are public for speed; treat them as read-only except link_state. */
struct nf_fabric {
    uint32_t n_nodes, n_switches, n_cas; /* switches are ids 0..n_switches-1 */
    uint32_t n_ports;                    /* total ports over all nodes */
    uint32_t n_links;

    /* per node */
    uint8_t *kind; /* nf_node_kind */
    uint8_t *nports;
    uint32_t *port_off; /* n_nodes + 1 entries */
    uint64_t *guid;
    uint64_t *sysimgguid;
    uint32_t *vendid, *devid;
    uint16_t *lid; /* switch LID; for CAs the LID of the first port */
    uint8_t *lmc;
    int32_t *supernode;
    uint8_t *level;
    uint8_t *plane;
    uint32_t *name_off; /* offset into names; "" when unnamed */
    char *names;

    /* per global port */
    nf_node *peer; /* NF_NONE when unconnected */
    uint8_t *peer_port;
    nf_link *port_link; /* NF_NONE when unconnected */
    uint64_t *port_guid;
    uint16_t *port_lid; /* CA ports: own LID; switch ports: the switch LID */
    uint8_t *port_lmc;

    /* per link: end a is the end given first to nf_builder_connect */
    nf_node *link_a, *link_z;
    uint8_t *link_pa, *link_pz;
    uint8_t *link_cls;
    uint8_t *link_width;
    uint8_t *link_speed;
    uint8_t *link_plane;
    uint8_t *link_state; /* nf_link_state; the only mutable column */

    /* switch-to-switch adjacency in CSR form over all connected switch ports (any state):
     * neighbours of switch s are sw_adj[sw_adj_off[s] .. sw_adj_off[s+1]), with the local port of
     * each in sw_adj_port and the link in sw_adj_link. Loop-back cables are left out. */
    uint32_t *sw_adj_off;
    nf_node *sw_adj;
    uint8_t *sw_adj_port;
    nf_link *sw_adj_link;

    /* internal: node ids sorted by GUID, for nf_fabric_find_guid */
    nf_node *guid_order;

    /* The torus generator's geometry, so that distances can come from coordinates (nf_hops
     * checks it against the links before use): torus_nd dimensions (0 when the fabric is not a
     * generated torus) of torus_dims[d] switches; switch s sits at the row-major coordinates of
     * s (last dimension fastest); dimension d leaves through port torus_c + 2d + 1 towards +1 and
     * torus_c + 2d + 2 towards -1. Fabrics read from files have none. */
    uint8_t torus_nd;
    uint8_t torus_c;
    uint32_t torus_dims[NF_FABRIC_TORUS_MAX_D];
};

NF_API void nf_fabric_free(nf_fabric *f);

static inline nf_gport nf_port_index(const nf_fabric *f, nf_node n, unsigned p) {
    return f->port_off[n] + p - 1;
}
static inline bool nf_is_switch(const nf_fabric *f, nf_node n) { return n < f->n_switches; }
static inline const char *nf_node_name(const nf_fabric *f, nf_node n) {
    return f->names + f->name_off[n];
}

/* Looks a node up by GUID; NF_NONE when absent. O(log n). */
NF_API nf_node nf_fabric_find_guid(const nf_fabric *f, uint64_t guid);

/* Structural self-check: every port's peer points back, link ends agree with the port table,
 * GUIDs are unique, CSR adjacency matches the port table. Returns 0 or NF_EINVAL with the first
 * violation described in diag (optional). */
NF_API int nf_fabric_check(const nf_fabric *f, nf_diag *diag);

/* Are a and b the same fabric up to node numbering? Nodes are matched by GUID; kind, port count,
 * name and every link (both ends' GUID and port) must agree; with cmp_lids, LIDs too; with
 * cmp_attrs, link class, width and speed too. On a difference returns false and says where in
 * diag (optional). */
NF_API bool nf_fabric_equal(const nf_fabric *a, const nf_fabric *b, bool cmp_lids, bool cmp_attrs,
                            nf_diag *diag);

/* Counts */
typedef struct nf_fabric_counts {
    uint32_t links_by_class[NF_LINK_NCLASSES];
    uint32_t loopback_links; /* both ends on the same switch */
    uint32_t ports_used;     /* connected switch ports */
    uint32_t ports_total;    /* all switch ports */
    uint32_t max_radix;      /* largest switch port count */
    uint32_t endpoint_ports; /* connected CA ports */
} nf_fabric_counts;
NF_API void nf_fabric_count(const nf_fabric *f, nf_fabric_counts *out);

/* Bytes of heap the fabric's columns occupy. */
NF_API size_t nf_fabric_bytes(const nf_fabric *f);

/* Marks a link up or down. */
static inline void nf_fabric_set_link_state(nf_fabric *f, nf_link l, nf_link_state s) {
    f->link_state[l] = (uint8_t)s;
}

#endif
