/* topo.h — the physical machine a schedule runs on.
 *
 * A topology is `nnodes` copies of one node of `ranks_per_node` ranks.  Ranks
 * are numbered globally: rank = node * ranks_per_node + local.  Inside a node
 * ranks talk over point-to-point links (with multiplicity: how many transfers
 * a link carries at once per direction) or through switches (each member rank
 * has one port: one transfer in and one out at a time); between nodes a
 * transfer leaves through the sender's NIC and enters through the receiver's.
 * The cost of moving s bytes over a hop is alpha + s / bandwidth.
 * Units: alpha in microseconds, bandwidth in GB/s (1e9 bytes/s).
 *
 * The device hierarchy is node -> chip -> cluster.  A GPU topology has one
 * cluster per chip and one chip per rank (kind TOPO_GPU); a chip/cluster
 * device (kind TOPO_CHIP) has `chips_per_node` chips of `clusters_per_chip`
 * clusters, one rank per cluster, and a DMA granularity in bytes.
 *
 * The struct is plain read-only data after loading; build one with
 * topo_load()/topo_parse()/topo_default() and release it with topo_free(). */
#ifndef TC_TOPO_H
#define TC_TOPO_H

#include "../util/err.h"

typedef enum { TOPO_GPU, TOPO_CHIP } topo_kind;

/* The GPU generation of a GPU topology (device.arch in the file; optional:
 * TOPO_ARCH_UNKNOWN when absent, as on every chip device).  It is what
 * NCCL's tuning model (used by `--algo nccl`) keys its constants on: the
 * LL bandwidth caps (llMaxBws), the per-channel bandwidth caps
 * (perChMax*Bws), whether LL128 is enabled, and the ring plateau factor.  It
 * does not change any hop's cost: links, switches and NICs carry their own
 * figures. */
typedef enum {
    TOPO_ARCH_UNKNOWN,
    TOPO_ARCH_VOLTA,        /* V100, sm_70 */
    TOPO_ARCH_AMPERE,       /* A100, sm_80 */
    TOPO_ARCH_HOPPER,       /* H100, sm_90 */
    TOPO_ARCH_BLACKWELL     /* B200, sm_100 */
} topo_arch;

/* "runtime_latency": whose per-step and per-call latencies the runtime adds
 * (model/cost.h, "Runtime latency"): none, NCCL's (the MSCCL runtimes and
 * MSCCL++ on NVIDIA GPUs) or RCCL's (on AMD GPUs). */
typedef enum { TOPO_RTLAT_NONE, TOPO_RTLAT_NCCL, TOPO_RTLAT_RCCL } topo_rtlat;

/* One direction of a point-to-point link, global ranks. */
typedef struct {
    int src, dst;
    double alpha_us;
    double bw_gbps;
    int mult;           /* concurrent transfers per direction, >= 1 */
} topo_link;

/* What a switch that reduces and multicasts in the fabric (NVLink SHARP,
 * NVLS: NVSwitch 3 and later) does for multimem operations, the "nvls"
 * object of a switch in the file.  A multimem load-reduce of s bytes by a
 * member reads s bytes out of every member's port and delivers their sum
 * into the caller's port; a multimem store of s bytes leaves the caller's
 * port once and enters every member's port.  Each port carries that
 * traffic at bw_gbps (per direction, at most the switch's port bandwidth:
 * it is the same link), and an operation completes alpha_us after its
 * last port has moved its bytes. */
typedef struct {
    int on;             /* 0: the switch only forwards (no "nvls" object) */
    double alpha_us;    /* latency of one multimem operation */
    double bw_gbps;     /* per member port and direction, multimem traffic */
    unsigned redops;    /* bit 1 << rt_redop (model/runtime.h) it reduces with */
    unsigned dtypes;    /* bit 1 << rt_dtype (model/runtime.h) it reduces */
} topo_nvls;

/* A switch inside one node; member ranks are global. */
typedef struct {
    int nranks;
    int *ranks;
    double alpha_us;
    double bw_gbps;     /* per port */
    topo_nvls nvls;     /* in-switch reduction and multicast, if any */
} topo_switch;

/* A network between the nodes that reduces (SHARP in InfiniBand switches)
 * and that NCCL runs its CollNet algorithms on: the top-level "collnet"
 * object.  It says both that the fabric reduces and that NCCL is set up to
 * use it (a CollNet plugin, NCCL_COLLNET_ENABLE=1); NCCL's tuning model
 * (synth/nccl_tune.h) then offers CollNetDirect, CollNetChain and NVLS
 * across nodes.  No schedule format here can express a reduction in the
 * network, so the executor never moves data through it. */
typedef struct {
    int on;             /* 0: no "collnet" object */
    unsigned redops;    /* bit 1 << rt_redop it reduces with */
    unsigned dtypes;    /* bit 1 << rt_dtype it reduces */
    int allgather;      /* the plugin's iallgather (NCCL's CollNet AllGather) */
    int reducescatter;  /* the plugin's ireducescatter */
} topo_collnet;

/* A NIC of one node; the member ranks (global) leave and enter through it. */
typedef struct {
    int node;
    int nranks;
    int *ranks;
    double alpha_us;
    double bw_gbps;     /* per direction */
} topo_nic;

typedef struct topo {
    char *name;
    char *path;             /* file it came from, or "" */
    int nnodes;
    int ranks_per_node;
    int nranks;             /* nnodes * ranks_per_node */
    topo_kind kind;
    topo_arch arch;         /* GPU generation, TOPO_ARCH_UNKNOWN if not given */
    int chips_per_node;     /* TOPO_CHIP: chips per node; TOPO_GPU: ranks_per_node */
    int clusters_per_chip;  /* TOPO_CHIP: clusters per chip; TOPO_GPU: 1 */
    int dma_bytes;          /* DMA granularity in bytes, 0 = none */
    double copy_gbps;       /* local copy bandwidth */
    double reduce_gbps;     /* local reduce bandwidth */
    int nlinks;
    topo_link *links;       /* expanded to every node, both directions listed */
    int nswitches;
    topo_switch *switches;
    int nnics;
    topo_nic *nics;
    int *nic_of_rank;       /* [nranks]: index into nics, or -1 */
    int is_default;         /* 1 for topo_default(): timing is only indicative */
    int alpha_delay;        /* 1: a hop's alpha delays its arrival but holds no
                               resource ("alpha_mode": "delay"); 0: the hop
                               holds its resources for alpha + bytes / B */
    topo_collnet collnet;   /* the network reduces (NCCL's CollNet), if on */
    int rails;              /* 1: a rail-optimised fabric ("fabric": "rails"):
                               NIC i of a node reaches NIC i of every other
                               node only (its rail); 0, the default
                               ("fat-tree"): every NIC reaches every other
                               node's NICs (a non-blocking network) */
    topo_rtlat rt_latency;  /* the runtime's own latencies on a GPU device
                               ("runtime_latency"): NONE (the default), or
                               NCCL's or RCCL's per-step and per-call
                               figures (model/cost.h) */
    int arb_reserve;        /* 1: a transfer books the first instant every
                               resource it needs is free, which idle until
                               then ("arbitration": "reserve"); 0, the
                               default ("ready"): it starts only when all
                               are free now, else waits and asks again when
                               one is freed (work-conserving) */
    /* PRIVATE to topo.c — do not read or write elsewhere: the route index
     * built at load time and the provenance ("source"/"notes" strings) that
     * topo_to_json() writes back.  NULL in a struct built by hand, in which
     * case topo_route_of() falls back to a linear scan. */
    struct topo_priv *priv;
} topo;

/* Read and validate a topology JSON file.  On failure returns NULL and sets
 * err (TC_INPUT) to "path:line: field: what" (line where cJSON can tell). */
topo *topo_load(const char *path, tc_err *err);

/* Same from text in memory; `label` names the source in messages. */
topo *topo_parse(const char *text, const char *label, tc_err *err);

/* A fully connected single node of n ranks with assumed link figures
 * (used when a schedule carries no topology). */
topo *topo_default(int nranks);

void topo_free(topo *t);

/* Serialise back to the JSON format topo_parse() reads (expanded form).
 * Caller frees the string with free(). */
char *topo_to_json(const topo *t);

/* One node of t as a topology of its own (nnodes 1, local ranks = t's
 * node-0 ranks, the same links, switches, NICs and figures): what the
 * hierarchical synthesizer routes a node on.  NULL with err set on
 * failure; free with topo_free(). */
topo *topo_one_node(const topo *t, tc_err *err);

/* A deep copy of t (its route index, provenance and warnings too): what a
 * schedule that must own its topology keeps.  Free with topo_free(). */
topo *topo_clone(const topo *t);

/* 1 if t's invariants hold (ranks in range, NIC nodes, the route index
 * pointing at links of the right ends); for TC_ASSERT only. */
int topo_sane(const topo *t);

/* What loading let pass but a user should hear ("LABEL:LINE: FIELD:
 * what"), such as figures without a source: how many, and the i-th (NULL
 * out of range). */
int topo_warnings(const topo *t);
const char *topo_warning(const topo *t, int i);

/* The name device.arch spells it with: "volta", "ampere", "hopper",
 * "blackwell", or "unknown" (TOPO_ARCH_UNKNOWN and any other value). */
const char *topo_arch_name(topo_arch a);

int topo_node_of(const topo *t, int rank);
int topo_chip_of(const topo *t, int rank);     /* global chip index */
int topo_cluster_of(const topo *t, int rank);  /* cluster index within its chip */

/* Node 0's switch holding every rank of the node (an NVSwitch joining its
 * GPUs), or -1. */
int topo_node_switch(const topo *t);

/* The first switch of t that reduces and multicasts (nvls.on) and holds
 * every one of the n global ranks, or -1. */
int topo_nvls_switch(const topo *t, const int *ranks, int n);

/* How a transfer from rank a to rank b travels. */
typedef enum {
    ROUTE_NONE,     /* no way between them in this topology */
    ROUTE_SELF,     /* a == b */
    ROUTE_LINK,     /* direct link: `link` indexes t->links */
    ROUTE_SWITCH,   /* through switch `sw` (ports of a and b) */
    ROUTE_NIC       /* between nodes: nic_src egress, nic_dst ingress */
} topo_route_kind;

typedef struct {
    topo_route_kind kind;
    int link, sw, nic_src, nic_dst;
    double alpha_us;
    double bw_gbps;
    double lat_us;      /* the runtime's per-step latency (latency only, held
                           by nothing) where the topology has a
                           runtime_latency, else 0: Simple's here,
                           cost_proto_route's for another protocol */
} topo_route;

/* Pick the route for a -> b: a direct link if one exists (the fastest if
 * several), else a switch both belong to, else NICs if on different nodes
 * (on rails, only NICs of one rail: the same index among their node's). */
topo_route topo_route_of(const topo *t, int a, int b);

/* What a route costs and holds: model/cost.h. */

#endif
