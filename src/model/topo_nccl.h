/* topo_nccl.h — a topology JSON made from an NCCL or RCCL topology dump.
 *
 * Why: a user's first step is to describe their cluster, and every GPU
 * machine can describe itself in NCCL's own format (NCCL_TOPO_DUMP_FILE, or
 * the NCCL_TOPO_FILE a cloud provider ships).  Reading that file and
 * deriving each figure by NCCL's (or RCCL's) own rules gives the user a
 * topology with no figure looked up or guessed, and a `source` on each that
 * names the rule (file:line@commit of NCCL/RCCL) and the dump's field.
 *
 * What is read: <system> with <cpu> (host_hash: one node per host), the
 * <pci> tree, <gpu> (sm, or gcn on AMD), its <nvlink>/<xgmi> children
 * (target, count, tclass), <nic>/<net> (speed in Mb/s).  The rules, with
 * their sources, are listed in docs/topo-import.md and restated at each
 * function of topo_nccl.c.
 *
 * A partial file (no <gpu> under a GPU's <pci>, no <net> under a NIC's) is
 * refused with one line naming what is missing and the option that supplies
 * it; with the option given the JSON says, in its notes and sources, what
 * was assumed.  A malformed file gives TC_INPUT with "FILE:LINE: element:
 * problem".  Output is deterministic: the same dump and options give the
 * same bytes. */
#ifndef TC_TOPO_NCCL_H
#define TC_TOPO_NCCL_H

#include <stddef.h>

#include "../util/err.h"

/* NCCL's protocols (NCCL_PROTO_*).  A topology's alpha is Simple's: the
 * cost model scales it for LL and LL128 (cost.h), so the import writes the
 * Simple latency; the others are here for the rule's tests. */
typedef enum { TOPO_NCCL_LL, TOPO_NCCL_LL128, TOPO_NCCL_SIMPLE } topo_nccl_proto;

/* NCCL's latency classes (tuning.cc's NCCL_HW_*). */
typedef enum { TOPO_NCCL_HW_NVLINK, TOPO_NCCL_HW_PCI, TOPO_NCCL_HW_NET } topo_nccl_hw;

typedef struct {
    const char *name;       /* topology name; NULL: the dump's file name */
    const char *gpu;        /* --gpu: v100 a100 h100 b200 mi250 mi300x, or NULL */
    const char *nvlink;     /* --nvlink: switch:N, mesh:N, cube-mesh, none, or NULL */
    int nodes;              /* --nodes: 0 = the dump's hosts (1 if none named) */
    const char *net;        /* --net: NIC bandwidth with its unit ("200Gb/s"), or NULL */
    int fabric;             /* --fabric: a topo_nccl_fabric (0 = the default, fat-tree) */
} topo_nccl_opts;

/* The network between nodes (--fabric): fat-tree, every NIC reaches every
 * other node's NICs (the default: what our format assumed before it could
 * say rails); rails, NIC i of every node on rail i, reaching only rail i
 * ("fabric": "rails" in the JSON).  Not rails by default: our model has no
 * PXN relay (NCCL moves a transfer over NVLink to a GPU of the right rail),
 * so on rails a ring must leave a node by the NIC it entered by, which a
 * node with a NIC per GPU cannot do. */
typedef enum { TOPO_NCCL_FABRIC_DEFAULT, TOPO_NCCL_FABRIC_RAILS, TOPO_NCCL_FABRIC_FAT_TREE }
    topo_nccl_fabric;

/* Default options: everything from the dump. */
void topo_nccl_opts_init(topo_nccl_opts *o);

/* Read the dump at path and return the topology JSON (caller frees), which
 * topo_parse() accepts.  NULL with err (TC_INPUT) on failure. */
char *topo_nccl_import(const char *path, const topo_nccl_opts *o, tc_err *err);

/* The same from text in memory; label names it in messages. */
char *topo_nccl_import_mem(const char *text, size_t len, const char *label,
                           const topo_nccl_opts *o, tc_err *err);

/* The rules, one figure each (GB/s, us), exposed for the unit tests. */

/* NVLink bandwidth per link by compute capability (sm 80 = 8.0). */
double topo_nccl_nvlink_bw(int sm);

/* NCCL's NVLS graph on one node of `ngpus` GPUs of compute capability sm
 * (x10), each with gpu_gbps of NVLink into the NVSwitch as NCCL counts it
 * (links x topo_nccl_nvlink_bw): its bwIntra, the fastest speed of NCCL's
 * intra-node speed array whose channels (one per GPU, twice on the
 * channel's head) fit gpu_gbps, and its bwInter, which pass 2 raises while
 * below twice bwIntra (src/graph/search.cc:410-440, 1057-1067, 1160-1175,
 * 1255-1280).  Returns its channel count (ngpus), or 0 when NCCL has no
 * NVLS there (sm < 90, fewer than 2 GPUs, or no speed fits). */
int topo_nccl_nvls_graph(int sm, int ngpus, double gpu_gbps, double *bw_intra, double *bw_inter);

/* The same graph when the communicator spans nodes (what NVLSTree runs
 * on): speeds from NCCL's inter-node array, capped by net_gbps (the
 * GPU-NIC path: the NIC's bandwidth and the PCIe link to it, NCCL's
 * system->maxBw), lowered until the NVLink fit above holds; bwInter then
 * raised while below twice bwIntra and within net_gbps (search.cc:736,
 * 1057-1065, 1166-1171, 1247-1251, 1274-1277).  Its channels are the
 * node's GPUs with a NIC of their own (one head each; the caller counts
 * them).  1 with both speeds set, 0 when none fits (or sm < 90). */
int topo_nccl_nvls_graph_net(int sm, int ngpus, double gpu_gbps, double net_gbps,
                             double *bw_intra, double *bw_inter);

/* NCCL's inter-node speed array of compute capability sm (x10), fastest
 * first (search.cc:1052-1065: sm 100, sm 90, and the older one): its
 * length, *speeds set to it. */
int topo_nccl_inter_speeds(int sm, const double **speeds);

/* nvlsEfficiency (src/graph/tuning.cc:139-144): 0.85 Hopper, 0.74
 * Blackwell, 0 before. */
double topo_nccl_nvls_eff(int sm);

/* xGMI bandwidth per link by gcn ("gfx90a", "910", "gfx942", ...). */
double topo_nccl_xgmi_bw(const char *gcn);

/* RCCL's normal name of an old numeric gcn ("910" -> "gfx90a"); others as
 * given. */
const char *topo_nccl_gcn_name(const char *gcn);

/* PCI bandwidth from link_speed ("16.0 GT/s PCIe") and link_width; an
 * unknown speed gets NCCL's fallback (Gen3) and a width of 0 counts as 16,
 * as NCCL does.  Returns 0, or -1 if the speed is not a known string
 * (then *gbps still holds the fallback figure). */
int topo_nccl_pci_bw(const char *speed, int width, double *gbps);

/* NIC bandwidth from the dump's speed in Mb/s (<= 0: NCCL's 10 Gb/s). */
double topo_nccl_net_bw(long mbps);

/* Hardware latency of a ring step over hw with protocol p; amd: RCCL's
 * default tuning model instead of NCCL's. */
double topo_nccl_latency(topo_nccl_hw hw, topo_nccl_proto p, int amd);

/* NCCL's base latency of a ring call with protocol p (us): what its tuning
 * model adds to every call before the per-step latencies. */
double topo_nccl_base_latency(topo_nccl_proto p);

/* NCCL's hwLatencies for NVLS, Simple (us): NVLink and network
 * (tuning.cc:155-175 at 5067397); src/synth/nccl_tune.c's tables hold them
 * too, from here. */
#define TOPO_NCCL_NVLS_HWLAT_NVLINK 25.0
#define TOPO_NCCL_NVLS_HWLAT_NET 18.0

/* NCCL's latency for one NVLS call (us): its NVLink hwLatency for NVLS,
 * which replaces the base latency, plus its network one where the call
 * spans nodes (tuning.cc:424-426 at 5067397): 25, or 43. */
double topo_nccl_nvls_latency(int several_nodes);

#endif
